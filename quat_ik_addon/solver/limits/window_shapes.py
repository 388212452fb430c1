"""Ready-made reach-window shapes for the rig spec, and how much of the sphere a window covers.

Every function here returns rig-spec windows (:mod:`.rig_spec` dataclasses, angles in
DEGREES), ready for a :class:`~.rig_spec.BallLimit`.  The shapes live on the window plane of
:mod:`.window_frames` (axes ``u``, ``v`` around the centre ``c``; for ``c = +Y`` these are
local X and Z), where a polygon corner ``[a, b]`` is the plane point ``(tan a, tan b)``.

Circles become polygons through the gnomonic (central) projection: the circular cone of
half-angle θ is the plane circle of radius ``tan θ`` (Blow 2002, "Limiting Reach"), so a
regular N-gon *inscribed* in that cone has its corners on that circle, at radius
``tan θ``, and the *circumscribed* N-gon has its edges tangent to it, corners at radius
``tan θ / cos(π/N)``.  An inscribed polygon allows a little less than the cone, a
circumscribed one a little more.  Ellipses go the same way through the affine map
``(x, y) -> (x tan a, y tan b)``, which keeps corners on the ellipse (inscribed) and
edges tangent to it (circumscribed).

Solid angles (how much of the sphere of directions a window lets through) measure how big
a limit is, e.g. to compare a limit fitted from animation with the true one.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

from .. import quaternion as quat
from ..rig import spec as spec
from ..rig.spec_chain import solver_window
from .reach_windows import ConeWindow as SolverConeWindow
from .reach_windows import EllipticConeWindow as SolverEllipticConeWindow
from .reach_windows import PolygonWindow as SolverPolygonWindow
from .reach_windows import ReachWindow as SolverReachWindow
from .window_frames import window_plane_axes

__all__ = [
    "Fit",
    "cone_polygon",
    "cone_window",
    "convex_hull_2d",
    "elliptic_cone_window",
    "elliptic_polygon",
    "fibonacci_sphere",
    "polygon_from_directions",
    "range_of_motion_window",
    "rectangle_window",
    "regular_polygon_window",
    "spherical_polygon_solid_angle",
    "window_as_polygon",
    "window_rim",
    "window_samples",
    "window_solid_angle",
    "windows_solid_angle",
]

Vec3 = tuple[float, float, float]
Fit = Literal["inscribed", "circumscribed"]
_Y = (0.0, 1.0, 0.0)
# Corners are rounded to this many decimals of a degree (1e-9° ≈ 2e-11 rad): files read
# 30.0 rather than 29.999999999999996, and no shape moves by anything a joint could show.
DECIMALS = 9
# Hull points this close (times the input's size) are one point (``convex_hull_2d``): far
# above rounding noise, far below any corner a window shows.
HULL_MERGE = 1e-12


def cone_window(half_angle_deg: float, center: npt.ArrayLike = _Y) -> spec.ConeWindow:
    """The exact circular cone of ``half_angle_deg`` (0 < θ ≤ 180) around ``center``."""
    return spec.ConeWindow(half_angle_deg=float(half_angle_deg), center=_vec3(center))


def elliptic_cone_window(
    half_angles_deg: tuple[float, float] | Sequence[float],
    center: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
) -> spec.EllipticConeWindow:
    """The exact elliptical cone: up to ``a`` degrees toward the plane's u and ``b`` toward v."""
    a, b = (float(angle) for angle in half_angles_deg)
    return spec.EllipticConeWindow(
        half_angles_deg=(a, b), center=_vec3(center), x_axis=None if x_axis is None else _vec3(x_axis)
    )


def rectangle_window(
    u_deg: float | tuple[float, float] | Sequence[float],
    v_deg: float | tuple[float, float] | Sequence[float],
    center: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
) -> spec.PolygonWindow:
    """A rectangle of swing angles: ``±u_deg`` toward u and ``±v_deg`` toward v.

    Each of ``u_deg``, ``v_deg`` is a half-width (a positive number, symmetric about the
    centre) or a ``(min, max)`` pair, e.g. ``rectangle_window((-30, 80), 45)``.  As
    everywhere in the rig spec the sides are measured along the plane's axes (tangents),
    so they are great-circle arcs, not lines of constant angle from the centre.
    """
    u_min, u_max = _interval(u_deg, "u_deg")
    v_min, v_max = _interval(v_deg, "v_deg")
    corners = ((u_min, v_min), (u_max, v_min), (u_max, v_max), (u_min, v_max))
    return spec.PolygonWindow(
        vertices_deg=corners, center=_vec3(center), x_axis=None if x_axis is None else _vec3(x_axis)
    )


def regular_polygon_window(
    radius_deg: float,
    sides: int,
    rotation_deg: float = 0.0,
    center: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
    fit: Fit = "inscribed",
) -> spec.PolygonWindow:
    """A regular ``sides``-gon around ``center`` for the circular cone of ``radius_deg``.

    ``fit="inscribed"`` puts the corners on the cone (plane radius ``tan radius_deg``), so
    the polygon allows slightly less than the cone; ``"circumscribed"`` makes the edges
    tangent to the cone (corners at ``tan radius_deg / cos(π/sides)``), allowing slightly
    more.  The first corner sits ``rotation_deg`` counter-clockwise from the plane's +u
    axis (toward +v); corners run counter-clockwise.
    """
    if sides < 3:
        raise ValueError(f"a polygon needs at least 3 sides, got {sides}")
    if not 0.0 < radius_deg < 90.0:
        raise ValueError(f"radius_deg must be in (0, 90) for a polygon, got {radius_deg}")
    radius = math.tan(math.radians(radius_deg)) / _fit_scale(fit, sides)
    angles = np.radians(rotation_deg) + 2.0 * np.pi * np.arange(sides) / sides
    points = radius * np.stack((np.cos(angles), np.sin(angles)), axis=1)
    return _polygon_from_plane_points(points, center, x_axis)


def cone_polygon(
    half_angle_deg: float,
    sides: int = 16,
    center: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
    fit: Fit = "inscribed",
    rotation_deg: float = 0.0,
) -> spec.PolygonWindow:
    """The circular cone of ``half_angle_deg`` (< 90) as an editable regular polygon.

    Same as :func:`regular_polygon_window`; ``fit`` says whether the corners lie on the cone
    (``"inscribed"``, the default) or the edges touch it (``"circumscribed"``).
    """
    return regular_polygon_window(half_angle_deg, sides, rotation_deg, center, x_axis, fit)


def elliptic_polygon(
    half_angles_deg: tuple[float, float] | Sequence[float],
    sides: int = 16,
    center: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
    fit: Fit = "inscribed",
) -> spec.PolygonWindow:
    """The elliptical cone ``(a, b)`` as a polygon: corners on it or edges tangent to it.

    The unit circle's regular N-gon (first corner on +u) mapped by ``(x, y) -> (x tan a,
    y tan b)``: an affine map keeps corners on the ellipse and tangent edges tangent.
    """
    if sides < 3:
        raise ValueError(f"a polygon needs at least 3 sides, got {sides}")
    a, b = (float(angle) for angle in half_angles_deg)
    if not (0.0 < a < 90.0 and 0.0 < b < 90.0):
        raise ValueError(f"half_angles_deg must each be in (0, 90), got {(a, b)}")
    angles = 2.0 * np.pi * np.arange(sides) / sides
    radii = np.tan(np.radians([a, b])) / _fit_scale(fit, sides)
    points = np.stack((np.cos(angles), np.sin(angles)), axis=1) * radii
    return _polygon_from_plane_points(points, center, x_axis)


def window_as_polygon(window: spec.ReachWindow, sides: int = 16, fit: Fit = "inscribed") -> spec.PolygonWindow:
    """Any rig-spec window as a polygon one can edit corner by corner.

    Polygons come back unchanged; cones (half-angle below 90°) and elliptic cones become
    :func:`cone_polygon` / :func:`elliptic_polygon` with ``sides`` corners.
    """
    if isinstance(window, spec.PolygonWindow):
        return window
    if isinstance(window, spec.ConeWindow):
        if window.half_angle_deg >= 90.0:
            raise ValueError(f"a cone of {window.half_angle_deg:g}° reaches past its window plane; no polygon can")
        return cone_polygon(window.half_angle_deg, sides, window.center, fit=fit)
    return elliptic_polygon(window.half_angles_deg, sides, window.center, window.x_axis, fit)


def polygon_from_directions(
    directions: npt.ArrayLike, center: npt.ArrayLike | None = None, x_axis: npt.ArrayLike | None = None
) -> spec.PolygonWindow:
    """The polygon window whose corners are the given unit ``directions`` (in order).

    ``center`` defaults to their normalised mean.  Every corner must lie less than 90° from
    the centre, and the corners must make a convex polygon on the window plane (the rig
    spec refuses anything else with a :class:`~.rig_spec.RigSpecError`).
    """
    corners = np.asarray(directions, dtype=np.float64).reshape(-1, 3)
    corners = corners / np.linalg.norm(corners, axis=1, keepdims=True)
    mean = corners.sum(axis=0) if center is None else np.asarray(center, dtype=np.float64).reshape(3)
    c, u, v = window_plane_axes(mean, x_axis)
    along = corners @ c
    if float(np.min(along)) <= 1e-9:
        raise ValueError("every corner must lie less than 90 degrees from the window's centre")
    points = np.stack((corners @ u, corners @ v), axis=1) / along[:, None]
    return _polygon_from_plane_points(points, c, x_axis)


def range_of_motion_window(
    minus_u_deg: float,
    plus_u_deg: float,
    minus_v_deg: float,
    plus_v_deg: float,
    rest_direction: npt.ArrayLike = _Y,
    x_axis: npt.ArrayLike | None = None,
    corners_per_quarter: int = 3,
) -> spec.PolygonWindow:
    """A window from four published ranges of motion, measured from ``rest_direction``.

    The bone may swing ``plus_u_deg`` toward the rest plane's +u axis, ``minus_u_deg``
    toward −u, and likewise along v (for the default rest +Y: u = local X, v = local Z).

    The window is centred on the middle of the ranges (the rest direction turned by the
    swing vector ``((plus_u − minus_u)/2, (plus_v − minus_v)/2)``), so asymmetric ranges
    totalling up to about 170° fit one window.  On that window's plane the four pure
    motions are points ``A±``, ``B±`` on two lines through the rest direction's point ``R``
    (great circles through the rest direction are lines there); between neighbours the
    corners follow quarter-ellipses ``R + cos φ (A − R) + sin φ (B − R)`` at
    ``corners_per_quarter`` steps of φ.  Consecutive quarters meet with the same tangent,
    so the polygon is convex, and each pure motion is a corner where the motion's line
    crosses the rim: it is reached exactly and no further.
    """
    ranges = np.radians([plus_u_deg, plus_v_deg, minus_u_deg, minus_v_deg])
    if np.any(ranges <= 0.0) or np.any(ranges >= np.pi):
        raise ValueError("each range must be in (0, 180) degrees")
    rest, u, v = window_plane_axes(rest_direction, x_axis)
    middle = 0.5 * (ranges[0] - ranges[2]) * u + 0.5 * (ranges[1] - ranges[3]) * v
    center = np.round(_swung(rest, middle), 12) + 0.0  # tidy numbers in files; the plane uses this centre
    c, plane_u, plane_v = window_plane_axes(center, x_axis)
    axes = (u, v, -u, -v)
    pure = np.array([_swung(rest, angle * axis) for angle, axis in zip(ranges, axes, strict=True)])
    along = np.concatenate((pure, rest[None])) @ c
    if float(np.min(along)) <= 1e-9:
        raise ValueError("the ranges are too large for one window: a motion ends 90 degrees or more from its centre")
    points = np.stack((pure @ plane_u, pure @ plane_v), axis=1) / along[:4, None]
    rest_point = np.array([rest @ plane_u, rest @ plane_v]) / along[4]
    corners = []
    for quarter in range(4):
        first, second = points[quarter] - rest_point, points[(quarter + 1) % 4] - rest_point
        for step in range(corners_per_quarter):
            phi = 0.5 * np.pi * step / corners_per_quarter
            corners.append(rest_point + math.cos(phi) * first + math.sin(phi) * second)
    corners_array = np.array(corners)
    return _polygon_from_plane_points(corners_array[convex_hull_2d(corners_array)], center, x_axis)


def _near_a_kept_point(kept: list[int], xs: list[float], ys: list[float], x: float, y: float, merge: float) -> bool:
    """Whether (x, y) lies within ``merge`` of a kept point; points come in x order, so only
    the last few kept can be that close."""
    for k in reversed(kept):
        if xs[k] < x - merge:
            return False
        if abs(ys[k] - y) <= merge:
            return True
    return False


def convex_hull_2d(points: npt.ArrayLike) -> np.ndarray:
    """Indices of the 2D convex hull's corners, counter-clockwise, without collinear points.

    Andrew's monotone chain (1979): sort by x then y, build the lower and upper chains,
    popping every point that does not make a strict left turn.  Fewer than 3 indices come
    back for collinear or repeated input.

    Points closer to one another than ``HULL_MERGE`` times the input's size count as one (the
    first in sorted order): one direction sampled twice comes back with different last bits,
    and the turns between such near-duplicates are rounding noise. Left in, the noise decided
    which of them were corners and a fitted window came out dented.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    order = np.lexsort((pts[:, 1], pts[:, 0]))
    merge = HULL_MERGE * max(1.0, float(np.max(np.abs(pts)))) if len(pts) else 0.0
    sorted_xs, sorted_ys = pts[order, 0].tolist(), pts[order, 1].tolist()
    distinct: list[int] = []  # positions in ``order``
    for position, (x, y) in enumerate(zip(sorted_xs, sorted_ys, strict=True)):
        if not _near_a_kept_point(distinct, sorted_xs, sorted_ys, x, y, merge):
            distinct.append(position)
    order = order[np.asarray(distinct, dtype=int)]
    xs, ys = pts[order, 0].tolist(), pts[order, 1].tolist()

    def chain(indices: range) -> list[int]:
        kept: list[int] = []
        for i in indices:
            while len(kept) >= 2:
                a, b = kept[-2], kept[-1]
                if (xs[b] - xs[a]) * (ys[i] - ys[a]) - (ys[b] - ys[a]) * (xs[i] - xs[a]) > 0.0:
                    break
                kept.pop()
            kept.append(i)
        return kept

    count = len(xs)
    if count < 3:
        distinct = sorted({(x, y): i for i, (x, y) in enumerate(zip(xs, ys, strict=True))}.values())
        return order[np.asarray(distinct, dtype=int)]
    lower = chain(range(count))
    upper = chain(range(count - 1, -1, -1))
    return order[np.asarray(lower[:-1] + upper[:-1], dtype=int)]


# --------------------------------------------------------------------------- solid angles


def spherical_polygon_solid_angle(corners: npt.ArrayLike) -> float:
    """Solid angle (steradians) of a convex spherical polygon given by unit corner directions.

    Fan of triangles from the first corner, each by Van Oosterom & Strackee (1983):
    ``tan(Ω/2) = |a·(b×c)| / (1 + a·b + b·c + c·a)``, taken with atan2 so triangles up
    to a hemisphere are exact.
    """
    pts = np.asarray(corners, dtype=np.float64)
    pts = pts / np.linalg.norm(pts, axis=1, keepdims=True)
    a = pts[0]
    b, c = pts[1:-1], pts[2:]
    triple = np.abs(np.einsum("ij,ij->i", b, np.cross(c, np.broadcast_to(a, c.shape))))
    denominator = 1.0 + b @ a + np.einsum("ij,ij->i", b, c) + c @ a
    return float(np.sum(2.0 * np.arctan2(triple, denominator)))


def window_solid_angle(window: spec.ReachWindow | SolverReachWindow, rim_samples: int = 4096) -> float:
    """Steradians of directions the window lets through (4π is the whole sphere).

    Cones: ``2π(1 − cos θ)``.  Polygons: exact (:func:`spherical_polygon_solid_angle`).
    Elliptic cones: the inscribed polygon of ``rim_samples`` rim points, which falls short by
    a relative ``≈ (2π/rim_samples)²/6`` (4·10⁻⁷ at the default).
    """
    solver = solver_window(window) if isinstance(window, spec.ReachWindow) else window
    if isinstance(solver, SolverConeWindow):
        return 2.0 * math.pi * (1.0 - math.cos(solver.half_angle))
    if isinstance(solver, SolverEllipticConeWindow):
        return spherical_polygon_solid_angle(solver.rim(2.0 * np.pi * np.arange(rim_samples) / rim_samples))
    if isinstance(solver, SolverPolygonWindow):
        return spherical_polygon_solid_angle(solver.corner_directions)
    raise TypeError(f"not a reach window: {window!r}")


def window_rim(window: spec.ReachWindow | SolverReachWindow, samples: int = 240) -> np.ndarray:
    """(K, 3) unit directions along a window's rim, in order round it.

    A cone's circle, an elliptic cone's ``rim(φ)``; a polygon's edges sampled evenly between
    its corners (chords of the plane polygon are arcs of the cone's rim).
    """
    solver = solver_window(window) if isinstance(window, spec.ReachWindow) else window
    if isinstance(solver, SolverConeWindow):
        return _cone_ring(solver.center, solver.half_angle, samples)
    if isinstance(solver, SolverEllipticConeWindow):
        return solver.rim(np.linspace(0.0, 2.0 * np.pi, samples, endpoint=False))
    if isinstance(solver, SolverPolygonWindow):
        corners = solver.corner_directions
        t = np.linspace(0.0, 1.0, max(2, samples // len(corners)), endpoint=False)[:, None, None]
        points = (corners + t * (np.roll(corners, -1, axis=0) - corners)).transpose(1, 0, 2).reshape(-1, 3)
        return points / np.linalg.norm(points, axis=1, keepdims=True)
    raise TypeError(f"not a reach window: {window!r}")


def _cone_ring(center: np.ndarray, angle: float, samples: int) -> np.ndarray:
    """``samples`` directions ``angle`` away from ``center``, evenly around it."""
    u = quat.any_perpendicular(center)
    v = np.cross(center, u)
    phi = np.linspace(0.0, 2.0 * np.pi, samples, endpoint=False)[:, None]
    return math.cos(angle) * center + math.sin(angle) * (np.cos(phi) * u + np.sin(phi) * v)


def window_samples(window: spec.ReachWindow | SolverReachWindow, samples: int = 240, rings: int = 4) -> np.ndarray:
    """Directions spread over a window: its reference direction and ``rings`` rings out to its rim."""
    solver = solver_window(window) if isinstance(window, spec.ReachWindow) else window
    reference = solver.reference
    out = [reference[None]]
    if isinstance(solver, SolverConeWindow):
        # Rings by angle: chords to the rim of a cone of 90° and more pass through (or near) 0.
        out += [_cone_ring(solver.center, solver.half_angle * k / rings, samples) for k in range(1, rings + 1)]
        return np.concatenate(out)
    rim = window_rim(solver, samples)
    for k in range(1, rings + 1):
        points = reference + (k / rings) * (rim - reference)
        out.append(points / np.linalg.norm(points, axis=1, keepdims=True))
    return np.concatenate(out)


def fibonacci_sphere(count: int) -> np.ndarray:
    """``count`` near-uniform unit directions (the Fibonacci lattice), shape ``(count, 3)``.

    Points ``i + 1/2`` of ``count`` equal-area bands, turned by the golden angle (González
    2010, "Measurement of areas on a sphere using Fibonacci and latitude–longitude lattices").
    """
    index = np.arange(count) + 0.5
    polar = np.arccos(1.0 - 2.0 * index / count)
    azimuth = np.pi * (1.0 + 5.0**0.5) * index
    return np.stack((np.cos(azimuth) * np.sin(polar), np.cos(polar), np.sin(azimuth) * np.sin(polar)), axis=1)


def windows_solid_angle(
    windows: Sequence[spec.ReachWindow | SolverReachWindow], samples: int = 200_000, *, chunk: int = 50_000
) -> float:
    """Steradians of the UNION of windows (overlaps counted once), by a Fibonacci lattice.

    The share of ``samples`` lattice directions inside any window, times 4π; for a smooth
    region the error is about ``4π · perimeter-length / samples`` — under 10⁻³ relative for
    windows of a few tens of degrees at the default.  No windows means free swing: 4π.
    """
    if not windows:
        return 4.0 * math.pi
    solver = [solver_window(w) if isinstance(w, spec.ReachWindow) else w for w in windows]
    grid = fibonacci_sphere(samples)
    inside = 0
    for start in range(0, samples, chunk):
        part = grid[start : start + chunk]
        hit = np.zeros(len(part), dtype=bool)
        for window in solver:
            hit |= window.contains(part, 0.0)
        inside += int(np.count_nonzero(hit))
    return 4.0 * math.pi * inside / samples


# --------------------------------------------------------------------------- helpers


def _swung(rest: np.ndarray, swing: np.ndarray) -> np.ndarray:
    """The direction ``rest`` turned by the swing vector (angle × unit axis across ``rest``)."""
    angle = float(np.linalg.norm(swing))
    if angle == 0.0:
        return rest
    return math.cos(angle) * rest + math.sin(angle) * swing / angle


def _fit_scale(fit: Fit, sides: int) -> float:
    """Divide the circle's radius by this to get the corners' radius."""
    if fit == "inscribed":
        return 1.0
    if fit == "circumscribed":
        return math.cos(math.pi / sides)
    raise ValueError(f"fit must be 'inscribed' or 'circumscribed', got {fit!r}")


def _polygon_from_plane_points(
    points: np.ndarray, center: npt.ArrayLike, x_axis: npt.ArrayLike | None
) -> spec.PolygonWindow:
    """Plane points (tangents) to a polygon window with corners in degrees (atan)."""
    degrees = np.round(np.degrees(np.arctan(points)), DECIMALS) + 0.0  # + 0.0: no -0.0 in files
    return spec.PolygonWindow(
        vertices_deg=tuple((float(a), float(b)) for a, b in degrees),
        center=_vec3(center),
        x_axis=None if x_axis is None else _vec3(x_axis),
    )


def _interval(value: float | Sequence[float], what: str) -> tuple[float, float]:
    if isinstance(value, (int, float)):
        half = float(value)
        if not half > 0.0:
            raise ValueError(f"{what} half-width must be positive, got {value}")
        return -half, half
    low, high = (float(v) for v in value)
    if not low < high:
        raise ValueError(f"{what} must satisfy min < max, got {(low, high)}")
    return low, high


def _vec3(value: npt.ArrayLike) -> Vec3:
    x, y, z = (float(c) for c in np.asarray(value, dtype=np.float64).reshape(3))
    return (x, y, z)
