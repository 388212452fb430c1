"""Reach windows: the set of directions a bone may point in (Blow 2002, "Limiting Reach").

A window is a convex loop hung in the plane at unit distance from the joint along a centre
direction c. A direction passes through it when it lies in the cone over the loop, so a
circle of radius tan θ is the cone of half-angle θ (gnomonic projection). Every shape here
answers three questions for batches of unit directions ``(N, 3)`` in the bone's rest frame:

* ``contains``: does the direction pass through the window?
* ``closest``: the allowed direction nearest on the unit sphere (Blow's clamp; defined for
  every direction, including those behind the window plane).
* ``crossing``: where the great arc from the window's reference direction towards the
  direction leaves the window (Wilhelms & Van Gelder 2001's clamp, which does not linger in
  corners but grinds along walls).

and gives an inscribed circular cone (``accept_axis``, ``accept_cos``) for Blow's cheap
early-accept dot product.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..entry_checks import finite_array, normalisable, number_in
from ..quaternion import any_perpendicular, direction_angle
from .window_frames import polygon_plane_problem

Array = NDArray[np.float64]

CONTAINS_TOLERANCE = 1e-12
NEWTON_SETTLED = 1e-13  # radians of rim angle: the elliptic clamp's Newton steps stop below this
SECULAR_SETTLED = 1e-13  # ... and its secular equation's, in μ (∈ (0, 1))
SECULAR_STEPS = 40  # a bound: from the circular start Newton settles in 2-4 steps
FRONT_MIN = 1e-9  # a direction this far in front of the window plane has a secular root
SKEW_REFUSED = 1e-9  # an elliptic window's axes further than this from perpendicular are refused
FLAT_REFUSED = 1e-6  # a polygon window's unit axes and centre spanning less volume than this are refused
SCALAR_ROWS = 16  # clamps of at most this many directions run per direction in plain Python
# An elliptic window's half-angles: narrower than the rig spec's 0.01°, the closest point on so
# eccentric an ellipse loses digits (and at 0 its radius divides by zero); at 90° and beyond
# its tangent has no ellipse.
MIN_ELLIPSE_HALF_ANGLE = math.radians(0.01)
# A polygon's plane coordinates: the tangent of the widest corner a rig spec allows (just under
# 90°) is below 2e16; its edges' normals square numbers up to the fourth power of these, which
# stays inside float range to about 1e77.
LARGEST_PLANE_COORDINATE = 1e60


def _unit(v: ArrayLike) -> Array:
    v = np.asarray(v, dtype=float)
    return v / quat.length(v)[..., None]


def _window_axes(window, names: tuple[str, ...]) -> tuple[Array, ...]:
    """The window's named direction fields, each finite and non-zero (``entry_checks``)."""
    return tuple(normalisable(getattr(window, name), f"window {name.replace('_', ' ')}") for name in names)


def _check_perpendicular(center: Array, plane_x: Array, plane_y: Array, shape: str) -> Array:
    """The unit rows plane_x, plane_y, center; ValueError unless perpendicular within SKEW_REFUSED."""
    basis = np.stack((plane_x, plane_y, center))
    if not np.allclose(basis @ basis.T, np.eye(3), rtol=0.0, atol=SKEW_REFUSED):
        # The rim is drawn in the plane axes and the inside test measured along them: on
        # skewed axes the two describe different cones, and the clamp left directions outside.
        raise ValueError(f"{shape}'s plane axes must be perpendicular to each other and to its centre")
    return basis


def _dot(a: Array, b: Array) -> Array:
    return np.einsum("...i,...i->...", a, b)


def _towards(reference: Array, d: Array) -> Array:
    """Unit tangent at ``reference`` pointing along the great arc towards d.

    Where d is (anti)parallel to the reference the arc is not unique; a fixed perpendicular
    keeps the answer deterministic.
    """
    along = d - _dot(d, reference)[..., None] * reference
    norm = quat.length(along)[..., None]
    fallback = np.broadcast_to(any_perpendicular(reference), along.shape)
    return np.where(norm > 1e-12, along / np.maximum(norm, 1e-300), fallback)


@dataclass(frozen=True, eq=False)
class ConeWindow:
    """Circular cone of ``half_angle`` radians (0 < half_angle ≤ π) around ``center``."""

    center: Array
    half_angle: float

    def __post_init__(self) -> None:
        (center,) = _window_axes(self, ("center",))
        number_in(self.half_angle, 0.0, np.pi, "cone half-angle", low_open=True)
        object.__setattr__(self, "center", _unit(center))

    @property
    def accept_axis(self) -> Array:
        return self.center

    @property
    def accept_cos(self) -> float:
        return float(np.cos(self.half_angle))

    @property
    def reference(self) -> Array:
        return self.center

    def contains(self, d: Array, tolerance: float = CONTAINS_TOLERANCE) -> NDArray[np.bool_]:
        return _dot(d, self.center) >= np.cos(self.half_angle) - tolerance

    def _on_rim_towards(self, d: Array) -> Array:
        w = _towards(self.center, d)
        return np.cos(self.half_angle) * self.center + np.sin(self.half_angle) * w

    def closest(self, d: Array) -> Array:
        return np.where(self.contains(d, 0.0)[..., None], d, self._on_rim_towards(d))

    def crossing(self, d: Array) -> Array:
        # The arc from the centre meets the rim at the closest point: both clamps agree.
        return self.closest(d)


@dataclass(frozen=True, eq=False)
class EllipticConeWindow:
    """Elliptical cone: the gnomonic ellipse (x/tan a)² + (y/tan b)² ≤ 1 in the window plane.

    ``plane_x``, ``plane_y`` span the plane (unit, perpendicular to ``center`` and to each
    other: ``window_frames.window_plane_axes`` makes them); ``half_angles`` are (a, b) in
    radians, each in [``MIN_ELLIPSE_HALF_ANGLE``, π/2). Zhong 2000 notes a hip needs such a cone.
    """

    center: Array
    plane_x: Array
    plane_y: Array
    half_angles: tuple[float, float]
    _radii: Array = field(init=False, repr=False)
    _coarse_rim: Array = field(init=False, repr=False)
    _basis: Array | None = field(init=False, repr=False)  # rows plane_x, plane_y, center when orthonormal

    def __post_init__(self) -> None:
        center, plane_x, plane_y = _window_axes(self, ("center", "plane_x", "plane_y"))
        half_angles = finite_array(self.half_angles, (2,), "elliptic window half-angles")
        for angle in half_angles.tolist():
            number_in(angle, MIN_ELLIPSE_HALF_ANGLE, 0.5 * np.pi, "elliptic window half-angle", high_open=True)
        object.__setattr__(self, "center", _unit(center))
        object.__setattr__(self, "plane_x", _unit(plane_x))
        object.__setattr__(self, "plane_y", _unit(plane_y))
        basis = _check_perpendicular(self.center, self.plane_x, self.plane_y, "an elliptic window")
        object.__setattr__(self, "_radii", np.tan(np.asarray(self.half_angles, dtype=float)))
        object.__setattr__(self, "_coarse_rim", self.rim(np.arange(64) * (2.0 * np.pi / 64)))
        orthonormal = np.allclose(basis @ basis.T, np.eye(3), rtol=0.0, atol=1e-12)
        object.__setattr__(self, "_basis", basis if orthonormal else None)

    @property
    def accept_axis(self) -> Array:
        return self.center

    @property
    def accept_cos(self) -> float:
        return float(np.cos(min(self.half_angles)))

    @property
    def reference(self) -> Array:
        return self.center

    def contains(self, d: Array, tolerance: float = CONTAINS_TOLERANCE) -> NDArray[np.bool_]:
        along = _dot(d, self.center)
        x = _dot(d, self.plane_x) / self._radii[0]
        y = _dot(d, self.plane_y) / self._radii[1]
        # Quadratic cone x² + y² ≤ along², on the front nappe only.
        return (along > -tolerance) & (x * x + y * y <= along * along + tolerance)

    def rim(self, angle: ArrayLike) -> Array:
        """Unit directions through the ellipse at parameter ``angle``."""
        angle = np.asarray(angle, dtype=float)[..., None]
        point = (
            self.center + self._radii[0] * np.cos(angle) * self.plane_x + self._radii[1] * np.sin(angle) * self.plane_y
        )
        return _unit(point)

    def crossing(self, d: Array) -> Array:
        # Great arcs through the centre are rays from the origin in gnomonic coordinates, so
        # the arc towards d leaves through the rim point on the ray (d·x, d·y).
        x = _dot(d, self.plane_x) / self._radii[0]
        y = _dot(d, self.plane_y) / self._radii[1]
        rim = self.rim(np.arctan2(y, x))
        return np.where(self.contains(d, 0.0)[..., None], d, rim)

    def _rim_slope(self, d: Array, angle: Array) -> Array:
        """d/dφ of d·rim(φ): for g = c + a cos φ·x + b sin φ·y, rim' = (g' − rim (rim·g'))/|g|."""
        cos, sin = np.cos(angle)[..., None], np.sin(angle)[..., None]
        g = self.center + self._radii[0] * cos * self.plane_x + self._radii[1] * sin * self.plane_y
        g_prime = -self._radii[0] * sin * self.plane_x + self._radii[1] * cos * self.plane_y
        length = quat.length(g)[..., None]
        rim = g / length
        return _dot(d, (g_prime - rim * _dot(rim, g_prime)[..., None]) / length)

    def _scanned_rim_angle(self, towards: Array, coarse_samples: int = 64, refine_steps: int = 10) -> Array:
        """Rim angle φ maximising d·rim(φ), for any direction: a coarse scan brackets the
        maximum, then Newton's method on its slope, kept inside the bracket by bisection.

        Working on the slope rather than comparing values matters: the values are flat at the
        top and only resolve φ to ~1e-8.
        """
        step = 2.0 * np.pi / coarse_samples
        grid = np.arange(coarse_samples) * step
        coarse_rim = self._coarse_rim if coarse_samples == 64 else self.rim(grid)  # the default scan's rim, built once
        angle = grid[np.argmax(towards @ coarse_rim.T, axis=-1)]
        lo, hi = angle - step, angle + step
        # The slope and its finite-difference partner 1e-7 further on come from one evaluation
        # over both sets of angles: half the numpy calls, which is what small batches pay for.
        count, towards_twice = len(towards), np.concatenate((towards, towards))
        for _ in range(refine_steps):
            slopes = self._rim_slope(towards_twice, np.concatenate((angle, angle + 1e-7)))
            slope = slopes[:count]
            if np.max(np.abs(slope)) < 1e-15:
                break
            curvature = (slopes[count:] - slope) / 1e-7
            lo = np.where(slope > 0.0, angle, lo)
            hi = np.where(slope > 0.0, hi, angle)
            newton = angle - slope / np.where(curvature < 0.0, curvature, -1.0)
            usable = (curvature < 0.0) & (newton >= lo) & (newton <= hi)
            previous, angle = angle, np.where(usable, newton, 0.5 * (lo + hi))
            if np.max(np.abs(angle - previous)) < NEWTON_SETTLED:
                break  # Newton converges quadratically: a step this small is the last one needed
        return angle

    def _front_rim_angle(self, x: Array, y: Array, z: Array) -> Array:
        """Rim angle of the nearest direction for directions in front of the window plane
        (z > 0), from their window coordinates.

        The nearest direction is the ray through the Euclidean projection p of d onto the cone
        x²/A² + y²/B² = z² (d − p is normal to the cone, so to the ray, and |d − p|² = 1 − (d·u)²).
        Lagrange gives p = (A²x/(A²+μ), B²y/(B²+μ), z/(1−μ)) for the root μ ∈ (0, 1) of
        k(μ) = (1 − μ)·|(Ax/(A²+μ), By/(B²+μ))| − z, which decreases from k(0) > 0 (d is
        outside) to k(1) = −z (Eberly, "Distance from a point to an ellipse, an ellipsoid, or
        a hyperellipsoid", 2013, for the same secular equation). Safeguarded Newton from the
        circular cone's root; a handful of rows run in plain Python, where numpy's per-call
        cost would outweigh its speed.
        """
        a, b = float(self._radii[0]), float(self._radii[1])
        if len(x) <= SCALAR_ROWS:
            rows = zip(x.tolist(), y.tolist(), z.tolist(), strict=True)
            return np.array([_front_rim_angle_of_one(xi, yi, zi, a, b) for xi, yi, zi in rows])
        mu, lo, hi = np.clip(_secular_start(x, y, z, a, b), 0.0, 1.0), np.zeros_like(x), np.ones_like(x)
        for _ in range(SECULAR_STEPS):
            k, newton = _secular_newton(mu, x * a, y * b, z, a * a, b * b)
            lo, hi = np.where(k > 0.0, mu, lo), np.where(k > 0.0, hi, mu)
            previous, mu = mu, np.where((newton >= lo) & (newton <= hi), newton, 0.5 * (lo + hi))
            if np.max(np.abs(mu - previous)) < SECULAR_SETTLED:
                break
        return np.arctan2(y * b / (b * b + mu), x * a / (a * a + mu))

    def closest(self, d: Array) -> Array:
        """Nearest rim direction (exact; see ``_front_rim_angle`` and ``_scanned_rim_angle``)."""
        inside = self.contains(d, 0.0)
        if np.all(inside):
            return d
        outside = ~inside
        towards = d[outside]
        if self._basis is None:  # a skewed window plane: no secular equation in these axes
            nearest = d.copy()
            nearest[outside] = self.rim(self._scanned_rim_angle(towards))
            return nearest
        x, y, z = (towards @ self._basis.T).T
        front = z > FRONT_MIN
        if np.all(front):
            angle = self._front_rim_angle(x, y, z)
        else:
            angle = np.empty(len(towards))
            angle[front] = self._front_rim_angle(x[front], y[front], z[front])
            angle[~front] = self._scanned_rim_angle(towards[~front])
        nearest = d.copy()
        nearest[outside] = self.rim(angle)
        return nearest


def _secular_start(x, y, z, a: float, b: float):
    """The root of the circular cone through the ellipse's radius towards (x, y): a start a
    few Newton steps from the elliptic root. Floats or arrays alike."""
    rho = (x * x + y * y) ** 0.5
    radius = rho / ((x * x) / (a * a) + (y * y) / (b * b)) ** 0.5
    return (rho * radius - z * radius * radius) / (rho * radius + z)  # callers clip it into [0, 1]


def _secular_newton(mu, xa, yb, z, a2: float, b2: float):
    """k(μ) of ``_front_rim_angle`` and the Newton step from μ. Floats or arrays alike."""
    ia, ib = 1.0 / (a2 + mu), 1.0 / (b2 + mu)
    u, v = xa * ia, yb * ib
    r = (u * u + v * v) ** 0.5
    k = (1.0 - mu) * r - z
    slope = -r - (1.0 - mu) * (u * u * ia + v * v * ib) / r
    return k, mu - k / slope


def _front_rim_angle_of_one(x: float, y: float, z: float, a: float, b: float) -> float:
    """``_front_rim_angle`` for one direction, in plain Python floats."""
    mu, lo, hi = min(max(_secular_start(x, y, z, a, b), 0.0), 1.0), 0.0, 1.0
    for _ in range(SECULAR_STEPS):
        k, newton = _secular_newton(mu, x * a, y * b, z, a * a, b * b)
        lo, hi = (mu, hi) if k > 0.0 else (lo, mu)
        previous, mu = mu, newton if lo <= newton <= hi else 0.5 * (lo + hi)
        if abs(mu - previous) < SECULAR_SETTLED:
            break
    return math.atan2(y * b / (b * b + mu), x * a / (a * a + mu))


@dataclass(frozen=True, eq=False)
class PolygonWindow:
    """Convex polygon in the window plane; the allowed directions form a polygonal cone.

    ``vertices`` are (K, 2) plane coordinates (x along ``plane_x``, y along ``plane_y``) of a
    convex polygon, either winding. The cone is the intersection of the half-spaces
    n_k·d ≥ 0 with n_k the normal of the plane through the origin and edge k.
    """

    center: Array
    plane_x: Array
    plane_y: Array
    vertices: Array
    corner_directions: Array = field(init=False, repr=False)
    edge_normals: Array = field(init=False, repr=False)
    _reference: Array = field(init=False, repr=False)
    _accept_cos: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        center, plane_x, plane_y = (_unit(v) for v in _window_axes(self, ("center", "plane_x", "plane_y")))
        if abs(float(np.linalg.det(np.stack((plane_x, plane_y, center))))) < FLAT_REFUSED:
            # (Skewed axes are fine: the corners' directions make the cone.)
            raise ValueError("a polygon window's centre and plane axes must point three ways, not lie in one plane")
        vertices = finite_array(self.vertices, (-1, 2), "polygon window corners")
        if np.max(np.abs(vertices), initial=0.0) > LARGEST_PLANE_COORDINATE:
            raise ValueError(
                f"polygon window corners must lie within ±{LARGEST_PLANE_COORDINATE:g} on the window plane"
            )
        problem = polygon_plane_problem(vertices)
        if problem is not None:
            raise ValueError(f"polygon window: {problem}")
        reference = _unit(center + vertices.mean(axis=0) @ np.stack((plane_x, plane_y)))
        axes = np.stack((plane_x, plane_y))

        def corners_and_normals(loop: Array) -> tuple[Array, Array]:
            # V_k × V_k+1 as (c + p_k) × (p_k+1 − p_k): the edge taken on the plane, where it is
            # exact, keeps a sliver's short edges' normals precise (the cross product of two
            # nearly parallel unit vectors loses digits).
            points = center + loop @ axes
            return _unit(points), _unit(quat.cross(points, (np.roll(loop, -1, axis=0) - loop) @ axes))

        corners, normals = corners_and_normals(vertices)
        if np.sum(normals @ reference) < 0.0:
            # Clockwise as seen from outside: reverse so that every V_k × V_k+1 points inwards,
            # which the edge-arc tests in closest() rely on.
            corners, normals = corners_and_normals(vertices[::-1])
        if not (np.all(np.isfinite(normals)) and np.all(normals @ reference > 0.0)):
            raise ValueError("a polygon window's corners make no cone around their middle (the polygon is too thin)")
        # Blow's inscribed circle: the cone around the reference that touches the nearest wall.
        accept_angle = float(np.min(np.arcsin(np.clip(normals @ reference, -1.0, 1.0))))
        for name, value in (
            ("center", center),
            ("plane_x", plane_x),
            ("plane_y", plane_y),
            ("vertices", vertices),
            ("corner_directions", corners),
            ("edge_normals", normals),
            ("_reference", reference),
            ("_accept_cos", float(np.cos(accept_angle))),
        ):
            object.__setattr__(self, name, value)

    @property
    def accept_axis(self) -> Array:
        return self._reference

    @property
    def accept_cos(self) -> float:
        return self._accept_cos

    @property
    def reference(self) -> Array:
        """The centroid direction: always inside, the start of Wilhelms–Van Gelder's arc."""
        return self._reference

    def contains(self, d: Array, tolerance: float = CONTAINS_TOLERANCE) -> NDArray[np.bool_]:
        return np.all(d @ self.edge_normals.T >= -tolerance, axis=-1)

    def closest(self, d: Array) -> Array:
        """Maximise d·p over the cone's rim: edge projections that land on their edge, or corners."""
        inside = self.contains(d, 0.0)
        if np.all(inside):
            return d
        normals = self.edge_normals
        starts = self.corner_directions
        ends = np.roll(starts, -1, axis=0)
        along_normal = d @ normals.T  # (N, K)
        projected = d[..., None, :] - along_normal[..., None] * normals  # (N, K, 3)
        length = quat.length(projected)
        on_plane = projected / np.maximum(length, 1e-300)[..., None]
        within_edge = (
            (length > 1e-12)
            & (_dot(quat.cross(starts, on_plane), normals) >= 0.0)
            & (_dot(quat.cross(on_plane, ends), normals) >= 0.0)
        )
        edge_scores = np.where(within_edge, _dot(on_plane, d[..., None, :]), -np.inf)
        corner_scores = d @ starts.T
        candidates = np.concatenate((on_plane, np.broadcast_to(starts, on_plane.shape)), axis=-2)
        best = np.argmax(np.concatenate((edge_scores, corner_scores), axis=-1), axis=-1)
        nearest = np.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
        return np.where(inside[..., None], d, nearest)

    def crossing(self, d: Array) -> Array:
        """First wall met on the great arc from the reference direction towards d.

        On p(φ) = cos φ·r + sin φ·w, wall k's n_k·p = a cos φ + b sin φ with a = n_k·r > 0
        first vanishes at φ = atan2(b, a) + π/2.
        """
        r = self._reference
        w = _towards(r, d)
        # d·w = |d − (d·r) r| ≥ 0 by how w is built; its size keeps a direction straight opposite
        # r at +π, where rounding's sign would give −π and leave d itself as the exit point.
        target_angle = np.arctan2(np.abs(_dot(d, w)), d @ r)
        a = self.edge_normals @ r
        b = w @ self.edge_normals.T
        wall_angle = np.min(np.arctan2(b, a) + 0.5 * np.pi, axis=-1)
        angle = np.minimum(wall_angle, target_angle)[..., None]
        exit_point = np.cos(angle) * r + np.sin(angle) * w
        return np.where(self.contains(d, 0.0)[..., None], d, exit_point)


ReachWindow = ConeWindow | EllipticConeWindow | PolygonWindow


@dataclass(frozen=True)
class ReachWindows:
    """Union of windows: a joint may point through any of them (beyond a hemisphere too)."""

    windows: tuple[ReachWindow, ...]

    def contains(self, d: Array, tolerance: float = CONTAINS_TOLERANCE) -> NDArray[np.bool_]:
        inside = self.windows[0].contains(d, tolerance)
        for window in self.windows[1:]:
            inside = inside | window.contains(d, tolerance)
        return inside

    def early_accept(self, d: Array) -> NDArray[np.bool_]:
        """Blow's inscribed-circle test: True guarantees inside, False decides nothing."""
        accepted = d @ self.windows[0].accept_axis >= self.windows[0].accept_cos
        for window in self.windows[1:]:
            accepted = accepted | (d @ window.accept_axis >= window.accept_cos)
        return accepted

    def clamp(self, d: Array, mode: str = "closest") -> Array:
        """Allowed direction for d: per window by ``mode``, the one nearest d wins."""
        best = self.windows[0].closest(d) if mode == "closest" else self.windows[0].crossing(d)
        if len(self.windows) == 1:
            return best
        best_score = _dot(best, d)
        for window in self.windows[1:]:
            candidate = window.closest(d) if mode == "closest" else window.crossing(d)
            score = _dot(candidate, d)
            better = score > best_score
            best = np.where(better[..., None], candidate, best)
            best_score = np.where(better, score, best_score)
        return best

    def angle_outside(self, d: Array) -> Array:
        """Angular distance (radians) from d to the nearest allowed direction; 0 inside."""
        nearest = self.clamp(d, "closest")
        return direction_angle(nearest, d) * ~self.contains(d)
