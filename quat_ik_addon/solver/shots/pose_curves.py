"""Start guesses for the frames between solved ones: per-joint curves through solved poses.

The frames between followed frames start from a guess and are solved warm from it; the closer
the guess, the fewer iterations (none, when it already meets the goal). Slerp between the two
neighbours is right to first order; the cubic through four neighbours, taken per joint in
rotation vectors relative to the neighbour before, is right to third order on a smooth motion
and already meets most goals of a smooth shot within a typical tolerance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

CURVE_POINTS = 4  # a cubic through the solved frames two before and two after


def blend(a: Array, b: Array, weight: ArrayLike) -> Array:
    """Per-joint slerp from poses ``a`` to ``b`` (..., n, 4) by ``weight``: (...,) for every
    joint of a pose alike, or (..., n) per joint."""
    weight = np.asarray(weight, dtype=float)
    fraction = weight if weight.shape == a.shape[:-1] else np.broadcast_to(weight[..., None], a.shape[:-1])
    return quat.multiply(a, quat.slerp_from_identity(quat.multiply(quat.conjugate(a), b), fraction))


def _lagrange_weights(times: Array, at: Array) -> Array:
    """Weights (W, P) of P points at ``times`` (W, P) whose sum is the polynomial through them
    evaluated ``at`` (W,) (Lagrange's basis, ∏_{j≠i} (t − t_j)/(t_i − t_j))."""
    points = times.shape[1]
    weights = np.ones(times.shape)
    for i in range(points):
        for j in range(points):
            if i != j:
                weights[:, i] *= (at - times[:, j]) / (times[:, i] - times[:, j])
    return weights


def between_poses(poses: Array, frames: Rows, wanted: Rows, smooth: NDArray[np.bool_]) -> Array:
    """Guesses (W, n, 4) at frames ``wanted`` (strictly between the first and last of ``frames``)
    from ``poses`` (K, n, 4) solved at increasing ``frames`` (K,).

    Where the ``CURVE_POINTS`` solved frames around a wanted one are all ``smooth`` (K,) and
    there are that many, the per-joint cubic through them; else the slerp of the two beside it.
    """
    after = np.searchsorted(frames, wanted)  # the solved frame after each wanted one
    guesses = np.empty((len(wanted), *poses.shape[1:]))
    curved = np.zeros(len(wanted), dtype=bool)
    if len(frames) >= CURVE_POINTS:
        # Per gap between solved frames (several wanted frames share one): its window of solved
        # frames, and their poses as rotation vectors relative to the one before the gap.
        gaps, gap_of = np.unique(after - 1, return_inverse=True)
        first = np.clip(gaps + 1 - CURVE_POINTS // 2, 0, len(frames) - CURVE_POINTS)
        window = first[:, None] + np.arange(CURVE_POINTS)
        usable = np.all(smooth[window], axis=1)
        curved = usable[gap_of]
        gaps, window = gaps[usable], window[usable]
        relative = quat.rotation_vector(quat.multiply(quat.conjugate(poses[gaps][:, None]), poses[window]))
        curved_gap = np.searchsorted(gaps, after[curved] - 1)
        weights = _lagrange_weights(frames[window[curved_gap]].astype(float), wanted[curved].astype(float))
        turn = np.einsum("wp,wpnc->wnc", weights, relative[curved_gap])
        guesses[curved] = quat.multiply(poses[after[curved] - 1], quat.from_rotation_vector(turn))
    straight = ~curved
    if np.any(straight):
        left, right = after[straight] - 1, after[straight]
        fraction = (wanted[straight] - frames[left]) / (frames[right] - frames[left])
        guesses[straight] = blend(poses[left], poses[right], fraction)
    return guesses


def spread_difference(poses: Array, first: int, meeting: int, last: int, arrival: Array) -> Rows:
    """Spread the difference between ``arrival`` (a pose for the frame ``meeting``, where the
    frames before it were heading) and the pose there over the frames strictly between
    ``first`` and ``last``, in place: each joint is turned by a share growing with the frame's
    place between them, towards the pose at ``meeting`` before it, towards ``arrival`` from
    there on; both meet on the geodesic between the two. Returns the frames turned (not
    clamped to the limits: the caller does that)."""
    inside = np.arange(first + 1, last)
    share = np.repeat(((inside - first) / (last - first))[:, None], poses.shape[-2], axis=1)
    forward = inside < meeting
    towards_after = quat.multiply(quat.conjugate(arrival), poses[meeting])  # per joint, bone frame
    towards_before = quat.multiply(quat.conjugate(poses[meeting]), arrival)
    ahead, behind = inside[forward], inside[~forward]
    poses[ahead] = quat.multiply(poses[ahead], quat.slerp_from_identity(towards_after, share[forward]))
    poses[behind] = quat.multiply(poses[behind], quat.slerp_from_identity(towards_before, 1.0 - share[~forward]))
    return inside
