"""Session: random bakes over random animation, checked key by key.

Each of 40 cases is drawn from a seed: a chain of two to four bones, each in a random rotation
mode; keys already on its bones' rotation channels at random frames (some channels only),
on their locations and on a bone outside the chain, or no action at all; a target gliding
through the chain's reach, sometimes nudged without a key at the current frame; Euler bones
may have an axis locked; then a bake with a random range, frame step, destination,
interpolation and, on some, Remove Redundant Keys, Cyclic, Ease Jumps or an Influence below 1.

Checked from the action data and Blender's own evaluation: keys outside the baked range and
on every channel the bake does not own keep their frames, values and interpolation; with
Active Action the baked channels hold keys in the range on the step's frames only (and the
range's last), with New Action and New NLA Strip the old action is untouched and the new one
holds keys in the range only; the new keys are finite and in the bone's own channels, Euler
keys go on from the key before the range, locked angles hold, a nudged target stays; played
back, every frame of the range reaches the target (within the simplify tolerance's reach
where keys were removed).

argv: WORKDIR
"""

import math

import bpy
import numpy as np
from mathutils import Quaternion, Vector

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    armature_in_edit_mode,
    empty,
    pose_mode,
    random_unit,
    reset_scene,
    submodule,
)

checks = Checks("random bakes keep what they do not own")
compat = submodule("compat")
rotation_modes = submodule("rig.rotation_modes")
ROTATION_MODES = rotation_modes.ROTATION_MODES

CASES = 40
DESTINATIONS = ("ACTIVE_ACTION", "NEW_ACTION", "NLA")
INTERPOLATIONS = ("BEZIER", "LINEAR", "CONSTANT")


def keys_of(action) -> dict:
    """{(data path, index): [(frame, value, interpolation), ...]} of every F-curve of ``action``."""
    if action is None:
        return {}
    return {
        (fcurve.data_path, fcurve.array_index): [
            (round(key.co[0], 4), round(key.co[1], 6), key.interpolation) for key in fcurve.keyframe_points
        ]
        for fcurve in compat.all_action_fcurves(action)
    }


def make_case(seed: int):
    rng = np.random.default_rng(1000 + seed)
    count = int(rng.integers(2, 5))
    name = f"Arm{seed}"
    ob = armature_in_edit_mode(name)
    armature = ob.data
    other = armature.edit_bones.new("Other")
    other.head, other.tail = (1.0, 0.0, 0.0), (1.0, 0.0, 0.5)
    parent, head, lengths = None, Vector((0.0, 0.0, 0.0)), []
    for i in range(count):
        bone = armature.edit_bones.new(f"B{i}")
        lengths.append(rng.uniform(0.7, 1.0))
        # Bent a little from straight up, so the solve is well defined from rest.
        direction = (Vector((0.0, 0.0, 1.0)) + random_unit(rng) * 0.3).normalized()
        bone.head, bone.tail = head, head + direction * lengths[-1]
        bone.roll = rng.uniform(-math.pi, math.pi)
        bone.parent, bone.use_connect = parent, parent is not None
        parent, head = bone, bone.tail.copy()
    bpy.ops.object.mode_set(mode="OBJECT")
    modes = [ROTATION_MODES[int(rng.integers(len(ROTATION_MODES)))] for _ in range(count)]
    locked = {}  # bone index -> its locked Euler axis: never keyed, by the bake or before it
    for i, mode in enumerate(modes):
        ob.pose.bones[f"B{i}"].rotation_mode = mode
        if mode not in ("QUATERNION", "AXIS_ANGLE") and rng.random() < 0.3:
            locked[i] = int(rng.integers(3))
            ob.pose.bones[f"B{i}"].lock_rotation[locked[i]] = True

    # Keys already there, at frames around and inside the range a bake may take.
    if rng.random() < 0.8:
        for i, mode in enumerate(modes):
            pose_bone = ob.pose.bones[f"B{i}"]
            path, size = rotation_modes.data_path_and_size(mode)
            channels = [c for c in range(size) if rng.random() < 0.7 and c != locked.get(i)]
            for frame in sorted({int(f) for f in rng.integers(-10, 70, size=int(rng.integers(1, 6)))}):
                values = getattr(pose_bone, path)
                for c in channels:
                    values[c] = values[c] + rng.normal() * 0.1
                    pose_bone.keyframe_insert(path, index=c, frame=frame)
            if rng.random() < 0.5:
                pose_bone.location = tuple(rng.normal(size=3) * 0.01) if i else (0.0, 0.0, 0.0)
                pose_bone.keyframe_insert("location", index=2, frame=int(rng.integers(-5, 60)))
        other_bone = ob.pose.bones["Other"]
        for frame in (-3, 5, 25, 66):
            other_bone.rotation_quaternion = (1.0, rng.normal() * 0.2, 0.0, 0.0)
            other_bone.keyframe_insert("rotation_quaternion", frame=frame)

    # A target gliding through the reach: keyed 50-80% of the chain's length from its root,
    # within 60° of straight up, so that the glide between keys passes no nearer the root
    # than a quarter of the length, which every chain drawn here reaches with free joints.
    reach = sum(lengths)
    target = empty(f"Target{seed}")
    for frame in range(-10, 81, 10):
        tilt = random_unit(rng) * math.radians(rng.uniform(0.0, 60.0))
        up = Quaternion(tilt, tilt.length) @ Vector((0.0, 0.0, 1.0))
        target.location = up * reach * rng.uniform(0.5, 0.8)
        target.keyframe_insert("location", frame=frame)
    return ob, target, count, locked, rng


def rotation_paths(ob, count: int, locked: dict) -> set:
    """The channels a bake owns: every rotation channel of the chain's bones but locked ones."""
    return {
        (f'pose.bones["B{i}"].{rotation_modes.data_path_and_size(ob.pose.bones[f"B{i}"].rotation_mode)[0]}', c)
        for i in range(count)
        for c in range(rotation_modes.data_path_and_size(ob.pose.bones[f"B{i}"].rotation_mode)[1])
        if c != locked.get(i)
    }


def tip_error(ob, target, count: int) -> float:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = ob.evaluated_get(depsgraph)
    tip = evaluated.pose.bones[f"B{count - 1}"]
    return (evaluated.matrix_world @ tip.tail - target.evaluated_get(depsgraph).matrix_world.translation).length


with checks.step("random bakes keep what they do not own and reach"):
    reset_scene()
    scene = bpy.context.scene
    for seed in range(CASES):
        ob, target, count, locked, rng = make_case(seed)
        start = int(rng.integers(-5, 25))
        end = start + int(rng.integers(3, 40))
        step = int(rng.choice((1, 1, 2, 3, 5)))
        destination = str(rng.choice(DESTINATIONS))
        interpolation = str(rng.choice(INTERPOLATIONS))
        simplify = bool(rng.random() < 0.3)
        cyclic = bool(rng.random() < 0.2)
        ease_jumps = 12 if rng.random() < 0.2 else 0
        influence = float(rng.uniform(0.3, 0.9)) if rng.random() < 0.2 else 1.0
        options = [name for name, on in (("simplify", simplify), ("cyclic", cyclic), ("eased", ease_jumps)) if on]
        options += [f"influence {influence:.2f}"] if influence < 1.0 else []
        options += ["locks"] if locked else []
        label = f"case {seed} ({count} bones, {start}-{end} step {step}, {destination}, {interpolation}"
        label += "".join(f", {option}" for option in options) + ")"

        add_chain(ob, f"B{count - 1}", count, target.name, mode="MANUAL")
        ob.quat_ik.chains[0].influence = influence
        nudged = None
        if rng.random() < 0.3:  # the target moved without a key, to try a pose: the bake keeps it there
            target.location = nudged = Vector(target.location) + random_unit(rng) * 0.1
            label = label[:-1] + ", target nudged)"
        pose_mode(ob)
        old_action = ob.animation_data.action if ob.animation_data else None
        before = keys_of(old_action)
        tracks_before = len(ob.animation_data.nla_tracks) if ob.animation_data else 0
        result = bpy.ops.quat_ik.bake(
            frame_start=start,
            frame_end=end,
            step=step,
            destination=destination,
            interpolation=interpolation,
            simplify=simplify,
            cyclic=cyclic,
            ease_jumps=ease_jumps,
        )
        checks.check(f"{label}: bake finished", result == {"FINISHED"}, result)
        if nudged is not None:
            checks.check(f"{label}: the nudged target stays", target.location == nudged, tuple(target.location))
        owned = rotation_paths(ob, count, locked)
        if destination == "NLA":
            new_action = ob.animation_data.nla_tracks[-1].strips[-1].action
            checks.check(
                f"{label}: one new NLA track, the active action kept",
                len(ob.animation_data.nla_tracks) == tracks_before + 1 and ob.animation_data.action == old_action,
            )
        else:
            new_action = ob.animation_data.action
        after_old = keys_of(old_action)
        after_new = keys_of(new_action)

        # What the bake does not own keeps every key: other channels, and outside the range.
        if destination == "ACTIVE_ACTION" and old_action is not None:
            changed = []
            for channel, keys in before.items():
                kept = keys if channel not in owned else [k for k in keys if not start <= k[0] <= end]
                now = after_old.get(channel, [])
                now_kept = now if channel not in owned else [k for k in now if not start <= k[0] <= end]
                if now_kept != kept:
                    changed.append(f"{channel}: {kept} -> {now_kept}")
            checks.check(f"{label}: keys outside the range and on other channels kept", not changed, "; ".join(changed))
        else:
            checks.check(f"{label}: the old action untouched", after_old == before)

        # The baked channels: keys in the range only (new actions), on the step's frames and the last.
        steps = set(range(start, end + 1, step)) | {end}
        baked = {channel: keys for channel, keys in after_new.items() if channel in owned}
        checks.check(
            f"{label}: every rotation channel of the chain keyed", set(baked) == owned, sorted(set(baked) ^ owned)
        )
        in_range = [k for keys in baked.values() for k in keys if start <= k[0] <= end]
        checks.check(
            f"{label}: keys in the range on the step's frames (and its last) only",
            all(k[0] in steps for k in in_range) and (simplify or {k[0] for k in in_range} == steps),
            sorted({k[0] for k in in_range} ^ steps)[:6],
        )
        checks.check(f"{label}: new keys finite", all(math.isfinite(k[1]) for k in in_range))
        checks.check(
            f"{label}: new keys take the chosen interpolation",
            all(k[2] == interpolation for k in in_range if k[0] != end),
        )
        if destination != "ACTIVE_ACTION" or old_action is None:
            outside = [k for keys in after_new.values() for k in keys if not start <= k[0] <= end]
            checks.check(f"{label}: the new action holds keys in the range only", not outside, outside[:4])
        else:
            # Euler angles go on from the key before the range, without whole turns between.
            turns = []
            for (path, index), keys in after_new.items():
                if (path, index) not in owned or not path.endswith("rotation_euler"):
                    continue
                before_range = [k for k in keys if k[0] < start]
                first = [k for k in keys if start <= k[0] <= end][:1]
                if before_range and first and abs(first[0][1] - before_range[-1][1]) > math.pi + 1e-4:
                    turns.append(f"{path}[{index}]: {before_range[-1][1]:.3f} -> {first[0][1]:.3f}")
            checks.check(f"{label}: Euler keys go on from the key before the range", not turns, "; ".join(turns))
        held = [
            f"B{i}: {ob.pose.bones[f'B{i}'].rotation_euler[axis]!r}"
            for i, axis in locked.items()
            if ob.pose.bones[f"B{i}"].rotation_euler[axis] != 0.0
        ]
        checks.check(f"{label}: locked angles hold", not held, "; ".join(held))

        # Played back, the range reaches the target (NLA: the strip plays under the active action,
        # so the active action is set aside for this).
        if destination == "NLA":
            ob.animation_data.action = None
        errors = []
        for frame in sorted(steps):
            scene.frame_set(frame)
            errors.append(tip_error(ob, target, count))
        limit = 1e-3 if not simplify else 1e-3 + 2e-3 * count * sum(b.length for b in ob.data.bones)
        if influence == 1.0 and not ease_jumps:  # else the pose is meant to miss on the way
            checks.check(f"{label}: played back, the keyed frames reach", max(errors) < limit, f"{max(errors):.2e}")
        checks.check(f"{label}: played back, finite", all(math.isfinite(e) for e in errors))
        bpy.ops.object.mode_set(mode="OBJECT")
        ob.hide_set(True)
        target.hide_set(True)

checks.close()
