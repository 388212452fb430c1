"""The rotation that best turns a set of vectors onto wanted ones: one CCD joint step.

A joint maximises Σ_k w_k b_k·(R a_k) over its allowed rotations R (Wang & Chen 1991's
combined objective). For one pair this is the shortest arc; for several it is Wahba's
problem, solved exactly by Davenport's q-method: the quaternion is the eigenvector of the
largest eigenvalue of the symmetric 4×4 K with b·(R(q) a) = qᵀ K q. For a hinge the
objective is A cos φ + B sin φ + C in the hinge angle, maximised at φ = atan2(B, A).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat

Array = NDArray[np.float64]


def best_turn(now: Array, wanted: Array, weights: Array) -> Array:
    """Rotation (M, 4) maximising Σ w b·(R a) for pairs shaped (M, k, 3), weights (k,) or (M, k)."""
    if now.shape[-2] == 1:
        return quat.rotation_between(now[..., 0, :], wanted[..., 0, :])
    weights = np.broadcast_to(weights, now.shape[:-1])[..., None, None]
    # b·(R a) = (w² − |v|²)(a·b) + 2(v·a)(v·b) + 2w v·(a×b) as a quadratic form in (w, v).
    dot = np.einsum("...i,...i->...", now, wanted)[..., None, None]
    cross = quat.cross(now, wanted)
    outer = now[..., :, None] * wanted[..., None, :]
    k = np.zeros((*now.shape[:-1], 4, 4))
    k[..., :1, :1] = dot
    k[..., 0, 1:] = cross
    k[..., 1:, 0] = cross
    k[..., 1:, 1:] = outer + np.swapaxes(outer, -1, -2) - dot * np.eye(3)
    k = np.sum(weights * k, axis=-3)
    _, vectors = np.linalg.eigh(k)
    return quat.canonical(quat.normalize(vectors[..., :, -1]))


def best_hinge_turn(axis: Array, now: Array, wanted: Array, weights: Array) -> Array:
    """Angle (M,) about the unit ``axis`` maximising Σ w b·(R_axis(φ) a)."""
    weights = np.broadcast_to(weights, now.shape[:-1])
    across_now = now - (now @ axis)[..., None] * axis
    across_wanted = wanted - (wanted @ axis)[..., None] * axis
    cosine = np.sum(weights * np.einsum("...i,...i->...", across_now, across_wanted), axis=-1)
    sine = np.sum(weights * (quat.cross(across_now, across_wanted) @ axis), axis=-1)
    return np.arctan2(sine, cosine)
