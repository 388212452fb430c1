"""Session: a bake keys what plays, where it plays, for bones keyed and set up in the many ways
a rig is: a frame step replaces every key of its range and keys the range's last frame; Euler
values continue from a bone keyed on some channels only; a connected bone's pose location is
ignored and bones that ignore their parent's scale are placed as Blender places them; a root
that ignores its posed parent's rotation or scale is refused; animated locations, scales and
locked channels, which a bake builds into its chain once, are refused (keys that hold still
are not); drivers, constraints, F-curve modifiers and blending that change what plays are
reported; a bake of part of an animation joins the keys before it; bone names that need
escaping; time remapping is refused; a long background bake prints its progress.

argv: WORKDIR
"""

import contextlib
import io
import math

import bpy
from mathutils import Vector

from tests.blender.sessions.common import Checks, add_chain, empty, make_rig, pose_mode, reset_scene, submodule

checks = Checks("bakes key what plays")
compat = submodule("compat")


def bent_rig(**kwargs):
    """B0 > B1 > B2, bent (so the solve is well defined), reaching for a target on a circle."""
    reset_scene()
    ob = make_rig("Arm", [((0, 0, 0), (0, 0.1, 1)), ((0, 0.1, 1), (0, 0, 2)), ((0, 0, 2), (0, 0, 2.8))], **kwargs)
    target = empty("Target")
    for frame in range(-4, 61, 4):
        target.location = (0.9 * math.cos(frame / 8), 0.9 * math.sin(frame / 8), 1.8)
        target.keyframe_insert("location", frame=frame)
    add_chain(ob, "B2", 3, "Target", mode="MANUAL")
    pose_mode(ob, "B2")
    return ob, target


def channel(ob, path: str, index: int):
    fcurves = compat.find_channels(ob.animation_data.action, ob)[0]
    return fcurves.find(path, index=index)


def tip_error(ob, target, frame: float) -> float:
    bpy.context.scene.frame_set(int(frame), subframe=frame - int(frame))
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = ob.evaluated_get(depsgraph)
    tip = evaluated.pose.bones["B2"]
    world = evaluated.matrix_world @ tip.matrix @ Vector((0.0, tip.bone.length, 0.0))
    return (world - target.evaluated_get(depsgraph).matrix_world.translation).length


with checks.step("a frame step replaces the range's keys and keys its last frame"):
    # ---- a frame step: every old key in the range goes, the range's last frame is keyed
    ob, target = bent_rig()
    bone = ob.pose.bones["B0"]
    for frame in (3, 10, 12, 50):
        bone.rotation_quaternion = (1.0, 0.01 * frame, 0.0, 0.0)
        bone.keyframe_insert("rotation_quaternion", frame=frame)
    checks.check("bake 1-12 every 4th frame", bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, step=4) == {"FINISHED"})
    frames = [round(k.co[0]) for k in channel(ob, 'pose.bones["B0"].rotation_quaternion', 1).keyframe_points]
    checks.check("... keys 1, 5, 9 and 12, and the key at 50 outside the range", frames == [1, 5, 9, 12, 50], frames)
    checks.check("... frame 12 reaches", tip_error(ob, target, 12) < 0.01, tip_error(ob, target, 12))

with checks.step("Euler keys continue from a bone keyed on one channel"):
    # ---- Euler continuity from a bone keyed on one channel only (X wound a full turn)
    ob, target = bent_rig()
    for bone in ob.pose.bones:
        bone.rotation_mode = "XYZ"
    bone = ob.pose.bones["B0"]
    bone.rotation_euler = (2 * math.pi + 0.1, 0.0, 0.0)
    bone.keyframe_insert("rotation_euler", index=0, frame=0)
    checks.check("bake after a key on X alone", bpy.ops.quat_ik.bake(frame_start=1, frame_end=20) == {"FINISHED"})
    x = channel(ob, 'pose.bones["B0"].rotation_euler', 0)
    turn = math.degrees(abs(x.evaluate(1) - x.evaluate(0)))
    checks.check("... X continues from the wound key (no spin between frames 0 and 1)", turn < 90.0, f"{turn:.1f}°")
    checks.check("... and frame 1 reaches", tip_error(ob, target, 1) < 0.01, tip_error(ob, target, 1))

# ---- inherit scale and rotation
ROOT = {"extra_bones": [("Root", (0, 0, -1), (0, 0, 0), None)], "parent_of_first": "Root"}


def reaches(label: str, ob, target, frames=(1, 7, 20)) -> None:
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=20)
    worst = max(tip_error(ob, target, frame) for frame in frames)
    checks.check(label, result == {"FINISHED"} and worst < 0.01, (result, worst))


with checks.step("roots that ignore their parent's rotation or scale are reached or refused"):
    ob, target = bent_rig(**ROOT)
    ob.data.bones["B1"].inherit_scale = "NONE"
    ob.pose.bones["B0"].scale = (0.7, 0.7, 0.7)
    reaches("a bone that ignores its parent's scale: the bake reaches", ob, target)
    ob, target = bent_rig(**ROOT)
    ob.data.bones["B0"].use_inherit_rotation = False
    ob.pose.bones["Root"].location = (0.2, 0.0, 0.1)
    reaches("a root that ignores the rotation of a parent at rest: the bake reaches", ob, target)
    ob.pose.bones["Root"].rotation_quaternion = (0.95, 0.3, 0.0, 0.0)
    checks.expect_error("... posed away from rest: refused", bpy.ops.quat_ik.bake, "does not inherit the rotation")
    ob.pose.bones["Root"].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    ob.data.bones["B0"].use_inherit_rotation = True
    ob.data.bones["B0"].inherit_scale = "NONE"
    ob.pose.bones["Root"].scale = (0.5, 0.5, 0.5)
    checks.expect_error(
        "a root that ignores its parent's scale: refused", bpy.ops.quat_ik.bake, "does not inherit the scale"
    )

with checks.step("a connected bone's pose location moves nothing"):
    # ---- a connected bone's pose location moves nothing in Blender: nor in the solve
    ob, target = bent_rig()
    ob.pose.bones["B1"].location = (0.0, 0.25, 0.1)
    reaches("a connected bone with a pose location: the bake reaches", ob, target)

with checks.step("an animated location is refused, one keyed still is baked"):
    # ---- what a bake builds into the chain must hold still over its range
    runtime = submodule("runtime.state").session
    ob, target = bent_rig(connected=[False, False, True])  # (a connected bone's location does nothing)
    bone = ob.pose.bones["B1"]
    for frame, y in ((1, 0.0), (20, 0.5)):
        bone.location = (0.0, y, 0.0)
        bone.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_set(1)
    checks.expect_error(
        "an animated location", bpy.ops.quat_ik.bake, "'B1' has its location animated", frame_start=1, frame_end=20
    )
    for key in (
        compat.find_channels(ob.animation_data.action, ob)[0].find('pose.bones["B1"].location', index=1).keyframe_points
    ):
        key.co.y = key.handle_left.y = key.handle_right.y = 0.25
    bpy.context.scene.frame_set(1)
    reaches("keyed locations that hold still: the bake reaches", ob, target)
    checks.check(
        "... from the sampled keys",
        runtime.last_bake_seconds.get("gather_path") == "sampled",
        runtime.last_bake_seconds,
    )

with checks.step("an animated locked channel is refused, one keyed still keeps its value"):
    ob, target = bent_rig()
    bone = ob.pose.bones["B1"]
    bone.rotation_mode, bone.lock_rotation[1] = "XYZ", True
    for frame, y in ((1, 0.0), (20, 1.2)):
        bone.rotation_euler = (0.1 * frame, y, 0.0)
        bone.keyframe_insert("rotation_euler", frame=frame)
    bpy.context.scene.frame_set(1)
    checks.expect_error(
        "a locked channel that is animated",
        bpy.ops.quat_ik.bake,
        "'B1' has its locked rotation channels animated",
        frame_start=1,
        frame_end=20,
    )
    for key in (
        compat.find_channels(ob.animation_data.action, ob)[0]
        .find('pose.bones["B1"].rotation_euler', index=1)
        .keyframe_points
    ):
        key.co.y = key.handle_left.y = key.handle_right.y = 0.3
    bpy.context.scene.frame_set(1)
    reaches("a locked channel keyed still, the others animated: the bake reaches", ob, target)
    checks.check(
        "... from the sampled keys",
        runtime.last_bake_seconds.get("gather_path") == "sampled",
        runtime.last_bake_seconds,
    )
    y = compat.find_channels(ob.animation_data.action, ob)[0].find('pose.bones["B1"].rotation_euler', index=1)
    checks.check(
        "... and the locked channel keeps its value",
        {round(k.co.y, 6) for k in y.keyframe_points} == {0.3},
        [tuple(k.co) for k in y.keyframe_points],
    )

with checks.step("Last Solve names the drivers and constraints that change the pose"):
    # ---- what changes the pose after the solve or the keys as they play is reported
    ob, target = bent_rig()
    driver = ob.pose.bones["B1"].driver_add("rotation_quaternion", 1).driver
    driver.type, driver.expression = "SCRIPTED", "0.1"
    ob.pose.bones["B0"].constraints.new("LIMIT_ROTATION")
    checks.check(
        "bake under a driver and a constraint", bpy.ops.quat_ik.bake(frame_start=1, frame_end=5) == {"FINISHED"}
    )
    status = ob.quat_ik.chains[0].status_message
    checks.check("... Last Solve names the driver", "a driver on the rotation of 'B1'" in status, status)
    checks.check("... and the constraint", "constraint 'limit rotation' on 'b0'" in status.lower(), status)
with checks.step("a bake into curves with a Noise modifier"):
    ob.animation_data.drivers.remove(ob.animation_data.drivers[0])
    ob.pose.bones["B0"].constraints.remove(ob.pose.bones["B0"].constraints[0])
    for fcurve in compat.find_channels(ob.animation_data.action, ob)[0]:
        if fcurve.data_path == 'pose.bones["B1"].rotation_quaternion':
            fcurve.modifiers.new("NOISE")
    print("---- bake into curves with a Noise modifier")
    bpy.ops.quat_ik.bake(frame_start=1, frame_end=5)
with checks.step("a bake into an action combined over an NLA track"):
    ob, target = bent_rig()
    strip_action = bpy.data.actions.new("Pose")
    track = ob.animation_data_create().nla_tracks.new()
    ob.animation_data.action = strip_action
    ob.pose.bones["B1"].keyframe_insert("rotation_quaternion", frame=1)
    ob.animation_data.action = None
    track.strips.new("Pose", 1, strip_action)
    ob.animation_data.action = bpy.data.actions.new("Layer")
    ob.animation_data.action_blend_type = "COMBINE"
    print("---- bake into an action combined over an NLA track")
    bpy.ops.quat_ik.bake(frame_start=1, frame_end=5)

with checks.step("a bake of part of an animation joins the keys before it"):
    # ---- a bake of part of an animation joins the keys before it (it starts from their pose)
    ob, target = bent_rig()
    for bone in ob.pose.bones:
        bone.rotation_mode = "ZXY"
    bpy.ops.quat_ik.bake(frame_start=-4, frame_end=10)
    z = channel(ob, 'pose.bones["B0"].rotation_euler', 2)
    before = [z.evaluate(frame) for frame in (-1, 0, 1)]
    bpy.ops.quat_ik.bake(frame_start=0, frame_end=30)
    after = [z.evaluate(frame) for frame in (-1, 0, 1)]
    seam = math.degrees(abs(after[1] - after[0]))
    step = math.degrees(abs(before[1] - before[0]))
    checks.check(
        "a re-bake from frame 0 steps no more at its seam than the keys did", seam < 2.0 * step + 0.1, (seam, step)
    )

with checks.step("bone names that need escaping are keyed"):
    # ---- bone names that need escaping in data paths
    ob, target = bent_rig()
    ob.data.bones["B1"].name = 'fore"arm\\L'
    reaches("a bone named with a quote and a backslash: its keys play", ob, target)

with checks.step("time remapping is refused"):
    # ---- time remapping: frame f plays the animation at another time; refused
    ob, target = bent_rig()
    scene = bpy.context.scene
    scene.render.frame_map_old, scene.render.frame_map_new = 100, 200
    scene.frame_set(scene.frame_current)  # the remapped time's pose, before the snapshot
    checks.expect_error("time remapping", bpy.ops.quat_ik.bake, "Time Remapping", frame_start=1, frame_end=20)
    scene.render.frame_map_new = 100

with checks.step("a long background bake prints its progress"):
    # ---- a long background bake prints its progress: frames read, then chains solved
    ob, target = bent_rig()
    for length in (2, 1):
        add_chain(ob, "B2", length, "Target", mode="MANUAL", chain_name=f"Tip {length}")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bpy.ops.quat_ik.bake(frame_start=1, frame_end=120)
    lines = [line for line in printed.getvalue().splitlines() if line.startswith("Quat IK bake:")]
    solved = [line.split(": ", 1)[1].split(" (")[0] for line in lines if "chains solved" in line]
    read = [line.split(": ", 1)[1].split(" (")[0] for line in lines if "frames read" in line]
    checks.check(
        "progress: a line every 10% of the frames read, frame by frame",
        read == [f"{tenth * 10:3d}% of 120 frames read" for tenth in range(1, 11)],
        lines,
    )
    checks.check(
        "progress: a line a chain (three chains)", solved == [f"{k} of 3 chains solved" for k in (1, 2, 3)], lines
    )

with checks.step("a slow chain prints its own progress"):
    # ---- ... and a chain solving for long prints its own progress (here: any chain, at once)
    operators_bake = submodule("operators.bake")
    slow_after, operators_bake.SLOW_CHAIN_S = operators_bake.SLOW_CHAIN_S, 0.0
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        bpy.ops.quat_ik.bake(frame_start=1, frame_end=120, chain_name="B2")
    operators_bake.SLOW_CHAIN_S = slow_after
    within = [line.split(": ", 1)[1].split(" (")[0] for line in printed.getvalue().splitlines() if "solving" in line]
    shares = [int(line.rsplit(" ", 1)[1].rstrip("%")) for line in within]
    checks.check(
        "progress: a slow chain's own lines, rising, below 100%",
        len(shares) >= 5
        and all(line.startswith("solving 'B2': ") for line in within)
        and shares == sorted(set(shares))
        and shares[-1] < 100,
        within,
    )

checks.close()
