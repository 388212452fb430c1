"""Session: Mirror Chain gives a left arm's chain its right-hand counterpart on a symmetrized
rig: the same settings, the target and pole made as mirror images, the joint limits mirrored;
solved, the right arm is the mirror image of the left, with the pole facing either the bend or
the root's X axis; mirroring again updates the chain; a bone without a side, a missing
counterpart bone and a target bone without a counterpart are refused, the scene unchanged.

argv: WORKDIR
"""

import math

import bpy
from mathutils import Euler, Matrix

# isort: split
from tests.blender.sessions.common import Checks, add_chain, empty, pose_mode, radians

checks = Checks("mirror chain")
with checks.step("blender symmetrizes the arm"):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene

    # A left arm with rolls of its own, symmetrized by Blender into a right arm.
    armature = bpy.data.armatures.new("Body")
    rig = bpy.data.objects.new("Body", armature)
    scene.collection.objects.link(rig)
    rig.location, rig.rotation_euler = (0.3, -0.2, 0.0), (0.0, 0.0, radians(20.0))
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    spine = armature.edit_bones.new("spine")
    spine.head, spine.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.5)
    parent = spine
    for name, head, tail, roll in (
        ("upper_arm.L", (0.2, 0.0, 1.5), (0.5, 0.05, 1.3), 0.4),
        ("forearm.L", (0.5, 0.05, 1.3), (0.75, -0.05, 1.1), -0.3),
        ("hand.L", (0.75, -0.05, 1.1), (0.85, -0.05, 1.05), 0.2),
    ):
        bone = armature.edit_bones.new(name)
        bone.head, bone.tail, bone.roll, bone.parent = head, tail, roll, parent
        bone.use_connect = parent.name != "spine"
        parent = bone
    for bone in armature.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name.endswith(".L")
    bpy.ops.armature.symmetrize()
    bpy.ops.object.mode_set(mode="OBJECT")
    checks.check(
        "Blender made the right arm", all(f"{n}.R" in armature.bones for n in ("upper_arm", "forearm", "hand"))
    )

with checks.step("left chain added"):
    world = rig.matrix_world
    target = empty("hand_ik.L")
    target.matrix_world = world @ Matrix.LocRotScale((0.6, -0.35, 1.0), Euler((0.3, 0.5, -0.2)), None)
    target.empty_display_type = "ARROWS"
    pole = empty("elbow_pole.L")
    pole.matrix_world = world @ Matrix.Translation((0.45, 0.8, 1.3))

    forearm = rig.pose.bones["forearm.L"].quat_ik
    forearm.joint_type = "HINGE"
    forearm.hinge_axis = "X"
    forearm.hinge_min, forearm.hinge_max = radians(-150.0), radians(0.0)
    shoulder = rig.pose.bones["upper_arm.L"].quat_ik
    shoulder.joint_type = "BALL"
    window = shoulder.windows.add()
    window.shape = "ELLIPTIC_CONE"
    window.half_angles = (radians(70.0), radians(45.0))
    shoulder.use_twist_range = True
    shoulder.twist_min, shoulder.twist_max = radians(-40.0), radians(60.0)

    checks.check("left chain added", add_chain(rig, "hand.L", 3, "hand_ik.L", mode="MANUAL") == {"FINISHED"})
    left = rig.quat_ik.chains[0]
    left.name = "arm.L"
    left.orientation_mode, left.orientation_weight = "MATCH_TARGET", 0.5
    left.pole_object, left.pole_angle = pole, radians(30.0)
    left.effector_offset = (0.02, 0.03, -0.01)
    left.iterations, left.tolerance, left.restarts = 80, 1e-5, 3

with checks.step("mirror copies the settings and mirrors target and pole"):
    checks.check("mirror finished", bpy.ops.quat_ik.mirror_chain() == {"FINISHED"})
    checks.check("one chain per side", [c.tip_bone for c in rig.quat_ik.chains] == ["hand.L", "hand.R"])
    right = rig.quat_ik.chains[1]
    checks.check("named as the left one, flipped", right.name == "arm.R", right.name)
    checks.check("the new chain is the active one", rig.quat_ik.active_chain_index == 1)
    same = ("chain_length", "mode", "orientation_mode", "iterations", "restarts", "method", "pole_facing")
    checks.check("settings copied", all(getattr(right, n) == getattr(left, n) for n in same))
    checks.near("tolerance copied", right.tolerance, left.tolerance, 1e-12)
    checks.near("orientation weight copied", right.orientation_weight, 0.5, 1e-6)
    checks.check("effector offset mirrored", tuple(round(v, 6) for v in right.effector_offset) == (-0.02, 0.03, -0.01))
    checks.near("pole angle mirrored (the bend mirrors)", right.pole_angle, radians(-30.0), 1e-6)
    mirror = world @ Matrix.Diagonal((-1.0, 1.0, 1.0, 1.0)) @ world.inverted()
    made_target, made_pole = right.target_object, right.pole_object
    checks.check("target made", made_target is not None and made_target.name == "hand_ik.R")
    checks.check("pole made", made_pole is not None and made_pole.name == "elbow_pole.R")
    gap = (made_target.matrix_world.translation - mirror @ target.matrix_world.translation).length
    checks.check("the made target is the mirror image", gap < 1e-5, f"{gap:.2e}")
    checks.check("... an arrows empty like the left one", made_target.empty_display_type == "ARROWS")
    expected = mirror @ target.matrix_world @ Matrix.Diagonal((-1.0, 1.0, 1.0, 1.0))
    turn = expected.to_quaternion().rotation_difference(made_target.matrix_world.to_quaternion()).angle
    checks.check("... turned as the mirror image (its local X flipped)", min(turn, 2 * math.pi - turn) < 1e-5, turn)
with checks.step("joint limits mirrored"):
    forearm_r = rig.pose.bones["forearm.R"].quat_ik
    checks.check(
        "the right forearm's hinge mirrored",
        forearm_r.joint_type == "HINGE"
        and abs(forearm_r.hinge_min + radians(150.0)) < 1e-5
        and abs(forearm_r.hinge_max) < 1e-5,
        (forearm_r.joint_type, math.degrees(forearm_r.hinge_min), math.degrees(forearm_r.hinge_max)),
    )
    shoulder_r = rig.pose.bones["upper_arm.R"].quat_ik
    checks.check(
        "the right shoulder's twist range mirrored",
        shoulder_r.use_twist_range
        and abs(shoulder_r.twist_min + radians(60.0)) < 1e-5
        and abs(shoulder_r.twist_max - radians(40.0)) < 1e-5,
        (math.degrees(shoulder_r.twist_min), math.degrees(shoulder_r.twist_max)),
    )
    checks.check("the spine keeps no mirrored limits", rig.pose.bones["spine"].quat_ik.joint_type == "FREE")


def mirrored_pose_gap() -> float:
    """Largest difference between the right arm's world matrices and the left's mirror images
    (a bone's mirror image has its local X flipped, as Symmetrize makes it)."""
    bpy.context.view_layer.update()
    flip = Matrix.Diagonal((-1.0, 1.0, 1.0, 1.0))
    gap = 0.0
    for name in ("upper_arm", "forearm", "hand"):
        left_world = world @ rig.pose.bones[f"{name}.L"].matrix
        right_world = world @ rig.pose.bones[f"{name}.R"].matrix
        expected = mirror @ left_world @ flip
        gap = max(gap, max(abs(expected[i][j] - right_world[i][j]) for i in range(4) for j in range(4)))
    return gap


with checks.step("the right arm solves to the left's mirror image"):
    left.orientation_mode = "NONE"  # the rotated target is out of the hand's reach: the position alone
    for facing, angle in (("BEND", 30.0), ("ROOT_X", -60.0), ("ROOT_X", 25.0)):
        left.pole_facing, left.pole_angle = facing, radians(angle)
        rig.quat_ik.active_chain_index = 0
        bpy.ops.quat_ik.mirror_chain()
        for pose_bone in rig.pose.bones:
            pose_bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        checks.check(f"{facing} {angle:+.0f}°: solve both", bpy.ops.quat_ik.solve(chains="ALL") == {"FINISHED"})
        reached = all(c.status_converged for c in rig.quat_ik.chains)
        checks.check(f"{facing} {angle:+.0f}°: both reach", reached, [c.status_error for c in rig.quat_ik.chains])
        gap = mirrored_pose_gap()
        checks.check(f"{facing} {angle:+.0f}°: the right arm is the left's mirror image", gap < 2e-3, f"{gap:.2e}")
    checks.check("mirroring again updates the chain", len(rig.quat_ik.chains) == 2 and right.tip_bone == "hand.R")
    checks.check("... and makes no second target", "hand_ik.R.001" not in bpy.data.objects)

# Refusals.
with checks.step("refuses a missing counterpart bone"):
    rig.quat_ik.active_chain_index = 0
    armature.bones["hand.R"].name = "hand_right"
    bpy.context.view_layer.update()  # (the right chain follows its renamed tip)
    checks.expect_error("no counterpart bone", bpy.ops.quat_ik.mirror_chain, "there is no bone 'hand.R'")
    armature.bones["hand_right"].name = "hand.R"
    bpy.context.view_layer.update()
    checks.check("the right chain followed its tip's renames", right.tip_bone == "hand.R", right.tip_bone)
with checks.step("a target without a side is shared"):
    left.target_object, left.target_bone = rig, "spine"
    left.orientation_mode = "NONE"
    checks.check("a target without a side is shared", bpy.ops.quat_ik.mirror_chain() == {"FINISHED"})
    checks.check("... the same bone", right.target_object == rig and right.target_bone == "spine")
with checks.step("refuses a target bone without a counterpart"):
    bpy.ops.object.mode_set(mode="EDIT")
    control = armature.edit_bones.new("hand_control.L")
    control.head, control.tail = (0.9, 0.0, 1.0), (0.9, 0.0, 1.1)
    bpy.ops.object.mode_set(mode="OBJECT")
    left.target_bone = "hand_control.L"
    rig.quat_ik.active_chain_index = 0
    checks.expect_error("target bone without counterpart", bpy.ops.quat_ik.mirror_chain, "no bone 'hand_control.R'")
with checks.step("refuses a tip without a side"):
    bpy.context.view_layer.objects.active = rig
    add_chain(rig, "spine", 1, "hand_ik.L")
    checks.expect_error("a tip without a side", bpy.ops.quat_ik.mirror_chain, "has no side in its name")
    pose_mode(rig)
checks.close()
