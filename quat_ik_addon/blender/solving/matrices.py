"""Matrix arithmetic of the solve's frames: rigid frames and their inverses, affine inverses in
plain arithmetic, nearest rotations, and the check that inputs are finite. No ``bpy`` here."""

from __future__ import annotations

import numpy as np

from ...solver import quaternion as quat
from ...solver.bounded_memo import BoundedMemo
from ..errors import ChainError


def rigid_frames(rotations: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """(F, n, 4, 4) rigid matrices from posed rotations and heads."""
    m = np.zeros((*rotations.shape[:-1], 4, 4))
    m[..., :3, :3] = quat.to_matrix(rotations)
    m[..., :3, 3] = heads
    m[..., 3, 3] = 1.0
    return m


def rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverses of (..., 4, 4) rigid matrices (rotation and translation): transposed rotations."""
    inverse = np.zeros(m.shape)
    rotation = np.swapaxes(m[..., :3, :3], -1, -2)
    inverse[..., :3, :3] = rotation
    inverse[..., :3, 3] = -(rotation @ m[..., :3, 3:])[..., 0]
    inverse[..., 3, 3] = 1.0
    return inverse


def nearest_rotations(m: np.ndarray) -> np.ndarray:
    """Nearest rotations (F, 3, 3) to (F, 3, 3) matrices (polar decomposition; mirrors flipped)."""
    u, _s, vt = np.linalg.svd(m)
    r = u @ vt
    flip = np.linalg.det(r) < 0.0
    if np.any(flip):
        u[flip, :, -1] *= -1.0
        r = u @ vt
    return r


# One matrix's rotation, remembered by its numbers (``rotations_of``).
_rotations: BoundedMemo[np.ndarray] = BoundedMemo(64)


def rotations_of(m: np.ndarray) -> np.ndarray:
    """Unit quaternions (F, 4) of the nearest rotations to (F, 3, 3) matrices. One matrix (Live,
    Per Frame) is answered from memory when its numbers were seen before (a target dragged or a
    rig moved keeps its turn): the SVD and the conversion cost ~0.08 ms. Read-only."""
    m = np.ascontiguousarray(m, dtype=float)

    def make() -> np.ndarray:
        found = quat.from_matrix(nearest_rotations(m))
        found.setflags(write=False)
        return found

    return _rotations.get(m.tobytes(), make) if len(m) == 1 else make()


def invert(m: np.ndarray, what: str) -> np.ndarray:
    """Inverses of (F, 4, 4) affine matrices; ChainError naming ``what`` where one holds NaN
    or infinity or has zero scale."""
    if not np.isfinite(m).all():
        raise ChainError(f"The {what} contains NaN or infinity")
    if len(m) > 1 and np.all(m == m[:1]):  # a still frame (the usual root): invert it once
        return np.broadcast_to(invert(m[:1], what), m.shape)
    inverse = affine_inverse(m)
    if inverse is None:
        raise ChainError(f"The {what} has zero scale, so the chain cannot be solved in it")
    return inverse


# The adjugate of a 3×3 matrix flattened row by row (a b c / d e f / g h i): its entry k is
# m[P[k]] m[Q[k]] - m[R[k]] m[S[k]] (Cramer's rule), e.g. ei - fh first.
_P, _Q, _R, _S = (
    np.array(indices)
    for indices in zip(
        (4, 8, 5, 7), (2, 7, 1, 8), (1, 5, 2, 4),
        (5, 6, 3, 8), (0, 8, 2, 6), (2, 3, 0, 5),
        (3, 7, 4, 6), (1, 6, 0, 7), (0, 4, 1, 3),
        strict=True,
    )
)  # fmt: skip
SINGULAR = 1e-18  # |det| of the 3×3 part below this: zero scale


def affine_inverse(m: np.ndarray) -> np.ndarray | None:
    """Inverses of (F, 4, 4) affine matrices (last row 0 0 0 1), or None when one has zero
    scale (|det| of its 3×3 part below ``SINGULAR``).

    Cramer's rule in plain arithmetic, not ``np.linalg.inv``: LAPACK through OpenBLAS took
    up to 2 ms of CPU for one 4×4 inside a depsgraph handler on a busy 2-core machine (its
    threads spin waiting for each other), more than the rest of a Live update. One matrix
    (Live, Per Frame) is inverted in Python floats, faster than any numpy call at that size;
    the operations are the same, in the same order, so a bake's frames invert bit for bit
    as a single frame does. Matrices that are not affine go to ``np.linalg.inv``.
    """
    m = np.asarray(m, dtype=float)
    if len(m) == 1:
        rows = m[0].tolist()
        if rows[3] == [0.0, 0.0, 0.0, 1.0]:
            return _affine_inverse_one(rows)
    if not (np.all(m[:, 3, :3] == 0.0) and np.all(m[:, 3, 3] == 1.0)):
        if np.any(np.abs(np.linalg.det(m[:, :3, :3])) < SINGULAR):
            return None
        return np.linalg.inv(m)
    a = m[:, :3, :3].reshape(-1, 9)
    adjugate = a[:, _P] * a[:, _Q] - a[:, _R] * a[:, _S]
    det = a[:, 0] * adjugate[:, 0] + a[:, 1] * adjugate[:, 3] + a[:, 2] * adjugate[:, 6]
    if np.any(np.abs(det) < SINGULAR):
        return None
    inverse = np.zeros(m.shape)
    rotation = inverse[:, :3, :3]
    rotation[...] = (adjugate / det[:, None]).reshape(-1, 3, 3)
    t = m[:, :3, 3]
    for row in range(3):
        r = rotation[:, row]
        inverse[:, row, 3] = -(r[:, 0] * t[:, 0] + r[:, 1] * t[:, 1] + r[:, 2] * t[:, 2])
    inverse[:, 3, 3] = 1.0
    return inverse


def _affine_inverse_one(m: list) -> np.ndarray | None:
    """``affine_inverse`` of one matrix given as nested lists, the same operations in floats."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = m[0], m[1], m[2]
    adjugate = (
        e * i - f * h, c * h - b * i, b * f - c * e,
        f * g - d * i, a * i - c * g, c * d - a * f,
        d * h - e * g, b * g - a * h, a * e - b * d,
    )  # fmt: skip
    det = a * adjugate[0] + b * adjugate[3] + c * adjugate[6]
    if abs(det) < SINGULAR:
        return None
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (value / det for value in adjugate)
    return np.array(
        [
            [
                [r0, r1, r2, -(r0 * x + r1 * y + r2 * z)],
                [r3, r4, r5, -(r3 * x + r4 * y + r5 * z)],
                [r6, r7, r8, -(r6 * x + r7 * y + r8 * z)],
                [0.0, 0.0, 0.0, 1.0],
            ]
        ]
    )


def check_finite(rig, target_world, orientation_world, pole_world, root_world) -> None:
    """ChainError naming the input whose (F, 4, 4) world transforms hold NaN or infinity."""
    inputs = (
        ("target", rig.target_object, rig.target_bone, target_world),
        ("orientation target", rig.orientation_object, rig.orientation_bone, orientation_world),
        ("pole target", rig.pole_object, rig.pole_bone, pole_world),
        ("armature", rig.armature, rig.root_parent, root_world),
    )
    for what, ob, bone, world in inputs:
        if world is None or np.isfinite(world).all():
            continue
        bad = ~np.all(np.isfinite(world.reshape(len(world), -1)), axis=1)
        if bad.any():
            name = getattr(ob, "name", "?") + (f" > {bone}" if bone else "")
            frames = f" at {np.count_nonzero(bad)} of the {len(bad)} frames" if len(bad) > 1 else ""
            raise ChainError(f"the {what} '{name}' has a location or rotation that is not a number{frames}")
