"""Session: the committed sample ``rigify_body`` (issue 36): the Rigify metarig walking, its arms
one body through the spine, its feet pinned while they stand. make_rigs.py rebuilds the same
rig; it bakes; every pin holds on every pinned frame; the top-priority goals are met on every
frame; no joint leaves its limits; the lower-priority hand is met wherever it does not
conflict; the bake keeps keys outside its range and the walk's own keys.

argv: WORKDIR
"""

import itertools
import json
import math
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Quaternion, Vector

from sample_rigs.blender_build import BLENDER_IK_NAME
from sample_rigs.make_rigs import RIGS_BY_NAME, SAMPLE_RIGS_DIR, make_rig
from sample_rigs.rigify_body import CONTACTS, PRIORITIES, REACH_FROM
from tests.blender.sessions.common import Checks, submodule

checks = Checks("the rigify_body sample: bodies, pins, priorities")
workdir = Path(sys.argv[1])

PIN_SHARE = 1e-4  # a pin holds its bone's head to this share of its body's size (issue 36)
PIN_TURN = 1e-4  # radians: and its rotation this close (the keys are float32)
REACHED = 1e-3  # scene units: a baked tip within 1 mm of its target, as for the other sample rigs
REACHED_ANGLE = math.radians(0.1)  # and an oriented tip's rotation within 0.1°
LIMITS = 1e-4  # radians: baked joints inside their limits up to float32 keys
CONFLICT = 0.01  # m: the left hand misses the door handle by more than this somewhere (the goals conflict)
OUTSIDE = (-10, 100)  # frames outside the bake's range keyed before it, to be kept
WALK_KEYS = (("spine", "location"), ("spine", "rotation_quaternion"), ("spine.001", "rotation_quaternion"))


SPEC_NUMBERS = 2e-5  # rebuilt and committed rig specs agree to this (Blender's float32 rest matrices)


def same_json(a, b) -> bool:
    """Equal structure and strings, numbers within SPEC_NUMBERS."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=0.0, abs_tol=SPEC_NUMBERS)
    return a == b


def fcurves(ob):
    action = ob.animation_data.action
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    slot = ob.animation_data.action_slot
    return [fc for layer in action.layers for strip in layer.strips for fc in strip.channelbag(slot).fcurves]


def keys_of(ob, bone: str, channel: str) -> list[tuple[float, ...]]:
    path = f'pose.bones["{bone}"].{channel}'
    return [tuple(k.co) for fc in fcurves(ob) if fc.data_path == path for k in fc.keyframe_points]


def chain_size(names: list[str]) -> float:
    """The add-on's body size for one chain: root head to tip tail along the bones at rest."""
    bones = [ob.data.bones[n] for n in names]
    return sum((b.head_local - a.head_local).length for a, b in itertools.pairwise(bones)) + bones[-1].length


def chain_names(chain) -> list[str]:
    names, bone = [], ob.data.bones[chain.tip_bone]
    while bone is not None and len(names) < chain.chain_length:
        names.append(bone.name)
        bone = bone.parent
    return names[::-1]


bpy.ops.wm.open_mainfile(filepath=str(SAMPLE_RIGS_DIR / "rigify_body.blend"))
scene = bpy.context.scene
ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
chains = {chain.name: chain for chain in ob.quat_ik.chains}
frames = list(range(scene.frame_start, scene.frame_end + 1))

with checks.step("make_rigs.py rebuilds the committed rig"):
    rebuilt = workdir / "rebuilt"
    make_rig(RIGS_BY_NAME["rigify_body"], rebuilt)
    committed = SAMPLE_RIGS_DIR / "rigify_body.rig.json"
    checks.check(
        "the rebuilt rig spec matches the committed rigify_body.rig.json",
        same_json(json.loads((rebuilt / "rigify_body.rig.json").read_text()), json.loads(committed.read_text())),
        "run sample_rigs/make_rigs.py with Blender 3.4 and commit the result",
    )
    bpy.ops.wm.open_mainfile(filepath=str(rebuilt / "rigify_body.blend"))
    new = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    rebuilt_paths = []
    for frame in (1, 30, 60, 88):
        scene = bpy.context.scene
        scene.frame_set(frame)
        rebuilt_paths.append([tuple(c.target_object.matrix_world.translation) for c in new.quat_ik.chains])
        rebuilt_paths[-1] += [tuple(new.pose.bones["spine"].head)]
    pins_rebuilt = [(p.bone, p.frame_start, p.frame_end, tuple(p.location)) for p in new.quat_ik.pins]
    bpy.ops.wm.open_mainfile(filepath=str(SAMPLE_RIGS_DIR / "rigify_body.blend"))
    scene = bpy.context.scene
    ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    chains = {chain.name: chain for chain in ob.quat_ik.chains}
    committed_paths = []
    for frame in (1, 30, 60, 88):
        scene.frame_set(frame)
        committed_paths.append([tuple(c.target_object.matrix_world.translation) for c in ob.quat_ik.chains])
        committed_paths[-1] += [tuple(ob.pose.bones["spine"].head)]
    difference = float(np.max(np.abs(np.array(rebuilt_paths) - np.array(committed_paths))))
    checks.check("the same targets and hips on sampled frames", difference < 1e-5, f"{difference:.3g}")
    pins_committed = [(p.bone, p.frame_start, p.frame_end, tuple(p.location)) for p in ob.quat_ik.pins]
    checks.check(
        "the same pins",
        len(pins_rebuilt) == len(pins_committed)
        and all(
            a[:3] == b[:3] and np.allclose(a[3], b[3], atol=1e-6)
            for a, b in zip(pins_rebuilt, pins_committed, strict=True)
        ),
        f"{pins_rebuilt} vs {pins_committed}",
    )

with checks.step("the sample opens with its bodies, priorities, pins and walk"):
    checks.check("four chains", sorted(chains) == sorted(PRIORITIES), sorted(chains))
    checks.check("solved as bodies", ob.quat_ik.use_bodies)
    for name, chain in chains.items():
        checks.check(
            f"{name}: priority {PRIORITIES[name]}, Per Frame",
            chain.priority == PRIORITIES[name] and chain.mode == "PER_FRAME",
            f"priority {chain.priority}, mode {chain.mode}",
        )
        ik = [c for c in ob.pose.bones[chain.tip_bone].constraints if c.name == BLENDER_IK_NAME]
        checks.check(
            f"{name}: a muted Blender IK constraint over the same bones and target",
            len(ik) == 1
            and ik[0].mute
            and ik[0].chain_count == chain.chain_length
            and ik[0].target == chain.target_object,
        )
    shared = set(chain_names(chains["arm.L"])) & set(chain_names(chains["arm.R"]))
    checks.check("both arms share the spine", {"spine.002", "spine.003"} <= shared, sorted(shared))
    checks.check("the right hand matches its target's rotation", chains["arm.R"].orientation_mode != "NONE")
    pins = [(p.bone, p.frame_start, p.frame_end, p.hold, p.enabled) for p in ob.quat_ik.pins]
    expected = [(c.foot, c.start, c.end, "BOTH", True) for c in CONTACTS]
    checks.check("a pin per foot contact", pins == expected, pins)
    for bone, channel in WALK_KEYS:
        keyed = keys_of(ob, bone, channel)
        checks.check(f"{bone}.{channel} keyed on every frame", len({k[0] for k in keyed}) == len(frames), len(keyed))

with checks.step("it bakes"):
    walk_before = {(bone, channel): keys_of(ob, bone, channel) for bone, channel in WALK_KEYS}
    hand = ob.pose.bones["hand.L"]
    for frame in OUTSIDE:  # the rest pose, keyed outside the range: does not change the frames baked
        hand.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        hand.keyframe_insert("rotation_quaternion", frame=frame)
    outside_before = keys_of(ob, "hand.L", "rotation_quaternion")
    result = bpy.ops.quat_ik.bake(armature=ob.name, frame_start=frames[0], frame_end=frames[-1])
    checks.check("quat_ik.bake finished", result == {"FINISHED"}, result)
    reader = submodule("rig.reader")
    rigs = {name: reader.read_chain_rig(ob, chain) for name, chain in chains.items()}
    baked = {name: [] for name in chains}  # per chain: (rotations, position error, orientation error) per frame
    held = {k: [] for k in range(len(ob.quat_ik.pins))}
    for frame in frames:
        scene.frame_set(frame)
        for name, chain in chains.items():
            tip = ob.pose.bones[chain.tip_bone]
            target = chain.target_object.matrix_world
            position = ((ob.matrix_world @ tip.tail) - target.translation).length
            angle = 0.0
            if chain.orientation_mode != "NONE":
                turn = (ob.matrix_world @ tip.matrix).to_quaternion().rotation_difference(target.to_quaternion()).angle
                angle = min(turn, 2 * math.pi - turn)
            rotations = [tuple(ob.pose.bones[n].rotation_quaternion) for n in rigs[name].bone_names]
            baked[name].append((rotations, position, angle))
        for k, pin in enumerate(ob.quat_ik.pins):
            if pin.frame_start <= frame <= pin.frame_end:
                matrix = ob.pose.bones[pin.bone].matrix
                turn = matrix.to_quaternion().rotation_difference(Quaternion(pin.rotation)).angle
                held[k].append(
                    (frame, (matrix.to_translation() - Vector(pin.location)).length, min(turn, 2 * math.pi - turn))
                )

with checks.step("every pin holds on every pinned frame"):
    for k, pin in enumerate(ob.quat_ik.pins):
        size = max(chain_size(chain_names(c)) for c in chains.values() if pin.bone in chain_names(c))
        slips = held[k]
        worst = max(slips, key=lambda s: s[1])
        checks.check(
            f"{pin.name}: the head within {PIN_SHARE:g} of the body's {size:.2f} m on frames {pin.frame_start}-{pin.frame_end}",
            len(slips) == pin.frame_end - pin.frame_start + 1 and worst[1] <= PIN_SHARE * size,
            f"largest slip {worst[1] * 1e3:.4f} mm at frame {worst[0]}",
        )
        turn = max(s[2] for s in slips)
        checks.check(f"{pin.name}: the rotation held", turn <= PIN_TURN, f"largest turn {math.degrees(turn):.2g}°")
        checks.check(f"{pin.name}: its status says held", pin.status_solved and pin.status_held, pin.status_message)

with checks.step("the top-priority goals are met on every frame"):
    for name in ("arm.R", "leg.L", "leg.R"):
        positions = [p for _r, p, _a in baked[name]]
        angles = [a for _r, _p, a in baked[name]]
        worst = int(np.argmax(positions))
        checks.check(
            f"{name}: within {REACHED * 1e3:g} mm on all {len(frames)} frames",
            max(positions) <= REACHED,
            f"largest {max(positions) * 1e3:.3g} mm at frame {frames[worst]}",
        )
        checks.check(f"{name}: rotation within 0.1°", max(angles) <= REACHED_ANGLE, f"{math.degrees(max(angles)):.2g}°")

with checks.step("no joint leaves its limits"):
    for name, rig in rigs.items():
        rotations = np.array([r for r, _p, _a in baked[name]])
        violation = float(
            np.max(rig.chain.limit_violation(rotations / np.linalg.norm(rotations, axis=-1, keepdims=True)))
        )
        checks.check(f"{name}: every baked joint inside its limits", violation <= LIMITS, f"{violation:.2g} rad")

with checks.step("the lower-priority hand is met where nothing conflicts"):
    left = [p for _r, p, _a in baked["arm.L"]]
    free = [p for frame, p in zip(frames, left, strict=True) if frame < REACH_FROM]
    checks.check(
        f"arm.L within {REACHED * 1e3:g} mm before it reaches for the handle (frame {REACH_FROM})",
        max(free) <= REACHED,
        f"largest {max(free) * 1e3:.3g} mm",
    )
    missed = [frame for frame, p in zip(frames, left, strict=True) if p > CONFLICT]
    right = [p for frame, (_r, p, _a) in zip(frames, baked["arm.R"], strict=True) if frame in missed]
    checks.check(
        "the handle is out of reach somewhere, and there the right hand stays on the rail",
        bool(missed) and max(right) <= REACHED,
        f"arm.L misses by over {CONFLICT * 1e3:g} mm on frames {missed[:1]}..{missed[-1:]}; arm.R's largest error there "
        f"{max(right, default=0.0) * 1e3:.3g} mm",
    )

with checks.step("the bake keeps keys outside its range and the walk's own keys"):
    after = keys_of(ob, "hand.L", "rotation_quaternion")
    kept = [k for k in outside_before if k[0] in OUTSIDE]
    checks.check(
        f"hand.L's keys at frames {OUTSIDE} kept",
        all(any(abs(a[0] - k[0]) < 1e-6 and abs(a[1] - k[1]) < 1e-6 for a in after) for k in kept) and len(kept) == 8,
        f"{len(kept)} keys before; after: {[k for k in after if k[0] in OUTSIDE]}",
    )
    for (bone, channel), before in walk_before.items():
        checks.check(f"{bone}.{channel}: the walk's keys unchanged", keys_of(ob, bone, channel) == before)

checks.close()
