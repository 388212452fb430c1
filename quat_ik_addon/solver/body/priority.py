"""One damped least-squares step with task priority by null-space projection.

Level 1's step is the damped pseudo-inverse solution Δ₁ = J₁^{+λ} e₁; each lower level k is
solved only in what the levels above leave, Δ_k = Δ_{k−1} + (J_k P_{k−1})^{+λ}(e_k − J_k Δ_{k−1}),
with P_k = P_{k−1} − (J_k P_{k−1})⁺(J_k P_{k−1}) the projector onto the null space of levels
1…k (Siciliano & Slotine 1991; the damped form of Baerlocher & Boulic 2004). The projectors are
undamped (a damped projector leaks the lower levels into what the higher ones see, as
``dls._linear_step`` notes) and rank-truncated, from one SVD per level that also gives the
damped solve: J⁺λ = V diag(σ/(σ² + λ²)) Uᵀ (Buss 2004, the SVD form of DLS).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

RANK = 1e-6  # × the body's size: a singular value this small is a direction no level can use


def prioritised_step(
    jacobian: Array, residual: Array, level_rows: Sequence[NDArray[np.intp]], damping: Array, size: float
) -> Array:
    """(L, N, D): each level's part of the step (their sum is the step) for Jacobian (N, M, D),
    residual (N, M) and the rows of each level, highest priority first; ``damping`` (N,) is λ
    in the residual's units (lengths)."""
    count, _, columns = jacobian.shape
    parts = np.zeros((len(level_rows), count, columns))
    step = np.zeros((count, columns))
    projector = None  # the identity until a level has been solved
    for k, rows in enumerate(level_rows):
        if rows.size == 0:
            continue
        level = jacobian[:, rows]
        left = residual[:, rows] - np.einsum("nmd,nd->nm", level, step)
        seen = level if projector is None else level @ projector
        try:
            u, sigma, vt = np.linalg.svd(seen, full_matrices=False)
        except np.linalg.LinAlgError:  # (not seen on finite input; a zero step is always safe)
            break
        gain = sigma / (sigma**2 + (damping**2)[:, None])
        part = np.einsum("nkd,nk->nd", vt, gain * np.einsum("nmk,nm->nk", u, left))
        parts[k] = np.where(np.isfinite(part), part, 0.0)
        step += parts[k]
        if k == len(level_rows) - 1:
            break
        used = vt * (sigma > RANK * size)[..., None]
        if projector is None:
            projector = np.broadcast_to(np.eye(columns), (count, columns, columns)).copy()
        projector -= np.einsum("nkd,nke->nde", used, used)
    return parts
