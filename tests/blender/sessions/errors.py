"""Session: every bad input gives a clear error and leaves the scene exactly as it was.

Each case snapshots the scene (poses, chain settings, limits, actions and keys, objects,
the frame), runs the operator, checks the error text and compares the snapshot.

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    effector_world,
    empty,
    pose_mode,
    reset_scene,
    straight_rig,
)

workdir = Path(sys.argv[1])
checks = Checks("error paths leave the scene unchanged")


expect_error = checks.expect_error


reset_scene()
scene = bpy.context.scene
ob = straight_rig("Arm", 3)
target = empty("Target", (1.0, 0.5, 2.0))
add_chain(ob, "B2", 3, "Target", mode="MANUAL")
chain = ob.quat_ik.chains[0]
bpy.ops.quat_ik.solve()
pose_mode(ob)
ob.pose.bones["B0"].keyframe_insert("rotation_quaternion", frame=1)  # some keys to protect
scene.frame_set(3)

with checks.step("add chain refuses a mesh, missing targets and chains that do not fit"):
    # ---- add chain: bad context and bad arguments
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.object
    expect_error("add chain on a mesh", bpy.ops.quat_ik.add_chain, "armature")
    expect_error("bake a mesh", bpy.ops.quat_ik.bake, "not an armature")
    bpy.context.view_layer.objects.active = ob
    pose_mode(ob, "B2")
    expect_error("add chain, missing target", bpy.ops.quat_ik.add_chain, "not found", target="Ghost")
    expect_error(
        "add chain, chain longer than the hierarchy",
        bpy.ops.quat_ik.add_chain,
        "does not fit",
        chain_length=9,
        target="Target",
    )
    pose_mode(ob, "B1")
    expect_error(
        "add chain, root bone not above the tip",
        bpy.ops.quat_ik.add_chain,
        "is not 'B1' or one of its parents",
        root_bone="B2",
        target="Target",
    )
    expect_error(
        "add chain, target bone missing",
        bpy.ops.quat_ik.add_chain,
        "bone 'Nope' not found",
        target="Arm",
        target_bone="Nope",
    )
    expect_error(
        "add chain, target moves with the chain",
        bpy.ops.quat_ik.add_chain,
        "moves with the chain",
        chain_length=2,
        target="Arm",
        target_bone="B2",
    )
    cube.parent, cube.parent_type, cube.parent_bone = ob, "BONE", "B1"
    expect_error(
        "add chain, target parented into the chain",
        bpy.ops.quat_ik.add_chain,
        "parented to the chain",
        chain_length=2,
        target="Cube",
    )
    cube.parent = None
    pose_mode(ob, "B2")

with checks.step("a tip bone the armature does not have is refused"):
    # ---- a tip the armature does not have (renamed while the add-on was off; renames are
    # followed otherwise: sessions/renames.py), deleted target
    chain.tip_bone = "Hand"
    expect_error("solve, tip bone missing", bpy.ops.quat_ik.solve, "bone 'Hand' not found")
    expect_error("bake, tip bone missing", bpy.ops.quat_ik.bake, "bone 'Hand' not found", frame_start=1, frame_end=5)
    expect_error("add pole, tip bone missing", bpy.ops.quat_ik.add_pole, "bone 'Hand' not found")
    chain.tip_bone = "B2"
with checks.step("a deleted target is refused, and let go when deleted with X"):
    bpy.data.objects.remove(target)
    expect_error("solve, target deleted", bpy.ops.quat_ik.solve, "no target")
    expect_error("bake, target deleted", bpy.ops.quat_ik.bake, "no target", frame_start=1, frame_end=5)
    target = empty("Target", (1.0, 0.5, 2.0))
    chain.target_object = target
    # Deleted as a user deletes it (X): the chain lets it go, as a Blender constraint does.
    bpy.ops.object.mode_set(mode="OBJECT")
    for other in bpy.data.objects:
        other.select_set(other == target)
    bpy.ops.object.delete()
    bpy.context.view_layer.update()
    checks.check("a target deleted with X is let go", chain.target_object is None, chain.target_object)
    checks.check(
        "... and deleted, as Blender deletes it", "Target" not in bpy.data.objects, list(bpy.data.objects.keys())
    )
    pose_mode(ob, "B2")
    expect_error("solve, target deleted with X", bpy.ops.quat_ik.solve, "no target")
with checks.step("a target no collection holds yet is kept"):
    # A target a script made and has not linked yet is not taken for deleted.
    target = bpy.data.objects.new("Target", None)
    chain.target_object = target
    scene.frame_end += 1  # (a scene update: what deleting an object makes)
    bpy.context.view_layer.update()
    checks.check(
        "a target no collection held yet is kept", "Target" in bpy.data.objects and chain.target_object == target
    )
    scene.frame_end -= 1
    scene.collection.objects.link(target)
    target.location = (1.0, 0.5, 2.0)
with checks.step("a bake of an unknown chain or armature or an empty range is refused"):
    expect_error("bake, unknown chain name", bpy.ops.quat_ik.bake, "no chain 'Leg'", chain_name="Leg")
    expect_error("bake, unknown armature", bpy.ops.quat_ik.bake, "armature 'Nobody' not found", armature="Nobody")
    expect_error("bake, empty frame range", bpy.ops.quat_ik.bake, "is empty", frame_start=10, frame_end=5)

with checks.step("numbers that are not numbers and frames past Blender's are refused"):
    # ---- numbers that are not numbers, and frames Blender does not have
    chain.effector_offset = (math.nan, 0.0, 0.0)
    expect_error("solve, effector offset NaN", bpy.ops.quat_ik.solve, "Effector Offset is not a number")
    expect_error(
        "bake, effector offset NaN", bpy.ops.quat_ik.bake, "Effector Offset is not a number", frame_start=1, frame_end=5
    )
    expect_error("snap, effector offset NaN", bpy.ops.quat_ik.snap_target, "Effector Offset is not a number")
    chain.effector_offset = (0.0, 0.0, 0.0)
    target.location = (math.nan, 0.0, 0.0)
    expect_error("bake, target location NaN", bpy.ops.quat_ik.bake, "target 'Target' has a location", frame_end=5)
    target.location = (1.0, 0.5, 2.0)
    expect_error("bake, frames past Blender's", bpy.ops.quat_ik.bake, "reaches past Blender's frames", frame_end=2**30)
    expect_error(
        "bake, NaN redundant-key tolerance",
        bpy.ops.quat_ik.bake,
        "tolerance must be a number",
        frame_end=5,
        simplify=True,
        simplify_tolerance=math.nan,
    )
    chain.target_object = ob
    expect_error("snap, target is the chain's own armature", bpy.ops.quat_ik.snap_target, "is its own armature")
    chain.target_object = target

with checks.step("a target the view layer does not evaluate is refused"):
    # ---- a target the view layer does not evaluate: read where it was, so refused; the eye icon is fine
    hidden = bpy.data.collections.new("Hidden")
    scene.collection.children.link(hidden)
    scene.collection.objects.unlink(target)
    hidden.objects.link(target)
    layer_collection = bpy.context.view_layer.layer_collection.children["Hidden"]
    for how, hide, show in (
        (
            "excluded collection",
            lambda: setattr(layer_collection, "exclude", True),
            lambda: setattr(layer_collection, "exclude", False),
        ),
        (
            "collection disabled in viewports",
            lambda: setattr(hidden, "hide_viewport", True),
            lambda: setattr(hidden, "hide_viewport", False),
        ),
        (
            "target disabled in viewports",
            lambda: setattr(target, "hide_viewport", True),
            lambda: setattr(target, "hide_viewport", False),
        ),
    ):
        hide()
        expect_error(f"solve, target in an {how}", bpy.ops.quat_ik.solve, "not in the view layer being evaluated")
        expect_error(f"bake, target in an {how}", bpy.ops.quat_ik.bake, "not in the view layer", frame_end=5)
        chain.mode = "LIVE"  # the handler's path: one listing of the enabled objects for every chain
        bpy.context.view_layer.update()
        checks.check(f"live, target in an {how}: reported", "not in the view layer" in chain.status_message)
        chain.mode = "MANUAL"
        show()
    target.hide_set(True)
    checks.check("a target hidden with the eye icon is still solved for", bpy.ops.quat_ik.solve() == {"FINISHED"}, "")
    target.hide_set(False)
    hidden.objects.unlink(target)
    scene.collection.objects.link(target)
    bpy.data.collections.remove(hidden)
    pose_mode(ob, "B2")

with checks.step("a bake in NLA tweak mode is refused"):
    # ---- a bake while the armature's action is tweaked in the NLA (keys would land on other frames)
    track = ob.animation_data.nla_tracks.new()
    strip = track.strips.new("Keys", 100, ob.animation_data.action)
    ob.animation_data.action = None
    strip.select = True
    ob.animation_data.use_tweak_mode = True
    for destination in ("ACTIVE_ACTION", "NEW_ACTION", "NLA"):
        expect_error(
            f"bake into {destination} in NLA tweak mode",
            bpy.ops.quat_ik.bake,
            "NLA tweak mode",
            frame_start=100,
            frame_end=104,
            destination=destination,
        )
    ob.animation_data.use_tweak_mode = False
    ob.animation_data.action = strip.action
    ob.animation_data.nla_tracks.remove(track)

with checks.step("a Limit Rotation whose range runs backwards is refused"):
    # ---- Blender limits that cannot be converted
    rotation_limit = ob.pose.bones["B1"].constraints.new("LIMIT_ROTATION")
    rotation_limit.use_limit_y, rotation_limit.min_y, rotation_limit.max_y = True, 0.5, -0.5
    pose_mode(ob, "B1")
    expect_error(
        "limits from a Limit Rotation whose range runs backwards",
        bpy.ops.quat_ik.limits_from_blender,
        "Y minimum 28.65° is above its maximum -28.65°",
        source="LIMIT_ROTATION",
    )
    ob.pose.bones["B1"].constraints.remove(rotation_limit)
    pose_mode(ob, "B2")

with checks.step("zero scale and edit mode are refused, a target out of reach reported"):
    # ---- degenerate geometry: zero scale, a target at infinity
    ob.pose.bones["B1"].scale = (0.0, 0.0, 0.0)
    expect_error("solve, bone scaled to zero length", bpy.ops.quat_ik.solve, "cannot be solved")
    ob.pose.bones["B1"].scale = (1.0, 1.0, 1.0)
    ob.scale = (0.0, 1.0, 1.0)
    expect_error("solve, armature with zero scale", bpy.ops.quat_ik.solve, "zero scale")
    ob.scale = (1.0, 1.0, 1.0)
    target.location = (1e30, 0.0, 0.0)  # Blender clamps infinity to the largest float
    result = bpy.ops.quat_ik.solve()
    checks.check(
        "a target far out of reach is solved toward and reported as not reached",
        result == {"FINISHED"} and not chain.status_converged,
        (result, chain.status_converged, chain.status_error),
    )
    target.location = (1.0, 0.5, 2.0)
    expect_error(
        "solve, armature in edit mode",
        lambda: (bpy.ops.object.mode_set(mode="EDIT"), bpy.ops.quat_ik.solve())[1],
        "edit mode",
    )
    bpy.ops.object.mode_set(mode="POSE")

with checks.step("a polygon window that is not convex is refused"):
    # ---- invalid joint limits: a polygon that is not convex
    limits = ob.pose.bones["B1"].quat_ik
    limits.joint_type = "BALL"
    window = limits.windows.add()
    window.shape = "POLYGON"
    for corner in ((-0.5, -0.5), (0.5, -0.5), (0.0, 0.0), (0.5, 0.5), (-0.5, 0.5)):
        window.vertices.add().angles = corner
    expect_error("solve, non-convex reach window", bpy.ops.quat_ik.solve, "bone 'B1' has invalid joint limits")
    limits.windows.clear()
    limits.joint_type = "FREE"

with checks.step("a pole for a chain with no bend is refused"):
    # ---- a pole for a chain with no bend to face
    pose_mode(ob, "B2")
    add_chain(ob, "B2", 1, "Target", mode="MANUAL")
    expect_error("add pole to a one-bone chain", bpy.ops.quat_ik.add_pole, "has one bone")
    straight = straight_rig("Straight", 2)
    empty("Above", (0.0, 0.0, 5.0))
    add_chain(straight, "B1", 2, "Above", mode="MANUAL")
    expect_error("add pole to a straight chain", bpy.ops.quat_ik.add_pole, "is straight")
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.data.objects.remove(straight)
    bpy.context.view_layer.objects.active = ob
    ob.quat_ik.chains.remove(1)
    ob.quat_ik.active_chain_index = 0

with checks.step("a linked rig is refused, a bone of one may be a target"):
    # ---- a linked (read-only) rig, and a target on a linked rig
    library = workdir / "library.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(workdir / "main.blend"))
    bpy.ops.wm.save_as_mainfile(filepath=str(library), copy=True)
    reset_scene()
    with bpy.data.libraries.load(str(library), link=True) as (source, linked):
        linked.objects = ["Arm"]
    linked_arm = linked.objects[0]
    bpy.context.scene.collection.objects.link(linked_arm)
    bpy.context.view_layer.objects.active = linked_arm
    expect_error("add chain on a linked armature", bpy.ops.quat_ik.add_chain, "linked", target="")
    expect_error("solve a linked armature", bpy.ops.quat_ik.solve, "linked")
    expect_error("bake a linked armature", bpy.ops.quat_ik.bake, "linked", frame_start=1, frame_end=3)
    expect_error("add a pole to a linked armature's chain", bpy.ops.quat_ik.add_pole, "linked")
    expect_error("mirror a linked armature's chain", bpy.ops.quat_ik.mirror_chain, "linked")
    local = straight_rig("Local", 2)
    local.location = (0.5, 0.0, 0.0)
    add_chain(local, "B1", 2, "Arm", target_bone="B1", mode="MANUAL")
    result = bpy.ops.quat_ik.solve()
    goal = linked_arm.matrix_world @ linked_arm.pose.bones["B1"].head
    error = (effector_world(local, "B1") - goal).length
    checks.check("a local chain may target a bone of a linked rig", result == {"FINISHED"} and error < 1e-3, error)

checks.close()
