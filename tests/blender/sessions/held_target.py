"""Session: a chain whose target hangs from a bone another chain solves (the left hand on a
prop the right hand holds) reaches it where the solved right hand put it: in Live mode in the
same update, in Per Frame mode and in a bake; position and, matching the target's rotation,
orientation.

argv: WORKDIR
"""

import contextlib
import io
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

from tests.blender.sessions.common import Checks, add_chain, empty, reset_scene, submodule

workdir = Path(sys.argv[1])
checks = Checks("a target held by another chain")
runtime = submodule("runtime.state").session
reset_scene()
scene = bpy.context.scene

# A root bone with two three-bone arms, joints free.
armature = bpy.data.armatures.new("Body")
body = bpy.data.objects.new("Body", armature)
scene.collection.objects.link(body)
bpy.context.view_layer.objects.active = body
bpy.ops.object.mode_set(mode="EDIT")
root = armature.edit_bones.new("Root")
root.head, root.tail = (0, 0, 1.5), (0, 0, 2)
for side, sign in (("L", 1.0), ("R", -1.0)):
    parent = root
    for i in range(3):
        bone = armature.edit_bones.new(f"{side}{i}")
        bone.head, bone.tail = (sign * 0.6 * i, 0, 2), (sign * 0.6 * (i + 1), 0, 2)
        bone.parent, bone.use_connect = parent, i > 0
        parent = bone
bpy.ops.object.mode_set(mode="OBJECT")

right_target = empty("RightTarget", (-1.2, 0.6, 1.7))
prop = empty("Prop", (0, 0, 0))  # held by the right hand
prop.parent, prop.parent_type, prop.parent_bone = body, "BONE", "R2"
grip = empty("Grip", (0.0, 0.0, 0.0))  # where the left hand holds the prop
grip.parent = prop
grip.location = (0.25, 0.3, 0.1)
grip.rotation_euler = (0.3, -0.2, 0.5)
with checks.step("the right hand's chain is listed before the left's"):
    add_chain(body, "R2", 3, "RightTarget", mode="LIVE")
    add_chain(body, "L2", 3, "Grip", mode="LIVE", orientation_mode="MATCH_TARGET")
    right, left = body.quat_ik.chains
    checks.check(
        "chains: right hand first, then the left on its prop", [c.tip_bone for c in (right, left)] == ["R2", "L2"]
    )


def tip_world(tip: str):
    """The tip's end in the world, and its world rotation matrix (3×3, numpy)."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob_eval = body.evaluated_get(depsgraph)
    pose_bone = ob_eval.pose.bones[tip]
    frame = ob_eval.matrix_world @ pose_bone.matrix
    return frame @ Vector((0.0, pose_bone.bone.length, 0.0)), np.array(frame.to_3x3().normalized())


def grip_errors() -> tuple[float, float]:
    """The left hand's distance from the grip and its turn from the grip's rotation (radians:
    ‖Ra − Rb‖ ≈ √2·angle, exact where an angle from float32 quaternions rounds to 0)."""
    position, rotation = tip_world("L2")
    grip_world = grip.evaluated_get(bpy.context.evaluated_depsgraph_get()).matrix_world
    wanted = np.array(grip_world.to_3x3().normalized())
    return (position - grip_world.translation).length, float(np.linalg.norm(rotation - wanted) / np.sqrt(2.0))


def right_error() -> float:
    return (tip_world("R2")[0] - right_target.matrix_world.translation).length


with checks.step("Live solves both arms in one update"):
    # ---- Live: the right hand's target moves; both arms are solved in that one update
    bpy.context.view_layer.update()
    runtime.stats.clear()
    right_target.location = (-1.0, 0.9, 2.3)
    bpy.context.view_layer.update()
    moved, turned = grip_errors()
    checks.check("Live: one update solves both arms", runtime.stats["chains_solved"] == 2, dict(runtime.stats))
    checks.check("... the right hand reaches its target", right_error() < 1e-3, right_error())
    checks.check(
        "... and the left hand the grip where the right hand put it", moved < 1e-3 and turned < 1e-3, (moved, turned)
    )

with checks.step("Per Frame reaches with both hands at every frame"):
    # ---- Per Frame: the right hand's target animated
    for chain in (right, left):
        chain.mode = "MANUAL"
    right_target.location = (-1.2, 0.6, 1.7)
    right_target.keyframe_insert("location", frame=1)
    right_target.location = (-0.9, 1.0, 2.4)
    right_target.keyframe_insert("location", frame=10)
    for chain in (right, left):
        chain.mode = "PER_FRAME"
    worst = (0.0, 0.0, 0.0)
    for frame in (1, 4, 7, 10):
        scene.frame_set(frame)
        moved, turned = grip_errors()
        worst = tuple(max(a, b) for a, b in zip(worst, (right_error(), moved, turned), strict=True))
    checks.check("Per Frame: both hands reach at every frame (right, left, left's turn)", max(worst) < 1e-3, worst)

with checks.step("a bake reaches with both hands at every frame"):
    # ---- Bake: the left hand follows the grip where the baked right hand holds it
    for chain in (right, left):
        chain.mode = "MANUAL"
    bpy.ops.object.mode_set(mode="POSE")
    result = bpy.ops.quat_ik.bake(chains="ALL", frame_start=1, frame_end=10, destination="NEW_ACTION")
    checks.check("bake finished", result == {"FINISHED"}, result)
    worst = (0.0, 0.0, 0.0)
    for frame in range(1, 11):
        scene.frame_set(frame)
        moved, turned = grip_errors()
        worst = tuple(max(a, b) for a, b in zip(worst, (right_error(), moved, turned), strict=True))
    checks.check("Bake: both hands reach at every baked frame (right, left, left's turn)", max(worst) < 1e-3, worst)

with checks.step("a chain listed before the one that moves its target says so"):
    # ---- listed the other way round, the left hand is solved before the right hand moves the
    # prop: the chain says so (the panel shows it)
    checks.check("in order, no warning", left.status_message == "", left.status_message)
    body.quat_ik.chains.move(1, 0)
    left = body.quat_ik.chains[0]
    scene.frame_set(5)
    result = bpy.ops.quat_ik.solve(chains="ALL", from_rest=True)
    checks.check(
        "out of order, the chain says to move it below the other",
        "move it below 'R2'" in left.status_message and body.quat_ik.chains[1].status_message == "",
        left.status_message,
    )

with checks.step("a chain sharing bones with a later one says which"):
    # ---- a chain sharing a bone with a later one: the later one turns it last, and the
    # earlier chain says so
    body.quat_ik.chains.move(0, 1)  # back in order: right hand, left hand
    body.quat_ik.use_bodies = False  # (solved one after another; as one body they see each other)
    bpy.context.view_layer.objects.active = body
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        add_chain(body, "L2", 2, "Grip", mode="MANUAL")
    checks.check("adding it warns", "it shares bones with 'L2'" in printed.getvalue(), printed.getvalue().strip())
    bpy.ops.quat_ik.solve(chains="ALL", from_rest=True)
    first = body.quat_ik.chains[1]
    checks.check(
        "a chain sharing bones with a later one says which",
        "'L1', 'L2' with 'L2.001', solved after it" in first.status_message,
        [(c.name, c.status_message) for c in body.quat_ik.chains],
    )

checks.close()
