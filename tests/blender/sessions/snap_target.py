"""Session: Snap Target to Chain moves a chain's target to its tip (turned as the tip when the
chain matches a rotation) and its pole to its bend, so the next solve keeps a hand-made pose,
on a moved, turned and scaled armature; Auto Keying keys what Snap moves and what Solve Now
turns, with the scene's keying mode; a linked target, a missing tip and a constrained target
are reported, the first two leaving the scene as it was.

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy
from mathutils import Euler, Quaternion

# isort: split
from tests.blender.sessions.common import (
    Checks,
    action_keys,
    add_chain,
    bone_world_matrices,
    effector_world,
    empty,
    matrix_distance,
    pose_mode,
    straight_rig,
)

WORKDIR = Path(sys.argv[1])
checks = Checks("snap target to chain")
with checks.step("chain added"):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    tool_settings = scene.tool_settings

    rig = straight_rig("Arm", 3, length=1.0)
    rig.location, rig.rotation_euler, rig.scale = (0.5, -1.0, 0.3), (0.2, 0.0, math.radians(30.0)), (1.5, 1.5, 1.5)
    target = empty("Target", (4.0, 4.0, 0.0))  # far from where the chain will be posed
    pole = empty("Pole", (0.0, -3.0, 1.0))
    checks.check("chain added", add_chain(rig, "B2", 3, "Target", mode="MANUAL") == {"FINISHED"})
    chain = rig.quat_ik.chains[0]
    chain.tolerance = 1e-5
    chain.pole_object, chain.pole_angle = pole, math.radians(40.0)

# A pose made by hand (FK), within the default free limits.
with checks.step("a hand-made pose far from the target"):
    for name, euler in (("B0", (0.5, 0.0, 0.3)), ("B1", (0.8, 0.2, 0.0)), ("B2", (0.4, -0.3, 0.2))):
        pose_bone = rig.pose.bones[name]
        pose_bone.rotation_mode = "QUATERNION"
        pose_bone.rotation_quaternion = Euler(euler).to_quaternion()
    bpy.context.view_layer.update()
    posed = bone_world_matrices(rig)
    pole_before = pole.matrix_world.translation.copy()
    checks.check(
        "the target starts far from the posed tip",
        (effector_world(rig, "B2") - target.matrix_world.translation).length > 1.0,
    )

with checks.step("snap puts the target on the tip and moves the pole"):
    checks.check("snap finished", bpy.ops.quat_ik.snap_target() == {"FINISHED"})
    bpy.context.view_layer.update()
    gap = (effector_world(rig, "B2") - target.matrix_world.translation).length
    checks.check("the target sits on the tip", gap < 1e-5, f"{gap:.2e}")
    checks.check("the pole moved", (pole.matrix_world.translation - pole_before).length > 0.1)
    checks.check(
        "the pose is untouched by snapping",
        max(matrix_distance(posed[n], m) for n, m in bone_world_matrices(rig).items()) < 1e-9,
    )
    checks.check("nothing keyed with Auto Keying off", target.animation_data is None and rig.animation_data is None)

# The next solve keeps the pose: warm (Solve Now, Live) and from rest too with a pole.
with checks.step("solving after the snap keeps the pose"):
    checks.check("solve finished", bpy.ops.quat_ik.solve() == {"FINISHED"})
    bpy.context.view_layer.update()
    moved = max(matrix_distance(posed[n], m) for n, m in bone_world_matrices(rig).items())
    checks.check("solving after the snap keeps the pose", moved < 1e-3, f"{moved:.2e}")
    checks.check("... and reaches", chain.status_converged, chain.status_message)
    checks.check("Solve Now keys nothing with Auto Keying off", rig.animation_data is None)

# Without the pole moved, the solve would have turned the chain to face the old pole.
with checks.step("control: the old pole would turn the pose"):
    pole.matrix_world.translation = pole_before
    bpy.context.view_layer.update()
    bpy.ops.quat_ik.solve()
    bpy.context.view_layer.update()
    turned = max(matrix_distance(posed[n], m) for n, m in bone_world_matrices(rig).items())
    checks.check("(control: the old pole would have turned the pose)", turned > 0.05, f"{turned:.3f}")

# Orientation: the chain matches a target bone's rotation; snapping turns the bone as the tip.
with checks.step("snapping a rotation target turns it as the tip"):
    handle_rig = straight_rig("Handle", 1, length=0.3)
    handle_rig.location = (-2.0, 2.0, 0.0)
    pose_mode(rig, "B2")
    chain.target_object, chain.target_bone, chain.orientation_mode = handle_rig, "B0", "MATCH_TARGET"
    chain.pole_object = None
    for name, euler in (("B0", (-0.3, 0.4, 0.1)), ("B1", (0.6, 0.0, -0.5)), ("B2", (-0.2, 0.7, 0.3))):
        rig.pose.bones[name].rotation_quaternion = Euler(euler).to_quaternion()
    bpy.context.view_layer.update()
    posed = bone_world_matrices(rig)
    checks.check("snap to a target bone finished", bpy.ops.quat_ik.snap_target() == {"FINISHED"})
    bpy.context.view_layer.update()
    handle_world = handle_rig.matrix_world @ handle_rig.pose.bones["B0"].matrix
    tip_world = rig.matrix_world @ rig.pose.bones["B2"].matrix
    gap = (handle_world.translation - effector_world(rig, "B2")).length
    checks.check("the target bone sits on the tip", gap < 1e-5, f"{gap:.2e}")
    turn = handle_world.to_quaternion().rotation_difference(tip_world.to_quaternion()).angle
    checks.check(
        "the target bone is turned as the tip", min(turn, 2 * math.pi - turn) < 1e-4, f"{math.degrees(turn):.2e}°"
    )
    bpy.ops.quat_ik.solve()
    bpy.context.view_layer.update()
    moved = max(matrix_distance(posed[n], m) for n, m in bone_world_matrices(rig).items())
    checks.check("solving after snapping a rotation target keeps the pose", moved < 1e-3, f"{moved:.2e}")

# Auto Keying: Snap keys the moved bone, Solve Now the chain's bones, at the current frame.
with checks.step("auto keying keys the snapped target and the solved bones"):
    chain.target_object, chain.target_bone, chain.orientation_mode = target, "", "NONE"
    tool_settings.use_keyframe_insert_auto = True
    tool_settings.auto_keying_mode = "ADD_REPLACE_KEYS"
    scene.frame_set(7)
    bpy.ops.quat_ik.snap_target()
    keys = {path: [key[0][0] for key in found] for path, found in action_keys(target.animation_data.action).items()}
    checks.check(
        "Auto Keying: the snapped target's location keyed at frame 7",
        all(keys.get(("location", i)) == [7.0] for i in range(3)),
        keys,
    )
    checks.check(
        "... and not its rotation (position goal only)", not any(path == "rotation_euler" for path, _ in keys), keys
    )
    rig.pose.bones["B1"].rotation_quaternion = (
        Quaternion((1.0, 0.0, 0.0), 0.3) @ rig.pose.bones["B1"].rotation_quaternion
    )
    bpy.ops.quat_ik.solve()
    bone_keys = action_keys(rig.animation_data.action) if rig.animation_data else {}
    wanted = {(f'pose.bones["{n}"].rotation_quaternion', i) for n in ("B0", "B1", "B2") for i in range(4)}
    checks.check(
        "Auto Keying: Solve Now keyed every chain bone's rotation", wanted <= set(bone_keys), sorted(bone_keys)
    )

# Replace mode keys only what has keys already: the keyed target again, never a new one.
with checks.step("replace mode keys no unkeyed target"):
    tool_settings.auto_keying_mode = "REPLACE_KEYS"
    other = empty("Other", (1.0, 1.0, 1.0))
    chain.target_object = other
    bpy.ops.quat_ik.snap_target()
    unkeyed = other.animation_data is None or other.animation_data.action is None
    checks.check(
        "Replace mode: an unkeyed target gets no keys", unkeyed or not action_keys(other.animation_data.action)
    )
    tool_settings.use_keyframe_insert_auto = False
    chain.target_object = target

# A target something else moves: the operator says the pose will not be kept.
with checks.step("a constrained target finishes with a warning"):
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target = empty("Elsewhere", (-5.0, 0.0, 0.0))
    result = bpy.ops.quat_ik.snap_target()
    checks.check("a constrained target: finished with a warning", result == {"FINISHED"})
    target.constraints.remove(constraint)

# Errors: a linked target, a tip the armature does not have.
with checks.step("refuses a linked target"):
    library = WORKDIR / "props.blend"
    prop = bpy.data.objects.new("LinkedProp", None)
    bpy.data.libraries.write(str(library), {prop})
    bpy.data.objects.remove(prop)
    with bpy.data.libraries.load(str(library), link=True) as (source, linked):
        linked.objects = ["LinkedProp"]
    scene.collection.objects.link(linked.objects[0])
    chain.target_object = linked.objects[0]
    bpy.context.view_layer.update()
    checks.expect_error("linked target", bpy.ops.quat_ik.snap_target, "is linked and cannot be moved")
    chain.target_object = target
with checks.step("refuses a missing tip bone and a missing target"):
    chain.tip_bone = "Hand"
    checks.expect_error("missing tip bone", bpy.ops.quat_ik.snap_target, "not found")
    chain.tip_bone = "B2"
    chain.target_object = None
    checks.expect_error("no target", bpy.ops.quat_ik.snap_target, "has no target")
checks.close()
