"""The rig spec: one JSON file that says what a rig is and how far each joint may turn.

This is the "joint limit file" Min Zhong wished for (Zhong 2000): bones (head, tail, roll
and parent, as in Blender's edit mode), IK chains, and per-bone joint limits with
swing/twist reach windows after Blow 2002.  The format is documented for riggers in
``docs/rig_spec.md``; this module holds its dataclasses, loading, saving and validation (the checks of single
values and the JSON text helpers are in ``rig_spec_values``).

Angles are stored in DEGREES exactly as written in the file, so load -> save is lossless;
convert with ``math.radians`` where the solver needs them, never inside the spec.
Every problem with a spec raises :class:`RigSpecError`, whose message names the bone (or
chain) and the field path, e.g. ``bone 'forearm': limits.range_deg: min 170 > max 10``.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..limits.window_frames import polygon_plane_problem, window_plane_axes
from .spec_values import (
    JsonObject,
    Quat,
    Range,
    RigSpecError,
    Vec3,
    as_written,
    check_keys,
    checked_angle_range,
    checked_direction,
    checked_list,
    checked_name,
    checked_number,
    checked_object,
    checked_rotation,
    checked_stiffness,
    checked_vector,
    field_context,
    pretty_json,
    shown,
)

__all__ = [
    "FORMAT",
    "VERSION",
    "BallLimit",
    "BoneSpec",
    "ChainSpec",
    "ConeWindow",
    "EllipticConeWindow",
    "FixedLimit",
    "FreeLimit",
    "HingeLimit",
    "JointLimit",
    "PolygonWindow",
    "ReachWindow",
    "RigSpec",
    "RigSpecError",
    "load_rig_spec",
    "loads_rig_spec",
]

FORMAT = "quat_ik.rig_spec"
VERSION = 1


# A bone whose tail is within this distance of its head has no direction.
ZERO_LENGTH = 1e-9


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)  # frozen dataclasses normalise their own fields


# --------------------------------------------------------------------------- reach windows


@dataclass(frozen=True, kw_only=True)
class PolygonWindow:
    """A convex polygon on the window plane; ``[a, b]`` is the plane point (tan a, tan b).

    ``a`` swings toward the plane's ``u`` axis and ``b`` toward ``v`` (for the default
    centre +Y these are local X and Z), both in degrees with ``|angle| < 90``.  Either
    winding order is accepted.  See :mod:`.window_frames` for the plane's axes.
    """

    shape: ClassVar[str] = "polygon"
    vertices_deg: tuple[tuple[float, float], ...]
    center: Vec3 = (0.0, 1.0, 0.0)
    x_axis: Vec3 | None = None

    def __post_init__(self) -> None:
        _set(self, "center", checked_direction(self.center, "center"))
        _check_x_axis(self)
        raw = self.vertices_deg
        if isinstance(raw, np.ndarray):
            raw = raw.tolist()
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
            raise RigSpecError(f"expected a list of [a, b] pairs, got {shown(raw)}", field="vertices_deg")
        vertices = tuple(checked_vector(pair, 2, f"vertices_deg[{i}]") for i, pair in enumerate(raw))
        for i, pair in enumerate(vertices):
            for angle in pair:
                if abs(angle) >= 90.0:
                    raise RigSpecError(f"|angle| must be below 90, got {as_written(angle)}", field=f"vertices_deg[{i}]")
        _set(self, "vertices_deg", vertices)
        problem = polygon_plane_problem(np.tan(np.radians(np.array(vertices, dtype=np.float64).reshape(-1, 2))))
        if problem is not None:
            raise RigSpecError(f"polygon {problem}", field="vertices_deg")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": self.shape, "center": list(self.center)}
        if self.x_axis is not None:
            out["x_axis"] = list(self.x_axis)
        out["vertices_deg"] = [list(pair) for pair in self.vertices_deg]
        return out


@dataclass(frozen=True, kw_only=True)
class ConeWindow:
    """A circular cone of half-angle ``half_angle_deg`` (0 < angle <= 180) around ``center``."""

    shape: ClassVar[str] = "cone"
    half_angle_deg: float
    center: Vec3 = (0.0, 1.0, 0.0)

    def __post_init__(self) -> None:
        _set(self, "center", checked_direction(self.center, "center"))
        angle = checked_number(self.half_angle_deg, "half_angle_deg")
        if not 0.0 < angle <= 180.0:
            raise RigSpecError(f"must be in (0, 180], got {as_written(angle)}", field="half_angle_deg")
        _set(self, "half_angle_deg", angle)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.shape, "center": list(self.center), "half_angle_deg": self.half_angle_deg}


MIN_ELLIPSE_HALF_ANGLE_DEG = 0.01  # the panel's minimum too


@dataclass(frozen=True, kw_only=True)
class EllipticConeWindow:
    """The gnomonic ellipse ``(s / tan a)^2 + (t / tan b)^2 <= 1`` on the window plane.

    ``half_angles_deg = (a, b)``: the swing allowed toward the plane's ``u`` and ``v``
    axes, each in [0.01, 90) degrees.
    """

    shape: ClassVar[str] = "elliptic_cone"
    half_angles_deg: Range
    center: Vec3 = (0.0, 1.0, 0.0)
    x_axis: Vec3 | None = None

    def __post_init__(self) -> None:
        _set(self, "center", checked_direction(self.center, "center"))
        _check_x_axis(self)
        angles = checked_vector(self.half_angles_deg, 2, "half_angles_deg")
        for angle in angles:
            if not MIN_ELLIPSE_HALF_ANGLE_DEG <= angle < 90.0:
                # Narrower, the closest point on so eccentric an ellipse loses digits (a
                # hinge is the joint that moves in one plane).
                raise RigSpecError(
                    f"each angle must be in [{MIN_ELLIPSE_HALF_ANGLE_DEG:g}, 90), got {as_written(angle)}",
                    field="half_angles_deg",
                )
        _set(self, "half_angles_deg", angles)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"shape": self.shape, "center": list(self.center)}
        if self.x_axis is not None:
            out["x_axis"] = list(self.x_axis)
        out["half_angles_deg"] = list(self.half_angles_deg)
        return out


def _check_x_axis(window: PolygonWindow | EllipticConeWindow) -> None:
    if window.x_axis is None:
        return
    x_axis = checked_direction(window.x_axis, "x_axis")
    try:
        window_plane_axes(window.center, x_axis)
    except ValueError:
        raise RigSpecError("is parallel to center; it must point across the window", field="x_axis") from None
    _set(window, "x_axis", x_axis)


ReachWindow = PolygonWindow | ConeWindow | EllipticConeWindow
_WINDOW_TYPES: dict[str, type] = {cls.shape: cls for cls in (PolygonWindow, ConeWindow, EllipticConeWindow)}


# --------------------------------------------------------------------------- joint limits


@dataclass(frozen=True, kw_only=True)
class BallLimit:
    """Three rotational degrees of freedom: swing limited by reach windows, twist by a range.

    ``windows`` union (the bone may point through any of them); no windows means swing
    is free.  ``twist_deg = (min, max)`` limits the twist about the swung bone to the angles
    turning from min up to max (through ±180 when max > 180 or min < -180); ``None`` leaves
    twist free.  ``twist_reference = (w, x, y, z)`` measures that twist on ``M·q`` instead
    of the pose ``q`` (a preset fitted to another rest pose; see ``retarget.py``).  ``stiffness`` in [0, 1] is the share of a CCD step the joint refuses.
    """

    type: ClassVar[str] = "ball"
    windows: tuple[ReachWindow, ...] = ()
    twist_deg: Range | None = None
    stiffness: float = 0.0
    twist_reference: Quat | None = None

    def __post_init__(self) -> None:
        windows = self.windows
        if isinstance(windows, (str, bytes, Mapping)) or not isinstance(windows, Sequence):
            raise RigSpecError(f"expected a list of windows, got {shown(windows)}", field="windows")
        for i, window in enumerate(windows):
            if not isinstance(window, tuple(_WINDOW_TYPES.values())):
                raise RigSpecError(
                    f"expected a PolygonWindow, ConeWindow or EllipticConeWindow, got {shown(window)}",
                    field=f"windows[{i}]",
                )
        _set(self, "windows", tuple(windows))
        if self.twist_deg is not None:
            _set(self, "twist_deg", checked_angle_range(self.twist_deg, "twist_deg"))
        _set(self, "stiffness", checked_stiffness(self.stiffness))
        if self.twist_reference is not None:
            _set(self, "twist_reference", checked_rotation(self.twist_reference, "twist_reference"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "windows": [w.to_dict() for w in self.windows]}
        if self.twist_deg is not None:
            out["twist_deg"] = list(self.twist_deg)
        if self.twist_reference is not None:
            out["twist_reference"] = list(self.twist_reference)
        out["stiffness"] = self.stiffness
        return out


@dataclass(frozen=True, kw_only=True)
class HingeLimit:
    """One degree of freedom: rotation about ``axis`` (rest frame; normalised on use).

    ``range_deg = (min, max)``: the angles turning from min up to max, which need not contain
    zero (a knee: 0.5 to 170) and may run through ±180 (150 to 210); ``None`` lets the hinge
    turn all the way round.
    """

    type: ClassVar[str] = "hinge"
    axis: Vec3 = (1.0, 0.0, 0.0)
    range_deg: Range | None = None
    stiffness: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "axis", checked_direction(self.axis, "axis"))
        if self.range_deg is not None:
            _set(self, "range_deg", checked_angle_range(self.range_deg, "range_deg"))
        _set(self, "stiffness", checked_stiffness(self.stiffness))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "axis": list(self.axis)}
        if self.range_deg is not None:
            out["range_deg"] = list(self.range_deg)
        out["stiffness"] = self.stiffness
        return out


@dataclass(frozen=True, kw_only=True)
class FreeLimit:
    """No limits (the default for a bone without an entry)."""

    type: ClassVar[str] = "free"
    stiffness: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "stiffness", checked_stiffness(self.stiffness))

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "stiffness": self.stiffness}


@dataclass(frozen=True, kw_only=True)
class FixedLimit:
    """No rotation at all: the joint keeps its rest orientation (a pinned joint)."""

    type: ClassVar[str] = "fixed"

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type}


JointLimit = BallLimit | HingeLimit | FreeLimit | FixedLimit
_LIMIT_TYPES: dict[str, type] = {cls.type: cls for cls in (BallLimit, HingeLimit, FreeLimit, FixedLimit)}


# --------------------------------------------------------------------------- bones and chains


@dataclass(frozen=True, kw_only=True)
class BoneSpec:
    """A bone as in Blender's edit mode: armature-space head and tail, roll, parent.

    ``roll_deg`` is Blender's edit-bone roll (``EditBone.roll``) in degrees.
    """

    name: str
    head: Vec3
    tail: Vec3
    roll_deg: float = 0.0
    parent: str | None = None

    def __post_init__(self) -> None:
        checked_name(self.name, "name")
        _set(self, "head", checked_vector(self.head, 3, "head"))
        _set(self, "tail", checked_vector(self.tail, 3, "tail"))
        _set(self, "roll_deg", checked_number(self.roll_deg, "roll_deg"))
        if self.parent is not None:
            checked_name(self.parent, "parent")
        if self.length <= ZERO_LENGTH:
            raise RigSpecError("bone has zero length (tail == head)", field="tail")

    @property
    def length(self) -> float:
        return math.dist(self.head, self.tail)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "parent": self.parent,
            "head": list(self.head),
            "tail": list(self.tail),
            "roll_deg": self.roll_deg,
        }


@dataclass(frozen=True, kw_only=True)
class ChainSpec:
    """An IK chain: ``tip`` and either ``length`` (bones counted from the tip up the
    parent links) or ``root`` (the topmost bone of the chain).

    The effector sits at the tip bone's tail plus ``effector_offset``, given in the tip
    bone's rest frame.
    """

    name: str
    tip: str
    length: int | None = None
    root: str | None = None
    effector_offset: Vec3 = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        checked_name(self.name, "name")
        checked_name(self.tip, "tip")
        if (self.length is None) == (self.root is None):
            problem = "give either length or root, not both" if self.length is not None else "give length or root"
            raise RigSpecError(problem, field="length")
        if self.length is not None:
            if isinstance(self.length, bool) or not isinstance(self.length, numbers.Integral):
                raise RigSpecError(f"expected a whole number, got {shown(self.length)}", field="length")
            if self.length < 1:
                raise RigSpecError(f"must be at least 1, got {self.length}", field="length")
            _set(self, "length", int(self.length))
        else:
            checked_name(self.root, "root")
        _set(self, "effector_offset", checked_vector(self.effector_offset, 3, "effector_offset"))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "tip": self.tip}
        if self.length is not None:
            out["length"] = self.length
        else:
            out["root"] = self.root
        out["effector_offset"] = list(self.effector_offset)
        return out


# --------------------------------------------------------------------------- the spec


@dataclass(frozen=True, kw_only=True)
class RigSpec:
    """A whole rig: bones, IK chains and joint limits (bones without an entry are free).

    Constructing one validates it; :meth:`from_dict` and :func:`load_rig_spec` build one
    from JSON data.  Treat ``limits`` as read-only.
    """

    name: str
    bones: tuple[BoneSpec, ...]
    chains: tuple[ChainSpec, ...] = ()
    limits: Mapping[str, JointLimit] = field(default_factory=dict)
    _by_name: dict[str, BoneSpec] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise RigSpecError(f"expected a string, got {shown(self.name)}", field="name")
        bones = self._validated_bones()
        _set(self, "bones", bones)
        _set(self, "_by_name", {bone.name: bone for bone in bones})
        self._check_parents()
        _set(self, "limits", self._validated_limits())
        _set(self, "chains", self._validated_chains())

    # ---- validation

    def _validated_bones(self) -> tuple[BoneSpec, ...]:
        if isinstance(self.bones, (str, bytes, Mapping)) or not isinstance(self.bones, Sequence):
            raise RigSpecError(f"expected a list of bones, got {shown(self.bones)}", field="bones")
        seen: dict[str, int] = {}
        for i, bone in enumerate(self.bones):
            if not isinstance(bone, BoneSpec):
                raise RigSpecError(f"expected a BoneSpec, got {shown(bone)}", field=f"bones[{i}]")
            if bone.name in seen:
                raise RigSpecError(
                    f"duplicate bone name (bones[{seen[bone.name]}] and bones[{i}])",
                    subject=f"bone {bone.name!r}",
                    field="name",
                    bone=bone.name,
                )
            seen[bone.name] = i
        return tuple(self.bones)

    def _check_parents(self) -> None:
        for bone in self.bones:
            if bone.parent is not None and bone.parent not in self._by_name:
                raise RigSpecError(
                    f"{bone.parent!r} is not a bone", subject=f"bone {bone.name!r}", field="parent", bone=bone.name
                )
        acyclic: set[str] = set()  # bones already known to lead up to a root
        for bone in self.bones:
            path: list[str] = []
            on_path: set[str] = set()  # (a set beside the list: a 20,000-bone lineage checks in linear time)
            name: str | None = bone.name
            while name is not None and name not in acyclic:
                if name in on_path:
                    cycle = " -> ".join([*path[path.index(name) :], name])
                    raise RigSpecError(
                        f"parent links form a cycle: {cycle}", subject=f"bone {name!r}", field="parent", bone=name
                    )
                path.append(name)
                on_path.add(name)
                name = self._by_name[name].parent
            acyclic.update(path)

    def _validated_limits(self) -> dict[str, JointLimit]:
        if not isinstance(self.limits, Mapping):
            raise RigSpecError(f"expected a mapping of bone name to limit, got {shown(self.limits)}", field="limits")
        limits: dict[str, JointLimit] = {}
        for bone_name, limit in self.limits.items():
            subject = f"bone {bone_name!r}"
            if bone_name not in self._by_name:
                raise RigSpecError("there is no bone of this name", subject=subject, field="limits", bone=bone_name)
            if not isinstance(limit, tuple(_LIMIT_TYPES.values())):
                raise RigSpecError(
                    f"expected a BallLimit, HingeLimit, FreeLimit or FixedLimit, got {shown(limit)}",
                    subject=subject,
                    field="limits",
                    bone=bone_name,
                )
            limits[bone_name] = limit
        return limits

    def _validated_chains(self) -> tuple[ChainSpec, ...]:
        if isinstance(self.chains, (str, bytes, Mapping)) or not isinstance(self.chains, Sequence):
            raise RigSpecError(f"expected a list of chains, got {shown(self.chains)}", field="chains")
        seen: set[str] = set()
        for i, chain in enumerate(self.chains):
            if not isinstance(chain, ChainSpec):
                raise RigSpecError(f"expected a ChainSpec, got {shown(chain)}", field=f"chains[{i}]")
            subject = f"chain {chain.name!r}"
            if chain.name in seen:
                raise RigSpecError("duplicate chain name", subject=subject, field="name", chain=chain.name)
            seen.add(chain.name)
            if chain.tip not in self._by_name:
                raise RigSpecError(f"{chain.tip!r} is not a bone", subject=subject, field="tip", chain=chain.name)
            lineage = self._lineage(chain.tip)
            if chain.length is not None and chain.length > len(lineage):
                raise RigSpecError(
                    f"{chain.length} exceeds the {len(lineage)} bones from {chain.tip!r} to the root",
                    subject=subject,
                    field="length",
                    chain=chain.name,
                )
            if chain.root is not None and chain.root not in lineage:
                raise RigSpecError(
                    f"{chain.root!r} is not {chain.tip!r} or an ancestor of it",
                    subject=subject,
                    field="root",
                    chain=chain.name,
                )
        return tuple(self.chains)

    def _lineage(self, bone_name: str) -> list[str]:
        """``bone_name`` and its ancestors, tip first."""
        names = [bone_name]
        parent = self._by_name[bone_name].parent
        while parent is not None:
            names.append(parent)
            parent = self._by_name[parent].parent
        return names

    # ---- queries

    @property
    def bone_names(self) -> tuple[str, ...]:
        return tuple(bone.name for bone in self.bones)

    def bone(self, name: str) -> BoneSpec:
        """The bone called ``name``; ``KeyError`` if there is none."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"rig {self.name!r} has no bone {name!r}") from None

    def chain(self, name: str) -> ChainSpec:
        """The chain called ``name``; ``KeyError`` if there is none."""
        for chain in self.chains:
            if chain.name == name:
                return chain
        raise KeyError(f"rig {self.name!r} has no chain {name!r}")

    def chain_bones(self, chain_name: str) -> tuple[str, ...]:
        """The chain's bone names from its root to its tip (each bone's parent precedes it)."""
        chain = self.chain(chain_name)
        lineage = self._lineage(chain.tip)
        count = chain.length if chain.length is not None else lineage.index(chain.root) + 1  # type: ignore[arg-type]
        return tuple(reversed(lineage[:count]))

    def limit_for(self, bone_name: str) -> JointLimit:
        """The bone's joint limit; :class:`FreeLimit` if the spec gives none."""
        self.bone(bone_name)
        return self.limits.get(bone_name, FreeLimit())

    # ---- conversion

    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON-ready dict: every field written, lists not tuples."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "name": self.name,
            "bones": [bone.to_dict() for bone in self.bones],
            "chains": [chain.to_dict() for chain in self.chains],
            "limits": {name: limit.to_dict() for name, limit in self.limits.items()},
        }

    def dumps(self) -> str:
        """Stable, pretty JSON text (short lists and objects on one line), ending in a newline."""
        return pretty_json(self.to_dict()) + "\n"

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`dumps` to ``path`` (UTF-8)."""
        with open(path, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(self.dumps())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RigSpec:
        """Build and validate a spec from parsed JSON; raises :class:`RigSpecError`."""
        top = checked_object(data, None)
        check_keys(top, required=("format", "version", "name", "bones"), optional=("chains", "limits"))
        if top["format"] != FORMAT:
            raise RigSpecError(f"expected {FORMAT!r}, got {shown(top['format'])}", field="format")
        version = top["version"]
        if isinstance(version, bool) or version != VERSION:
            raise RigSpecError(
                f"unsupported version {shown(version)}; this add-on reads version {VERSION}", field="version"
            )
        name = top["name"]
        if not isinstance(name, str):
            raise RigSpecError(f"expected a string, got {shown(name)}", field="name")
        bones = tuple(_bone_from_dict(item, i) for i, item in enumerate(checked_list(top["bones"], "bones")))
        chains = tuple(
            _chain_from_dict(item, i) for i, item in enumerate(checked_list(top.get("chains", []), "chains"))
        )
        limits_data = checked_object(top.get("limits", {}), "limits")
        limits = {}
        for bone_name, limit_data in limits_data.items():
            with field_context(subject=f"bone {bone_name!r}", field="limits", bone=bone_name):
                limits[bone_name] = _limit_from_dict(limit_data)
        return cls(name=name, bones=bones, chains=chains, limits=limits)


# --------------------------------------------------------------------------- parsing JSON data


def _bone_from_dict(data: object, index: int) -> BoneSpec:
    raw_name = data.get("name") if isinstance(data, Mapping) else None
    bone_name = raw_name if isinstance(raw_name, str) and raw_name else None
    subject = f"bone {bone_name!r}" if bone_name else f"bones[{index}]"
    with field_context(subject=subject, bone=bone_name):
        bone = checked_object(data, None)
        check_keys(bone, required=("name", "head", "tail"), optional=("parent", "roll_deg"))
        return BoneSpec(
            name=bone["name"],
            head=bone["head"],
            tail=bone["tail"],
            roll_deg=bone.get("roll_deg", 0.0),
            parent=bone.get("parent"),
        )


def _chain_from_dict(data: object, index: int) -> ChainSpec:
    raw_name = data.get("name") if isinstance(data, Mapping) else None
    chain_name = raw_name if isinstance(raw_name, str) and raw_name else None
    subject = f"chain {chain_name!r}" if chain_name else f"chains[{index}]"
    with field_context(subject=subject, chain=chain_name):
        chain = checked_object(data, None)
        check_keys(chain, required=("name", "tip"), optional=("length", "root", "effector_offset"))
        return ChainSpec(
            name=chain["name"],
            tip=chain["tip"],
            length=chain.get("length"),
            root=chain.get("root"),
            effector_offset=chain.get("effector_offset", (0.0, 0.0, 0.0)),
        )


def _limit_from_dict(data: object) -> JointLimit:
    limit = checked_object(data, None)
    kind = limit.get("type")
    if kind not in _LIMIT_TYPES:
        if "type" not in limit:
            raise RigSpecError("missing", field="type")
        raise RigSpecError(
            f"unknown limit type {shown(kind)} (expected one of: {', '.join(_LIMIT_TYPES)})", field="type"
        )
    if kind == "ball":
        check_keys(limit, required=("type",), optional=("windows", "twist_deg", "twist_reference", "stiffness"))
        windows = []
        for i, window_data in enumerate(checked_list(limit.get("windows", []), "windows")):
            with field_context(field=f"windows[{i}]"):
                windows.append(_window_from_dict(window_data))
        return BallLimit(
            windows=tuple(windows),
            twist_deg=limit.get("twist_deg"),
            twist_reference=limit.get("twist_reference"),
            stiffness=limit.get("stiffness", 0.0),
        )
    if kind == "hinge":
        check_keys(limit, required=("type",), optional=("axis", "range_deg", "stiffness"))
        return HingeLimit(
            axis=limit.get("axis", (1.0, 0.0, 0.0)),
            range_deg=limit.get("range_deg"),
            stiffness=limit.get("stiffness", 0.0),
        )
    if kind == "free":
        check_keys(limit, required=("type",), optional=("stiffness",))
        return FreeLimit(stiffness=limit.get("stiffness", 0.0))
    check_keys(limit, required=("type",))
    return FixedLimit()


def _window_from_dict(data: object) -> ReachWindow:
    window = checked_object(data, None)
    shape = window.get("shape")
    if shape not in _WINDOW_TYPES:
        if "shape" not in window:
            raise RigSpecError("missing", field="shape")
        raise RigSpecError(
            f"unknown window shape {shown(shape)} (expected one of: {', '.join(_WINDOW_TYPES)})", field="shape"
        )
    center = window.get("center", (0.0, 1.0, 0.0))
    if shape == "polygon":
        check_keys(window, required=("shape", "vertices_deg"), optional=("center", "x_axis"))
        return PolygonWindow(center=center, x_axis=window.get("x_axis"), vertices_deg=window["vertices_deg"])
    if shape == "cone":
        check_keys(window, required=("shape", "half_angle_deg"), optional=("center",))
        return ConeWindow(center=center, half_angle_deg=window["half_angle_deg"])
    check_keys(window, required=("shape", "half_angles_deg"), optional=("center", "x_axis"))
    return EllipticConeWindow(center=center, x_axis=window.get("x_axis"), half_angles_deg=window["half_angles_deg"])


# --------------------------------------------------------------------------- text and files


def loads_rig_spec(text: str, *, source: str | None = None) -> RigSpec:
    """Parse and validate rig spec JSON text; ``source`` (a file name) prefixes errors."""
    try:
        data = json.loads(text, object_pairs_hook=JsonObject)
    except json.JSONDecodeError as err:
        raise RigSpecError(f"invalid JSON at line {err.lineno}, column {err.colno}: {err.msg}", source=source) from None
    except (RecursionError, ValueError) as err:  # nested past the stack; an integer of 4,300+ digits
        raise RigSpecError(f"JSON that cannot be read: {type(err).__name__}: {err}", source=source) from None
    try:
        return RigSpec.from_dict(data)
    except RigSpecError as err:
        raise err.within(source=source) from None
    except RecursionError:
        raise RigSpecError("JSON nested too deeply to be a rig spec", source=source) from None


def load_rig_spec(path: str | os.PathLike[str]) -> RigSpec:
    """Read and validate a rig spec file.

    Raises :class:`RigSpecError` (message prefixed with the file name) for anything wrong
    with its content, and ``OSError`` if it cannot be read.
    """
    with open(path, encoding="utf-8") as handle:
        try:
            text = handle.read()
        except UnicodeDecodeError as err:
            raise RigSpecError(
                f"not UTF-8 text (byte {err.start}): is this a rig spec file?", source=os.fspath(path)
            ) from None
    return loads_rig_spec(text, source=os.fspath(path))
