"""Pose-bone limit settings -> rig-spec limits -> solver joint limits.

The rig spec (``solver/rig_spec.py``) is the one validated description of a joint limit, so
the panel's settings are first turned into it (degrees, as the spec keeps them) and then
into solver objects by the solver's own ``spec_chain.solver_limit`` (radians, plane axes).
No ``bpy`` import: the settings are read by attribute, so tests can pass plain objects.
"""

from __future__ import annotations

import functools
import math

from ..solver import rig_spec as spec
from ..solver.spec_chain import solver_limit
from .errors import ChainError

AXIS_VECTORS = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def _deg_range(low: float, high: float) -> tuple[float, float]:
    # Blender stores ±2π as 32-bit floats, which read back a hair beyond ±360°; a range
    # that spans a turn by such a hair is a full turn.
    low, high = max(-360.0, math.degrees(low)), min(360.0, math.degrees(high))
    return (low, min(high, low + 360.0))


def window_spec(window) -> spec.ReachWindow:
    center = tuple(window.center)
    x_axis = tuple(window.x_axis) if window.use_x_axis else None
    if window.shape == "CONE":
        return spec.ConeWindow(half_angle_deg=math.degrees(window.half_angle), center=center)
    if window.shape == "ELLIPTIC_CONE":
        return spec.EllipticConeWindow(
            half_angles_deg=tuple(math.degrees(a) for a in window.half_angles), center=center, x_axis=x_axis
        )
    vertices = tuple(tuple(math.degrees(a) for a in vertex.angles) for vertex in window.vertices)
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


@functools.lru_cache(maxsize=1024)
def _solver_limit(limit: spec.JointLimit, clamp_mode: str):
    # Live posing rebuilds the chain on every update; equal settings give the same solver
    # limit (immutable), so it is built once. Rig-spec limits are frozen, hence hashable.
    return solver_limit(limit, clamp_mode=clamp_mode)


def bone_limit(bone_name: str, limits, *, clamp_mode: str = "closest"):
    """The solver limit for one pose bone's settings; ChainError naming the bone if invalid."""
    try:
        return _solver_limit(spec_limit(limits), clamp_mode)
    except (spec.RigSpecError, ValueError) as error:
        raise ChainError(f"Bone '{bone_name}' has invalid joint limits: {error}") from None
