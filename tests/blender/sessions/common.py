"""Helpers for session scripts in tests/blender/sessions (they run INSIDE a bpy session).

``Checks`` prints every assertion as it runs (``ok``/``FAIL`` + label) and raises once at
the end listing the failures, so one subprocess can check many things and the test output
still says exactly which failed. Rig builders make armatures the way a user would (edit
bones with roll, connected or not); snapshots capture pose, settings and keys so error
paths can prove the scene did not change.
"""

from __future__ import annotations

import contextlib
import math
import sys
import traceback

import bpy
from mathutils import Matrix, Vector

from tests.helpers import STEP_BEGIN, STEP_END
from tools.blender_session import EXTENSION_ID


def addon():
    """The installed add-on package (extension in 4.2+, legacy add-on before)."""
    for name in (f"bl_ext.user_default.{EXTENSION_ID}", EXTENSION_ID, "quat_ik_addon"):
        if name in sys.modules:
            return sys.modules[name]
    raise RuntimeError("the add-on is not loaded")


def submodule(name: str):
    """A module of the add-on's Blender layer by its path there, e.g. submodule('runtime.state')."""
    dotted = f"{addon().__name__}.blender.{name}"
    __import__(dotted)
    return sys.modules[dotted]


class Checks:
    def __init__(self, title: str) -> None:
        self.title = title
        self.failures: list[str] = []
        self.passed = 0
        self.current_step: str | None = None
        self.step_failed = False
        self.steps_run: set[str] = set()
        print(f"=== {title}", flush=True)

    @contextlib.contextmanager
    def step(self, name: str):
        """``with checks.step("name"):`` one named check of the script: a pytest item of its own
        (``tests/session_steps.py`` reads the names from the script's source, so a name is a
        string literal). The step fails if a check in it fails or its body raises; the exception
        is printed and the script goes on to the next step, as pytest goes on to the next test.
        Its lines (checks, traceback) go to stdout between a begin and an end line, where the
        pytest item of the step finds them."""
        if self.current_step is not None:
            raise RuntimeError(f"step {name!r} inside step {self.current_step!r}")
        if name in self.steps_run:  # its pytest item could not tell the two runs apart
            raise RuntimeError(f"step {name!r} runs a second time")
        self.steps_run.add(name)
        self.current_step, self.step_failed = name, False
        print(f"{STEP_BEGIN}{name}", flush=True)
        try:
            yield
        except Exception as error:  # a step that raises fails alone; the next steps still run
            traceback.print_exc(file=sys.stdout)
            self.failures.append(f"{name}: raised {type(error).__name__}: {error}")
            self.step_failed = True
        finally:
            print(f"{STEP_END}{name} {'FAIL' if self.step_failed else 'ok'}", flush=True)
            self.current_step = None

    def check(self, label: str, ok: bool, detail: object = "") -> bool:
        if ok:
            self.passed += 1
            shown = "" if isinstance(detail, str) and not detail else f"  ({detail})"
            print(f"  ok   {label}{shown}", flush=True)
        else:
            self.failures.append(f"{label}: {detail}")
            self.step_failed = True
            print(f"  FAIL {label}: {detail}", flush=True)
        return bool(ok)

    def near(self, label: str, value: float, expected: float, tolerance: float) -> bool:
        return self.check(label, abs(value - expected) <= tolerance, f"{value:.6g} vs {expected:.6g} (±{tolerance:g})")

    def expect_error(self, label: str, operator, expected: str, **kwargs) -> None:
        """Run ``operator(**kwargs)``; it must fail with ``expected`` in its message and change nothing."""
        before = scene_snapshot()
        message = ""
        try:
            result = operator(**kwargs)
            message = f"no error: returned {result}"
        except RuntimeError as error:  # bpy.ops raises with the operator's ERROR report (or poll message)
            message = str(error)
        self.check(f"{label}: clear error", expected.lower() in message.lower(), message.strip())
        difference = snapshot_difference(before, scene_snapshot())
        self.check(f"{label}: scene unchanged", not difference, difference)

    def close(self) -> None:
        print(f"=== {self.title}: {self.passed} passed, {len(self.failures)} failed", flush=True)
        if self.failures:
            raise AssertionError(f"{len(self.failures)} check(s) failed:\n  " + "\n  ".join(self.failures))


def reset_scene() -> None:
    """An empty scene (keeps the add-on registered)."""
    bpy.ops.wm.read_homefile(use_empty=True)


def make_rig(
    name: str,
    heads_tails: list[tuple[tuple[float, float, float], tuple[float, float, float]]],
    *,
    rolls: list[float] | None = None,
    connected: list[bool] | None = None,
    parent_of_first: str | None = None,
    extra_bones: list[tuple[str, tuple, tuple, str | None]] = (),
) -> bpy.types.Object:
    """An armature whose bones 'B0'..'Bn' form a parent chain (head, tail, roll in radians).

    ``extra_bones`` are (name, head, tail, parent) added first (e.g. a 'Root' the chain hangs from).
    """
    armature = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    if bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.object.mode_set(mode="EDIT")
    for extra_name, head, tail, parent in extra_bones:
        bone = armature.edit_bones.new(extra_name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent = armature.edit_bones[parent]
    parent = armature.edit_bones[parent_of_first] if parent_of_first else None
    for i, (head, tail) in enumerate(heads_tails):
        bone = armature.edit_bones.new(f"B{i}")
        bone.head, bone.tail = head, tail
        bone.roll = rolls[i] if rolls else 0.0
        bone.parent = parent
        bone.use_connect = bool(connected[i]) if connected else (parent is not None and i > 0)
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob


# A torso of two spine bones and two arms of two bones hanging from its top, one each side:
# (name, head, tail, parent), each bone connected to its parent.
TORSO_BONES = (
    ("Root", (0, 0, 0), (0, 0, 0.5), None),
    ("Spine1", (0, 0, 0.5), (0, 0, 1.5), "Root"),
    ("Spine2", (0, 0, 1.5), (0, 0, 2.5), "Spine1"),
    ("L1", (0, 0, 2.5), (1, 0, 2.5), "Spine2"),
    ("L2", (1, 0, 2.5), (2, 0, 2.5), "L1"),
    ("R1", (0, 0, 2.5), (-1, 0, 2.5), "Spine2"),
    ("R2", (-1, 0, 2.5), (-2, 0, 2.5), "R1"),
)


def connected_armature(name: str, bones) -> bpy.types.Object:
    """An armature of ``bones`` ((name, head, tail, parent), parents first), each connected to
    its parent."""
    ob = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    for bone_name, head, tail, parent in bones:
        bone = ob.data.edit_bones.new(bone_name)
        bone.head, bone.tail = head, tail
        if parent:
            bone.parent, bone.use_connect = ob.data.edit_bones[parent], True
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob


def straight_rig(name: str, n: int, length: float = 1.0) -> bpy.types.Object:
    return make_rig(name, [((0, 0, i * length), (0, 0, (i + 1) * length)) for i in range(n)])


def empty(name: str, location=(0.0, 0.0, 0.0)) -> bpy.types.Object:
    ob = bpy.data.objects.new(name, None)
    ob.location = location
    bpy.context.scene.collection.objects.link(ob)
    return ob


def pose_mode(ob, active_bone: str | None = None) -> None:
    bpy.context.view_layer.objects.active = ob
    if ob.mode != "POSE":
        bpy.ops.object.mode_set(mode="POSE")
    if active_bone:
        ob.data.bones.active = ob.data.bones[active_bone]


def add_chain(ob, tip: str, length: int, target: str, **kwargs) -> set:
    pose_mode(ob, tip)
    return bpy.ops.quat_ik.add_chain(chain_length=length, target=target, **kwargs)


def effector_world(ob, tip: str, offset=(0.0, 0.0, 0.0)) -> Vector:
    """World position of the tip bone's tail (+ offset in its rest axes), evaluated."""
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob_eval = ob.evaluated_get(depsgraph)
    pose_bone = ob_eval.pose.bones[tip]
    local = Vector((0.0, pose_bone.bone.length, 0.0)) + Vector(offset)
    return ob_eval.matrix_world @ pose_bone.matrix @ local


def world_of(ob, bone: str | None = None) -> Vector:
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob_eval = ob.evaluated_get(depsgraph)
    if bone:
        return ob_eval.matrix_world @ ob_eval.pose.bones[bone].head
    return ob_eval.matrix_world.translation.copy()


def bone_world_matrices(ob) -> dict[str, Matrix]:
    bpy.context.view_layer.update()
    depsgraph = bpy.context.evaluated_depsgraph_get()
    ob_eval = ob.evaluated_get(depsgraph)
    return {pb.name: (ob_eval.matrix_world @ pb.matrix).copy() for pb in ob_eval.pose.bones}


def matrix_distance(a: Matrix, b: Matrix) -> float:
    return max(abs(a[i][j] - b[i][j]) for i in range(4) for j in range(4))


# ---------------------------------------------------------------- snapshots


def _number(value: float, digits: int = 7):
    """``value`` rounded; NaN as a string, so a snapshot holding NaN equals itself."""
    value = float(value)
    return "nan" if math.isnan(value) else round(value, digits)


def _rounded(values, digits: int = 7) -> tuple:
    return tuple(_number(v, digits) for v in values)


_DERIVED_HANDLES = {"AUTO", "AUTO_CLAMPED", "VECTOR"}


def _handle(kind: str, position) -> tuple:
    # Automatic handles are derived from the neighbouring keys, so a new neighbour moves
    # them (as in Blender itself); only free and aligned handles are data of their own.
    return (kind,) if kind in _DERIVED_HANDLES else (kind, _rounded(position))


def action_keys(action) -> dict:
    """(data path, index) -> keys as (co, interpolation, left handle, right handle, key type)."""
    compat = submodule("compat")
    keys = {}
    for fcurve in compat.all_action_fcurves(action):
        keys[(fcurve.data_path, fcurve.array_index)] = tuple(
            (
                _rounded(k.co),
                k.interpolation,
                _handle(k.handle_left_type, k.handle_left),
                _handle(k.handle_right_type, k.handle_right),
                k.type,
            )
            for k in fcurve.keyframe_points
        )
    return keys


def _settings(group) -> tuple:
    """Every property of a property group, recursively, as plain values."""
    out = []
    for prop in group.bl_rna.properties:
        if prop.identifier == "rna_type":
            continue
        value = getattr(group, prop.identifier)
        if prop.type == "COLLECTION":
            value = tuple(_settings(item) for item in value)
        elif prop.type == "POINTER":
            value = (
                getattr(value, "name", None)
                if isinstance(value, bpy.types.ID)
                else (_settings(value) if value is not None else None)
            )
        elif hasattr(value, "__len__") and not isinstance(value, str):
            value = _rounded(value)
        elif isinstance(value, float):
            value = _number(value)
        out.append((prop.identifier, value))
    return tuple(out)


def scene_snapshot() -> dict:
    """Everything an operator could change: objects, transforms, poses, chains, limits, actions, frame."""
    scene = bpy.context.scene
    snap = {"frame": scene.frame_current, "objects": {}, "actions": {}}
    for ob in bpy.data.objects:
        entry = {
            "matrix": _rounded(v for row in ob.matrix_basis for v in row),
            "parent": getattr(ob.parent, "name", None),
        }
        if ob.type == "ARMATURE":
            entry["chains"] = _settings(ob.quat_ik)
            entry["pose"] = {
                pb.name: (
                    pb.rotation_mode,
                    _rounded(pb.rotation_quaternion),
                    _rounded(pb.rotation_euler),
                    _rounded(pb.rotation_axis_angle),
                    _rounded(pb.location),
                    _rounded(pb.scale),
                    _settings(pb.quat_ik),
                )
                for pb in ob.pose.bones
            }
            anim = ob.animation_data
            entry["action"] = anim.action.name if anim and anim.action else None
            entry["nla"] = tuple(t.name for t in anim.nla_tracks) if anim else ()
        snap["objects"][ob.name] = entry
    for action in bpy.data.actions:
        snap["actions"][action.name] = action_keys(action)
    return snap


def snapshot_difference(before: dict, after: dict) -> str:
    """'' if equal, else a short description of the first differences, down to the values
    (``objects['Rig']['pose']['B1'][1]: (1.0, 0.0, 0.0, 0.0) -> ...``)."""
    lines: list[str] = []
    _differences("", before, after, lines)
    return "; ".join(lines[:6])


def _differences(path: str, a, b, lines: list[str]) -> None:
    if a == b or len(lines) >= 6:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _differences(f"{path}[{key!r}]", a.get(key), b.get(key), lines)
    elif isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and len(a) > 1:
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            # Settings are (name, value) pairs: name them rather than number them.
            named = (
                isinstance(x, tuple)
                and len(x) == 2
                and isinstance(x[0], str)
                and x[0] == getattr(y, "__getitem__", lambda _: None)(0)
            )
            _differences(
                f"{path}.{x[0]}" if named else f"{path}[{index}]", x[1] if named else x, y[1] if named else y, lines
            )
    else:
        lines.append(f"{path.lstrip('.')}: {a!r} -> {b!r}")


def radians(degrees: float) -> float:
    return math.radians(degrees)


# ---------------------------------------------------------------- random rigs


def random_unit(rng) -> Vector:
    """A direction drawn uniformly (``rng``: a numpy Generator)."""
    return Vector(rng.normal(size=3)).normalized()


def armature_in_edit_mode(name: str):
    """A new armature object linked to the scene, active and in Edit Mode (bones to be added)."""
    ob = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    return ob


def set_rotation(pose_bone, q) -> None:
    """Give a pose bone the rotation ``q`` (a mathutils Quaternion) in its own rotation mode."""
    mode = pose_bone.rotation_mode
    if mode == "QUATERNION":
        pose_bone.rotation_quaternion = q
    elif mode == "AXIS_ANGLE":
        axis, angle = q.to_axis_angle()
        pose_bone.rotation_axis_angle = (angle, *axis)
    else:
        pose_bone.rotation_euler = q.to_euler(mode)


def channels_finite(*armatures) -> bool:
    """Whether every rotation channel of every pose bone of ``armatures`` is a number."""
    for ob in armatures:
        for pose_bone in ob.pose.bones:
            values = (*pose_bone.rotation_quaternion, *pose_bone.rotation_euler, *pose_bone.rotation_axis_angle)
            if not all(math.isfinite(v) for v in values):
                return False
    return True
