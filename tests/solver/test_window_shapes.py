"""Window shapes: circles and ellipses as polygons (inscribed / circumscribed), rectangles,
range-of-motion windows, and solid angles against closed forms and a lattice count."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quat_ik_addon.solver.limits.window_frames import polygon_plane_vertices, window_plane_axes
from quat_ik_addon.solver.limits.window_shapes import (
    cone_polygon,
    cone_window,
    convex_hull_2d,
    elliptic_cone_window,
    elliptic_polygon,
    fibonacci_sphere,
    polygon_from_directions,
    range_of_motion_window,
    rectangle_window,
    regular_polygon_window,
    spherical_polygon_solid_angle,
    window_as_polygon,
    window_solid_angle,
    windows_solid_angle,
)
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_window

CENTERS = [(0.0, 1.0, 0.0), (0.3, 0.8, -0.5), (1.0, 0.0, 0.0), (0.0, -1.0, 0.2)]


def _corner_angles_from_center(window: spec.PolygonWindow) -> np.ndarray:
    corners = solver_window(window).corner_directions
    center = np.asarray(window.center) / np.linalg.norm(window.center)
    return np.degrees(np.arccos(np.clip(corners @ center, -1.0, 1.0)))


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("sides", [3, 6, 17])
def test_inscribed_cone_polygon_has_its_corners_on_the_cone(center, sides) -> None:
    window = cone_polygon(35.0, sides, center=center)
    assert len(window.vertices_deg) == sides
    np.testing.assert_allclose(_corner_angles_from_center(window), 35.0, atol=1e-8)
    cone = solver_window(cone_window(35.0, center))
    directions = fibonacci_sphere(20_000)
    inside_polygon = solver_window(window).contains(directions, 0.0)
    assert np.all(cone.contains(directions[inside_polygon], 1e-9))  # the polygon lies within the cone


@pytest.mark.parametrize("center", CENTERS)
@pytest.mark.parametrize("sides", [3, 8])
def test_circumscribed_cone_polygon_touches_the_cone_at_edge_midpoints(center, sides) -> None:
    window = cone_polygon(35.0, sides, center=center, fit="circumscribed")
    corners = solver_window(window).corner_directions
    midpoints = corners + np.roll(corners, -1, axis=0)
    midpoints /= np.linalg.norm(midpoints, axis=1, keepdims=True)
    c = np.asarray(center) / np.linalg.norm(center)
    # The great-circle edge's nearest point to the centre is its midpoint, at exactly 35°.
    np.testing.assert_allclose(np.degrees(np.arccos(midpoints @ c)), 35.0, atol=1e-8)
    directions = fibonacci_sphere(20_000)
    inside_cone = solver_window(cone_window(35.0, center)).contains(directions, 0.0)
    assert np.all(solver_window(window).contains(directions[inside_cone], 1e-9))


def test_regular_polygon_rotation_places_the_first_corner() -> None:
    window = regular_polygon_window(30.0, 4, rotation_deg=45.0)
    a, b = window.vertices_deg[0]
    assert a == pytest.approx(b) and a > 0.0
    assert math.tan(math.radians(a)) == pytest.approx(math.tan(math.radians(30.0)) / math.sqrt(2.0))
    points = polygon_plane_vertices(window)
    assert np.all(np.diff(np.unwrap(np.arctan2(points[:, 1], points[:, 0]))) > 0.0)  # counter-clockwise


@pytest.mark.parametrize("fit", ["inscribed", "circumscribed"])
def test_elliptic_polygon_corners_and_edges_fit_the_ellipse(fit) -> None:
    a, b = 50.0, 20.0
    window = elliptic_polygon((a, b), 12, center=(0.2, 1.0, 0.1), x_axis=(1.0, 0.0, 1.0), fit=fit)
    points = polygon_plane_vertices(window)
    scaled = points / np.tan(np.radians([a, b]))
    radii = np.linalg.norm(scaled, axis=1)
    if fit == "inscribed":
        np.testing.assert_allclose(radii, 1.0, atol=1e-8)
    else:
        np.testing.assert_allclose(radii, 1.0 / math.cos(math.pi / 12), atol=1e-8)
        midpoints = 0.5 * (scaled + np.roll(scaled, -1, axis=0))
        np.testing.assert_allclose(np.linalg.norm(midpoints, axis=1), 1.0, atol=1e-8)
    exact = elliptic_cone_window((a, b), (0.2, 1.0, 0.1), (1.0, 0.0, 1.0))
    ratio = window_solid_angle(window) / window_solid_angle(exact)
    assert (ratio < 1.0) if fit == "inscribed" else (ratio > 1.0)
    assert abs(ratio - 1.0) < 0.05


def test_rectangle_window_corners() -> None:
    assert rectangle_window(30.0, 45.0).vertices_deg == ((-30.0, -45.0), (30.0, -45.0), (30.0, 45.0), (-30.0, 45.0))
    lopsided = rectangle_window((-10.0, 80.0), (-60.0, 5.0), center=(1.0, 0.0, 0.0))
    assert lopsided.vertices_deg[2] == (80.0, 5.0)
    assert lopsided.center == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        rectangle_window((20.0, 10.0), 5.0)
    with pytest.raises(ValueError):
        rectangle_window(-5.0, 5.0)


def test_bad_shapes_are_refused() -> None:
    with pytest.raises(ValueError):
        cone_polygon(95.0)
    with pytest.raises(ValueError):
        regular_polygon_window(30.0, 2)
    with pytest.raises(ValueError):
        cone_polygon(30.0, fit="loose")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        window_as_polygon(cone_window(120.0))


def test_window_as_polygon() -> None:
    polygon = rectangle_window(10.0, 20.0)
    assert window_as_polygon(polygon) is polygon
    assert window_as_polygon(cone_window(40.0, (0, 0, 1)), sides=5) == cone_polygon(40.0, 5, center=(0, 0, 1))
    ellipse = elliptic_cone_window((30.0, 60.0), x_axis=(1.0, 0.0, 1.0))
    assert window_as_polygon(ellipse, 6).x_axis == (1.0, 0.0, 1.0)


def test_files_hold_tidy_numbers() -> None:
    assert cone_polygon(30.0, 4).vertices_deg == ((30.0, 0.0), (0.0, 30.0), (-30.0, 0.0), (0.0, -30.0))


@settings(max_examples=25, deadline=None)
@given(
    minus_u=st.floats(5, 80),
    plus_u=st.floats(5, 80),
    minus_v=st.floats(5, 80),
    plus_v=st.floats(5, 85),
)
def test_range_of_motion_window_reaches_each_pure_motion_exactly(minus_u, plus_u, minus_v, plus_v) -> None:
    window = solver_window(range_of_motion_window(minus_u, plus_u, minus_v, plus_v))
    for toward, degrees in (((1, 0, 0), plus_u), ((-1, 0, 0), minus_u), ((0, 0, 1), plus_v), ((0, 0, -1), minus_v)):
        for angle, inside in ((degrees - 0.5, True), (degrees, True), (degrees + 1.0, False)):
            a = math.radians(angle)
            direction = math.cos(a) * np.array([0.0, 1.0, 0.0]) + math.sin(a) * np.array(toward, dtype=float)
            assert bool(window.contains(direction[None], 1e-9)[0]) is inside, (toward, angle)


def test_range_of_motion_window_past_ninety_degrees() -> None:
    """A hip: 120° of flexion and 30° of extension fit one window centred between them."""
    window = range_of_motion_window(45.0, 30.0, 30.0, 120.0)
    c, _, _ = window_plane_axes(window.center)
    assert math.degrees(math.acos(c[1])) == pytest.approx(45.0 + 0.0, abs=8.0)  # tilted forward toward +Z
    flexed = np.array([[0.0, math.cos(math.radians(119.0)), math.sin(math.radians(119.0))]])
    assert solver_window(window).contains(flexed, 0.0)[0]


def test_polygon_from_directions() -> None:
    corners = np.array([[0.3, 1.0, 0.0], [0.0, 1.0, 0.3], [-0.3, 1.0, 0.0], [0.0, 1.0, -0.3]])
    window = polygon_from_directions(corners)
    np.testing.assert_allclose(polygon_plane_vertices(window), [[0.3, 0], [0, 0.3], [-0.3, 0], [0, -0.3]], atol=1e-9)
    with pytest.raises(ValueError):
        polygon_from_directions(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [-1.0, 0.0, 0.0]]), center=(0, 0, -1))


# --------------------------------------------------------------------------- solid angles


@pytest.mark.parametrize("half_angle", [10.0, 60.0, 90.0, 150.0])
def test_cone_solid_angle(half_angle) -> None:
    expected = 2.0 * math.pi * (1.0 - math.cos(math.radians(half_angle)))
    assert window_solid_angle(cone_window(half_angle)) == pytest.approx(expected, rel=1e-12)
    assert windows_solid_angle([cone_window(half_angle)]) == pytest.approx(expected, rel=2e-3)


def test_polygon_solid_angle_matches_closed_forms() -> None:
    # The octant triangle is an eighth of the sphere; the square of ±45° "rectangle" is a sixth
    # (a cube face seen from its centre).
    assert spherical_polygon_solid_angle(np.eye(3)) == pytest.approx(math.pi / 2.0, rel=1e-12)
    assert window_solid_angle(rectangle_window(45.0, 45.0)) == pytest.approx(4.0 * math.pi / 6.0, rel=1e-12)
    # A many-sided inscribed polygon approaches the cone.
    assert window_solid_angle(cone_polygon(40.0, 180)) == pytest.approx(window_solid_angle(cone_window(40.0)), rel=2e-4)


def test_elliptic_solid_angle_against_the_lattice() -> None:
    ellipse = elliptic_cone_window((60.0, 20.0), (0.1, 1.0, 0.3), (1.0, 0.0, 0.0))
    assert window_solid_angle(ellipse) == pytest.approx(windows_solid_angle([ellipse], 400_000), rel=2e-3)


def test_union_counts_overlaps_once() -> None:
    left = cone_window(30.0, (1.0, 1.0, 0.0))
    right = cone_window(30.0, (-1.0, 1.0, 0.0))
    separate = window_solid_angle(left) + window_solid_angle(right)
    assert windows_solid_angle([left, right]) == pytest.approx(separate, rel=2e-3)  # they do not meet
    assert windows_solid_angle([left, left]) == pytest.approx(window_solid_angle(left), rel=2e-3)
    assert windows_solid_angle([]) == pytest.approx(4.0 * math.pi)


def test_convex_hull_2d() -> None:
    rng = np.random.default_rng(5)
    points = rng.normal(size=(300, 2))
    hull = convex_hull_2d(points)
    corners = points[hull]
    edges = np.roll(corners, -1, axis=0) - corners
    # Every point is on the inner (left) side of every edge: counter-clockwise and convex.
    for corner, edge in zip(corners, edges, strict=True):
        assert np.all(edge[0] * (points[:, 1] - corner[1]) - edge[1] * (points[:, 0] - corner[0]) >= -1e-12)
    square = np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0], [0.5, 0.5], [1, 1]], dtype=float)
    corners = {tuple(point) for point in square[convex_hull_2d(square)].tolist()}
    assert corners == {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)}  # collinear, inner, repeated points dropped
    assert len(convex_hull_2d(square)) == 4
    assert len(convex_hull_2d(np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]))) == 2


@pytest.mark.parametrize("seed", range(20))
def test_points_apart_only_by_rounding_make_one_corner(seed: int) -> None:
    """A direction sampled several times reads back with different last bits: the hull keeps
    one corner for it, whatever turns the rounding noise makes."""
    rng = np.random.default_rng(seed)
    corners = rng.normal(size=(5, 2))
    repeated = np.repeat(corners, 4, axis=0)
    noisy = repeated * (1.0 + rng.choice([-1.0, 0.0, 1.0], size=repeated.shape) * np.finfo(float).eps)
    hull = noisy[convex_hull_2d(noisy)]
    expected = corners[convex_hull_2d(corners)]
    assert len(hull) == len(expected)
    assert np.max(np.min(np.linalg.norm(hull[:, None] - expected[None], axis=-1), axis=1)) < 1e-12
    edges = np.roll(hull, -1, axis=0) - hull
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    assert np.all(turns > 0.0)
