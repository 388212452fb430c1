"""Geometry of reach windows: the window plane's axes and a polygon's corners in it.

A reach window (Blow 2002, "Limiting Reach") is a convex loop that the bone must pass
through.  It lives in the bone's REST frame (bone along +Y) on the plane perpendicular
to the window's centre direction ``c`` at unit distance from the joint.  Points of that
plane are written in the plane's own 2D axes ``(u, v)``:

* ``u`` is the unit projection of the bone's local +X onto the plane, or of an explicit
  ``x_axis`` when the window gives one.  If ``c`` is parallel to local X (``|c . X| >
  1 - 1e-12``, i.e. within about 1e-6 rad) the projection of local +Z is used instead.
* ``v = u x c``.  For ``c = +Y`` this gives ``u = +X``, ``v = +Z``; ``(u, c, v)`` is a
  right-handed frame, just as ``(X, Y, Z)`` is.

The plane point ``(s, t)`` is the direction ``c + s u + t v`` (normalised).  A polygon
vertex ``[a, b]`` in degrees is the plane point ``(tan a, tan b)`` (a gnomonic, i.e.
central, projection), so an axis-aligned rectangle in degrees stays a rectangle.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:  # pragma: no cover - typing only
    from ..rig.spec import PolygonWindow

__all__ = [
    "PARALLEL_TO_X_TOLERANCE",
    "polygon_plane_problem",
    "polygon_plane_vertices",
    "polygon_signed_area",
    "window_plane_axes",
]

# |c . X| above 1 - this means "c is parallel to local X" and u falls back to local Z.
PARALLEL_TO_X_TOLERANCE = 1e-12
# Below this length a vector counts as zero (centre directions, x axes).
_ZERO_LENGTH = 1e-12


def _unit(vector: npt.ArrayLike, what: str) -> np.ndarray:
    vec = np.asarray(vector, dtype=np.float64).reshape(3)
    length = float(np.linalg.norm(vec))
    if not math.isfinite(length) or length <= _ZERO_LENGTH:
        raise ValueError(f"{what} must be a finite non-zero 3-vector, got {vec.tolist()}")
    return vec / length


def window_plane_axes(
    center: npt.ArrayLike = (0.0, 1.0, 0.0), x_axis: npt.ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit vectors ``(c, u, v)`` of a window plane, in the bone's rest frame.

    ``c`` is the normalised centre direction, ``u`` the unit projection of ``x_axis``
    (default local +X; local +Z if ``c`` is parallel to X) onto the plane normal to
    ``c``, and ``v = u x c``.  Raises ``ValueError`` for a zero centre or an ``x_axis``
    parallel to ``c``.
    """
    c = _unit(center, "window center")
    if x_axis is None:
        if abs(c[0]) > 1.0 - PARALLEL_TO_X_TOLERANCE:
            reference = np.array([0.0, 0.0, 1.0])
        else:
            reference = np.array([1.0, 0.0, 0.0])
    else:
        reference = _unit(x_axis, "window x_axis")
    projected = reference - float(np.dot(reference, c)) * c
    length = float(np.linalg.norm(projected))
    if length <= 1e-9:
        raise ValueError(f"window x_axis {reference.tolist()} is parallel to the centre {c.tolist()}")
    u = projected / length
    v = np.cross(u, c)
    return c, u, v


def polygon_signed_area(points: npt.ArrayLike) -> float:
    """Signed area (shoelace formula) of a 2D polygon; positive when counter-clockwise."""
    pts = np.asarray(points, dtype=np.float64)
    following = np.roll(pts, -1, axis=0)
    return 0.5 * float(np.sum(pts[:, 0] * following[:, 1] - following[:, 0] * pts[:, 1]))


def _cross2(origin: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - origin[0]) * (b[1] - origin[1]) - (a[1] - origin[1]) * (b[0] - origin[0]))


def _segments_cross(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether segments ab and cd cross at a point inside both (touching does not count)."""
    return _cross2(c, d, a) * _cross2(c, d, b) < 0.0 and _cross2(a, b, c) * _cross2(a, b, d) < 0.0


def polygon_plane_problem(points: npt.ArrayLike) -> str | None:
    """Why a 2D polygon is not a usable reach window, or ``None`` if it is.

    Usable means: at least 3 vertices, no repeated vertex, non-zero area, convex and
    simple (winding once around its inside).  Consecutive collinear vertices are allowed.
    Either winding order is accepted.
    """
    pts = np.asarray(points, dtype=np.float64)
    count = len(pts)
    if count < 3:
        return f"needs at least 3 vertices, got {count}"
    scale = max(1.0, float(np.max(np.abs(pts))))
    for i in range(count):
        for j in range(i + 1, count):
            if float(np.max(np.abs(pts[i] - pts[j]))) <= 1e-12 * scale:
                return f"vertices {i} and {j} are the same point"
    # Non-adjacent edges that properly cross (a bow-tie); reported before the area, which a
    # symmetric bow-tie makes zero.
    for i in range(count):
        for j in range(i + 2, count):
            if i == 0 and j == count - 1:
                continue  # adjacent through the closing edge
            if _segments_cross(pts[i], pts[(i + 1) % count], pts[j], pts[(j + 1) % count]):
                return f"crosses itself (edges {i}-{(i + 1) % count} and {j}-{(j + 1) % count})"
    area = polygon_signed_area(pts)
    if abs(area) <= 1e-12 * scale * scale:
        return "has zero area"
    if area < 0.0:
        pts = pts[::-1]
    # Walk the polygon counter-clockwise: every turn must be a left turn (or straight on),
    # and the turns must add up to exactly one full circle (a pentagram turns twice).
    edges = np.roll(pts, -1, axis=0) - pts
    total_turn = 0.0
    for i in range(count):
        incoming, outgoing = edges[i - 1], edges[i]
        cross = float(incoming[0] * outgoing[1] - incoming[1] * outgoing[0])
        dot = float(np.dot(incoming, outgoing))
        size = float(np.linalg.norm(incoming) * np.linalg.norm(outgoing))
        vertex = i if area > 0.0 else count - 1 - i
        if cross < -1e-12 * size or (abs(cross) <= 1e-12 * size and dot < 0.0):
            return f"is not convex (at vertex {vertex})"
        total_turn += math.atan2(cross, dot)
    if abs(total_turn - 2.0 * math.pi) > 1e-6:
        return "crosses itself"
    return None


def polygon_plane_vertices(window: PolygonWindow | Sequence[Sequence[float]]) -> np.ndarray:
    """A polygon window's corners as plane points ``(tan a, tan b)``, counter-clockwise.

    Accepts a :class:`~quat_ik_addon.solver.rig.spec.PolygonWindow` or a bare sequence of
    ``[a, b]`` degree pairs.  Returns a ``(K, 2)`` float array in the window's ``(u, v)``
    axes (see :func:`window_plane_axes`), wound counter-clockwise (positive signed area)
    whatever the winding in the file.
    """
    vertices_deg = getattr(window, "vertices_deg", window)
    degrees = np.asarray(vertices_deg, dtype=np.float64).reshape(-1, 2)
    points = np.tan(np.radians(degrees))
    if polygon_signed_area(points) < 0.0:
        points = points[::-1].copy()
    return points
