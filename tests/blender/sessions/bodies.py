"""Session: chains that share bones are solved as one body (issue 36): both goals met where the
chains solved one after another leave the first short; priorities where the goals conflict;
a pinned bone holds on its frames; stretch only where turning cannot reach, written to the Y
scale and keyed by the bake; a body bakes whole; Live keeps both goals; the problems a body
cannot be solved with are said on its chains; Blender IK constraints that share bones convert
into one body.

argv: WORKDIR
"""

import math

import bpy
from mathutils import Vector

from tests.blender.sessions.common import (
    TORSO_BONES,
    Checks,
    connected_armature,
    effector_world,
    empty,
    pose_mode,
    reset_scene,
)

checks = Checks("chains that share bones solve as one body")
reset_scene()

TOLERANCE = 1e-4


ob = connected_armature("Torso", TORSO_BONES)
left, right = empty("TargetL", (1.2, 1.0, 2.8)), empty("TargetR", (-1.5, 0.8, 2.4))
for tip, target in (("L2", "TargetL"), ("R2", "TargetR")):
    pose_mode(ob, tip)
    bpy.ops.quat_ik.add_chain(chain_length=4, target=target)
chain_left, chain_right = ob.quat_ik.chains
chain_left.name, chain_right.name = "Left", "Right"


def rest_pose() -> None:
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_mode = "QUATERNION"
        pose_bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        pose_bone.scale = (1.0, 1.0, 1.0)
    bpy.context.view_layer.update()


def solve() -> set:
    pose_mode(ob, "L2")
    return bpy.ops.quat_ik.solve(chains="ALL")


def miss(tip: str, target) -> float:
    return (effector_world(ob, tip) - target.matrix_world.translation).length


def matrix_of(bone: str):
    bpy.context.view_layer.update()
    return ob.matrix_world @ ob.pose.bones[bone].matrix


with checks.step("two chains sharing the spine are solved as one body and both reach"):
    rest_pose()
    checks.check("Solve Now finishes", solve() == {"FINISHED"})
    checks.near("the left hand reaches", miss("L2", left), 0.0, tolerance=TOLERANCE)
    checks.near("the right hand reaches", miss("R2", right), 0.0, tolerance=TOLERANCE)
    checks.check("both chains say they reached", chain_left.status_converged and chain_right.status_converged)
    checks.check("no order warning: the chains see each other", "shares" not in chain_left.status_message.lower())

with checks.step("a pole turns its chain's elbow toward it below the shared spine"):
    pole = empty("PoleL", (1.0, 0.5, 4.5))
    chain_left.pole_object = pole

    def elbow_side() -> float:
        """How far the left elbow stands toward +Z from the shoulder-to-hand line."""
        bpy.context.view_layer.update()
        shoulder, elbow = (ob.matrix_world @ ob.pose.bones[name].head for name in ("L1", "L2"))
        hand = effector_world(ob, "L2")
        along = (hand - shoulder).normalized()
        across = (elbow - shoulder) - along * (elbow - shoulder).dot(along)
        return across.z

    for where, sign in (((1.0, 0.5, 4.5), 1.0), ((1.0, 0.5, 0.5), -1.0)):
        pole.location = where
        rest_pose()
        checks.check("Solve Now finishes", solve() == {"FINISHED"})
        checks.check(
            f"the elbow bends toward the pole at z={where[2]}", sign * elbow_side() > 0.1, f"{elbow_side():.3g}"
        )
        checks.near("the left hand reaches", miss("L2", left), 0.0, tolerance=TOLERANCE)
        checks.near("the right hand reaches", miss("R2", right), 0.0, tolerance=TOLERANCE)
    checks.check(
        "the pole is used: no warning", "pole" not in chain_left.status_message.lower(), chain_left.status_message
    )
    chain_left.pole_object = None

with checks.step("solved one after another the first chain is left short, and says why"):
    ob.quat_ik.use_bodies = False
    rest_pose()
    solve()
    checks.check("the earlier chain misses", miss("L2", left) > 100 * TOLERANCE, f"{miss('L2', left):.3g}")
    checks.check(
        "it warns of the later chain", "shares 'spine1', 'spine2' with 'right'" in chain_left.status_message.lower()
    )
    ob.quat_ik.use_bodies = True

with checks.step("where the goals conflict the higher priority is met and the lower comes close"):
    left.location, right.location = (3.0, 0.0, 2.0), (-3.0, 0.0, 2.0)  # each alone bends the spine its way
    chain_left.priority, chain_right.priority = 0, 1
    rest_pose()
    solve()
    checks.near("priority 0 (left) is met", miss("L2", left), 0.0, tolerance=TOLERANCE)
    lower = miss("R2", right)
    checks.check("priority 1 (right) cannot be", lower > 0.1, f"{lower:.3g}")
    checks.check("and is reported as short", not chain_right.status_converged)
    chain_left.priority, chain_right.priority = 1, 0
    rest_pose()
    solve()
    checks.near("swapped: the right is met", miss("R2", right), 0.0, tolerance=TOLERANCE)
    checks.near("the left misses by about what the right did", miss("L2", left), lower, tolerance=0.05 * lower)
    chain_left.priority = chain_right.priority = 0

with checks.step("Learn Start Poses on a chain of a body learns the body's, kept on its first chain"):
    left.location, right.location = (1.2, 1.0, 2.8), (-1.5, 0.8, 2.4)
    rest_pose()
    ob.quat_ik.active_chain_index = 1  # the right arm: the body's second chain
    checks.check("Learn Start Poses finishes", bpy.ops.quat_ik.learn_start_poses() == {"FINISHED"})
    checks.check("kept on the body's first chain", "learned_body_start_poses" in chain_left.keys())
    checks.check("which now uses them", chain_left.use_learned_start)
    checks.check("the right arm learned none of its own", "learned_start_poses" not in chain_right.keys())
    checks.check("Solve Now from the neutral pose", bpy.ops.quat_ik.solve(chains="ALL", from_rest=True) == {"FINISHED"})
    checks.near("the left hand reaches", miss("L2", left), 0.0, tolerance=TOLERANCE)
    checks.near("the right hand reaches", miss("R2", right), 0.0, tolerance=TOLERANCE)
    checks.check("no stale warning", "stale" not in chain_left.status_message, chain_left.status_message)
    ob.pose.bones["R1"].quat_ik.stretch_max = 1.5
    ob.pose.bones["R1"].quat_ik.use_stretch = True  # the body changed: its upper arm stretches
    ob.data.bones["R2"].inherit_scale = "NONE"
    rest_pose()
    bpy.ops.quat_ik.solve(chains="ALL", from_rest=True)
    checks.check("for another body they are stale, and it says so", "stale" in chain_left.status_message)
    ob.pose.bones["R1"].quat_ik.use_stretch = False
    ob.data.bones["R2"].inherit_scale = "FULL"
    chain_left.use_learned_start = False
    ob.quat_ik.active_chain_index = 0

with checks.step("a pinned bone holds on its frames while the goals move"):
    left.location, right.location = (1.2, 1.0, 2.8), (-1.5, 0.8, 2.4)
    bpy.context.scene.frame_set(3)
    rest_pose()
    pose_mode(ob, "Spine2")
    checks.check("Pin Bone pins the active bone", bpy.ops.quat_ik.add_pin(frame_start=1, frame_end=5) == {"FINISHED"})
    pin = ob.quat_ik.pins[0]
    checks.check("the pin is Spine2's, location and rotation", pin.bone == "Spine2" and pin.hold == "BOTH")
    held = matrix_of("Spine2").copy()
    solve()
    moved = matrix_of("Spine2")
    checks.near("the pinned bone's head stays", (moved.translation - held.translation).length, 0.0, tolerance=TOLERANCE)
    turn = moved.to_quaternion().rotation_difference(held.to_quaternion()).angle
    checks.near("and its rotation", turn, 0.0, tolerance=1e-3)
    checks.near("both hands still reach", miss("L2", left) + miss("R2", right), 0.0, tolerance=2 * TOLERANCE)
    checks.check("the pin says it held", pin.status_solved and pin.status_held, pin.status_message)
    bpy.context.scene.frame_set(8)  # after the pin's range
    right.location = (-3.0, 0.0, 2.0)  # reachable only by bending the spine
    chain_left.enabled = False
    solve()
    checks.near(
        "after its frames the spine is free again: the far goal is met", miss("R2", right), 0.0, tolerance=TOLERANCE
    )
    chain_left.enabled = True
    checks.check("the pin is not measured where it does not hold", not pin.status_solved)

with checks.step("the bake keys a pinned body: the pin holds on every frame of its range"):
    bpy.context.scene.frame_set(1)
    rest_pose()
    right.location = (-1.5, 0.8, 2.4)
    right.keyframe_insert("location", frame=1)
    right.location = (-1.2, 0.4, 1.9)
    right.keyframe_insert("location", frame=10)
    checks.check("Bake finishes", bpy.ops.quat_ik.bake(frame_start=1, frame_end=10) == {"FINISHED"})
    worst_slip = 0.0
    for frame in range(1, 6):
        bpy.context.scene.frame_set(frame)
        worst_slip = max(worst_slip, (matrix_of("Spine2").translation - held.translation).length)
    checks.near("the pinned head stays on frames 1-5 of the keys", worst_slip, 0.0, tolerance=1e-3)
    reach = []
    for frame in (1, 5, 10):
        bpy.context.scene.frame_set(frame)
        reach.append(miss("L2", left) + miss("R2", right))
    checks.near("both hands reach on the keys", max(reach), 0.0, tolerance=1e-3)
    checks.check("the pin's status is the bake's", pin.status_solved and pin.status_held)
    ob.animation_data.action = None
    right.animation_data_clear()
    ob.quat_ik.pins.clear()
    for chain in ob.quat_ik.chains:
        chain.mode = "MANUAL"

with checks.step("a bone stretches only where turning cannot reach, and the Y scale says so"):
    bpy.context.scene.frame_set(1)
    chain_right.enabled = False
    limits = ob.pose.bones["L1"].quat_ik
    limits.use_stretch, limits.stretch_min, limits.stretch_max = True, 1.0, 2.0
    ob.data.bones["L2"].inherit_scale = "NONE"
    left.location = (4.5, 0.0, 2.5)  # 4.9 from the spine's base: beyond its 4 units, within 5 stretched
    rest_pose()
    solve()
    stretch = ob.pose.bones["L1"].scale[1]
    checks.near("the far goal is met by stretching", miss("L2", left), 0.0, tolerance=TOLERANCE)
    checks.check("the upper arm stretched within its range", 1.0 < stretch <= 2.0 + 1e-9, f"{stretch:.4g}")
    left.location = (1.2, 1.0, 2.8)
    solve()
    checks.near("a goal turning reaches needs no stretch", ob.pose.bones["L1"].scale[1], 1.0, tolerance=1e-6)
    checks.near("and is met", miss("L2", left), 0.0, tolerance=TOLERANCE)

with checks.step("a child that inherits a stretchy bone's scale is refused, nothing written"):
    ob.data.bones["L2"].inherit_scale = "FULL"
    rest_pose()
    pose_mode(ob, "L2")
    checks.expect_error(
        "a skewing child", lambda: bpy.ops.quat_ik.solve(chains="ALL"), "inherits the scale of stretchy bone 'L1'"
    )
    ob.data.bones["L2"].inherit_scale = "NONE"
    limits.use_stretch = False
    chain_right.enabled = True

with checks.step("Live keeps both goals of a body when one target moves"):
    rest_pose()
    for chain in ob.quat_ik.chains:
        chain.mode = "LIVE"
    bpy.context.view_layer.update()
    left.location = (1.0, 0.8, 3.0)
    bpy.context.view_layer.update()
    bpy.context.view_layer.update()
    checks.near("the moved target is reached", miss("L2", left), 0.0, tolerance=1e-3)
    checks.near("the other hand stays on its target", miss("R2", right), 0.0, tolerance=1e-3)
    for chain in ob.quat_ik.chains:
        chain.mode = "MANUAL"

with checks.step("a Per Frame body played again is answered from memory, with the same poses"):
    from tests.blender.sessions.common import submodule

    cache = submodule("solving.cache")
    rest_pose()
    right.location = (-1.5, 0.8, 2.4)
    right.keyframe_insert("location", frame=1)
    right.location = (-1.2, 0.4, 1.9)
    right.keyframe_insert("location", frame=4)
    for chain in ob.quat_ik.chains:
        chain.mode = "PER_FRAME"
    cache.clear()
    played = {}
    for frame in (1, 2, 3, 4):
        bpy.context.scene.frame_set(frame)
        played[frame] = [tuple(pb.rotation_quaternion) for pb in ob.pose.bones]
    solved = cache.stats["misses"]
    for frame in (3, 1, 4, 2):
        bpy.context.scene.frame_set(frame)
        again = [tuple(pb.rotation_quaternion) for pb in ob.pose.bones]
        checks.check(f"frame {frame}: the same pose", again == played[frame])
    checks.check(
        "played again: no solve", cache.stats["misses"] == solved and cache.stats["hits"] >= 4, dict(cache.stats)
    )
    checks.near("and both hands reach", miss("L2", left) + miss("R2", right), 0.0, tolerance=2e-3)
    for chain in ob.quat_ik.chains:
        chain.mode = "MANUAL"
    right.animation_data_clear()
    bpy.context.scene.frame_set(1)


with checks.step("a body whose chains are apart in the list reports each chain as its own"):
    rest_pose()
    empty("TargetRoot", (0.0, 0.0, 0.5))  # where the root already reaches: it holds the body still
    pose_mode(ob, "Root")
    bpy.ops.quat_ik.add_chain(chain_length=1, target="TargetRoot")
    ob.quat_ik.chains[2].name = "Hips"
    ob.quat_ik.chains.move(2, 1)  # Left, Hips, Right: the body's chains are apart
    chain_left, chain_right = ob.quat_ik.chains["Left"], ob.quat_ik.chains["Right"]
    chain_right.influence = 0.5  # (its own pose is remembered per chain: the solutions must line up)
    checks.check("Solve Now finishes", solve() == {"FINISHED"})
    checks.near("the left hand reaches", miss("L2", left), 0.0, tolerance=TOLERANCE)
    hips = ob.quat_ik.chains["Hips"]
    checks.check("each chain's status is its own", chain_left.status_converged and hips.status_solved)
    checks.near(
        "the Hips chain reaches its own target", miss("Root", bpy.data.objects["TargetRoot"]), 0.0, tolerance=TOLERANCE
    )
    chain_right.influence = 1.0
    ob.quat_ik.chains.remove(1)
    chain_left, chain_right = ob.quat_ik.chains["Left"], ob.quat_ik.chains["Right"]


with checks.step("a pin no chain can hold says so, and a pin that would end before it starts is refused"):
    rest_pose()
    pose_mode(ob, "Root")
    bpy.ops.quat_ik.add_pin(frame_start=1, frame_end=250)
    solve()
    pin = ob.quat_ik.pins[0]
    checks.check(
        "the pin names what is wrong", "no chain that was solved holds 'Root'" in pin.status_message, pin.status_message
    )
    checks.check("the chains still solve", chain_left.status_converged and chain_right.status_converged)
    ob.quat_ik.pins.clear()
    checks.expect_error(
        "a backward range", lambda: bpy.ops.quat_ik.add_pin(frame_start=9, frame_end=2), "before it starts"
    )
    checks.check("and adds no pin", len(ob.quat_ik.pins) == 0)


with checks.step("IK constraints that share bones convert into one body, IK Stretch into stretch"):
    other = connected_armature("Constrained", TORSO_BONES)
    targets = (empty("IK_L", (1.2, 1.0, 2.8)), empty("IK_R", (-1.5, 0.8, 2.4)))
    for tip, target in zip(("L2", "R2"), targets, strict=True):
        constraint = other.pose.bones[tip].constraints.new("IK")
        constraint.target, constraint.chain_count = target, 4
    other.pose.bones["L1"].ik_stretch = 0.3
    bpy.context.view_layer.objects.active = other
    bpy.ops.object.mode_set(mode="POSE")
    checks.check(
        "Quat IK Chains from IK Constraints finishes", bpy.ops.quat_ik.from_all_ik_constraints() == {"FINISHED"}
    )
    names = sorted(chain.name for chain in other.quat_ik.chains)
    checks.check("one chain per constraint", names == ["L2", "R2"], str(names))
    stretch = other.pose.bones["L1"].quat_ik
    checks.check(
        "IK Stretch became stretch", stretch.use_stretch and math.isclose(stretch.stretch_stiffness, 0.7, abs_tol=1e-6)
    )
    checks.check("the constraints are muted", all(pb.constraints[0].mute for pb in other.pose.bones if pb.constraints))
    other.data.bones["L2"].inherit_scale = "NONE"
    checks.check("the converted body solves", bpy.ops.quat_ik.solve(chains="ALL") == {"FINISHED"})
    ends = [
        (effector_world(other, tip) - Vector(t.location)).length for tip, t in zip(("L2", "R2"), targets, strict=True)
    ]
    checks.near("and both of its hands reach", max(ends), 0.0, tolerance=TOLERANCE)

checks.close()
