"""Batched unit-quaternion algebra on ``(..., 4)`` arrays in (w, x, y, z) order."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])

# Below this, 1 + a·b is treated as zero: a and b are antiparallel and the shortest arc is
# not unique (float64 rounding leaves ~1e-16; the margin keeps the cross product meaningful).
_ANTIPARALLEL_EPSILON = 1e-12


def _hamilton(p, q):
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return [
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    ]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


class _BilinearProduct:
    """A small bilinear product of (..., size) arrays, evaluated the way that is fast for the batch.

    Up to ``formula_rows`` rows: one outer product and one matrix product with the table T of
    product(a, b) = (a ⊗ b) @ T, three numpy calls whatever the formula (what small batches pay
    for). Beyond: the formula per component on the last axis, which streams where the (rows,
    size²) outer product outgrows the cache. The crossovers were measured with numpy 1.26 and
    OpenBLAS on one core. Both form the same products; their sums may round differently, as
    BLAS picks its own order.
    """

    def __init__(self, formula, sizes: tuple[int, int], formula_rows: int):
        self.formula = formula
        self.formula_rows = formula_rows
        size_a, size_b = sizes
        basis_a, basis_b = np.eye(size_a), np.eye(size_b)
        self.table = np.array([formula(basis_a[i], basis_b[j]) for i in range(size_a) for j in range(size_b)])

    def __call__(self, a: Array, b: Array) -> Array:
        # Rows of the larger operand: cheaper than broadcasting the shapes, and close enough to
        # pick the method.
        if max(a.size // a.shape[-1], b.size // b.shape[-1]) > self.formula_rows:
            return self.by_formula(a, b)
        return self.by_table(a, b)

    def by_table(self, a: Array, b: Array) -> Array:
        # einsum forms the outer product twice as fast as a[..., :, None] * b[..., None, :]
        # (whose innermost loop is only 4 long); a 2-D matrix product is one BLAS call, where
        # a stacked (N, n, 16) @ (16, 4) would be N.
        outer = np.einsum("...i,...j->...ij", a, b)
        batch = outer.shape[:-2]
        return (outer.reshape(-1, self.table.shape[0]) @ self.table).reshape((*batch, self.table.shape[1]))

    def by_formula(self, a: Array, b: Array) -> Array:
        return _per_component(self.formula, a, b)


def _per_component(formula, a: Array, b: Array) -> Array:
    """formula(a, b) on the components (last axis) of two batches, written into one array."""
    components = formula([a[..., i] for i in range(a.shape[-1])], [b[..., i] for i in range(b.shape[-1])])
    out = np.empty((*components[0].shape, len(components)))
    for i, component in enumerate(components):
        out[..., i] = component
    return out


_HAMILTON = _BilinearProduct(_hamilton, (4, 4), formula_rows=2048)
_CROSS = _BilinearProduct(_cross, (3, 3), formula_rows=256)


def multiply(p: ArrayLike, q: ArrayLike) -> Array:
    """Hamilton product p·q (apply q first, then p)."""
    return _HAMILTON(np.asarray(p, dtype=float), np.asarray(q, dtype=float))


def multiply_one(p, q) -> list[float]:
    """``multiply`` of one pair given as plain floats (w, x, y, z): for a single pose, where
    numpy's calls cost more than the arithmetic. Agrees with ``multiply`` to rounding."""
    return _hamilton(p, q)


def rotate_one(q, v) -> list[float]:
    """``rotate`` of one vector by one unit quaternion, in plain floats (as ``multiply_one``)."""
    return _rotated(q, v)


def product_matrices(p: ArrayLike) -> tuple[Array, Array]:
    """For fixed quaternions p (..., 4): the 4×4 matrices (..., 4, 4) that multiply by p from
    the left and from the right, p·q = L @ q and q·p = R @ q. A product with a constant
    operand (a bone's rest rotation) is then one matrix product, a third of ``multiply``'s cost."""
    table = _HAMILTON.table.reshape(4, 4, 4)  # [a, b, i]: p_a q_b's coefficient in component i
    p = np.asarray(p, dtype=float)
    return np.einsum("...a,abi->...ib", p, table), np.einsum("...b,abi->...ia", p, table)


def cross(a: ArrayLike, b: ArrayLike) -> Array:
    """a × b for batches of 3-vectors (numpy.cross's axis handling costs ~30 µs a call)."""
    return _CROSS(np.asarray(a, dtype=float), np.asarray(b, dtype=float))


def length(v: ArrayLike) -> Array:
    """Euclidean length over the last axis.

    Adds the squares in order, as numpy.linalg.norm does over so short an axis (so the same
    rounding), at a fraction of its cost for batches, where its reduction runs per row.
    """
    v = np.asarray(v, dtype=float)
    squares = v * v
    total = squares[..., 0]
    for i in range(1, v.shape[-1]):
        total = total + squares[..., i]
    return np.sqrt(total)


def conjugate(q: ArrayLike) -> Array:
    """Inverse of a unit quaternion."""
    q = np.asarray(q, dtype=float)
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def normalize(q: ArrayLike) -> Array:
    """Unit quaternion; a zero quaternion becomes the identity rather than NaN."""
    q = np.asarray(q, dtype=float)
    norm = np.sqrt(np.einsum("...i,...i->...", q, q))[..., None]
    if norm.min(initial=np.inf) > 1e-300:
        return q / norm  # the usual case, without the two selections below
    safe = norm > 1e-300
    return np.where(safe, q / np.where(safe, norm, 1.0), IDENTITY)


def canonical(q: ArrayLike) -> Array:
    """The representative with w >= 0 (q and -q are the same rotation)."""
    q = np.asarray(q, dtype=float)
    return np.where(q[..., :1] < 0.0, -q, q)


def _rotated(q, v):
    w, u = q[0], q[1:]
    t = [2.0 * component for component in _cross(u, v)]
    return [v_i + w * t_i + c_i for v_i, t_i, c_i in zip(v, t, _cross(u, t), strict=True)]


def _rotation_matrix_table() -> Array:
    """(16, 3, 3) T with R(q) = Σ_ab q_a q_b T[4a + b] for unit q: the rotation matrix written
    as the quadratic form (w² − |u|²)I + 2uuᵀ + 2w[u]×, polarised."""

    def matrix(q):
        w, u = q[0], q[1:]
        cross_matrix = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
        return (w * w - u @ u) * np.eye(3) + 2.0 * np.outer(u, u) + 2.0 * w * cross_matrix

    basis = np.eye(4)
    # The symmetric bilinear form of a quadratic Q: B(a, b) = (Q(a + b) − Q(a) − Q(b)) / 2.
    return np.array(
        [0.5 * (matrix(basis[a] + basis[b]) - matrix(basis[a]) - matrix(basis[b])) for a in range(4) for b in range(4)]
    )


_ROTATION_MATRIX_TABLE = _rotation_matrix_table()


def rotation_tables(vectors: ArrayLike) -> Array:
    """Per vector v (..., 3), the table T_v (..., 16, 3) with q·v = (q ⊗ q)·T_v for unit q."""
    return np.einsum("kcj,...j->...kc", _ROTATION_MATRIX_TABLE, np.asarray(vectors, dtype=float))


def rotate_by_tables(q: ArrayLike, tables: Array) -> Array:
    """q·v for the vectors of ``rotation_tables``: one outer product and one matrix product,
    where ``rotate`` takes a dozen numpy calls (what small batches pay for)."""
    q = np.asarray(q, dtype=float)
    outer = np.einsum("...i,...j->...ij", q, q).reshape(*q.shape[:-1], 1, 16)
    return (outer @ tables)[..., 0, :]


# Rows of q up to which rotate() builds each rotation's matrix from q ⊗ q (three numpy calls,
# half the time of the cross-product form there); beyond, the per-component formula streams
# better (measured as for _BilinearProduct).
_ROTATE_MATRIX_ROWS = 192
# (16, 9): the rotation matrix (row-major) of unit q is (q ⊗ q) @ this.
_MATRIX_TABLE = _ROTATION_MATRIX_TABLE.reshape(16, 9)


def rotate(q: ArrayLike, v: ArrayLike) -> Array:
    """Rotate vectors v by unit quaternions q: v + 2w(u×v) + 2u×(u×v), or R(q)·v."""
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    if q.size // 4 > _ROTATE_MATRIX_ROWS:
        return _per_component(_rotated, q, v)
    outer = np.einsum("...i,...j->...ij", q, q).reshape(-1, 16)
    matrices = (outer @ _MATRIX_TABLE).reshape(*q.shape[:-1], 3, 3)
    return np.einsum("...ij,...j->...i", matrices, v)


def _rotated_y_axis(p, q):
    # Quadratic in the quaternion, written as a bilinear form evaluated at p = q.
    return [
        2.0 * (p[1] * q[2] - p[0] * q[3]),
        p[0] * q[0] - p[1] * q[1] + p[2] * q[2] - p[3] * q[3],
        2.0 * (p[2] * q[3] + p[0] * q[1]),
    ]


_Y_AXIS_IMAGE = _BilinearProduct(_rotated_y_axis, (4, 4), formula_rows=384)


def rotate_y_axis(q: ArrayLike) -> Array:
    """q·ŷ, the bone direction, without a full rotation (two components of ŷ are zero)."""
    q = np.asarray(q, dtype=float)
    return _Y_AXIS_IMAGE(q, q)


def y_of_rotated_y_axis(q: ArrayLike) -> Array:
    """ŷ·(q·ŷ) = w² − x² + y² − z²: Blow 2002's early-accept test moved to the +Y bone axis."""
    q = np.asarray(q, dtype=float)
    return q[..., 0] ** 2 - q[..., 1] ** 2 + q[..., 2] ** 2 - q[..., 3] ** 2


def from_axis_angle(axis: ArrayLike, angle: ArrayLike) -> Array:
    """Rotation by ``angle`` radians about the unit ``axis``."""
    axis = np.asarray(axis, dtype=float)
    half = 0.5 * np.asarray(angle, dtype=float)[..., None]
    return np.concatenate((np.cos(half), np.sin(half) * axis), axis=-1)


def from_y_angle(angle: ArrayLike) -> Array:
    """Rotation by ``angle`` radians about the local +Y (bone) axis."""
    half = 0.5 * np.asarray(angle, dtype=float)
    zero = np.zeros_like(half)
    return np.stack((np.cos(half), zero, np.sin(half), zero), axis=-1)


def any_perpendicular(v: ArrayLike) -> Array:
    """A unit vector perpendicular to v, chosen continuously away from the axis it avoids.

    Crosses v with the coordinate axis least aligned with it (Hocevar's robust choice for the
    antiparallel case of the rotation between two vectors, as quoted on the CCDIK page).
    """
    v = np.asarray(v, dtype=float)
    use_x = np.abs(v[..., 0:1]) <= np.abs(v[..., 2:3])
    other = np.where(use_x, np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]))
    p = cross(v, other)
    return p / np.maximum(length(p), 1e-300)[..., None]


def rotation_between(a: ArrayLike, b: ArrayLike) -> Array:
    """The simple (shortest-arc) rotation taking direction a onto direction b.

    Half-way quaternion (|a||b| + a·b, a×b) normalised (Blow 2002, Listing 1; Hocevar's
    robust form on the CCDIK page). Near antiparallel the real part is computed as
    |a×b|²/(|a||b| − a·b), equal but without cancellation; exactly antiparallel inputs turn
    180° about a perpendicular axis. Inputs need not be unit; a zero vector gives the identity.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    norm_ab = np.sqrt(np.einsum("...i,...i->...", a, a) * np.einsum("...i,...i->...", b, b))
    dot = np.einsum("...i,...i->...", a, b)
    across = cross(a, b)
    cross_squared = np.einsum("...i,...i->...", across, across)
    real = np.where(dot >= 0.0, norm_ab + dot, cross_squared / np.maximum(norm_ab - dot, 1e-300))
    antiparallel = (dot < 0.0) & (cross_squared <= (_ANTIPARALLEL_EPSILON * norm_ab) ** 2)
    if antiparallel.any():
        across = np.where(antiparallel[..., None], any_perpendicular(a), across)
        real = np.where(antiparallel, 0.0, real)
    half_way = np.concatenate((real[..., None], across), axis=-1)
    # A zero-length input has no direction: no rotation (normalize maps 0 to the identity).
    degenerate = norm_ab <= 1e-300
    if degenerate.any():
        half_way = np.where(degenerate[..., None], 0.0, half_way)
    return normalize(half_way)


def rotation_from_y(d: ArrayLike) -> Array:
    """Simple rotation taking +Y onto the unit direction d (Blow's S): its y component is 0.

    With a = ŷ the cross product is (d_z, 0, -d_x) and the real part 1 + d_y, computed as
    (d_x² + d_z²)/(1 − d_y) for d_y < 0 to keep precision near −Y (Blender's
    vec_roll_to_mat3 guards the same spot). For d = −Y the result is 180° about +Z, the choice
    Blender makes for a bone pointing down −Y.
    """
    real, x, z, antiparallel = _simple_from_y(np.asarray(d, dtype=float))
    q = np.stack((real, x, np.zeros_like(real), z), axis=-1)
    return np.where(antiparallel[..., None], np.array([0.0, 0.0, 0.0, 1.0]), normalize(q))


def _simple_from_y(d: Array) -> tuple[Array, Array, Array, NDArray[np.bool_]]:
    """``rotation_from_y``'s quaternion before normalising, as its w, x and z components (its y
    is 0), and where d points straight down −Y (there: (0, 0, 0, 1))."""
    across_squared = d[..., 0] ** 2 + d[..., 2] ** 2
    real = np.where(d[..., 1] >= 0.0, 1.0 + d[..., 1], across_squared / np.maximum(1.0 - d[..., 1], 1e-300))
    antiparallel = (d[..., 1] < 0.0) & (across_squared <= _ANTIPARALLEL_EPSILON**2)
    return real, d[..., 2], -d[..., 0], antiparallel


def from_swing_twist_y(d: ArrayLike, twist: ArrayLike) -> Array:
    """S·T_y(twist) with S = ``rotation_from_y(d)``: the bone pointing along the unit d,
    turned by ``twist`` about itself (``swing_twist_y``'s inverse). S has no y component, so
    with S = (w, x, 0, z) and T = (c, 0, s, 0) the product is (wc, xc − zs, ws, xs + zc),
    written out here without building either factor (a third of the numpy calls)."""
    half = 0.5 * np.asarray(twist, dtype=float)
    cos, sin = np.cos(half), np.sin(half)
    real, x, z, antiparallel = _simple_from_y(np.asarray(d, dtype=float))
    real, x, z = np.where(antiparallel, 0.0, real), np.where(antiparallel, 0.0, x), np.where(antiparallel, 1.0, z)
    scale = 1.0 / np.sqrt(real * real + x * x + z * z)
    real, x, z = real * scale, x * scale, z * scale
    return np.stack((real * cos, x * cos - z * sin, real * sin, x * sin + z * cos), axis=-1)


def swing_twist_y(q: ArrayLike) -> tuple[Array, Array]:
    """Split q = S·T_y(twist): S the simple rotation from +Y to d = q·ŷ, twist about the bone.

    Blow 2002 writes q = T·S with T about d; both twists have the same angle. Because S has
    no y component, q_w = s_w cos(twist/2) and q_y = s_w sin(twist/2) with s_w ≥ 0, so the
    twist is 2·atan2(q_y, q_w) without building S (Blow's fast twist test). Only where the
    bone points straight down −Y (s_w = 0) is S built explicitly. Returns the bone direction
    d and the twist angle in (−π, π].
    """
    q = np.asarray(q, dtype=float)
    d = rotate_y_axis(q)
    twist = np.asarray(2.0 * np.arctan2(q[..., 2], q[..., 0]))
    degenerate = np.asarray(q[..., 0] ** 2 + q[..., 2] ** 2 < 1e-20)
    if degenerate.any():
        twist_q = multiply(conjugate(rotation_from_y(d[degenerate])), q[degenerate])
        twist[degenerate] = 2.0 * np.arctan2(twist_q[..., 2], twist_q[..., 0])
    return d, wrap_angle(twist)[()]


def twist_about(q: ArrayLike, axis: ArrayLike) -> Array:
    """Angle of the rotation about the unit ``axis`` closest to q, in (−π, π].

    The closest rotation of the form (cos φ/2, sin φ/2·axis) maximises |w cos + (v·axis) sin|,
    i.e. φ = 2·atan2(v·axis, w): the twist part of a swing-twist split about ``axis``.
    """
    q = np.asarray(q, dtype=float)
    along = np.einsum("...i,...i->...", q[..., 1:], np.asarray(axis, dtype=float))
    return wrap_angle(2.0 * np.arctan2(along, q[..., 0]))


def wrap_angle(angle: ArrayLike) -> Array:
    """Wrap to (−π, π]."""
    angle = np.asarray(angle, dtype=float)
    wrapped = np.mod(angle + np.pi, 2.0 * np.pi) - np.pi
    return np.where(wrapped == -np.pi, np.pi, wrapped)


def angle_between(p: ArrayLike, q: ArrayLike) -> Array:
    """Rotation angle (radians, in [0, π]) of p⁻¹·q.

    2·atan2(|v|, |w|) of the relative rotation keeps full precision near zero, where
    2·acos(p·q) loses half the digits.
    """
    relative = multiply(conjugate(p), q)
    return 2.0 * np.arctan2(length(relative[..., 1:]), np.abs(relative[..., 0]))


def direction_angle(a: ArrayLike, b: ArrayLike) -> Array:
    """Angle (radians, in [0, π]) between directions, precise near 0 and π (atan2 form)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.arctan2(length(cross(a, b)), np.einsum("...i,...i->...", a, b))


def rotation_vector(q: ArrayLike) -> Array:
    """Axis × angle (radians, the shorter way round) of unit quaternions: the log map, doubled."""
    q = canonical(q)
    half = np.arctan2(length(q[..., 1:]), q[..., 0])
    sin_half = np.sin(half)
    scale = np.where(sin_half > 1e-12, 2.0 * half / np.where(sin_half > 1e-12, sin_half, 1.0), 2.0)
    return q[..., 1:] * scale[..., None]


def from_rotation_vector(v: ArrayLike) -> Array:
    """Unit quaternions turning by |v| radians about v (the exp map; inverse of rotation_vector)."""
    v = np.asarray(v, dtype=float)
    angle = length(v)
    # sin(θ/2)/θ → 1/2 as θ → 0; below 1e-8 its series' next term is under float64's precision.
    scale = np.where(angle > 1e-8, np.sin(0.5 * angle) / np.where(angle > 1e-8, angle, 1.0), 0.5)
    return np.concatenate((np.cos(0.5 * angle)[..., None], v * scale[..., None]), axis=-1)


def slerp_from_identity(q: ArrayLike, fraction: ArrayLike) -> Array:
    """q^fraction: the same axis, ``fraction`` of the angle (shortest way round)."""
    q = canonical(q)
    fraction = np.asarray(fraction, dtype=float)
    half = np.arctan2(length(q[..., 1:]), q[..., 0])
    sin_half = np.sin(half)
    scale = np.where(sin_half > 1e-12, np.sin(fraction * half) / np.where(sin_half > 1e-12, sin_half, 1.0), fraction)
    return normalize(np.concatenate((np.cos(fraction * half)[..., None], q[..., 1:] * scale[..., None]), axis=-1))


def to_matrix(q: ArrayLike) -> Array:
    """3×3 rotation matrices (column vectors: M @ v rotates v)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        (
            np.stack((1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)), axis=-1),
            np.stack((2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)), axis=-1),
            np.stack((2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)), axis=-1),
        ),
        axis=-2,
    )


def from_matrix(m: ArrayLike) -> Array:
    """Unit quaternions (w >= 0) from 3×3 rotation matrices (Shoemake's branch on the trace)."""
    m = np.asarray(m, dtype=float)
    m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
    candidates = np.stack(
        (
            np.stack(
                (
                    1 + m00 + m11 + m22,
                    m[..., 2, 1] - m[..., 1, 2],
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 1, 0] - m[..., 0, 1],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 2, 1] - m[..., 1, 2],
                    1 + m00 - m11 - m22,
                    m[..., 0, 1] + m[..., 1, 0],
                    m[..., 0, 2] + m[..., 2, 0],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 0, 2] - m[..., 2, 0],
                    m[..., 0, 1] + m[..., 1, 0],
                    1 - m00 + m11 - m22,
                    m[..., 1, 2] + m[..., 2, 1],
                ),
                -1,
            ),
            np.stack(
                (
                    m[..., 1, 0] - m[..., 0, 1],
                    m[..., 0, 2] + m[..., 2, 0],
                    m[..., 1, 2] + m[..., 2, 1],
                    1 - m00 - m11 + m22,
                ),
                -1,
            ),
        ),
        axis=-2,
    )
    best = np.argmax(
        np.stack((1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22), -1), -1
    )
    q = np.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
    return canonical(normalize(q))
