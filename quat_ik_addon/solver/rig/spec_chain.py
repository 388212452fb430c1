"""From a rig spec (degrees, a file people edit) to solver objects (radians, plane axes)."""

from __future__ import annotations

import math

import numpy as np

from ..chain import Chain
from ..limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint, JointLimit
from ..limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow, ReachWindow
from ..limits.window_frames import polygon_plane_vertices, window_plane_axes
from . import spec as spec
from .rest_pose import spec_rest_frames


def solver_window(window: spec.ReachWindow) -> ReachWindow:
    """A rig-spec window as a solver reach window."""
    if isinstance(window, spec.ConeWindow):
        return ConeWindow(np.asarray(window.center, dtype=float), math.radians(window.half_angle_deg))
    center, plane_x, plane_y = window_plane_axes(window.center, window.x_axis)
    if isinstance(window, spec.EllipticConeWindow):
        a, b = (math.radians(angle) for angle in window.half_angles_deg)
        return EllipticConeWindow(center, plane_x, plane_y, (a, b))
    return PolygonWindow(center, plane_x, plane_y, polygon_plane_vertices(window))


def _angle_range(degrees: tuple[float, float] | None) -> AngleRange | None:
    return None if degrees is None else AngleRange(math.radians(degrees[0]), math.radians(degrees[1]))


def solver_limit(limit: spec.JointLimit, *, clamp_mode: str = "closest") -> JointLimit:
    """The solver's joint limit for a rig-spec limit."""
    if isinstance(limit, spec.FixedLimit):
        return FixedJoint()
    if isinstance(limit, spec.HingeLimit):
        return HingeJoint(np.asarray(limit.axis, dtype=float), _angle_range(limit.range_deg), limit.stiffness)
    if isinstance(limit, spec.BallLimit):
        return BallJoint(
            windows=tuple(solver_window(window) for window in limit.windows),
            twist_range=_angle_range(limit.twist_deg),
            clamp_mode=clamp_mode,
            stiffness=limit.stiffness,
            twist_reference=None if limit.twist_reference is None else np.asarray(limit.twist_reference, dtype=float),
        )
    return FreeJoint(limit.stiffness)


def chain_from_rig_spec(rig: spec.RigSpec, chain_name: str, *, clamp_mode: str = "closest") -> Chain:
    """The named chain of a rig spec, its targets given in the frame of the root bone's parent."""
    names = rig.chain_bones(chain_name)
    frames = spec_rest_frames(rig, names)
    return Chain(
        bone_names=tuple(names),
        rest_rotations=frames.rest_rotations_local,
        rest_offsets=frames.head_offsets_local,
        lengths=frames.lengths,
        limits=tuple(solver_limit(rig.limit_for(name), clamp_mode=clamp_mode) for name in names),
        effector_offset=np.asarray(rig.chain(chain_name).effector_offset, dtype=float),
    )
