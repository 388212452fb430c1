"""Joint limits learned from animation: the smallest simple limit that allows every pose seen.

Given one bone's pose rotations over time (``(T, 4)``, relative to rest, (w, x, y, z)),
:func:`fit_limit` returns a rig-spec limit and a report:

* **Hinge** — when every rotation is (within ``hinge_tolerance_deg``) a turn about one
  axis.  The axis is the first right-singular vector of the rotation vectors (the best
  line through the origin, Eckart–Young), the range the smallest arc of hinge angles.
* **Ball** — otherwise.  Bone directions ``d = q·ŷ`` and twists come from the swing/twist
  split ``q = S·T_y(twist)`` (Blow 2002).  The directions are covered by reach windows:

  1. *Grouping.*  If every direction is within ``hemisphere_deg`` of the normalised mean
     ``c``, one window; otherwise spherical k-means (Dhillon & Modha 2001) into 2 …
     ``max_windows`` groups, the fewest whose members all lie within ``hemisphere_deg`` of
     their group's mean.  Groups are fitted separately and the windows' union covers every
     sample; between two windows a small gap may remain where the animation passed quickly.
  2. *Hull.*  Directions are projected gnomonically onto the window plane at ``c``
     (``(d·u, d·v)/(d·c)``; great circles become lines, so a convex polygon there is a convex
     spherical polygon) and the convex hull is taken (Andrew's monotone chain, 1979).
  3. *Margin.*  The hull is grown to the convex hull of caps of angular radius
     ``δ = margin_deg`` around its corners — on the plane, the Minkowski sum with a disc;
     on the sphere it holds every direction within δ of the hull, because a great circle
     tangent to two caps lies at least δ from the arc between their centres (great circles
     bow away from the small circles at distance δ).  Each cap is replaced by the regular
     16-gon circumscribing it, so the margin is δ at least and at most δ/cos(π/16) ≈ 1.02 δ.
     A safety of 10⁻⁶° is always added (to twist and hinge ranges too) so float round-off
     never leaves a sample outside.
  4. *Simplification* to at most ``max_vertices`` corners, keeping every sample inside:
     repeatedly remove the edge whose removal adds the least solid angle, extending its
     two neighbours to their intersection (the edge-removal step of minimum-area
     enclosing k-gon heuristics, cf. Aggarwal, Chang & Yap 1985).  The polygon only
     grows, so containment is kept; an edge whose neighbours do not meet in front, or meet
     more than 88° from the centre, is never removed.

  The twist range is the smallest arc containing every twist (the complement of the
  largest gap between sorted angles), grown by ``twist_margin_deg`` each side; through
  ±180° it is written with its max past 180 (170 to 200).

The report gives solid angles (hull and fitted window) so callers can judge how much the
margin and simplification added; :func:`~.window_shapes.windows_solid_angle` measures
unions.  numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from .. import quaternion as quat
from ..rig import spec as spec
from ..rig.spec_chain import solver_limit
from .window_frames import window_plane_axes
from .window_shapes import convex_hull_2d, spherical_polygon_solid_angle, window_solid_angle

__all__ = [
    "LimitFit",
    "LimitFitError",
    "LimitFitReport",
    "WindowFitReport",
    "fit_ball_limit",
    "fit_hinge_limit",
    "fit_limit",
    "hinge_axis",
    "smallest_arc",
]

FitKind = Literal["auto", "ball", "hinge"]

# Always added to the swing margin (degrees): float round-off must not leave a sample outside.
SAFETY_MARGIN_DEG = 1e-6
# Corners further than this from the window's centre are refused (the plane runs off to infinity at 90°).
MAX_CORNER_DEG = 88.0
# An edge whose removal adds no more than this solid angle (sr) is removed whatever max_vertices says.
_NEGLIGIBLE_SR = 1e-14
_KMEANS_ITERATIONS = 50
# Corners of the polygon that stands in for each margin cap.
_RING = 16


class LimitFitError(ValueError):
    """The samples cannot be covered the way asked (too spread out, or no samples)."""


@dataclass(frozen=True)
class WindowFitReport:
    """How one reach window was fitted."""

    samples: int  # directions this window covers
    center: tuple[float, float, float]  # the window's centre direction
    hull_vertices: int  # corners of the samples' convex hull (0 if the hull was degenerate)
    vertices: int  # corners of the fitted polygon (0 when a cone was fitted)
    hull_solid_angle: float  # steradians inside the samples' hull
    solid_angle: float  # steradians inside the fitted window

    @property
    def growth(self) -> float:
        """Fitted window's solid angle over the hull's: what margin and simplification added."""
        return self.solid_angle / self.hull_solid_angle if self.hull_solid_angle > 0.0 else math.inf


@dataclass(frozen=True)
class LimitFitReport:
    """What :func:`fit_limit` saw and did."""

    kind: Literal["ball", "hinge"]
    samples: int
    windows: tuple[WindowFitReport, ...] = ()
    twist_arc_deg: tuple[float, float] | None = None  # smallest arc of twists; hi may exceed 180 (wraps)
    hinge_axis: tuple[float, float, float] | None = None  # the best-fit hinge axis (also for ball fits)
    hinge_residual_deg: float = math.nan  # largest angle between a sample and the nearest hinge rotation
    samples_outside: int = 0  # samples the fitted limit would clamp (0 unless something is wrong; a hinge
    # fit does not count moving a sample onto its axis: see hinge_residual_deg)
    notes: tuple[str, ...] = ()

    @property
    def solid_angle(self) -> float:
        """Sum of the windows' solid angles (overlaps counted twice; see windows_solid_angle)."""
        return float(sum(window.solid_angle for window in self.windows))


@dataclass(frozen=True)
class LimitFit:
    """A fitted rig-spec limit and the report on how it was fitted."""

    limit: spec.BallLimit | spec.HingeLimit
    report: LimitFitReport


# --------------------------------------------------------------------------- public entry points


def fit_limit(
    rotations: npt.ArrayLike,
    *,
    kind: FitKind = "auto",
    margin_deg: float = 2.0,
    twist_margin_deg: float | None = None,
    max_vertices: int = 12,
    max_windows: int = 4,
    hemisphere_deg: float = 80.0,
    hinge_tolerance_deg: float = 1.0,
    stiffness: float = 0.0,
) -> LimitFit:
    """Fit a joint limit to a bone's pose rotations ``(T, 4)`` (relative to rest, (w, x, y, z)).

    ``kind="auto"`` fits a hinge when every rotation lies within ``hinge_tolerance_deg`` of
    one axis's rotations (and the bone moved at all), else a ball joint; ``"ball"`` and
    ``"hinge"`` force the kind (a forced hinge is simply the best axis).  Margins are in
    degrees (``twist_margin_deg`` defaults to ``margin_deg``; it also serves the hinge
    range).  See the module docstring for the method; raises :class:`LimitFitError` if there
    are no samples or the directions cannot be split into ``max_windows`` windows.
    """
    q = _rotations(rotations)
    _, residual = hinge_axis(q)
    moved = bool(np.max(quat.angle_between(q, quat.IDENTITY)) > 1e-9)
    if kind == "hinge" or (kind == "auto" and moved and residual <= hinge_tolerance_deg):
        return fit_hinge_limit(
            q, margin_deg=margin_deg if twist_margin_deg is None else twist_margin_deg, stiffness=stiffness
        )
    if kind not in ("auto", "ball"):
        raise ValueError(f"kind must be 'auto', 'ball' or 'hinge', got {kind!r}")
    return fit_ball_limit(
        q,
        margin_deg=margin_deg,
        twist_margin_deg=twist_margin_deg,
        max_vertices=max_vertices,
        max_windows=max_windows,
        hemisphere_deg=hemisphere_deg,
        stiffness=stiffness,
    )


def fit_ball_limit(
    rotations: npt.ArrayLike,
    *,
    margin_deg: float = 2.0,
    twist_margin_deg: float | None = None,
    max_vertices: int = 12,
    max_windows: int = 4,
    hemisphere_deg: float = 80.0,
    stiffness: float = 0.0,
) -> LimitFit:
    """Fit a :class:`~.rig_spec.BallLimit`: polygon reach windows around the bone directions
    plus the smallest twist arc, each grown by its margin (module docstring, steps 1–4)."""
    if max_vertices < 4:
        # Edge removal cannot turn a parallelogram into a triangle; 4 corners can always be reached.
        raise ValueError(f"max_vertices must be at least 4, got {max_vertices}")
    if not 0.0 < hemisphere_deg < MAX_CORNER_DEG:
        raise ValueError(f"hemisphere_deg must be in (0, {MAX_CORNER_DEG:g}), got {hemisphere_deg}")
    q = _rotations(rotations)
    directions, twists = quat.swing_twist_y(q)
    directions = np.atleast_2d(directions)
    margin = math.radians(max(margin_deg, 0.0) + SAFETY_MARGIN_DEG)
    notes: list[str] = []
    windows: list[spec.ReachWindow] = []
    reports: list[WindowFitReport] = []
    for center, members in _split_directions(directions, math.radians(hemisphere_deg), max_windows):
        window, report = _fit_window(directions[members], center, margin, max_vertices, notes)
        windows.append(window)
        reports.append(report)
    twist_margin = margin_deg if twist_margin_deg is None else twist_margin_deg
    arc = smallest_arc(np.atleast_1d(twists))
    twist_range = _range_from_arc(arc, math.radians(max(twist_margin, 0.0)), "twist", notes)
    limit = spec.BallLimit(windows=tuple(windows), twist_deg=twist_range, stiffness=stiffness)
    axis, residual = hinge_axis(q)
    report = LimitFitReport(
        kind="ball",
        samples=len(q),
        windows=tuple(reports),
        twist_arc_deg=(math.degrees(arc[0]), math.degrees(arc[1])),
        hinge_axis=_tuple3(axis),
        hinge_residual_deg=residual,
        samples_outside=_samples_outside(limit, q),
        notes=tuple(notes),
    )
    return LimitFit(limit, report)


def fit_hinge_limit(rotations: npt.ArrayLike, *, margin_deg: float = 2.0, stiffness: float = 0.0) -> LimitFit:
    """Fit a :class:`~.rig_spec.HingeLimit`: the best axis (:func:`hinge_axis`, its largest
    component made positive) and the smallest arc of hinge angles grown by ``margin_deg``."""
    q = _rotations(rotations)
    axis, residual = hinge_axis(q)
    angles = quat.twist_about(q, axis)
    notes: list[str] = []
    arc = smallest_arc(np.atleast_1d(angles))
    angle_range = _range_from_arc(arc, math.radians(max(margin_deg, 0.0)), "hinge", notes)
    limit = spec.HingeLimit(axis=_tuple3(axis), range_deg=angle_range, stiffness=stiffness)
    report = LimitFitReport(
        kind="hinge",
        samples=len(q),
        twist_arc_deg=None,
        hinge_axis=_tuple3(axis),
        hinge_residual_deg=residual,
        samples_outside=_samples_outside(limit, q, off_axis=quat.angle_between(q, quat.from_axis_angle(axis, angles))),
        notes=tuple(notes),
    )
    return LimitFit(limit, report)


def hinge_axis(rotations: npt.ArrayLike) -> tuple[np.ndarray, float]:
    """Best single rotation axis for the rotations and how far (degrees) they stray from it.

    The axis is the first right-singular vector of the rotation vectors ``angle·axis``
    (the line through the origin nearest them, Eckart–Young), signed so its largest
    component is positive.  The residual is the largest angle between a rotation and the
    nearest rotation about that axis (:func:`~.quaternion.twist_about`).  With no motion at
    all the axis is +X and the residual 0.
    """
    q = _rotations(rotations)
    vectors = quat.rotation_vector(q)
    if float(np.max(np.linalg.norm(vectors, axis=1))) <= 1e-12:
        return np.array([1.0, 0.0, 0.0]), 0.0
    _, _, right = np.linalg.svd(vectors, full_matrices=False)
    axis = right[0] / np.linalg.norm(right[0])
    if axis[int(np.argmax(np.abs(axis)))] < 0.0:
        axis = -axis
    nearest = quat.from_axis_angle(axis, quat.twist_about(q, axis))
    return axis, float(np.degrees(np.max(quat.angle_between(q, nearest))))


def smallest_arc(angles: npt.ArrayLike) -> tuple[float, float]:
    """The shortest arc ``(lo, hi)`` (radians) of the circle containing every angle.

    It is the complement of the largest gap between the sorted angles (wrapped to (−π, π]).
    ``lo`` is in (−π, π] and ``hi = lo + length``, so ``hi > π`` means the arc runs through
    ±π.  Ties prefer the arc that does not run through ±π.
    """
    wrapped = np.sort(quat.wrap_angle(np.asarray(angles, dtype=np.float64).ravel()))
    if wrapped.size == 0:
        raise LimitFitError("no angles given")
    gaps = np.diff(wrapped)
    wrap_gap = float(wrapped[0] + 2.0 * np.pi - wrapped[-1])
    if gaps.size == 0 or wrap_gap >= float(np.max(gaps)) - 1e-12:
        return float(wrapped[0]), float(wrapped[-1])
    widest = int(np.argmax(gaps))
    return float(wrapped[widest + 1]), float(wrapped[widest] + 2.0 * np.pi)


# --------------------------------------------------------------------------- grouping


def _split_directions(
    directions: np.ndarray, hemisphere: float, max_windows: int
) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(centre, member indices)`` per group, every member within ``hemisphere`` of its centre."""
    limit = math.cos(hemisphere)
    mean = directions.sum(axis=0)
    if np.linalg.norm(mean) > 1e-9 * len(directions):
        center = mean / np.linalg.norm(mean)
        if float(np.min(directions @ center)) > limit:
            return [(center, np.arange(len(directions)))]
    for groups in range(2, max_windows + 1):
        if groups > len(directions):
            break
        labels, centers = _spherical_kmeans(directions, groups)
        split = []
        for k in range(groups):
            members = np.flatnonzero(labels == k)
            if members.size:
                split.append((centers[k], members))
        if all(float(np.min(directions[members] @ center)) > limit for center, members in split):
            return split
    raise LimitFitError(
        f"the bone's directions span too much of the sphere for {max_windows} windows of at most "
        f"{math.degrees(hemisphere):g}° each; allow more windows (max_windows) or leave swing free"
    )


def _spherical_kmeans(directions: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Spherical k-means (cosine similarity, Dhillon & Modha 2001), seeded deterministically
    by farthest-point traversal (Gonzalez 1985) from the direction farthest from the mean."""
    mean = directions.sum(axis=0)
    start = int(np.argmin(directions @ mean)) if np.linalg.norm(mean) > 1e-12 else 0
    centers = [directions[start]]
    closeness = directions @ centers[0]
    for _ in range(1, groups):
        centers.append(directions[int(np.argmin(closeness))])
        closeness = np.maximum(closeness, directions @ centers[-1])
    center_array = np.array(centers)
    labels = np.argmax(directions @ center_array.T, axis=1)
    for _ in range(_KMEANS_ITERATIONS):
        for k in range(groups):
            total = directions[labels == k].sum(axis=0)
            norm = float(np.linalg.norm(total))
            if norm > 1e-12:
                center_array[k] = total / norm
        new_labels = np.argmax(directions @ center_array.T, axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
    return labels, center_array


# --------------------------------------------------------------------------- one window


def _fit_window(
    directions: np.ndarray, center: np.ndarray, margin: float, max_vertices: int, notes: list[str]
) -> tuple[spec.ReachWindow, WindowFitReport]:
    """A polygon window (or, for degenerate data, a cone) around ``center`` holding every direction."""
    c, u, v = window_plane_axes(center)
    plane = _to_plane(directions, c, u, v)
    hull = convex_hull_2d(plane)
    hull_points = plane[hull]
    scale = max(1.0, float(np.max(np.abs(hull_points)))) if len(hull_points) else 1.0
    if len(hull) < 3 or _shoelace(hull_points) <= 1e-12 * scale * scale:
        return _fit_cone(directions, c, margin, notes)
    hull_area = spherical_polygon_solid_angle(_to_sphere(hull_points, c, u, v))
    corners = _grow(hull_points, c, u, v, margin)
    corners = _simplify(corners, c, u, v, max_vertices)
    if len(corners) > max_vertices:
        notes.append(
            f"a window kept {len(corners)} corners (more than max_vertices={max_vertices}): "
            "no further corner could be removed without reaching past the window plane"
        )
    degrees = np.degrees(np.arctan(corners))
    window = spec.PolygonWindow(
        vertices_deg=tuple((float(a), float(b)) for a, b in degrees), center=_tuple3(c), x_axis=None
    )
    report = WindowFitReport(
        samples=len(directions),
        center=_tuple3(c),
        hull_vertices=len(hull),
        vertices=len(corners),
        hull_solid_angle=hull_area,
        solid_angle=window_solid_angle(window),
    )
    return window, report


def _fit_cone(
    directions: np.ndarray, c: np.ndarray, margin: float, notes: list[str]
) -> tuple[spec.ConeWindow, WindowFitReport]:
    """A cone around ``c`` through the farthest sample plus the margin: for samples on a point or an arc."""
    farthest = float(np.max(quat.direction_angle(directions, c)))
    half_angle = min(math.degrees(farthest + margin), 180.0)
    notes.append(
        f"{len(directions)} direction(s) lie on a point or a single arc; fitted a cone of {half_angle:.3g}° instead "
        "of a polygon"
    )
    window = spec.ConeWindow(half_angle_deg=half_angle, center=_tuple3(c))
    area = window_solid_angle(window)
    report = WindowFitReport(
        samples=len(directions), center=_tuple3(c), hull_vertices=0, vertices=0, hull_solid_angle=0.0, solid_angle=area
    )
    return window, report


def _to_plane(directions: np.ndarray, c: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Gnomonic projection: the plane point (d·u, d·v)/(d·c) of each direction."""
    along = directions @ c
    return np.stack((directions @ u, directions @ v), axis=1) / along[:, None]


def _to_sphere(points: np.ndarray, c: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Unit directions through plane points (the inverse gnomonic projection)."""
    d = c + points[:, :1] * u + points[:, 1:] * v
    return d / np.linalg.norm(d, axis=1, keepdims=True)


def _shoelace(points: np.ndarray) -> float:
    following = np.roll(points, -1, axis=0)
    return 0.5 * float(np.sum(points[:, 0] * following[:, 1] - following[:, 0] * points[:, 1]))


def _grow(corners: np.ndarray, c: np.ndarray, u: np.ndarray, v: np.ndarray, margin: float) -> np.ndarray:
    """The hull of caps of angular radius ``margin`` around the corners (module docstring, step 3).

    Each cap is replaced by the spherical regular ``_RING``-gon circumscribing it (edges
    tangent to the cap: corner radius r with ``tan r = tan margin / cos(π/_RING)``, the
    right spherical triangle), so the result holds every direction within ``margin`` of the
    hull.  Returns the new corners on the plane, counter-clockwise.
    """
    sphere = _to_sphere(corners, c, u, v)
    first = quat.any_perpendicular(sphere)
    second = np.cross(sphere, first)
    radius = math.atan(math.tan(margin) / math.cos(math.pi / _RING))
    turns = 2.0 * np.pi * np.arange(_RING) / _RING
    across = np.cos(turns)[None, :, None] * first[:, None, :] + np.sin(turns)[None, :, None] * second[:, None, :]
    ring = (math.cos(radius) * sphere[:, None, :] + math.sin(radius) * across).reshape(-1, 3)
    if float(np.min(ring @ c)) <= math.cos(math.radians(MAX_CORNER_DEG)):
        raise LimitFitError(
            f"with the margin a window would reach more than {MAX_CORNER_DEG:g}° from its centre; use a smaller "
            "margin or hemisphere_deg (more windows)"
        )
    points = _to_plane(ring, c, u, v)
    return points[convex_hull_2d(points)]


def _simplify(corners: np.ndarray, c: np.ndarray, u: np.ndarray, v: np.ndarray, max_vertices: int) -> np.ndarray:
    """Remove edges, cheapest added solid angle first, until at most ``max_vertices`` corners.

    Edge ``i`` runs from corner ``i`` to ``after[i]``.  Removing it moves corner ``i`` to where
    the lines of the edges before and after meet and drops corner ``after[i]``; only the two
    edges touching the moved corner change cost.
    """
    points = [tuple(p) for p in corners.tolist()]
    count = len(points)
    after = [(i + 1) % count for i in range(count)]
    before = [(i - 1) % count for i in range(count)]
    alive = [True] * count
    reach = math.tan(math.radians(MAX_CORNER_DEG))

    def removal(i: int) -> tuple[float, tuple[float, float] | None]:
        """(added solid angle, new corner) for removing the edge from corner i; (inf, None) if impossible."""
        j = after[i]
        p0, a, b, p3 = points[before[i]], points[i], points[j], points[after[j]]
        d1 = (a[0] - p0[0], a[1] - p0[1])
        d2 = (p3[0] - b[0], p3[1] - b[1])
        denominator = d1[0] * d2[1] - d1[1] * d2[0]
        if denominator <= 1e-300:
            return math.inf, None  # the neighbours turn by 180° or more: they never meet in front
        gap = (b[0] - a[0], b[1] - a[1])
        t = (gap[0] * d2[1] - gap[1] * d2[0]) / denominator  # a + t d1 = b + s d2
        s = (gap[0] * d1[1] - gap[1] * d1[0]) / denominator
        if t < 0.0 or s > 0.0:
            return math.inf, None
        x = (a[0] + t * d1[0], a[1] + t * d1[1])
        if math.hypot(*x) > reach:
            return math.inf, None
        triangle = _to_sphere(np.array([a, x, b]), c, u, v)
        return spherical_polygon_solid_angle(triangle), x

    costs = np.full(count, math.inf)
    moves: list[tuple[float, float] | None] = [None] * count
    for i in range(count):
        costs[i], moves[i] = removal(i)
    while count > 3:
        i = int(np.argmin(costs))
        if not math.isfinite(costs[i]) or (count <= max_vertices and costs[i] > _NEGLIGIBLE_SR):
            break
        j = after[i]
        points[i] = moves[i]  # type: ignore[assignment]
        after[i], before[after[j]] = after[j], i
        costs[j], alive[j] = math.inf, False
        count -= 1
        if count > 3:
            for k in (before[i], i):
                costs[k], moves[k] = removal(k)
    start = alive.index(True)
    ordered = [start]
    while after[ordered[-1]] != start:
        ordered.append(after[ordered[-1]])
    return np.array([points[i] for i in ordered])


# --------------------------------------------------------------------------- ranges and checks


def _range_from_arc(arc: tuple[float, float], margin: float, what: str, notes: list[str]) -> tuple[float, float] | None:
    """Degrees ``(min, max)`` for the arc grown by ``margin`` (max past 180 where the arc runs
    through ±180), or None (free) when that covers the whole circle."""
    low, high = arc
    # Widened by the safety margin, then rounded outward to 1e-6°: readable files, and never a
    # sample outside (rounding alone can land a last bit inside: 50 + 1e-14 rounds to 50).
    low_deg = math.floor((math.degrees(low - margin) - SAFETY_MARGIN_DEG) * 1e6) / 1e6
    high_deg = math.ceil((math.degrees(high + margin) + SAFETY_MARGIN_DEG) * 1e6) / 1e6
    if high_deg - low_deg >= 360.0:
        notes.append(f"the {what} samples and margin cover the whole circle; {what} left free")
        return None
    if high_deg > 360.0:  # an arc starting past 0 and running most of the way round
        low_deg, high_deg = low_deg - 360.0, high_deg - 360.0
    return (low_deg, high_deg)


def _samples_outside(limit: spec.JointLimit, q: np.ndarray, off_axis: np.ndarray | float = 0.0) -> int:
    """How many samples the solver's version of ``limit`` would move (by more than 10⁻⁹ rad).

    For a hinge, moving a sample onto the axis (``off_axis``, its distance from the nearest
    hinge rotation, reported as the residual) does not count; only leaving the range does.
    """
    return int(np.count_nonzero(solver_limit(limit).violation(q) > np.asarray(off_axis) + 1e-9))


def _rotations(rotations: npt.ArrayLike) -> np.ndarray:
    q = np.asarray(rotations, dtype=np.float64)
    if q.ndim == 1:
        q = q[None, :]
    if q.ndim != 2 or q.shape[1] != 4 or len(q) == 0:
        raise LimitFitError(f"expected pose rotations shaped (T, 4) with T ≥ 1, got shape {np.shape(rotations)}")
    if not np.all(np.isfinite(q)):
        raise LimitFitError("pose rotations contain NaN or infinite values")
    return quat.normalize(q)


def _tuple3(vector: np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(value) + 0.0 for value in vector)
    return (x, y, z)
