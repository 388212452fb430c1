"""Dented polygon windows split into convex windows (solver/limits/window_split.py): every piece is a
valid window, the pieces tile the polygon, and their union allows exactly its directions."""

from __future__ import annotations

import numpy as np
import pytest

from quat_ik_addon.solver.limits.reach_windows import ReachWindows
from quat_ik_addon.solver.limits.window_frames import polygon_plane_problem, polygon_signed_area
from quat_ik_addon.solver.limits.window_split import convex_pieces, split_polygon_window
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_window


def _star(rng: np.random.Generator, corners: int) -> np.ndarray:
    """A simple polygon with dents: corners at sorted angles, random radii (star-shaped)."""
    angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, corners))
    radii = rng.uniform(0.3, 1.2, corners)
    return np.stack((radii * np.cos(angles), radii * np.sin(angles)), axis=1)


def _inside(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Even-odd rule, strictly inside (points on an edge are not tested)."""
    x, y = points[:, 0][:, None], points[:, 1][:, None]
    a, b = polygon, np.roll(polygon, -1, axis=0)
    crosses = (a[:, 1] > y) != (b[:, 1] > y)
    at = a[:, 0] + (y - a[:, 1]) * (b[:, 0] - a[:, 0]) / np.where(b[:, 1] == a[:, 1], 1.0, b[:, 1] - a[:, 1])
    return np.sum(crosses & (x < at), axis=1) % 2 == 1


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("clockwise", [False, True])
def test_pieces_are_convex_and_tile_the_polygon(seed: int, clockwise: bool) -> None:
    rng = np.random.default_rng(seed)
    polygon = _star(rng, int(rng.integers(5, 14)))
    if clockwise:
        polygon = polygon[::-1]
    pieces = convex_pieces(polygon)
    assert all(polygon_plane_problem(polygon[piece]) is None for piece in pieces)
    assert all(polygon_signed_area(polygon[piece]) > 0.0 for piece in pieces)  # counter-clockwise
    area = abs(polygon_signed_area(polygon))
    assert sum(polygon_signed_area(polygon[piece]) for piece in pieces) == pytest.approx(area, rel=1e-9)
    assert len(pieces) <= len(polygon) - 2
    probes = rng.uniform(-1.3, 1.3, size=(4000, 2))
    in_pieces = np.any([_inside(probes, polygon[piece]) for piece in pieces], axis=0)
    np.testing.assert_array_equal(in_pieces, _inside(probes, polygon))


def test_a_convex_polygon_is_one_piece_and_a_bow_tie_is_refused() -> None:
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    (piece,) = convex_pieces(square)
    np.testing.assert_array_equal(piece, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="crosses itself"):
        convex_pieces(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))


def test_an_l_shaped_window_allows_exactly_its_directions() -> None:
    """An L of swing angles (a dent toward +X, +Z): the split windows' union allows a direction
    exactly when the L does, on the gnomonic plane and so on the sphere."""
    corners = ((-30.0, -30.0), (40.0, -30.0), (40.0, 0.0), (0.0, 0.0), (0.0, 35.0), (-30.0, 35.0))
    with pytest.raises(spec.RigSpecError, match="not convex"):
        spec.PolygonWindow(vertices_deg=corners)  # one window cannot hold it
    pieces = split_polygon_window(corners, center=(0.2, 1.0, -0.1))
    assert len(pieces) == 2 and all(piece.center == (0.2, 1.0, -0.1) for piece in pieces)
    union = ReachWindows(tuple(solver_window(piece) for piece in pieces))
    first = solver_window(pieces[0])
    plane = np.tan(np.radians(np.array(corners)))
    rng = np.random.default_rng(3)
    points = rng.uniform(-1.0, 1.0, size=(5000, 2))
    directions = first.center + points[:, :1] * first.plane_x + points[:, 1:] * first.plane_y
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    np.testing.assert_array_equal(union.contains(directions, 0.0), _inside(points, plane))
