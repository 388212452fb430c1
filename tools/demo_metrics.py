"""What the demo measures on a bake, numpy only: the summary figures and each joint's swing and
twist against its limits. Both solvers are judged by the same code and by OUR limits (Blender's
IK only gets an approximation of them, see sample_rigs/rig_math.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from quat_ik_addon.solver import quaternion as quat

REACHED_DISTANCE = 1e-3  # scene units (m): a frame counts as reached within 1 mm...
REACHED_ANGLE = np.radians(1.0)  # ...and, with an orientation goal, within 1°
VIOLATION_TOLERANCE = np.radians(0.1)  # a joint further outside its limits than this violates them


@dataclass(frozen=True)
class SolverStats:
    """One solver on one rig, all chains together."""

    frames: int
    bake_seconds: float
    error_mm: tuple[float, float, float]  # tip distance to target: median, 95th percentile, max
    orientation_deg: tuple[float, float] | None  # median, max; None without orientation goals
    reached: int  # frames where every chain is within REACHED_DISTANCE (and REACHED_ANGLE)
    violation_max_deg: float
    frames_violating: int
    jump_max_deg: float  # largest change of one joint's rotation from one frame to the next
    jump_frame: int  # where it happened (the later frame)


def solver_stats(frames: np.ndarray, chains, runs, bake_seconds: float) -> SolverStats:
    """``chains``: ChainInfo list (with the solver Chain); ``runs``: ChainRun list, same order."""
    errors = np.stack([np.linalg.norm(r.effector - r.target, axis=1) for r in runs], axis=1)  # (F, chains)
    ok = errors <= REACHED_DISTANCE
    orientation = [r.orientation_error for r in runs if r.orientation_error is not None]
    orientation_deg = None
    if orientation:
        angles = np.stack(orientation, axis=1)
        ok &= np.all(angles <= REACHED_ANGLE, axis=1, keepdims=True)
        orientation_deg = (float(np.degrees(np.median(angles))), float(np.degrees(np.max(angles))))
    violations = np.concatenate(
        [info.chain.limit_violation(quat.normalize(r.rotations)) for info, r in zip(chains, runs, strict=True)], axis=1
    )
    jumps = np.concatenate([_jumps(r.rotations) for r in runs], axis=1)  # (F-1, bones)
    worst = int(np.argmax(np.max(jumps, axis=1))) if len(jumps) else 0
    return SolverStats(
        frames=len(frames),
        bake_seconds=bake_seconds,
        error_mm=tuple(float(1e3 * v) for v in (np.median(errors), np.percentile(errors, 95), np.max(errors))),
        orientation_deg=orientation_deg,
        reached=int(np.sum(np.all(ok, axis=1))),
        violation_max_deg=float(np.degrees(np.max(violations))),
        frames_violating=int(np.sum(np.max(violations, axis=1) > VIOLATION_TOLERANCE)),
        jump_max_deg=float(np.degrees(np.max(jumps))) if len(jumps) else 0.0,
        jump_frame=int(frames[worst + 1]) if len(jumps) else int(frames[0]),
    )


def _jumps(rotations: np.ndarray) -> np.ndarray:
    q = quat.normalize(rotations)
    return quat.angle_between(q[1:], q[:-1])


# --------------------------------------------------------------------------- per joint


@dataclass(frozen=True)
class JointSeries:
    """One joint over the frames, in degrees, for the plots.

    Ball joints: ``swing`` is the angle from the centre of the window the bone points through
    (or the nearest window), ``swing_limit`` where that window's edge is in the same direction;
    without windows, ``swing`` is from the rest direction and ``swing_limit`` is None. Hinges:
    ``angle`` and ``angle_range``. ``twist`` and ``twist_range`` for ball joints.
    """

    bone: str
    kind: str  # "ball", "hinge", "other"
    swing: np.ndarray | None = None
    swing_limit: np.ndarray | None = None
    twist: np.ndarray | None = None
    twist_range: tuple[float, float] | None = None
    angle: np.ndarray | None = None
    angle_range: tuple[float, float] | None = None


def joint_series(bone_names, chain, rotations: np.ndarray) -> list[JointSeries]:
    """Limits are recognised by class name: in the demo they come from the installed add-on's
    copy of the solver (``bl_ext.….quat_ik.solver``), not this checkout's."""
    out = []
    for i, (name, limit) in enumerate(zip(bone_names, chain.limits, strict=True)):
        q = quat.normalize(rotations[:, i])
        limit = getattr(limit, "inner", limit)  # partly locked channels wrap the bone's limit
        kind = type(limit).__name__
        if kind == "HingeJoint":
            rng = limit.angle_range
            out.append(
                JointSeries(
                    name,
                    "hinge",
                    angle=np.degrees(limit.angle(q)),
                    angle_range=None if rng is None or rng.is_full_circle else _degrees(rng),
                )
            )
        elif kind == "BallJoint":
            direction, twist = quat.swing_twist_y(q)
            swing, edge = _swing_against_windows(limit.windows, direction)
            rng = limit.twist_range
            out.append(
                JointSeries(
                    name,
                    "ball",
                    swing=swing,
                    swing_limit=edge,
                    twist=np.degrees(twist),
                    twist_range=None if rng is None or rng.is_full_circle else _degrees(rng),
                )
            )
        else:
            out.append(JointSeries(name, "other"))
    return out


def _degrees(angle_range) -> tuple[float, float]:
    return float(np.degrees(angle_range.minimum)), float(np.degrees(angle_range.maximum))


def _swing_against_windows(windows, d: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    if not windows:
        return np.degrees(np.arccos(np.clip(d[:, 1], -1.0, 1.0))), None
    # Per frame the window the bone passes through (the deepest-inside one), else the nearest.
    outside = np.stack([quat.direction_angle(d, w.closest(d)) for w in windows], axis=1)
    depth = np.stack([np.einsum("ij,j->i", d, w.reference) for w in windows], axis=1)
    choice = np.argmin(outside - 1e-9 * depth, axis=1)
    swing, edge = np.zeros(len(d)), np.zeros(len(d))
    for k, window in enumerate(windows):
        rows = choice == k
        if not np.any(rows):
            continue
        r = window.reference
        swing[rows] = quat.direction_angle(d[rows], np.broadcast_to(r, d[rows].shape))
        # Far along the arc from the centre through d: the window's crossing is its edge there.
        along = d[rows] - np.outer(d[rows] @ r, r)
        norm = np.linalg.norm(along, axis=1, keepdims=True)
        along = np.where(norm > 1e-9, along / np.maximum(norm, 1e-300), quat.any_perpendicular(r))
        far = np.cos(np.radians(179.0)) * r + np.sin(np.radians(179.0)) * along
        edge[rows] = quat.direction_angle(window.crossing(far), np.broadcast_to(r, far.shape))
    return np.degrees(swing), np.degrees(edge)
