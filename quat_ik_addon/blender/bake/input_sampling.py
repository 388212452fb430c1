"""A chain's inputs for every frame of a bake straight from the F-curves, without stepping frames.

The bake's slow, always-right way to read inputs is ``scene.frame_set(f)`` then
``rig.reader.read_frame_inputs`` for each frame (~35 µs a frame even in a tiny scene, far more
in a real one). When everything a chain's inputs depend on is animated by nothing but plain
F-curves of object transforms and of the chain bones' rotations, the same numbers follow from
evaluating those curves (``FCurve.evaluate``, the function the animation system calls) and
composing the matrices as Blender does (``BKE_object_where_is_calc`` and
``BKE_object_to_mat4`` in ``blenkernel/intern/object.cc``)::

    world = parent.world @ matrix_parent_inverse @ basis
    basis = T(location + delta_location) @ R(delta) @ R @ S(scale * delta_scale)

with quaternions normalised before use (a zero quaternion counts as (0, 1, 0, 0), as in
``normalize_qt``) and a zero axis-angle axis as no rotation.

:func:`sample_inputs` gives a ``StackedInputs`` equal to what stepping would read, or None
when it cannot be sure; the bake then steps frames. It is sure only when all of this holds:

* Scene: no frame-change handlers besides ours, no time remapping (``frame_map_old`` ==
  ``frame_map_new``), no animation data on the scene.
* Every involved object (the armature, the target, the orientation and pole targets, and each one's
  parents): parent type OBJECT and not a curve (a path parent moves its children); no
  constraint that is unmuted with influence > 0; no rigid body; no drivers; no NLA tracks
  and not in NLA tweak mode; in Blender 4.4+ at most one action layer with one strip. Its
  active action (for its slot) may hold F-curves of ``location``, ``rotation_euler``,
  ``rotation_quaternion``, ``rotation_axis_angle``, ``scale`` and their ``delta_`` forms;
  for an armature also of pose bones, as below, and of its chains' Influence and Pole
  Angle (plain numbers, sampled as the reader reads them). Any other F-curve, and any curve that
  has no keyframes without being muted, refuses. Muted curves (or muted groups) count as
  absent, as in the animation system. An involved armature's data has no animation data.
* Bones whose pose matrix is an input (the root's parent, a target, orientation or pole bone)
  are read once from the evaluated pose, so they must be static: neither they nor any
  ancestor has F-curves or an active constraint, and no bone of that armature has an
  active IK or Spline IK constraint (those move bones up their chain).
* Chain bones may have F-curves of ``rotation_*``, ``location`` and ``scale`` (rotations
  are evaluated and converted as ``rotation_modes.current_quaternion`` does; location,
  scale and locked rotation channels are built into the chain, so their curves must hold
  still over the frames); any other curve on them refuses. Curves on unrelated bones are
  allowed except curves of constraint settings (``constraints[...]``).

Safety net: the values computed for the scene's current frame must match what the evaluated
scene holds right now (relative 1e-5), else None: this also catches edits made since the
last key and anything the list above forgot.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import bpy
import numpy as np

from ...solver import quaternion as quat
from ...solver.euler_angles import euler_to_quaternion
from .. import compat
from ..errors import ChainError
from ..rig import locks, reader, rotation_modes
from ..solving.jobs import StackedInputs

if TYPE_CHECKING:
    from ..rig.reader import ChainRig

SAFETY_TOLERANCE = 1e-5  # relative to the largest entry of the matrix (at least 1)
OBJECT_CHANNELS = {
    "location": 3,
    "rotation_euler": 3,
    "rotation_quaternion": 4,
    "rotation_axis_angle": 4,
    "scale": 3,
    "delta_location": 3,
    "delta_rotation_euler": 3,
    "delta_rotation_quaternion": 4,
    "delta_scale": 3,
}
CHAIN_BONE_CHANNELS = {
    "rotation_euler": 3,
    "rotation_quaternion": 4,
    "rotation_axis_angle": 4,
    "location": 3,
    "scale": 3,
}
MULTI_BONE_CONSTRAINTS = frozenset({"IK", "SPLINE_IK"})
_OWN_HANDLERS_MODULE = f"{__package__.rpartition('.')[0]}.runtime.handlers"


class Refused(Exception):
    """Why the inputs cannot be sampled (the bake steps frames instead)."""


def sample_inputs(rig: ChainRig, frames: np.ndarray, depsgraph) -> StackedInputs | None:
    """``rig``'s inputs at every frame of ``frames`` (whole numbers), or None when only
    stepping frames can be trusted to give them (see the module docstring)."""
    return sample_or_reason(rig, frames, depsgraph)[0]


def sample_or_reason(rig: ChainRig, frames: np.ndarray, depsgraph) -> tuple[StackedInputs | None, str]:
    """Like :func:`sample_inputs`, plus why it returned None ('' when it did not)."""
    try:
        return _Sampler(rig, depsgraph).sample(np.asarray(frames, dtype=float)), ""
    except (Refused, ChainError) as why:
        return None, str(why)


def _active(constraint) -> bool:
    return not constraint.mute and constraint.influence > 0.0


def _bone_prefix(name: str) -> str:
    return f'pose.bones["{bpy.utils.escape_identifier(name)}"]'


class _Sampler:
    """One chain's sampling: the checks, then every input at ``times`` (the bake's frames and
    the current one). Raises Refused as soon as something cannot be vouched for."""

    def __init__(self, rig: ChainRig, depsgraph) -> None:
        self.rig = rig
        self.depsgraph = depsgraph
        self.scene = depsgraph.scene
        # armature object -> bones whose evaluated pose is an input and must stay static
        self.static_bones: dict = {}
        self.curves: dict = {}  # object -> {(data path, index): F-curve}
        self.worlds: dict = {}  # object -> (T, 4, 4) world matrices
        self.times: list[float] = []

    # ------------------------------------------------------------------ checks

    def _check_scene(self) -> None:
        scene = self.scene
        handlers = [*bpy.app.handlers.frame_change_pre, *bpy.app.handlers.frame_change_post]
        foreign = [h for h in handlers if getattr(h, "__module__", None) != _OWN_HANDLERS_MODULE]
        if foreign:
            raise Refused(f"frame change handler {getattr(foreign[0], '__name__', foreign[0])!r} may move things")
        if scene.render.frame_map_old != scene.render.frame_map_new:
            raise Refused("the scene remaps time")
        if self._has_animation_data(scene):
            raise Refused(f"scene '{scene.name}' is animated")

    @staticmethod
    def _has_animation_data(datablock) -> bool:
        anim = getattr(datablock, "animation_data", None)
        return anim is not None and (anim.action is not None or len(anim.drivers) or len(anim.nla_tracks))

    def _require_static(self, ob, bone_name: str | None) -> None:
        if bone_name is not None:
            self.static_bones.setdefault(ob, set()).update(reader.with_ancestors(ob, (bone_name,)))

    def _check_static_bones(self, ob, names: set[str]) -> None:
        for pose_bone in ob.pose.bones:
            for constraint in pose_bone.constraints:
                if not _active(constraint):
                    continue
                if pose_bone.name in names:
                    raise Refused(f"bone '{pose_bone.name}' of '{ob.name}' has constraint '{constraint.name}'")
                if constraint.type in MULTI_BONE_CONSTRAINTS:
                    raise Refused(f"'{ob.name}' has an active {constraint.type} constraint on '{pose_bone.name}'")

    def _check_object(self, ob) -> None:
        if ob.rigid_body is not None:
            raise Refused(f"'{ob.name}' is a rigid body")
        for constraint in ob.constraints:
            if _active(constraint):
                raise Refused(f"'{ob.name}' has constraint '{constraint.name}'")
        if ob.parent is not None:
            if ob.parent_type != "OBJECT":
                raise Refused(f"'{ob.name}' has parent type {ob.parent_type}")
            if ob.parent.type == "CURVE":
                raise Refused(f"'{ob.name}' is parented to curve '{ob.parent.name}'")
        if ob.type == "ARMATURE" and self._has_animation_data(ob.data):
            raise Refused(f"armature data '{ob.data.name}' is animated")
        self.curves[ob] = self._curves(ob)

    def _curves(self, ob) -> dict:
        """The F-curves that play on ``ob``, checked against the rules in the module docstring."""
        anim = ob.animation_data
        if anim is None:
            return {}
        if len(anim.drivers):
            raise Refused(f"'{ob.name}' has drivers")
        if len(anim.nla_tracks) or anim.use_tweak_mode:
            raise Refused(f"'{ob.name}' has NLA tracks")
        action = anim.action
        if action is None:
            return {}
        if compat.HAS_SLOTTED_ACTIONS and (
            len(action.layers) > 1 or any(len(layer.strips) > 1 for layer in action.layers)
        ):
            raise Refused(f"action '{action.name}' has several layers or strips")
        found = compat.find_channels(action, ob)
        if found is None:
            return {}
        static_prefixes = tuple(_bone_prefix(name) for name in self.static_bones.get(ob, ()))
        chain_prefixes = ()
        if ob == self.rig.armature:
            chain_prefixes = tuple(_bone_prefix(name) for name in self.rig.bone_names)
        curves = {}
        for fcurve in found[0]:
            path, index = fcurve.data_path, fcurve.array_index
            if path.startswith("pose.bones["):
                # Escaped names make a bone's prefix match its own paths only.
                if any(path.startswith(prefix) for prefix in static_prefixes):
                    raise Refused(f"'{ob.name}' animates {path}, whose pose is an input")
                prefix = next((prefix for prefix in chain_prefixes if path.startswith(prefix)), None)
                if prefix is None:
                    if "constraints[" in path:
                        raise Refused(f"'{ob.name}' animates constraint setting {path}")
                    continue  # an unrelated bone: cannot move any input
                if CHAIN_BONE_CHANNELS.get(path[len(prefix) :].removeprefix("."), 0) <= index:
                    raise Refused(f"'{ob.name}' animates {path}[{index}] on a chain bone")
            elif path.startswith("quat_ik.chains[") and path.rpartition(".")[2] in reader.ANIMATED_SETTINGS:
                pass  # a chain's Influence or Pole Angle: a plain number (``_chain_settings``)
            elif OBJECT_CHANNELS.get(path, 0) <= index:
                raise Refused(f"'{ob.name}' animates {path}[{index}]")
            if fcurve.mute or (fcurve.group is not None and fcurve.group.mute):
                continue  # skipped by the animation system: the property keeps its value
            if not len(fcurve.keyframe_points):
                raise Refused(f"F-curve {path}[{index}] of '{ob.name}' has no keyframes")
            curves[(path, index)] = fcurve
        return curves

    # ------------------------------------------------------------------ values

    def _channel(self, ob, owner, path: str, curve_path: str) -> np.ndarray:
        """(T, k) values of property ``path`` of ``owner`` (the object or a pose bone of ``ob``):
        F-curves where ``ob``'s action has them, the current value elsewhere. (1, k) when
        nothing animates it: everything downstream broadcasts, so static parts cost one frame."""
        static = np.array(getattr(owner, path), dtype=float)
        curves = self.curves[ob]
        animated = [(index, curves.get((curve_path, index))) for index in range(len(static))]
        animated = [(index, fcurve) for index, fcurve in animated if fcurve is not None]
        if not animated:
            return static[None, :]
        out = np.repeat(static[None, :], len(self.times), axis=0)
        for index, fcurve in animated:
            out[:, index] = np.fromiter(map(fcurve.evaluate, self.times), dtype=float, count=len(self.times))
        return out

    def _object_rotation(self, ob) -> np.ndarray:
        """(T, 3, 3) delta rotation @ rotation, as ``BKE_object_rot_to_mat3``."""
        mode = ob.rotation_mode
        if mode == "QUATERNION":
            rotation = quat.to_matrix(
                _blender_normalized(self._channel(ob, ob, "rotation_quaternion", "rotation_quaternion"))
            )
            delta = quat.to_matrix(
                _blender_normalized(self._channel(ob, ob, "delta_rotation_quaternion", "delta_rotation_quaternion"))
            )
            return delta @ rotation
        if mode == "AXIS_ANGLE":
            # The delta axis-angle is not in the Python API: it stays the identity.
            return quat.to_matrix(
                _axis_angle_quaternion(self._channel(ob, ob, "rotation_axis_angle", "rotation_axis_angle"))
            )
        rotation = _euler_matrix(self._channel(ob, ob, "rotation_euler", "rotation_euler"), mode)
        delta = _euler_matrix(self._channel(ob, ob, "delta_rotation_euler", "delta_rotation_euler"), mode)
        return delta @ rotation

    def _world(self, ob) -> np.ndarray:
        if ob in self.worlds:
            return self.worlds[ob]
        if ob not in self.curves:
            self._check_object(ob)
        location = self._channel(ob, ob, "location", "location") + self._channel(
            ob, ob, "delta_location", "delta_location"
        )
        scale = self._channel(ob, ob, "scale", "scale") * self._channel(ob, ob, "delta_scale", "delta_scale")
        rotation = self._object_rotation(ob)
        basis = np.zeros((max(len(rotation), len(scale), len(location)), 4, 4))
        basis[:, :3, :3] = rotation * scale[:, None, :]
        basis[:, :3, 3] = location
        basis[:, 3, 3] = 1.0
        world = basis
        if ob.parent is not None:
            world = self._world(ob.parent) @ np.array(ob.matrix_parent_inverse) @ basis
        self.worlds[ob] = world
        return world

    def _bone_matrix(self, ob, bone_name: str) -> np.ndarray:
        """A static bone's evaluated pose matrix (armature space)."""
        return np.array(reader.evaluated(ob, self.depsgraph).pose.bones[bone_name].matrix)

    def _target(self, ob, bone_name: str | None) -> np.ndarray:
        world = self._world(ob)
        return world if bone_name is None else world @ self._bone_matrix(ob, bone_name)

    def _rotations(self) -> np.ndarray:
        """(T, n, 4) chain-bone rotations as ``rig.reader.read_frame_inputs`` reads them."""
        rig, ob = self.rig, self.rig.armature
        out = np.zeros((1, len(rig.bone_names), 4))
        out[..., 0] = 1.0
        for i, (name, writable) in enumerate(zip(rig.bone_names, rig.writable, strict=True)):
            if not writable:
                continue  # held by locks: the reader gives the identity
            pose_bone = ob.pose.bones[name]
            mode = pose_bone.rotation_mode
            prefix = _bone_prefix(name)
            if mode == "QUATERNION":
                q = self._channel(ob, pose_bone, "rotation_quaternion", f"{prefix}.rotation_quaternion")
                norm = np.linalg.norm(q, axis=1, keepdims=True)
                q = np.where(norm > 1e-12, q / np.where(norm > 1e-12, norm, 1.0), (1.0, 0.0, 0.0, 0.0))
            elif mode == "AXIS_ANGLE":
                q = _axis_angle_quaternion(
                    self._channel(ob, pose_bone, "rotation_axis_angle", f"{prefix}.rotation_axis_angle")
                )
            else:
                q = euler_to_quaternion(
                    self._channel(ob, pose_bone, "rotation_euler", f"{prefix}.rotation_euler"), mode
                )
            if len(q) > len(out):
                out = np.repeat(out, len(q), axis=0)
            out[:, i] = q
        return out

    def _check_frozen(self) -> None:
        """Refuses where a chain bone's location, scale or locked rotation channels change over
        the frames (``rig.reader.check_frozen`` then names them, frame by frame)."""
        ob = self.rig.armature
        for name in self.rig.bone_names:
            pose_bone, prefix = ob.pose.bones[name], _bone_prefix(name)
            for path in ("scale",) if pose_bone.bone.use_connect else ("location", "scale"):
                values = self._channel(ob, pose_bone, path, f"{prefix}.{path}")
                if not _holds_still(values):
                    raise Refused(reader.frozen_message(name, path))
            if not locks.frozen_channels(pose_bone):
                continue
            path = rotation_modes.data_path_and_size(pose_bone.rotation_mode)[0]
            if path == "rotation_euler" and not all(pose_bone.lock_rotation):
                # Partly locked Euler angles (the common case): the locked ones must hold still.
                locked = list(pose_bone.lock_rotation)
                values = self._channel(ob, pose_bone, path, f"{prefix}.{path}")[:, locked]
                if not _holds_still(values):
                    raise Refused(reader.frozen_message(name, "locked rotation channels"))
            elif any((f"{prefix}.{path}", index) in self.curves[ob] for index in range(4)):
                raise Refused(f"'{name}' has locked rotation channels and rotation keys")

    def _chain_settings(self) -> dict[str, np.ndarray]:
        """(T,) each of the chain's animatable settings (``rig.reader.ANIMATED_SETTINGS``), from
        its F-curve when it has one."""
        ob, count = self.rig.armature, len(self.times)
        chain = ob.quat_ik.chains.get(self.rig.chain_name)
        values = {}
        for name, default in reader.ANIMATED_SETTINGS.items():
            curve = None if chain is None else self.curves[ob].get((chain.path_from_id(name), 0))
            if curve is None:
                values[name] = np.full(count, default if chain is None else float(getattr(chain, name)))
                continue
            # Animation writes into the property, which keeps to its own range.
            rna = chain.bl_rna.properties[name]
            evaluated = np.fromiter(map(curve.evaluate, self.times), dtype=float, count=count)
            values[name] = np.clip(evaluated, rna.hard_min, rna.hard_max)
        return values

    # ------------------------------------------------------------------ all together

    def sample(self, frames: np.ndarray) -> StackedInputs:
        rig, scene = self.rig, self.scene
        self._check_scene()
        # Every frame of the bake, then the current one (for the safety net).
        self.times = [float(f) for f in frames] + [scene.frame_current + scene.frame_subframe]
        self._require_static(rig.armature, rig.root_parent)
        self._require_static(rig.target_object, rig.target_bone)
        if rig.orientation_object is not None:
            self._require_static(rig.orientation_object, rig.orientation_bone)
        if rig.pole_object is not None:
            self._require_static(rig.pole_object, rig.pole_bone)
        for ob, names in self.static_bones.items():
            self._check_static_bones(ob, names)

        object_world = self._world(rig.armature)  # (checks the armature, reads its curves)
        self._check_frozen()
        count = len(self.times)
        root_parent = np.identity(4) if rig.root_parent is None else self._bone_matrix(rig.armature, rig.root_parent)
        reader.check_root_frame(rig, root_parent)
        target_world = self._target(rig.target_object, rig.target_bone)
        orientation_world = None
        if rig.orientation_object is not None:
            orientation_world = self._target(rig.orientation_object, rig.orientation_bone)
        pole_world = None if rig.pole_object is None else self._target(rig.pole_object, rig.pole_bone)

        def every_frame(values):  # (1 or T, ...) -> (T, ...) as the reader gives them
            return _as_read(np.broadcast_to(values, (count, *np.shape(values)[-2:])))

        stacked = StackedInputs(
            object_world=every_frame(object_world),
            root_parent_armature=every_frame(root_parent),
            target_world=every_frame(target_world),
            rotations=every_frame(self._rotations()),
            orientation_world=None if orientation_world is None else every_frame(orientation_world),
            pole_world=None if pole_world is None else every_frame(pole_world),
            **self._chain_settings(),
        )
        self._check_current_frame(stacked)
        without_current = {f.name: getattr(stacked, f.name) for f in dataclasses.fields(stacked)}
        return StackedInputs(**{name: None if v is None else v[:-1] for name, v in without_current.items()})

    def _check_current_frame(self, stacked: StackedInputs) -> None:
        """Refuse unless the last sample (the current frame) matches the evaluated scene now."""
        try:
            now = reader.read_frame_inputs(self.rig, self.depsgraph)
        except ChainError as error:
            raise Refused(str(error)) from None
        for field in dataclasses.fields(stacked):
            name = field.name
            sampled, read = getattr(stacked, name), getattr(now, name)
            if (read is None) != (sampled is None):
                raise Refused(f"{name}: sampled and read disagree on whether it exists")
            if read is None:
                continue
            scale = max(1.0, float(np.max(np.abs(read))))
            difference = float(np.max(np.abs(sampled[-1] - read)))
            if not difference <= SAFETY_TOLERANCE * scale:
                raise Refused(f"{name} at the current frame differs from the evaluated scene by {difference:.3g}")


def _holds_still(values: np.ndarray) -> bool:
    """Whether every row of (T, k) channel values is the last, within 1e-6 (a channel nothing
    animates is one row: it holds still unless NaN, which nothing equals)."""
    if len(values) == 1:
        return not any(map(math.isnan, values[0].tolist()))
    return bool(np.allclose(values, values[-1], rtol=1e-6, atol=1e-6))


# ---------------------------------------------------------------------- Blender's rotation math


def _as_read(values: np.ndarray) -> np.ndarray:
    """Rounded to float32, as Blender stores the values the frame-by-frame reader gets."""
    return np.asarray(values, dtype=np.float32).astype(float)


def _blender_normalized(q: np.ndarray) -> np.ndarray:
    """(T, 4) quaternions normalised as ``normalize_qt``: a zero quaternion becomes (0, 1, 0, 0)."""
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    return np.where(norm != 0.0, q / np.where(norm != 0.0, norm, 1.0), (0.0, 1.0, 0.0, 0.0))


def _axis_angle_quaternion(values: np.ndarray) -> np.ndarray:
    """(T, 4) quaternions of (angle, x, y, z) rows; a zero axis gives the identity (``axis_angle_to_quat``)."""
    angle, axis = values[:, 0], values[:, 1:]
    norm = np.linalg.norm(axis, axis=1)
    safe = norm > 0.0
    unit = axis / np.where(safe, norm, 1.0)[:, None]
    q = np.concatenate((np.cos(angle / 2)[:, None], unit * np.sin(angle / 2)[:, None]), axis=1)
    return np.where(safe[:, None], q, (1.0, 0.0, 0.0, 0.0))


def _axis_rotations(angles: np.ndarray) -> list[np.ndarray]:
    """(T, 3, 3) rotations about X, Y and Z by the three columns of ``angles``."""
    out = []
    for axis in range(3):
        c, s = np.cos(angles[:, axis]), np.sin(angles[:, axis])
        m = np.zeros((len(angles), 3, 3))
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        m[:, axis, axis] = 1.0
        m[:, i, i] = m[:, j, j] = c
        m[:, i, j], m[:, j, i] = -s, s
        out.append(m)
    return out


def _euler_matrix(angles: np.ndarray, order: str) -> np.ndarray:
    """(T, 3, 3) matrices of Euler angles in ``order`` (first letter applied first: ``eulO_to_mat3``)."""
    by_axis = _axis_rotations(angles)
    first, second, third = ("XYZ".index(letter) for letter in order)
    return by_axis[third] @ by_axis[second] @ by_axis[first]
