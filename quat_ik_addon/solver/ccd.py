"""Batched quaternion Cyclic Coordinate Descent toward position targets (Blow 2002).

Each sweep visits every joint once (tip to base by default) and turns it so the effector
points at the target, then applies the joint's limit. All N targets advance together: the
Python loop runs over iterations and bones, never over targets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat
from .chain import Chain
from .settings import SolveResult, SolveSettings

Array = NDArray[np.float64]


def _joint_step(chain: Chain, i: int, q: Array, pre: Array, head: Array, effector: Array, target: Array):
    """Turn joint i toward the target; returns its new rotation and the moved effector."""
    to_local = quat.conjugate(pre)
    to_effector = quat.rotate(to_local, effector - head)
    to_target = quat.rotate(to_local, target - head)
    old = q[:, i]
    new = chain.limits[i].step_towards(old, to_effector, to_target)
    # The effector is rigid in bone i's frame: carry it from the old pose to the new one.
    in_bone = quat.rotate(quat.conjugate(old), to_effector)
    moved = head + quat.rotate(pre, quat.rotate(new, in_bone))
    return new, moved


def _sweep_tip_to_base(chain: Chain, q: Array, targets: Array) -> Array:
    # Joints below i do not move while joint i turns, so one forward pass serves the sweep.
    pose = chain.forward_kinematics(q)
    effector = pose.effector
    for i in reversed(range(chain.n_bones)):
        q[:, i], effector = _joint_step(chain, i, q, pose.pre_rotations[:, i], pose.heads[:, i], effector, targets)
    return effector


def _sweep_base_to_tip(chain: Chain, q: Array, targets: Array) -> Array:
    # Bones above i keep their shape until visited, so the effector is fixed in each bone's
    # frame as of the sweep's start; only the prefix of frames is rebuilt as joints turn.
    pose = chain.forward_kinematics(q)
    effector_in_bone = quat.rotate(quat.conjugate(pose.rotations), pose.effector[:, None, :] - pose.heads)
    frame = np.broadcast_to(quat.IDENTITY, (len(q), 4))
    head = np.zeros((len(q), 3))
    for i in range(chain.n_bones):
        head = head + quat.rotate(frame, chain.rest_offsets[i])
        pre = quat.multiply(frame, chain.rest_rotations[i])
        effector = head + quat.rotate(quat.multiply(pre, q[:, i]), effector_in_bone[:, i])
        q[:, i], effector = _joint_step(chain, i, q, pre, head, effector, targets)
        frame = quat.multiply(pre, q[:, i])
    return effector


def _start_rotations(chain: Chain, start: ArrayLike | None, n_targets: int) -> Array:
    if start is None:
        return chain.rest_pose(n_targets)
    start = np.asarray(start, dtype=float)
    if start.shape not in ((chain.n_bones, 4), (n_targets, chain.n_bones, 4)):
        raise ValueError(f"start rotations must be shaped ({chain.n_bones}, 4) or ({n_targets}, {chain.n_bones}, 4)")
    if not np.all(np.isfinite(start)):
        raise ValueError("start rotations contain NaN or infinity")
    # Clamping here brings a start (or rest) pose outside the limits inside at the first step.
    return chain.clamp_to_limits(np.broadcast_to(start, (n_targets, chain.n_bones, 4)))


def as_targets(targets: ArrayLike) -> Array:
    """Validate position targets into an (N, 3) array."""
    targets = np.asarray(targets, dtype=float)
    if targets.ndim == 1:
        targets = targets[None, :]
    if targets.ndim != 2 or targets.shape[1] != 3:
        raise ValueError(f"targets must be shaped (N, 3), not {targets.shape}")
    bad = np.nonzero(~np.all(np.isfinite(targets), axis=1))[0]
    if bad.size:
        raise ValueError(f"targets contain NaN or infinity (rows {bad[:10].tolist()})")
    return targets


def solve_ccd(
    chain: Chain,
    targets: ArrayLike,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
) -> SolveResult:
    """Solve N position targets (root frame, (N, 3)) at once; cold from rest or warm from
    ``start_rotations`` ((n, 4) shared or (N, n, 4) per target).

    Unreachable targets get the best pose found toward them and ``converged`` False.
    """
    settings = settings or SolveSettings()
    targets = as_targets(targets)
    n_targets = len(targets)
    sweep = _sweep_tip_to_base if settings.order == "tip_to_base" else _sweep_base_to_tip
    tolerance = settings.absolute_tolerance(chain.reach)

    rotations = _start_rotations(chain, start_rotations, n_targets)
    error = np.linalg.norm(chain.forward_kinematics(rotations).effector - targets, axis=1)
    best_rotations, best_error = rotations.copy(), error.copy()
    iterations = np.zeros(n_targets, dtype=np.int64)
    stalled_sweeps = np.zeros(n_targets, dtype=np.int64)
    active = error > tolerance

    for _ in range(settings.max_iterations):
        rows = np.nonzero(active)[0]
        if rows.size == 0:
            break
        q = rotations[rows]
        effector = sweep(chain, q, targets[rows])
        rotations[rows] = q
        iterations[rows] += 1
        new_error = np.linalg.norm(effector - targets[rows], axis=1)
        improved = new_error < best_error[rows]
        best_rows = rows[improved]
        best_rotations[best_rows] = q[improved]
        best_error[best_rows] = new_error[improved]
        slow = error[rows] - new_error < settings.stall_ratio * error[rows]
        stalled_sweeps[rows] = np.where(slow, stalled_sweeps[rows] + 1, 0)
        error[rows] = new_error
        active[rows] = (new_error > tolerance) & (stalled_sweeps[rows] < settings.stall_iterations)

    return finish_result(chain, best_rotations, targets, iterations, tolerance)


def finish_result(chain: Chain, rotations: Array, targets: Array, iterations: Array, tolerance: float) -> SolveResult:
    """Normalise, re-measure by forward kinematics and package a result."""
    rotations = quat.canonical(quat.normalize(rotations))
    effector = chain.forward_kinematics(rotations).effector
    error = np.linalg.norm(effector - targets, axis=1)
    return SolveResult(
        rotations=rotations,
        effector=effector,
        position_error=error,
        iterations=iterations,
        converged=error <= tolerance,
        tolerance=tolerance,
    )
