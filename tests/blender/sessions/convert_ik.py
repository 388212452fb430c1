"""Session: Quat IK Chain from IK Constraint takes over a bone's Blender IK constraint: same
bones, target, rotation and pole, IK limits as joint limits, the constraint muted; what it
cannot carry is said; bad constraints are refused with the scene unchanged.

argv: WORKDIR
"""

import math

import bpy

from tests.blender.sessions.common import (
    Checks,
    effector_world,
    empty,
    pose_mode,
    reset_scene,
    straight_rig,
)

checks = Checks("Quat IK chain from an IK constraint")
reset_scene()
rig = straight_rig("Arm", 4)  # B0..B3 along +Z
target = empty("Hand", (0.9, 0.4, 2.6))
pole = empty("Elbow", (0.0, -3.0, 1.5))
ik = rig.pose.bones["B3"].constraints.new("IK")
ik.target, ik.chain_count, ik.pole_target, ik.pole_angle = target, 3, pole, math.radians(-90.0)
elbow = rig.pose.bones["B2"]
elbow.lock_ik_y, elbow.lock_ik_z = True, True
elbow.use_ik_limit_x, elbow.ik_min_x, elbow.ik_max_x = True, 0.0, math.radians(120.0)
rig.pose.bones["B1"].use_ik_limit_y = True  # set by hand below: stays as it is
rig.pose.bones["B1"].quat_ik.stiffness = 0.3
pose_mode(rig, "B3")


def converting(**kwargs) -> tuple[set, str]:
    try:
        return bpy.ops.quat_ik.from_ik_constraint(**kwargs), ""
    except RuntimeError as error:  # the operator's ERROR report
        return {"CANCELLED"}, str(error)


with checks.step("a constraint without a target or with Use Tail off is refused"):
    ik.target = None
    checks.expect_error("no target", bpy.ops.quat_ik.from_ik_constraint, "has no target")
    ik.target, ik.use_tail = target, False
    checks.expect_error("Use Tail off", bpy.ops.quat_ik.from_ik_constraint, "Use Tail off")
    ik.use_tail = True


def pole_facing_angle() -> float:
    """Signed angle (degrees) from the pole to the root bone B1's X axis, both seen across the
    line from B1's head to the target, about that line: what a pole angle sets."""
    bpy.context.view_layer.update()
    posed = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
    root = posed.matrix_world @ posed.pose.bones["B1"].head
    axis = (target.matrix_world.translation - root).normalized()
    x_axis = (posed.matrix_world.to_3x3() @ posed.pose.bones["B1"].matrix.to_3x3()).col[0]

    def across(v):
        return (v - axis * v.dot(axis)).normalized()

    to_pole, to_x = across(pole.matrix_world.translation - root), across(x_axis)
    return math.degrees(math.atan2(axis.dot(to_pole.cross(to_x)), to_pole.dot(to_x)))


with checks.step("the arm's constraint becomes a chain with its bones, pole and limits"):
    blender_facing = pole_facing_angle()  # Blender's IK, live
    result, _ = converting()
    checks.check("converted", result == {"FINISHED"})
    chain = rig.quat_ik.chains[0]
    checks.check(
        "... the constraint's bones and target",
        (chain.tip_bone, chain.chain_length, chain.target_object) == ("B3", 3, target),
        (chain.tip_bone, chain.chain_length, chain.target_object),
    )
    checks.check(
        "... its pole, faced as Blender's IK faces it, at its angle",
        (chain.pole_object, chain.pole_facing, round(math.degrees(chain.pole_angle))) == (pole, "ROOT_X", -90),
        (chain.pole_object, chain.pole_facing, math.degrees(chain.pole_angle)),
    )
    checks.check("... solved on every frame, as a constraint is", chain.mode == "PER_FRAME")
    checks.check("... position only, as the constraint", chain.orientation_mode == "NONE")
    checks.check("... the constraint muted", ik.mute)
    limits = elbow.quat_ik
    checks.check(
        "... the elbow's IK limits became a hinge about X, 0-120°",
        (limits.joint_type, limits.hinge_axis, round(math.degrees(limits.hinge_max))) == ("HINGE", "X", 120),
        (limits.joint_type, limits.hinge_axis, math.degrees(limits.hinge_max)),
    )
    checks.near("... limits set by hand stay", rig.pose.bones["B1"].quat_ik.stiffness, 0.3, 1e-6)
    checks.check("... B1's own joint type stays", rig.pose.bones["B1"].quat_ik.joint_type == "FREE")
with checks.step("the new chain reaches and faces the pole as Blender's IK did"):
    checks.check("solve the new chain", bpy.ops.quat_ik.solve() == {"FINISHED"})
    bpy.context.view_layer.update()
    error = (effector_world(rig, "B3") - target.matrix_world.translation).length
    checks.check("... it reaches the constraint's target", error < 1e-3, f"{error:.2e}")
    quat_facing = pole_facing_angle()
    checks.check(
        "... its root turned to the pole as Blender's IK turned it",
        abs(quat_facing - blender_facing) < 1.0,
        f"Quat IK {quat_facing:.2f}°, Blender's IK {blender_facing:.2f}°",
    )

with checks.step("a constraint to the top matching rotation becomes a chain"):
    # A second constraint on another rig: chain length 0 (to the top), matching the rotation.
    other = straight_rig("Leg", 3)
    other.location = (4.0, 0.0, 0.0)
    foot = empty("Foot", (4.5, 0.3, 2.0))
    ik2 = other.pose.bones["B2"].constraints.new("IK")
    ik2.target, ik2.chain_count, ik2.use_rotation = foot, 0, True
    pose_mode(other, "B2")
    result, _ = converting(mute_constraint=False)
    leg_chain = other.quat_ik.chains[0]
    checks.check("chain length 0 takes every bone to the top", result == {"FINISHED"} and leg_chain.chain_length == 3)
    checks.check("... a constraint matching rotation matches it", leg_chain.orientation_mode == "MATCH_TARGET")
    checks.check("... left unmuted when asked", not ik2.mute)
with checks.step("the operator is greyed out without a constraint"):
    other.pose.bones["B2"].constraints.remove(ik2)
    checks.check("... the operator is greyed out then", not bpy.ops.quat_ik.from_ik_constraint.poll())
checks.close()
