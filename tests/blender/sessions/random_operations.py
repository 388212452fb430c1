"""Session: random sequences of operators and edits on a small character.

Three hundred steps drawn from a seed: every Quat IK operator that works on a chain or on
joint limits (with random values for its options, read from its own RNA), random values for
the chain's settings and the active bone's joint limits, a different active bone or rotation
mode, a renamed bone, a deleted target, Solve Now and short bakes. After every step:

* an operator that failed said why and left the scene as it was (Live and Per Frame chains
  settled first: an edit before the operator is theirs to answer);
* every channel of every bone is finite;
* every chain either solves or refuses with a message (checked every tenth step).

Every 25 steps the file is saved and opened again: the scene (chains, limits, poses, keys)
comes back as it was saved.

argv: WORKDIR [SEED] (11 unless given)
"""

import sys
from pathlib import Path

import bpy
import numpy as np

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    armature_in_edit_mode,
    channels_finite,
    empty,
    pose_mode,
    reset_scene,
    scene_snapshot,
    snapshot_difference,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("random operations: clear failures, finite poses, files that reopen as saved")
runtime = submodule("runtime.state").session
STEPS = 300
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 11
rng = np.random.default_rng(SEED)

# Operators that need a file, a long computation or a window are left out (their own tests
# cover them): import/export of rig limits, learning start poses, Report News.
OPERATORS = (
    "add_chain",
    "remove_chain",
    "move_chain",
    "sort_chains",
    "select_bone_chain",
    "solve",
    "bake",
    "from_ik_constraint",
    "limits_fit_from_action",
    "next_jump",
    "limits_reset",
    "limits_copy_to_selected",
    "limits_mirror",
    "limits_from_blender",
    "window_add",
    "window_remove",
    "polygon_vertex_add",
    "polygon_vertex_remove",
    "mirror_chain",
    "add_pole",
    "apply_limit_preset",
    "apply_limb_presets",
    "snap_target",
    "window_shape_preset",
    "window_to_polygon",
    "polygon_make_convex",
    "polygon_split_convex",
)
BONES = {
    # name: (head, tail, parent)
    "Hips": ((0, 0, 1.0), (0, 0, 1.3), None),
    "Spine": ((0, 0, 1.3), (0, 0, 1.6), "Hips"),
    "Chest": ((0, 0, 1.6), (0, 0, 1.9), "Spine"),
    "upper_arm.L": ((0.2, 0, 1.85), (0.5, 0, 1.85), "Chest"),
    "forearm.L": ((0.5, 0, 1.85), (0.8, 0.05, 1.85), "upper_arm.L"),
    "hand.L": ((0.8, 0.05, 1.85), (0.9, 0.05, 1.85), "forearm.L"),
    "upper_arm.R": ((-0.2, 0, 1.85), (-0.5, 0, 1.85), "Chest"),
    "forearm.R": ((-0.5, 0, 1.85), (-0.8, 0.05, 1.85), "upper_arm.R"),
    "hand.R": ((-0.8, 0.05, 1.85), (-0.9, 0.05, 1.85), "forearm.R"),
    "thigh.L": ((0.1, 0, 1.0), (0.1, 0.02, 0.55), "Hips"),
    "shin.L": ((0.1, 0.02, 0.55), (0.1, 0, 0.1), "thigh.L"),
    "thigh.R": ((-0.1, 0, 1.0), (-0.1, 0.02, 0.55), "Hips"),
    "shin.R": ((-0.1, 0.02, 0.55), (-0.1, 0, 0.1), "thigh.R"),
}


def make_character():
    reset_scene()
    ob = armature_in_edit_mode("Character")
    for name, (head, tail, parent) in BONES.items():
        bone = ob.data.edit_bones.new(name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent = ob.data.edit_bones[parent]
            bone.use_connect = BONES[parent][1] == head
    bpy.ops.object.mode_set(mode="OBJECT")
    for name, place in (("HandTarget", (0.7, -0.3, 1.5)), ("FootTarget", (-0.1, -0.2, 0.2)), ("Prop", (0, -0.5, 1.2))):
        empty(name, place)
    add_chain(ob, "hand.L", 3, "HandTarget", mode="MANUAL")
    add_chain(ob, "shin.R", 2, "FootTarget", mode="MANUAL")
    # An animated target, so bakes and Fit from Action have something to read.
    target = bpy.data.objects["HandTarget"]
    for frame, x in ((1, 0.7), (10, 0.5)):
        target.location.x = x
        target.keyframe_insert("location", frame=frame)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 10
    bpy.context.scene.frame_set(1)  # the target where its keys put it
    pose_mode(ob, "hand.L")
    return ob


def settle(label: str) -> None:
    """Update until no chain solves: Live and Per Frame chains answer an edit in the update
    that follows it. A chain whose inputs a chain after it moves (sharing bones, or hanging
    below it: the panel warns of both) answers in the next update, and a chain depending on
    that one in the one after: the random sessions stack up to 21 chains on one arm, which
    took up to five updates. One solving update per chain after the first is ample: still
    solving after that is a loop."""
    armatures = [o for o in bpy.data.objects if o.type == "ARMATURE"]
    updates = 1 + sum(len(armature.quat_ik.chains) for armature in armatures)
    for _ in range(updates + 1):
        runtime.stats.clear()
        for armature in armatures:
            armature.update_tag()
        bpy.context.view_layer.update()
        if not runtime.stats["solves"]:
            return
    checks.check(f"{label}: Live and Per Frame chains settle", False, dict(runtime.stats))


def random_value(prop):
    """A random value for an RNA property (None: leave it)."""
    if prop.is_readonly or prop.identifier in ("rna_type", "name"):
        return None
    if prop.type == "BOOLEAN" and not prop.is_array:
        return bool(rng.random() < 0.5)
    if prop.type == "ENUM" and not prop.is_enum_flag:
        items = [item.identifier for item in prop.enum_items]
        return str(rng.choice(items)) if items else None
    if prop.type in ("INT", "FLOAT"):
        low = max(prop.soft_min, -1e3)
        high = min(prop.soft_max, 1e3)
        if prop.type == "INT":
            low, high = max(low, -10), min(high, 10)
            values = rng.integers(int(low), int(high) + 1, size=max(prop.array_length, 1))
        else:
            values = rng.uniform(low, high, size=max(prop.array_length, 1))
        values = [v.item() for v in values]
        return tuple(values) if prop.is_array else values[0]
    return None


def operator_arguments(name: str) -> dict:
    properties = getattr(bpy.ops.quat_ik, name).get_rna_type().properties
    arguments = {}
    for prop in properties:
        if prop.identifier in ("interactive", "filepath") or rng.random() < 0.5:
            continue  # half the options keep their defaults
        value = random_value(prop)
        if value is not None:
            arguments[prop.identifier] = value
    if name == "bake":
        start = int(rng.integers(-2, 8))
        arguments.update(frame_start=start, frame_end=start + int(rng.integers(0, 6)))
    if name == "add_chain":
        empties = [o.name for o in bpy.context.scene.objects if o.type == "EMPTY"]
        arguments["target"] = str(rng.choice([*empties, *empties, "", "Missing"]))
        arguments["chain_length"] = int(rng.integers(1, 5))
    return arguments


def set_random_settings(owner) -> str:
    """Random values for a few of a property group's settings (a user typing in the panel)."""
    properties = [p for p in owner.bl_rna.properties if not p.is_readonly and p.identifier != "rna_type"]
    changed = []
    for prop in rng.choice(properties, size=min(3, len(properties)), replace=False):
        value = random_value(prop)
        if value is None or prop.identifier.startswith("status_"):
            continue
        try:
            setattr(owner, prop.identifier, value)
            changed.append(prop.identifier)
        except (TypeError, ValueError):  # e.g. an enum item not allowed for this state
            pass
    return ", ".join(changed)


def armatures() -> list:
    return [o for o in bpy.data.objects if o.type == "ARMATURE"]


def chains_solve_or_say_why(step: int) -> None:
    """Solve Now on every chain of every armature: it finishes finite or refuses cleanly."""
    for ob in [o for o in bpy.data.objects if o.type == "ARMATURE" and o.quat_ik.chains]:
        pose_mode(ob)
        settle(f"step {step}")
        before = scene_snapshot()
        try:
            result = bpy.ops.quat_ik.solve(chains="ALL")
            ok = result == {"FINISHED"} and channels_finite(*armatures())
            checks.check(f"step {step}: chains of '{ob.name}' solve", ok, result)
        except RuntimeError as error:
            difference = snapshot_difference(before, scene_snapshot())
            checks.check(
                f"step {step}: chains of '{ob.name}' refuse with a message and no change",
                bool(str(error).strip()) and not difference,
                f"{str(error).strip()} {difference}",
            )


# How often each kind of step comes (a deletion rarely, so that targets stay to reach for).
KINDS = {"operator": 10, "settings": 2, "limits": 3, "active bone": 3, "rotation mode": 1, "rename": 1, "delete": 1}
KIND_NAMES, KIND_WEIGHTS = list(KINDS), np.array(list(KINDS.values()), dtype=float) / sum(KINDS.values())
# Adding a chain comes three times as often as another operator, removing one half as often.
OPERATOR_WEIGHTS = np.array([3.0 if n == "add_chain" else 0.5 if n == "remove_chain" else 1.0 for n in OPERATORS])
OPERATOR_WEIGHTS /= OPERATOR_WEIGHTS.sum()


def chain_bone(ob):
    """A bone of a chain (most steps act on one), else any bone."""
    names = [chain.tip_bone for chain in ob.quat_ik.chains if chain.tip_bone in ob.data.bones]
    return ob.data.bones[str(rng.choice(names))] if names else ob.data.bones[int(rng.integers(len(ob.data.bones)))]


def solved_on_load(ob) -> set[str]:
    """The bones whose rotations opening a file may solve again: an armature's Per Frame chains
    are solved at the file's frame when it loads, as a frame change solves them, with the Live
    chains below them (tests/blender/sessions/per_frame_on_load.py checks that pose). Where the
    chains share bones or move each other's inputs (the random stacks do), that solve need not
    give the pose saved, as a frame change would not: all its chains' bones, then."""
    chains = [chain for chain in ob.quat_ik.chains if chain.enabled and chain.mode in ("LIVE", "PER_FRAME")]
    if not any(chain.mode == "PER_FRAME" for chain in chains):
        return set()
    bones = set()
    for chain in chains:
        bone = ob.data.bones.get(chain.tip_bone)
        for _ in range(chain.chain_length):
            if bone is None:
                break
            bones.add(bone.name)
            bone = bone.parent
    return bones


def saved_snapshot() -> dict:
    """The scene as a saved file keeps it: actions nothing uses are not written, and opening
    it plays the animation over animated transforms and poses changed without keys (Live
    chains on them catch up at the next edit, as after any frame change), and solves Per Frame
    chains (``solved_on_load``: their bones' rotations and their chains' Last Solve figures):
    those are not compared."""
    snapshot = scene_snapshot()
    for ob in bpy.data.objects:
        solved = solved_on_load(ob) if ob.type == "ARMATURE" else set()
        if not solved:
            continue
        entry = snapshot["objects"][ob.name]
        for bone in solved & set(entry["pose"]):
            mode, _quaternion, _euler, _axis_angle, *kept = entry["pose"][bone]
            entry["pose"][bone] = (mode, *kept)
        entry["chains"] = tuple(
            (name, tuple(tuple(item for item in chain if not item[0].startswith("status_")) for chain in value))
            if name == "chains"
            else (name, value)
            for name, value in entry["chains"]
        )
    for action in bpy.data.actions:
        if action.users == 0:
            snapshot["actions"].pop(action.name, None)
    compat = submodule("compat")
    for ob in bpy.data.objects:
        anim = ob.animation_data
        if anim is None:
            continue
        actions = [anim.action] + [strip.action for track in anim.nla_tracks for strip in track.strips]
        paths = {fcurve.data_path for action in actions if action for fcurve in compat.all_action_fcurves(action)}
        entry = snapshot["objects"][ob.name]
        if any(not path.startswith("pose.") for path in paths):
            del entry["matrix"]  # an animated transform (a snapped target moves without a key)
        for bone in list(entry.get("pose", ())):
            if any(path.startswith(f'pose.bones["{bone}"]') for path in paths):
                del entry["pose"][bone]
    return snapshot


with checks.step("random operations fail clearly, stay finite and reopen as saved"):
    ob = make_character()
    for step in range(1, STEPS + 1):
        ob = bpy.data.objects.get("Character") or ob
        kind = str(rng.choice(KIND_NAMES, p=KIND_WEIGHTS))
        label = f"step {step}"
        if kind == "operator":
            name = "add_chain" if not ob.quat_ik.chains else str(rng.choice(OPERATORS, p=OPERATOR_WEIGHTS))
            arguments = operator_arguments(name)
            label += f": {name}({', '.join(f'{k}={v!r}' for k, v in sorted(arguments.items()))})"
            pose_mode(ob)
            settle(label)
            before = scene_snapshot()
            try:
                getattr(bpy.ops.quat_ik, name)(**arguments)
                checks.check(f"{label}: every channel finite", channels_finite(*armatures()))
            except RuntimeError as error:
                message = str(error).strip()
                difference = snapshot_difference(before, scene_snapshot())
                checks.check(f"{label}: failed with a message", bool(message), message)
                checks.check(f"{label}: failed with nothing changed", not difference, difference)
        elif kind == "settings" and ob.quat_ik.chains:
            chain = ob.quat_ik.chains[int(rng.integers(len(ob.quat_ik.chains)))]
            label += f": chain '{chain.name}' settings ({set_random_settings(chain)})"
        elif kind == "limits" and ob.data.bones.active is not None:
            limits = ob.pose.bones[ob.data.bones.active.name].quat_ik
            label += f": limits of '{ob.data.bones.active.name}' ({set_random_settings(limits)})"
            if limits.windows and rng.random() < 0.5:
                window = limits.windows[int(rng.integers(len(limits.windows)))]
                label += f", a window ({set_random_settings(window)})"
        elif kind == "active bone":
            ob.data.bones.active = chain_bone(ob) if rng.random() < 0.6 else ob.data.bones[int(rng.integers(13))]
            label += f": active bone '{ob.data.bones.active.name}'"
        elif kind == "rotation mode":
            pose_bone = ob.pose.bones[int(rng.integers(len(ob.pose.bones)))]
            pose_bone.rotation_mode = str(rng.choice(["QUATERNION", "XYZ", "ZXY", "YZX", "AXIS_ANGLE"]))
            label += f": '{pose_bone.name}' in {pose_bone.rotation_mode}"
        elif kind == "rename":
            bone = ob.data.bones[int(rng.integers(len(ob.data.bones)))]
            old = bone.name
            bone.name = f"{old.split('.')[0]}_{step}" + (old[old.index(".") :] if "." in old else "")
            label += f": bone '{old}' renamed '{bone.name}'"
        elif kind == "delete":
            candidates = [o for o in bpy.context.scene.objects if o.type == "EMPTY"]
            if candidates:
                victim = candidates[int(rng.integers(len(candidates)))]
                label += f": object '{victim.name}' deleted"
                bpy.data.objects.remove(victim)
            empty(f"Spare{step}", tuple(rng.normal(size=3)))  # something new to reach for
        bpy.context.view_layer.update()
        print(label, flush=True)
        checks.check(f"{label}: every channel finite afterwards", channels_finite(*armatures()))
        if step % 10 == 0:
            chains_solve_or_say_why(step)
        if step % 25 == 0:
            if ob.mode != "OBJECT":
                bpy.ops.object.mode_set(mode="OBJECT")
            saved = saved_snapshot()
            path = workdir / f"random_operations_{step}.blend"
            bpy.ops.wm.save_as_mainfile(filepath=str(path))
            bpy.ops.wm.open_mainfile(filepath=str(path))
            difference = snapshot_difference(saved, saved_snapshot())
            checks.check(f"step {step}: the file reopens as it was saved", not difference, difference)
            ob = bpy.data.objects["Character"]
            pose_mode(ob)

checks.close()
