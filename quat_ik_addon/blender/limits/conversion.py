"""Pose-bone limit settings <-> rig-spec limits -> solver joint limits.

The rig spec (``solver/rig/spec.py``) is the one validated description of a joint limit, so
the panel's settings are first turned into it (degrees, as the spec keeps them) and then
into solver objects by the solver's own ``spec_chain.solver_limit`` (radians, plane axes).
The other way, a rig-spec limit (a preset, a fitted or mirrored limit, a file) is written
into a bone's settings. No ``bpy`` import: the settings are read by attribute, so tests can
pass plain objects.
"""

from __future__ import annotations

import functools
import math

from ...solver.bounded_memo import BoundedMemo
from ...solver.rig import spec as spec
from ...solver.rig.spec_chain import solver_limit
from ..errors import ChainError

AXIS_VECTORS = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_AXIS_NAMES = {vector: name for name, vector in AXIS_VECTORS.items()}


def _deg_range(low: float, high: float) -> tuple[float, float]:
    # Blender stores ±2π as 32-bit floats, which read back a hair beyond ±360°; a range
    # that spans a turn by such a hair is a full turn.
    low, high = max(-360.0, math.degrees(low)), min(360.0, math.degrees(high))
    return (low, min(high, low + 360.0))


# A 32-bit float's rounding at π (or π/2) in degrees: the slack of a stored bound.
FLOAT32_SLACK_DEG = 1e-4


def stored_degrees(angle: float, largest: float, *, open_bound: bool = False, smallest: float = 0.0) -> float:
    """Degrees of an angle Blender stored as a 32-bit float, brought back inside ``largest``
    (or up to ``smallest``) when rounding put it just past (180° reads back 180.000005°,
    89.9999999° as 90°, 0.01° as 0.0099999998°); an open bound keeps the magnitude just under
    it. Anything further out stays, for the spec's check."""
    degrees = math.degrees(angle)
    if largest <= abs(degrees) <= largest + FLOAT32_SLACK_DEG:
        degrees = math.copysign(largest - (FLOAT32_SLACK_DEG if open_bound else 0.0), degrees)
    if smallest - FLOAT32_SLACK_DEG <= degrees < smallest:
        degrees = smallest
    return degrees


def window_spec(window) -> spec.ReachWindow:
    center = tuple(window.center)
    x_axis = tuple(window.x_axis) if window.use_x_axis else None
    if window.shape == "CONE":
        return spec.ConeWindow(half_angle_deg=stored_degrees(window.half_angle, 180.0), center=center)
    if window.shape == "ELLIPTIC_CONE":
        return spec.EllipticConeWindow(
            half_angles_deg=tuple(
                stored_degrees(a, 90.0, open_bound=True, smallest=spec.MIN_ELLIPSE_HALF_ANGLE_DEG)
                for a in window.half_angles
            ),
            center=center,
            x_axis=x_axis,
        )
    vertices = tuple(
        tuple(stored_degrees(a, 90.0, open_bound=True) for a in vertex.angles) for vertex in window.vertices
    )
    return spec.PolygonWindow(vertices_deg=vertices, center=center, x_axis=x_axis)


def spec_limit(limits) -> spec.JointLimit:
    """A pose bone's ``quat_ik`` settings as a rig-spec limit; RigSpecError if invalid."""
    kind = limits.joint_type
    if kind == "FIXED":
        return spec.FixedLimit()
    if kind == "HINGE":
        axis = AXIS_VECTORS.get(limits.hinge_axis) or tuple(limits.hinge_custom_axis)
        hinge_range = _deg_range(limits.hinge_min, limits.hinge_max) if limits.use_hinge_range else None
        return spec.HingeLimit(axis=axis, range_deg=hinge_range, stiffness=limits.stiffness)
    if kind == "BALL":
        windows = []
        for i, window in enumerate(limits.windows):
            try:
                windows.append(window_spec(window))
            except spec.RigSpecError as error:
                raise spec.RigSpecError(f"window {i + 1}: {error}") from None
        twist = _deg_range(limits.twist_min, limits.twist_max) if limits.use_twist_range else None
        reference = tuple(limits.twist_reference) if limits.use_twist_range and limits.use_twist_reference else None
        return spec.BallLimit(
            windows=tuple(windows), twist_deg=twist, stiffness=limits.stiffness, twist_reference=reference
        )
    return spec.FreeLimit(stiffness=limits.stiffness)


def settings_key(group) -> tuple:
    """Every setting of a property group (recursively) as plain values: the cache key of its limit.

    Reading the values is several times cheaper than validating them into a rig-spec limit
    (a polygon's convexity check, ~1 ms a window), which then happens only when a setting
    changed. UI-only selections (``active_*_index``) are left out.
    """
    fields = _FIELDS.get(type(group))
    if fields is None:
        fields = _FIELDS[type(group)] = tuple(
            (prop.identifier, prop.type == "COLLECTION", getattr(prop, "is_array", False))
            for prop in group.bl_rna.properties
            if prop.identifier not in ("rna_type", "name") and not prop.identifier.endswith("_index")
        )
    values = []
    for name, is_collection, is_array in fields:
        value = getattr(group, name)
        if is_collection:
            value = tuple(settings_key(item) for item in value)
        elif is_array:
            value = tuple(value)
        values.append(value)
    return tuple(values)


_FIELDS: dict = {}
_spec_limits: BoundedMemo[spec.JointLimit] = BoundedMemo(1024)  # settings_key -> limit (valid settings only)


def cached_spec_limit(limits) -> spec.JointLimit:
    """``spec_limit`` of a pose bone's ``quat_ik`` settings, validated once per distinct
    settings: Live posing and the panel read a rig's limits on every update. Invalid
    settings raise RigSpecError every time (they are not cached)."""
    return _spec_limits.get(settings_key(limits), lambda: spec_limit(limits))


@functools.lru_cache(maxsize=1024)
def _solver_limit(limit: spec.JointLimit, clamp_mode: str):
    # Live posing rebuilds the chain on every update; equal settings give the same solver
    # limit (immutable), so it is built once. Rig-spec limits are frozen, hence hashable.
    return solver_limit(limit, clamp_mode=clamp_mode)


def bone_limit(bone_name: str, limits, *, clamp_mode: str = "closest"):
    """The solver limit for one pose bone's settings; ChainError naming the bone if invalid."""
    try:
        return _solver_limit(cached_spec_limit(limits), clamp_mode)
    except (spec.RigSpecError, ValueError) as error:
        raise ChainError(f"Bone '{bone_name}' has invalid joint limits: {error}") from None


def bone_stretch(bone_name: str, limits):
    """The solver ``Stretch`` of one pose bone's settings, or None when it keeps its length;
    ChainError naming the bone if its range is invalid."""
    if not limits.use_stretch:
        return None
    from ...solver.body import Stretch

    try:
        return Stretch(limits.stretch_min, limits.stretch_max, limits.stretch_stiffness)
    except ValueError as error:
        raise ChainError(f"Bone '{bone_name}' has an invalid stretch range: {error}") from None


# --------------------------------------------------------------------------- rig spec -> settings


def reset_limits(limits) -> None:
    """Every setting of a bone's ``quat_ik`` back to its default (a free joint, no windows)."""
    for prop in limits.bl_rna.properties:
        name = prop.identifier
        if name in ("rna_type", "name"):
            continue
        if prop.type == "COLLECTION":
            getattr(limits, name).clear()
        else:
            limits.property_unset(name)


def copy_limits(source, target) -> None:
    """Copy every setting of one property group to another of the same type, recursively."""
    for prop in source.bl_rna.properties:
        name = prop.identifier
        if name in ("rna_type", "name"):
            continue
        if prop.type == "COLLECTION":
            items = getattr(target, name)
            items.clear()
            for item in getattr(source, name):
                copy_limits(item, items.add())
        elif prop.type == "POINTER":
            copy_limits(getattr(source, name), getattr(target, name))
        elif not prop.is_readonly:
            setattr(target, name, getattr(source, name))


def write_window(window, spec_window: spec.ReachWindow) -> None:
    """Set one ``QuatIKReachWindow`` from a rig-spec window (degrees -> radians)."""
    for name in ("use_x_axis", "x_axis", "half_angle", "half_angles", "center", "active_vertex_index"):
        window.property_unset(name)
    window.vertices.clear()
    window.center = spec_window.center
    if isinstance(spec_window, spec.ConeWindow):
        window.shape = "CONE"
        window.half_angle = math.radians(spec_window.half_angle_deg)
        return
    if spec_window.x_axis is not None:
        window.use_x_axis = True
        window.x_axis = spec_window.x_axis
    if isinstance(spec_window, spec.EllipticConeWindow):
        window.shape = "ELLIPTIC_CONE"
        window.half_angles = tuple(math.radians(a) for a in spec_window.half_angles_deg)
        return
    window.shape = "POLYGON"
    for corner in spec_window.vertices_deg:
        window.vertices.add().angles = tuple(math.radians(a) for a in corner)


def write_limit(limits, limit: spec.JointLimit) -> None:
    """Replace a bone's ``quat_ik`` settings with a rig-spec limit (everything else reset)."""
    reset_limits(limits)
    if isinstance(limit, spec.FixedLimit):
        limits.joint_type = "FIXED"
        return
    limits.stiffness = limit.stiffness
    if isinstance(limit, spec.FreeLimit):
        return
    if isinstance(limit, spec.HingeLimit):
        limits.joint_type = "HINGE"
        axis = _AXIS_NAMES.get(tuple(float(c) for c in limit.axis))
        limits.hinge_axis = axis or "CUSTOM"
        if axis is None:
            limits.hinge_custom_axis = limit.axis
        limits.use_hinge_range = limit.range_deg is not None
        if limit.range_deg is not None:
            limits.hinge_min, limits.hinge_max = (math.radians(a) for a in limit.range_deg)
        return
    limits.joint_type = "BALL"
    for spec_window in limit.windows:
        write_window(limits.windows.add(), spec_window)
    limits.use_twist_range = limit.twist_deg is not None
    if limit.twist_deg is not None:
        limits.twist_min, limits.twist_max = (math.radians(a) for a in limit.twist_deg)
    limits.use_twist_reference = limit.twist_reference is not None
    if limit.twist_reference is not None:
        limits.twist_reference = limit.twist_reference


def is_default_limit(limit: spec.JointLimit) -> bool:
    """A free joint without stiffness: what a bone without settings has."""
    return isinstance(limit, spec.FreeLimit) and limit.stiffness == 0.0
