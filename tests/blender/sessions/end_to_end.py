"""Session: add chain -> solve -> bake -> save -> reload; keys outside the range and on other
bones untouched; bake into a new action and an NLA strip; step and key reduction; bulk keys
in 5.0's channelbags.

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Vector

from tests.blender.sessions.common import (
    Checks,
    action_keys,
    add_chain,
    effector_world,
    empty,
    make_rig,
    pose_mode,
    radians,
    reset_scene,
    scene_snapshot,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("end to end: add, solve, bake, save, reload")
compat = submodule("compat")
reset_scene()

# A rig: Root -> B0 -> B1 -> B2 (chain), plus Other (not in the chain); bones with roll.
ob = make_rig(
    "Rig",
    [((0, 0, 1), (0, 0.2, 2)), ((0, 0.2, 2), (0, 0, 3)), ((0, 0, 3), (0, 0, 3.8))],
    rolls=[0.3, -0.5, 1.0],
    parent_of_first="Root",
    extra_bones=[("Root", (0, 0, 0), (0, 0, 1), None), ("Other", (1, 0, 0), (1, 0, 1), "Root")],
)
target = empty("Target", (1.2, 0.4, 2.5))
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 60


def target_at(frame: int) -> Vector:
    t = (frame - 1) / 59.0
    return Vector((1.5 * math.cos(2 * math.pi * t), 1.5 * math.sin(2 * math.pi * t), 2.2 + 0.5 * t))


for frame in range(1, 61, 3):
    target.location = target_at(frame)
    target.keyframe_insert("location", frame=frame)

# Joint limits: a ball cone on B0, a hinge on B1.
pb = ob.pose.bones
pb["B0"].quat_ik.joint_type = "BALL"
window = pb["B0"].quat_ik.windows.add()
window.shape = "CONE"
window.half_angle = radians(80)
pb["B1"].quat_ik.joint_type = "HINGE"
pb["B1"].quat_ik.hinge_axis = "X"
pb["B1"].quat_ik.hinge_min, pb["B1"].quat_ik.hinge_max = radians(-150), radians(150)

# An active action with keys we must not disturb.
pose_mode(ob)
pb["Other"].rotation_quaternion = (0.9, 0.1, 0.2, 0.0)
pb["Other"].keyframe_insert("rotation_quaternion", frame=1)
pb["Other"].rotation_quaternion = (0.8, 0.0, 0.3, 0.1)
pb["Other"].keyframe_insert("rotation_quaternion", frame=30)
for frame, angle in ((-10, 0.3), (20, 0.5), (100, -0.4)):
    pb["B1"].rotation_quaternion = (math.cos(angle / 2), math.sin(angle / 2), 0, 0)
    pb["B1"].keyframe_insert("rotation_quaternion", frame=frame)
pb["B1"].rotation_quaternion = (1, 0, 0, 0)
action = ob.animation_data.action
# One key outside the range gets hand-made free handles, a breakdown type and linear interpolation.
for fcurve in compat.all_action_fcurves(action):
    if fcurve.data_path == 'pose.bones["B1"].rotation_quaternion' and fcurve.array_index == 1:
        key = fcurve.keyframe_points[0]
        key.handle_left_type = key.handle_right_type = "FREE"
        key.handle_left, key.handle_right = (-12.0, 0.5), (-7.0, -0.2)
        key.interpolation, key.type = "LINEAR", "BREAKDOWN"
keys_before = action_keys(action)
scene.frame_set(7)

with checks.step("a chain is added and solved onto the target"):
    # ---- add chain (operator) and solve now
    result = add_chain(ob, "B2", 3, "Target", mode="MANUAL", iterations=100, tolerance=1e-5)
    checks.check("add_chain finished", result == {"FINISHED"}, result)
    chains = ob.quat_ik.chains
    checks.check(
        "one chain with the operator's settings",
        len(chains) == 1
        and chains[0].tip_bone == "B2"
        and chains[0].chain_length == 3
        and chains[0].target_object == target,
        [(c.tip_bone, c.chain_length) for c in chains],
    )
    chain = chains[0]
    checks.check("chain is named after its tip", chain.name == "B2", chain.name)
    result = bpy.ops.quat_ik.solve()
    checks.check("solve finished", result == {"FINISHED"}, result)
    error = (effector_world(ob, "B2") - target.matrix_world.translation).length
    checks.check("solve reaches the target", error < 1e-4, error)
    checks.check(
        "status stored on the chain",
        chain.status_solved and chain.status_converged and chain.status_iterations > 0,
        (chain.status_converged, chain.status_error, chain.status_iterations),
    )

with checks.step("a bake keys the range into the active action, other bones untouched"):
    # ---- bake into the active action, frames 1-60
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=60)
    checks.check("bake finished", result == {"FINISHED"}, result)
    checks.check("current frame restored", scene.frame_current == 7, scene.frame_current)
    checks.check("chain switched to Manual after bake", chain.mode == "MANUAL", chain.mode)
    checks.check("bake stays in the active action", ob.animation_data.action == action, ob.animation_data.action)
    keys_after = action_keys(action)
    other_paths = [k for k in keys_before if "Other" in k[0]]
    checks.check(
        "keys on another bone untouched", all(keys_before[k] == keys_after[k] for k in other_paths), other_paths
    )
    b1_after = keys_after[('pose.bones["B1"].rotation_quaternion', 0)]
    frames_b1 = [k[0][0] for k in b1_after]
    checks.check(
        "B1 keyed on every frame of the range plus the two outside",
        frames_b1 == [-10.0, *range(1, 61), 100.0],
        frames_b1[:5],
    )
with checks.step("keys outside the range stay exactly as they were"):
    for index in range(4):
        path = ('pose.bones["B1"].rotation_quaternion', index)
        outside_before = [k for k in keys_before[path] if k[0][0] in (-10.0, 100.0)]
        outside_after = [k for k in keys_after[path] if k[0][0] in (-10.0, 100.0)]
        checks.check(
            f"B1[{index}] keys outside the range identical (value, interpolation, handles, type)",
            len(outside_before) == 2 and outside_before == outside_after,
            (outside_before, outside_after),
        )
with checks.step("the chain's bones are keyed on every frame of the range"):
    for name in ("B0", "B2"):
        for index in range(4):
            frames = [k[0][0] for k in keys_after.get((f'pose.bones["{name}"].rotation_quaternion', index), ())]
            checks.check(f"{name}[{index}] keyed on frames 1-60", frames == list(map(float, range(1, 61))), frames[:3])
with checks.step("keys live in the slot's channelbag grouped by bone (5.0)"):
    if compat.HAS_SLOTTED_ACTIONS:
        bags = [bag for layer in action.layers for strip in layer.strips for bag in strip.channelbags]
        paths = {fc.data_path for bag in bags for fc in bag.fcurves}
        checks.check(
            "5.0: keys live in the slot's channelbag",
            'pose.bones["B0"].rotation_quaternion' in paths and len(bags) == 1,
            paths,
        )
        checks.check(
            "5.0: curves grouped by bone",
            all(
                fc.group is not None and fc.group.name in fc.data_path
                for bag in bags
                for fc in bag.fcurves
                if "B" in fc.data_path
            ),
            "",
        )

with checks.step("the baked poses reach, keep the limits and never flip sign"):
    rig_reader = submodule("rig.reader")
    rig = rig_reader.read_chain_rig(ob, chain)
    errors, rotations = [], []
    for frame in range(1, 61):
        scene.frame_set(frame)
        errors.append((effector_world(ob, "B2") - target.matrix_world.translation).length)
        rotations.append([tuple(pb[n].rotation_quaternion) for n in ("B0", "B1", "B2")])
    checks.check("baked pose reaches the target on every frame", max(errors) < 1e-3, f"max error {max(errors):.2e}")
    violation = float(np.max(rig.chain.limit_violation(np.array(rotations))))
    checks.check("baked poses respect the joint limits", violation < 1e-6, violation)
    q = np.array(rotations)
    checks.check("quaternion keys continuous (no sign flips)", float(np.min(np.sum(q[1:] * q[:-1], axis=-1))) > 0.0, "")
    scene.frame_set(7)

with checks.step("a saved and reopened file keeps chains, limits and keys"):
    # ---- save, clear, reload
    blend = workdir / "baked.blend"
    before = scene_snapshot()
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    ob.quat_ik.chains.clear()
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    after = scene_snapshot()
    ob = bpy.data.objects["Rig"]
    checks.check(
        "reload: chains and their settings intact",
        before["objects"]["Rig"]["chains"] == after["objects"]["Rig"]["chains"],
        "",
    )
    checks.check("reload: bone limits intact", before["objects"]["Rig"]["pose"] == after["objects"]["Rig"]["pose"], "")
    checks.check("reload: keys intact", before["actions"] == after["actions"], "")
    checks.check(
        "reload: the chain's target pointer survives",
        ob.quat_ik.chains[0].target_object == bpy.data.objects["Target"],
        "",
    )

with checks.step("a bake into a new action keeps the old one"):
    # ---- bake into a new action: the old one is kept
    scene = bpy.context.scene
    old_action = ob.animation_data.action
    pose_mode(ob)
    result = bpy.ops.quat_ik.bake(frame_start=10, frame_end=20, destination="NEW_ACTION")
    new_action = ob.animation_data.action
    checks.check("new action bake finished", result == {"FINISHED"}, result)
    checks.check(
        "new action is active and the old one kept (fake user)",
        new_action != old_action and old_action.use_fake_user,
        (new_action, old_action.use_fake_user),
    )
    checks.check("old action's keys unchanged", action_keys(old_action) == after["actions"][old_action.name], "")
    frames = [k[0][0] for k in action_keys(new_action)[('pose.bones["B1"].rotation_quaternion', 0)]]
    checks.check("new action holds only the range", frames == list(map(float, range(10, 21))), frames)

with checks.step("a bake into an NLA strip leaves the active action alone"):
    # ---- bake into an NLA strip: the active action is not changed
    keys_active = action_keys(new_action)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=30, step=5, destination="NLA")
    anim = ob.animation_data
    checks.check("NLA bake finished", result == {"FINISHED"}, result)
    checks.check(
        "active action not changed by NLA bake",
        anim.action == new_action and action_keys(new_action) == keys_active,
        "",
    )
    tracks = [t for t in anim.nla_tracks]
    checks.check(
        "a new NLA track with one strip", len(tracks) == 1 and len(tracks[0].strips) == 1, [t.name for t in tracks]
    )
    strip_action = tracks[0].strips[0].action
    frames = [k[0][0] for k in action_keys(strip_action)[('pose.bones["B2"].rotation_quaternion', 0)]]
    checks.check(
        "step 5 keys every fifth frame and the last", frames == [1.0, 6.0, 11.0, 16.0, 21.0, 26.0, 30.0], frames
    )
    if compat.HAS_SLOTTED_ACTIONS:
        checks.check("5.0: the strip plays the object's slot", tracks[0].strips[0].action_slot is not None, "")

with checks.step("simplified keys stay within the tolerance of the full bake"):
    # ---- remove redundant keys (linear interpolation: exact within tolerance)
    ob.animation_data.action = None
    result = bpy.ops.quat_ik.bake(
        frame_start=1,
        frame_end=60,
        destination="NEW_ACTION",
        simplify=True,
        simplify_tolerance=0.01,
        interpolation="LINEAR",
    )
    simplified = ob.animation_data.action
    keys = action_keys(simplified)
    counts = [len(v) for k, v in keys.items() if "rotation" in k[0]]
    checks.check("simplify keeps fewer keys", result == {"FINISHED"} and max(counts) < 60, counts)
    fcurves = compat.all_action_fcurves(simplified)
    reference = action_keys(old_action)
    worst = 0.0
    for fcurve in fcurves:
        full = dict((k[0][0], k[0][1]) for k in reference.get((fcurve.data_path, fcurve.array_index), ()))
        for frame in range(1, 61):
            if frame in full:
                worst = max(worst, abs(fcurve.evaluate(frame) - full[frame]))
    checks.near("simplified curves stay within the tolerance of the full bake", worst, 0.0, 0.0101)

checks.close()
