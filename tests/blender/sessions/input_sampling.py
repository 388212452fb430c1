"""Session: a bake's inputs sampled from the F-curves (``input_sampling``) equal the inputs read
frame by frame (``frame_set``); the fast path refuses whatever it cannot vouch for; a bake
writes the same keys either way, and through the operator it really takes the fast path.

Each scene is built from nothing and compared over frames 1-24, with the current frame inside
the range or outside it (the safety net then samples one more frame).

argv: WORKDIR [ZIP]  (ZIP: install and enable it first, for a Blender started without the add-on)
"""

import dataclasses
import math
import sys

import bpy
import numpy as np

if len(sys.argv) > 2:
    from tools.blender_session import install_addon

    install_addon(sys.argv[2])

# isort: split
from tests.blender.sessions.common import (
    Checks,
    action_keys,
    add_chain,
    empty,
    make_rig,
    reset_scene,
    straight_rig,
    submodule,
)

print("VERSION " + ".".join(str(v) for v in bpy.app.version[:3]), flush=True)
checks = Checks(f"input sampling in Blender {bpy.app.version_string}")
bake = submodule("bake.bake")
solving_jobs = submodule("solving.jobs")
compat = submodule("compat")
input_sampling = submodule("bake.input_sampling")
runtime = submodule("runtime.state").session
FRAMES = (1, 24)


def key(ob, path: str, frame: int, value) -> None:
    setattr(ob, path, value)
    ob.keyframe_insert(path, frame=frame)


def gathered(ob, *, sample: bool, frames=FRAMES):
    """One Bake's gather of the armature's first chain: (StackedInputs, the Bake)."""
    job = bake.Bake(bpy.context.scene, ob, [ob.quat_ik.chains[0]], bake.BakeSettings(*frames, sample_inputs=sample))
    job.gather_all(bpy.context.evaluated_depsgraph_get)
    inputs = job.inputs[0]
    if not isinstance(inputs, solving_jobs.StackedInputs):
        inputs = solving_jobs.StackedInputs.stack(inputs)
    return inputs, job


def sampled_and_reason(ob, frames=FRAMES):
    job = bake.Bake(bpy.context.scene, ob, [ob.quat_ik.chains[0]], bake.BakeSettings(*frames))
    return input_sampling.sample_or_reason(job.rigs[0], job.frames, bpy.context.evaluated_depsgraph_get())


def check_same_inputs(label: str, ob, *, fields_present=()) -> None:
    """Sampled inputs equal the frame-by-frame ones (relative 1e-6) on every field."""
    frame = bpy.context.scene.frame_current
    stepped, _job = gathered(ob, sample=False)
    checks.check(f"{label}: frame-by-frame gather restores the frame", bpy.context.scene.frame_current == frame, "")
    sampled, reason = sampled_and_reason(ob)
    if not checks.check(f"{label}: sampled", sampled is not None, reason):
        return
    worst, differing = 0.0, []
    for field in dataclasses.fields(stepped):
        a, b = getattr(stepped, field.name), getattr(sampled, field.name)
        if (a is None) != (b is None) or (a is not None and a.shape != b.shape):
            differing.append(field.name)
        elif a is not None:
            worst = max(worst, float(np.max(np.abs(a - b))) / max(1.0, float(np.max(np.abs(a)))))
    checks.check(
        f"{label}: sampled == frame by frame (relative 1e-6)", not differing and worst <= 1e-6, (worst, differing)
    )
    for name in fields_present:
        values = getattr(stepped, name)
        varies = values is not None and float(np.ptp(values, axis=0).max()) > 1e-3
        moved = values is not None and values.shape[-2:] == (4, 4) and float(np.abs(values[0] - np.eye(4)).max()) > 1e-3
        checks.check(f"{label}: {name} is exercised (animated, or static but not the identity)", varies or moved, "")


def check_refused(label: str, ob, because: str) -> None:
    sampled, reason = sampled_and_reason(ob)
    checks.check(f"{label}: refused ({because!r} in the reason)", sampled is None and because in reason, reason)
    _inputs, job = gathered(ob, sample=True)
    checks.check(f"{label}: the bake falls back to frame_set", job.gather_path == "frame_set", job.gather_path)


def largest_key_difference(a: dict, b: dict) -> float:
    """Largest difference of key values between two ``action_keys``; inf unless they have the same
    curves, key frames, interpolation, handle types and key types."""
    if a.keys() != b.keys() or any(len(a[k]) != len(b[k]) for k in a):
        return math.inf
    worst = 0.0
    for k in a:
        for key_a, key_b in zip(a[k], b[k], strict=True):
            if key_a[0][0] != key_b[0][0] or key_a[1:] != key_b[1:]:
                return math.inf
            worst = max(worst, abs(key_a[0][1] - key_b[0][1]))
    return worst


def same_bake_either_way(label: str, ob, *, tolerance: float = 0.0) -> None:
    """Keys of a bake with sampling forced off and on (each into a new action) are identical, or
    within ``tolerance`` where sampled inputs differ from Blender's in float32 rounding (Blender
    composes matrices in float32, step by step; the sampler in float64, rounded once)."""
    anim = ob.animation_data
    action = anim.action if anim is not None else None
    rotations = {pb.name: tuple(pb.rotation_quaternion) for pb in ob.pose.bones}
    keys, paths = [], []
    for sample in (False, True):
        # Start each bake from the same scene: the action and pose from before.
        if action is not None:
            compat.assign_action(ob, action)
        elif ob.animation_data is not None:
            ob.animation_data.action = None
        for pose_bone in ob.pose.bones:
            pose_bone.rotation_quaternion = rotations[pose_bone.name]
        bpy.context.scene.frame_set(bpy.context.scene.frame_current)
        settings = bake.BakeSettings(*FRAMES, destination="NEW_ACTION", set_manual=False, sample_inputs=sample)
        job = bake.Bake(bpy.context.scene, ob, list(ob.quat_ik.chains), settings)
        job.gather_all(bpy.context.evaluated_depsgraph_get)
        job.solve()
        job.write()
        keys.append(action_keys(ob.animation_data.action))
        paths.append(job.gather_path)
    checks.check(f"{label}: the two bakes took both paths", paths == ["frame_set", "sampled"], paths)
    worst = largest_key_difference(keys[0], keys[1])
    what = "identical keys" if tolerance == 0.0 else f"the same keys up to {tolerance:g}"
    checks.check(f"{label}: {what} either way", bool(keys[0]) and worst <= tolerance, worst)


def chain_rig():
    return straight_rig("Rig", 3)


with checks.step("a keyframed target with F-curve modifiers is sampled as read frame by frame"):
    # ---------------------------------------------------------------- 1. a keyframed target (Bezier)
    reset_scene()
    scene = bpy.context.scene
    ob = chain_rig()
    target = empty("Target")
    target.rotation_mode = "YZX"
    for frame, location, rotation in (
        (1, (1.2, 0.3, 1.5), (0.0, 0.2, 0.1)),
        (7, (0.4, 1.1, 2.2), (0.6, -0.3, 0.4)),
        (15, (-0.8, 0.5, 1.8), (1.1, 0.2, -0.5)),
        (22, (0.2, -1.0, 2.5), (0.3, 0.9, 0.2)),
    ):
        key(target, "location", frame, location)
        key(target, "rotation_euler", frame, rotation)
    curves = {(fc.data_path, fc.array_index): fc for fc in compat.all_action_fcurves(target.animation_data.action)}
    checks.check(
        "1: the target's keys are Bezier", curves[("location", 0)].keyframe_points[1].interpolation == "BEZIER", ""
    )
    curves[("location", 1)].modifiers.new("CYCLES")  # F-curve modifiers are evaluated too
    noise = curves[("location", 2)].modifiers.new("NOISE")
    noise.strength = 0.3
    add_chain(ob, "B2", 3, "Target", mode="MANUAL", orientation_mode="MATCH_TARGET")
    scene.frame_set(5)
    check_same_inputs("1 keyframed target", ob, fields_present=("target_world", "orientation_world"))

with checks.step("an unkeyed edit at the current frame is refused"):
    # The safety net: the target moved at the current frame without a key (the curves disagree).
    target.location.x += 0.5
    bpy.context.view_layer.update()
    check_refused("1 unkeyed edit at the current frame", ob, "differs from the evaluated scene")
    scene.frame_set(5)

with checks.step("a target with a constraint is refused, one with a muted constraint sampled"):
    # Refusals on the same scene, each undone before the next.
    constraint = target.constraints.new("COPY_LOCATION")
    constraint.target = empty("Leader", (0.5, 0.5, 2.0))
    check_refused("1 target with a constraint", ob, "has constraint")
    constraint.mute = True
    scene.frame_set(5)
    check_same_inputs("1 target with a muted constraint", ob)
    target.constraints.remove(constraint)

with checks.step("a driver on the target is refused"):
    driver = target.driver_add("scale", 2).driver
    driver.expression = "1.0 + frame * 0.01"
    scene.frame_set(5)
    check_refused("1 driver on the target", ob, "has drivers")
    target.driver_remove("scale", 2)

with checks.step("an NLA track on the target is refused"):
    action = target.animation_data.action
    track = target.animation_data.nla_tracks.new()
    track.strips.new("Moves", 1, action)
    scene.frame_set(5)
    check_refused("1 NLA track on the target", ob, "NLA")
    target.animation_data.nla_tracks.remove(track)


def foreign_handler(_scene, _depsgraph=None) -> None:
    pass


with checks.step("another add-on's frame change handler is refused"):
    bpy.app.handlers.frame_change_post.append(foreign_handler)
    check_refused("1 a frame change handler of someone else", ob, "frame change handler")
    bpy.app.handlers.frame_change_post.remove(foreign_handler)

with checks.step("the operator's bake samples its inputs and shows the keys at once"):
    # Through the operator: the fast path is taken, and the pose shows the keys at once.
    scene.frame_set(5)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, destination="NEW_ACTION")
    checks.check("1 operator bake finished", result == {"FINISHED"}, result)
    checks.check(
        "1 operator bake sampled its inputs",
        runtime.last_bake_seconds.get("gather_path") == "sampled",
        runtime.last_bake_seconds,
    )
    checks.check("1 operator bake kept the frame", scene.frame_current == 5, scene.frame_current)
    baked = {
        fc.array_index: fc.evaluate(5)
        for fc in compat.all_action_fcurves(ob.animation_data.action)
        if fc.data_path == 'pose.bones["B1"].rotation_quaternion'
    }
    shown = tuple(ob.pose.bones["B1"].rotation_quaternion)
    checks.check(
        "1 right after the bake the pose shows the baked keys at the current frame",
        len(baked) == 4 and max(abs(shown[i] - baked[i]) for i in range(4)) < 1e-6,
        (shown, baked),
    )

with checks.step("a target with an animated parent is sampled and baked the same either way"):
    # ---------------------------------------------------------------- 2. a target parented to an animated parent
    reset_scene()
    scene = bpy.context.scene
    ob = chain_rig()
    parent = empty("Parent", (0.3, -0.2, 0.5))
    parent.rotation_mode = "XZY"
    parent.delta_location = (0.1, 0.0, -0.2)
    parent.delta_scale = (1.0, 1.1, 0.9)
    for frame, location, rotation, scale in (
        (1, (0.3, -0.2, 0.5), (0.1, 0.0, 0.3), (1.0, 1.0, 1.0)),
        (12, (0.1, 0.4, 0.7), (0.5, -0.4, 1.0), (1.2, 0.9, 1.1)),
        (24, (-0.2, 0.1, 0.4), (-0.3, 0.6, 1.8), (0.8, 1.0, 1.3)),
    ):
        key(parent, "location", frame, location)
        key(parent, "rotation_euler", frame, rotation)
        key(parent, "scale", frame, scale)
    target = empty("Target", (1.0, 0.5, 1.5))
    target.parent = parent
    target.matrix_parent_inverse = parent.matrix_world.inverted()
    key(target, "location", 3, (1.0, 0.5, 1.5))
    key(target, "location", 20, (0.6, 0.9, 1.9))
    add_chain(ob, "B2", 3, "Target", mode="MANUAL")
    scene.frame_set(30)  # outside the range: the safety net samples one more frame
    check_same_inputs("2 parented target", ob, fields_present=("target_world",))
    same_bake_either_way("2 parented target", ob, tolerance=1e-6)

with checks.step("a rotated, scaled armature with an animated location is sampled"):
    # ---------------------------------------------------------------- 3. a rotated, scaled armature with animated location
    reset_scene()
    scene = bpy.context.scene
    ob = chain_rig()
    ob.rotation_mode = "QUATERNION"
    ob.rotation_quaternion = (2.0, 0.3, -0.2, 0.5)  # not normalised: Blender normalises before use
    ob.delta_rotation_quaternion = (0.9, 0.0, 0.1, 0.0)
    ob.scale = (1.5, 0.8, 1.2)
    ob.delta_scale = (1.0, 1.0, 1.1)
    ob.delta_location = (0.0, 0.2, 0.0)
    for frame, location in ((1, (0.0, 0.0, 0.0)), (10, (0.5, -0.3, 0.2)), (24, (-0.4, 0.2, -0.1))):
        key(ob, "location", frame, location)
    holder = empty("Holder", (0.0, 0.0, 0.3))
    holder.rotation_mode = "AXIS_ANGLE"
    holder.rotation_axis_angle = (0.4, 0.2, 1.0, 0.3)
    ob.parent = holder
    target = empty("Target", (0.9, 0.6, 2.1))
    add_chain(ob, "B2", 3, "Target", mode="MANUAL")
    scene.frame_set(9)
    check_same_inputs("3 rotated, scaled armature", ob, fields_present=("object_world",))

with checks.step("a bone of another armature as the target is sampled"):
    # ---------------------------------------------------------------- 4. target: a bone of another static armature
    reset_scene()
    scene = bpy.context.scene
    ob = chain_rig()
    other = make_rig("Other", [((0, 0, 0), (0, 0, 1)), ((0, 0, 1), (0, 0.5, 1.8))], rolls=[0.0, 0.7], extra_bones=[])
    other.rotation_euler = (0.2, -0.4, 0.9)
    for frame, location in ((1, (1.0, 0.2, 0.3)), (24, (0.4, 0.8, 0.6))):
        key(other, "location", frame, location)
    other.pose.bones["B0"].rotation_quaternion = (0.95, 0.2, 0.1, 0.2)
    other.pose.bones["B1"].rotation_mode = "XYZ"
    other.pose.bones["B1"].rotation_euler = (0.3, 0.1, -0.4)
    add_chain(ob, "B2", 3, "Other", target_bone="B1", mode="MANUAL")
    chain = ob.quat_ik.chains[0]
    checks.check("4 the chain aims at the other armature's bone", chain.target_bone == "B1", chain.target_bone)
    scene.frame_set(12)
    check_same_inputs("4 bone of another armature", ob, fields_present=("target_world",))
with checks.step("an animated parent of the target bone is refused"):
    # Once that bone's parent is animated, its pose is no longer static.
    other.pose.bones["B0"].keyframe_insert("rotation_quaternion", frame=1)
    scene.frame_set(12)
    check_refused("4 animated parent of the target bone", ob, "whose pose is an input")

with checks.step("keyed chain bones and a bone target are sampled and baked the same either way"):
    # ---------------------------------------------------------------- 5. keyed chain bones, a root parent, a bone target
    reset_scene()
    scene = bpy.context.scene
    ob = make_rig(
        "Rig",
        [((0, 0, 1), (0, 0.2, 2)), ((0, 0.2, 2), (0, 0, 3)), ((0, 0, 3), (0, 0, 3.8))],
        rolls=[0.3, -0.5, 1.0],
        parent_of_first="Root",
        extra_bones=[("Root", (0, 0, 0), (0, 0, 1), None), ("Goal", (1, 0, 1), (1, 0, 2), "Root")],
    )
    pose = ob.pose.bones
    pose["Root"].rotation_quaternion = (0.9, 0.1, 0.3, 0.0)  # static, not normalised
    pose["Goal"].location = (0.2, -0.4, 0.6)
    pose["B0"].rotation_mode = "ZXY"
    pose["B2"].rotation_mode = "AXIS_ANGLE"
    for frame, angle in ((1, 0.0), (9, 0.6), (17, -0.4), (24, 0.9)):
        pose["B0"].rotation_euler = (angle, 0.5 * angle, -angle)
        pose["B0"].keyframe_insert("rotation_euler", frame=frame)
        pose["B1"].rotation_quaternion = (1.0, 0.3 * angle, 0.0, 0.2)  # normalised when read
        pose["B1"].keyframe_insert("rotation_quaternion", frame=frame)
        pose["B2"].rotation_axis_angle = (angle, 0.0, 1.0, 0.5)
        pose["B2"].keyframe_insert("rotation_axis_angle", frame=frame)
    pose["B1"].keyframe_insert("location", frame=4)  # chain bones' location is not an input
    add_chain(ob, "B2", 3, "Rig", target_bone="Goal", mode="MANUAL")
    scene.frame_set(6)
    check_same_inputs(
        "5 keyed chain bones, bone target", ob, fields_present=("rotations", "target_world", "root_parent_armature")
    )
    same_bake_either_way("5 keyed chain bones, bone target", ob)
with checks.step("a custom property keyed on a chain bone is refused"):
    pose["B0"]["stretch"] = 1.0
    pose["B0"].keyframe_insert('["stretch"]', frame=1)
    check_refused("5 a custom property keyed on a chain bone", ob, "on a chain bone")

with checks.step("an animated parent bone of the chain's root is refused"):
    # The root's parent bone animated.
    reset_scene()
    scene = bpy.context.scene
    ob = make_rig(
        "Rig",
        [((0, 0, 1), (0, 0, 2)), ((0, 0, 2), (0, 0, 3))],
        parent_of_first="Root",
        extra_bones=[("Root", (0, 0, 0), (0, 0, 1), None)],
    )
    target = empty("Target", (0.8, 0.3, 2.0))
    ob.pose.bones["Root"].rotation_quaternion = (0.9, 0.2, 0.0, 0.1)
    ob.pose.bones["Root"].keyframe_insert("rotation_quaternion", frame=1)
    add_chain(ob, "B1", 2, "Target", mode="MANUAL")
    scene.frame_set(3)
    check_refused("animated root-parent bone", ob, "whose pose is an input")

# ---------------------------------------------------------------- writing keys: the shortcuts change nothing
# ``keyframes.write_channels`` skips, for a curve without keys, what ``keyframe_points.add``
# already set and the automatic handles ``FCurve.update`` recomputes. Its keys must equal a
# write of every attribute, key by key (new keys selected, as ``keyframe_insert`` leaves them).
keyframes = submodule("bake.keyframes")
KEY_ATTRIBUTES = (
    "co",
    "handle_left",
    "handle_right",
    "interpolation",
    "handle_left_type",
    "handle_right_type",
    "easing",
    "type",
    "back",
    "amplitude",
    "period",
    "select_control_point",
    "select_left_handle",
    "select_right_handle",
)


def every_attribute(fcurve) -> list:
    return [
        tuple(
            tuple(value) if name in ("co", "handle_left", "handle_right") else value
            for name, value in ((name, getattr(key, name)) for name in KEY_ATTRIBUTES)
        )
        for key in fcurve.keyframe_points
    ]


def written_key_by_key(ob, frames, values, interpolation: str):
    action = bpy.data.actions.new(f"{ob.name}_reference")
    compat.assign_action(ob, action)
    fcurve = compat.action_channels(action, ob)[0].new("location", index=0)
    fcurve.keyframe_points.add(len(frames))
    for key, frame, value in zip(fcurve.keyframe_points, frames, values, strict=True):
        key.co = key.handle_left = key.handle_right = (frame, value)
        key.interpolation, key.easing, key.type = interpolation, "AUTO", "KEYFRAME"
        key.handle_left_type = key.handle_right_type = "AUTO_CLAMPED"
        key.back, key.amplitude, key.period = 1.70158, 0.8, 4.1
        key.select_control_point = key.select_left_handle = key.select_right_handle = True
    fcurve.update()
    return fcurve


with checks.step("written keys equal a write of every attribute, key by key"):
    reset_scene()
    rng = np.random.default_rng(3)
    for count in (1, 2, 30):
        for interpolation in ("BEZIER", "LINEAR", "CONSTANT"):
            frames = np.arange(1.0, count + 1.0)
            values = rng.normal(size=count)
            ours, reference = empty(f"Ours{count}{interpolation}"), empty(f"Reference{count}{interpolation}")
            action = bpy.data.actions.new(f"{ours.name}_keys")
            compat.assign_action(ours, action)
            channel = keyframes.ChannelKeys("location", 0, "Object Transforms", frames, values)
            keyframes.write_channels(
                action, ours, [channel], frame_range=(1.0, float(count)), interpolation=interpolation
            )
            got = every_attribute(compat.find_channels(action, ours)[0].find("location", index=0))
            wanted = every_attribute(written_key_by_key(reference, frames, values, interpolation))
            checks.check(
                f"keys: {count} new {interpolation} key(s) equal a write of every attribute",
                got == wanted,
                "" if got == wanted else [(a, b) for a, b in zip(got, wanted, strict=True) if a != b][:1],
            )

checks.close()
