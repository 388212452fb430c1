"""A polygon reach window with a dent, as the union of convex windows.

A reach window must be convex (its cone is an intersection of half-spaces), but the
directions a joint reaches often are not, and a joint limit may union several windows. So a
simple polygon with dents splits, in the window plane, into convex pieces that share its
centre and axes: the gnomonic projection maps great circles to lines, so convex in the plane
is convex on the sphere, and the pieces' union is exactly the polygon's cone. Clamping to a
union goes to the nearest piece, which is the nearest direction of the whole.

The split is Hertel & Mehlhorn's (1983): triangulate by ear clipping, then drop every
diagonal whose two sides still make a convex polygon together; that leaves at most four
times the fewest convex pieces.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ..rig import spec as spec
from .window_frames import polygon_plane_problem, polygon_signed_area

__all__ = ["convex_pieces", "split_polygon_window"]

_TURN_TOLERANCE = 1e-12


def convex_pieces(points: npt.ArrayLike) -> list[np.ndarray]:
    """Convex polygons (index arrays into ``points``, counter-clockwise) whose union is the
    simple polygon ``points`` (K, 2), either winding. ValueError when it is not simple."""
    pts = np.asarray(points, dtype=np.float64)
    problem = polygon_plane_problem(pts)
    if problem is None:
        order = np.arange(len(pts))
        return [order if polygon_signed_area(pts) > 0.0 else order[::-1]]
    if not problem.startswith("is not convex"):
        raise ValueError(f"the polygon {problem}")
    ring = list(range(len(pts))) if polygon_signed_area(pts) > 0.0 else list(range(len(pts)))[::-1]
    pieces = [list(triangle) for triangle in _ear_clipped(pts, ring)]
    # Hertel–Mehlhorn: merge neighbours across a shared diagonal while the result stays convex.
    merged = True
    while merged:
        merged = False
        for i in range(len(pieces)):
            for j in range(i + 1, len(pieces)):
                joined = _joined(pieces[i], pieces[j])
                if joined is not None and _is_convex(pts, joined):
                    pieces[i] = joined
                    del pieces[j]
                    merged = True
                    break
            if merged:
                break
    return [np.array(piece) for piece in pieces]


def split_polygon_window(
    vertices_deg: npt.ArrayLike, center: spec.Vec3 = (0.0, 1.0, 0.0), x_axis: spec.Vec3 | None = None
) -> tuple[spec.PolygonWindow, ...]:
    """A polygon window's corners (convex or with dents; ``[a, b]`` degrees as in the rig spec)
    as convex windows with its centre and axes. ValueError when the corners cross."""
    degrees = np.asarray(vertices_deg, dtype=np.float64).reshape(-1, 2)
    pieces = convex_pieces(np.tan(np.radians(degrees)))
    return tuple(
        spec.PolygonWindow(
            vertices_deg=tuple((float(a), float(b)) for a, b in degrees[piece]), center=center, x_axis=x_axis
        )
        for piece in pieces
    )


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _ear_clipped(pts: np.ndarray, ring: list[int]) -> list[tuple[int, int, int]]:
    """Triangles of a counter-clockwise simple polygon, by clipping ears (Meisters 1975)."""
    ring = [index for k, index in enumerate(ring) if not _collinear(pts, ring, k)] or ring
    triangles = []
    while len(ring) > 3:
        for k in range(len(ring)):
            before, here, after = ring[k - 1], ring[k], ring[(k + 1) % len(ring)]
            if _cross(pts[before], pts[here], pts[after]) <= _TURN_TOLERANCE:
                continue  # a reflex (or flat) corner is no ear
            others = [i for i in ring if i not in (before, here, after)]
            if any(_in_triangle(pts[i], pts[before], pts[here], pts[after]) for i in others):
                continue
            triangles.append((before, here, after))
            del ring[k]
            break
        else:  # numerically stuck (corners on one line): cut a fan from the first corner
            triangles.extend((ring[0], ring[k], ring[k + 1]) for k in range(1, len(ring) - 1))
            return triangles
    triangles.append(tuple(ring))
    return triangles


def _collinear(pts: np.ndarray, ring: list[int], k: int) -> bool:
    before, here, after = pts[ring[k - 1]], pts[ring[k]], pts[ring[(k + 1) % len(ring)]]
    return abs(_cross(before, here, after)) <= _TURN_TOLERANCE * max(1.0, float(np.max(np.abs(pts))))


def _in_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> bool:
    """Inside or on a counter-clockwise triangle."""
    return _cross(a, b, p) >= 0.0 and _cross(b, c, p) >= 0.0 and _cross(c, a, p) >= 0.0


def _joined(first: list[int], second: list[int]) -> list[int] | None:
    """The two counter-clockwise polygons joined across a shared edge, or None."""
    for i in range(len(first)):
        a, b = first[i], first[(i + 1) % len(first)]
        for j in range(len(second)):
            if second[j] == b and second[(j + 1) % len(second)] == a:
                # Walk first from b round to a, then second from a round to b (skipping the edge).
                rest_first = [first[(i + 1 + k) % len(first)] for k in range(len(first))]
                rest_second = [second[(j + 2 + k) % len(second)] for k in range(len(second) - 2)]
                return rest_first + rest_second
    return None


def _is_convex(pts: np.ndarray, piece: list[int]) -> bool:
    corners = pts[piece]
    turns = [_cross(corners[k - 1], corners[k], corners[(k + 1) % len(corners)]) for k in range(len(corners))]
    scale = max(1.0, float(np.max(np.abs(corners)))) ** 2
    return all(turn >= -_TURN_TOLERANCE * scale for turn in turns) and not math.isclose(
        polygon_signed_area(corners), 0.0, abs_tol=_TURN_TOLERANCE * scale
    )
