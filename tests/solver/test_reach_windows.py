"""Reach-window clamps over the whole sphere, against brute-force references."""

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow, ReachWindows
from quat_ik_addon.solver.quaternion import direction_angle
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.reference_chains import X_AXIS, Y_AXIS, Z_AXIS, polygon_window_deg
from quat_ik_addon.solver.rig.spec_chain import solver_limit


def sphere_grid(count: int) -> np.ndarray:
    """Fibonacci lattice: near-uniform directions covering the sphere, poles included."""
    i = np.arange(count) + 0.5
    polar = np.arccos(1 - 2 * i / count)
    azimuth = np.pi * (1 + 5**0.5) * i
    grid = np.stack((np.cos(azimuth) * np.sin(polar), np.cos(polar), np.sin(azimuth) * np.sin(polar)), axis=1)
    exact = np.array([[0, 1, 0], [0, -1, 0], [1, 0, 0], [-1, 0, 0], [0, 0, 1], [0, 0, -1]], float)
    return np.concatenate((grid, exact))


QUERIES = sphere_grid(3000)
DENSE = sphere_grid(400_000)

WINDOWS = {
    "polygon": polygon_window_deg([(-40, -30), (50, -30), (60, 40), (-30, 50)]),
    "off_centre_triangle": polygon_window_deg([(10, 10), (50, 15), (30, 45)]),
    "tilted_polygon": PolygonWindow(
        np.array([1.0, 1.0, 0.0]),
        Z_AXIS,
        np.array([1.0, -1.0, 0.0]) / 2**0.5,
        np.tan(np.radians([[-20, -20], [20, -20], [0, 30]])),
    ),
    "cone": ConeWindow(Y_AXIS, np.radians(40)),
    "wide_cone": ConeWindow(Y_AXIS, np.radians(130)),
    "hemisphere_cone": ConeWindow(Z_AXIS, np.pi / 2),
    "elliptic": EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (np.radians(60), np.radians(20))),
    "near_hemisphere_polygon": polygon_window_deg([(-89, -89), (89, -89), (89, 89), (-89, 89)]),
}


@pytest.fixture(scope="module", params=sorted(WINDOWS))
def window(request):
    return WINDOWS[request.param]


def rim_from_definition(window, count=4000):
    """Directions on the window's rim, built from its definition (not from the clamp code):
    polygon edges are straight in the plane, cones and ellipses are parametric."""
    if isinstance(window, PolygonWindow):
        corners = window.vertices
        t = np.linspace(0, 1, count // len(corners))[:, None, None]
        plane = (1 - t) * corners + t * np.roll(corners, -1, axis=0)
        plane = plane.reshape(-1, 2)
        points = window.center + plane[:, :1] * window.plane_x + plane[:, 1:] * window.plane_y
    elif isinstance(window, ConeWindow):
        u = np.cross(window.center, [0.3, 0.5, 0.7])
        u /= np.linalg.norm(u)
        v = np.cross(window.center, u)
        phi = np.linspace(0, 2 * np.pi, count)[:, None]
        radius = np.tan(window.half_angle)
        points = np.sign(np.cos(window.half_angle)) * window.center + abs(radius) * (np.cos(phi) * u + np.sin(phi) * v)
        if np.isclose(window.half_angle, np.pi / 2):
            points = np.cos(phi) * u + np.sin(phi) * v
    else:
        points = window.rim(np.linspace(0, 2 * np.pi, count))
    return points / np.linalg.norm(points, axis=1, keepdims=True)


def brute_force_closest(window, queries):
    """Best dot product over a dense sample of allowed directions (a lower bound on the optimum)."""
    allowed = np.concatenate((DENSE[window.contains(DENSE, 0.0)], rim_from_definition(window)))
    return np.max(queries @ allowed.T, axis=1)


def test_every_clamped_direction_is_inside(window):
    for mode in ("closest", "crossing"):
        clamped = getattr(window, mode)(QUERIES)
        assert np.all(np.isfinite(clamped))
        np.testing.assert_allclose(np.linalg.norm(clamped, axis=1), 1.0, atol=1e-12)
        assert np.all(window.contains(clamped, 1e-9)), mode


def test_inside_directions_are_left_alone(window):
    inside = QUERIES[window.contains(QUERIES, 0.0)]
    assert len(inside) > 0
    np.testing.assert_array_equal(window.closest(inside), inside)
    np.testing.assert_array_equal(window.crossing(inside), inside)


def test_closest_is_at_least_as_close_as_any_dense_sample(window):
    queries = QUERIES[::3]
    best_sampled = brute_force_closest(window, queries)
    ours = np.einsum("ij,ij->i", window.closest(queries), queries)
    # Ours is exact; the dense sample can only be slightly worse, never better.
    assert np.all(ours >= best_sampled - 1e-9)
    assert np.max(ours - best_sampled) < 1e-5  # and the sample is dense enough to mean something


def test_crossing_lies_on_the_arc_from_the_reference_on_the_boundary(window):
    outside = QUERIES[~window.contains(QUERIES, 0.0)]
    r = window.reference
    crossing = window.crossing(outside)
    # On the great circle through r and d (coplanar), between them.
    coplanar = np.abs(np.einsum("ij,ij->i", np.cross(np.broadcast_to(r, outside.shape), outside), crossing))
    generic = np.linalg.norm(np.cross(r, outside), axis=1) > 1e-6
    assert np.all(coplanar[generic] < 1e-9)
    assert np.all(direction_angle(crossing, outside) <= direction_angle(r, outside) + 1e-9)
    # On the boundary: a step further along the arc leaves the window.
    beyond = crossing + 1e-6 * (outside - crossing)
    beyond /= np.linalg.norm(beyond, axis=1, keepdims=True)
    assert np.mean(~window.contains(beyond, 0.0)[generic]) > 0.99


def test_closest_moves_continuously_away_from_ties(window):
    rng = np.random.default_rng(0)
    queries = QUERIES[~window.contains(QUERIES, 0.0)]
    nudged = queries + 1e-5 * rng.normal(size=queries.shape)
    nudged /= np.linalg.norm(nudged, axis=1, keepdims=True)
    jumps = direction_angle(window.closest(queries), window.closest(nudged))
    # Jumps happen only on the measure-zero set of equidistant directions.
    assert np.mean(jumps > 1e-3) < 0.01


def test_union_of_windows_reaches_beyond_a_hemisphere():
    front = ConeWindow(Y_AXIS, np.radians(80))
    back = polygon_window_deg([(-30, -30), (30, -30), (30, 30), (-30, 30)], center=-Y_AXIS)
    union = ReachWindows((front, back))
    assert union.contains(np.array([[0, -1.0, 0]]))[0] and union.contains(np.array([[0, 1.0, 0]]))[0]
    for mode in ("closest", "boundary"):
        clamped = union.clamp(QUERIES, mode)
        assert np.all(union.contains(clamped, 1e-9))
    # Each query goes to the window that lets it move least.
    closest = union.clamp(QUERIES, "closest")
    best_single = np.maximum(
        np.einsum("ij,ij->i", front.closest(QUERIES), QUERIES), np.einsum("ij,ij->i", back.closest(QUERIES), QUERIES)
    )
    np.testing.assert_allclose(np.einsum("ij,ij->i", closest, QUERIES), best_single, atol=1e-12)


def test_early_accept_never_accepts_an_outside_direction(window):
    union = ReachWindows((window,))
    accepted = union.early_accept(QUERIES)
    assert np.all(window.contains(QUERIES[accepted], 1e-12))
    assert np.any(accepted)


def test_directions_behind_the_window_plane_get_a_defined_answer():
    window = WINDOWS["polygon"]
    behind = -QUERIES[QUERIES[:, 1] > 0.5]
    for clamped in (window.closest(behind), window.crossing(behind)):
        assert np.all(np.isfinite(clamped)) and np.all(window.contains(clamped, 1e-9))


def test_angle_outside_is_zero_inside_and_matches_the_clamp_outside():
    union = ReachWindows((WINDOWS["cone"],))
    d = np.array([[0, 1, 0], [1, 0, 0]], float)
    np.testing.assert_allclose(union.angle_outside(d), [0.0, np.radians(50)], atol=1e-12)


def test_a_sliver_polygons_clamp_lands_inside_by_its_own_test():
    """A polygon 1e-6° wide (valid in a rig spec): its short edges' normals come from the edge
    on the window plane, so the limit's inside test agrees with its clamp to 1e-12 rad (the
    cross product of the two nearly parallel corner directions is off by 2e-8)."""
    window = spec.PolygonWindow(
        vertices_deg=((-41.35, 71.4921108), (41.35, 71.4921108), (41.35, 71.4921118), (-41.35, 71.4921118))
    )
    limit = solver_limit(spec.BallLimit(windows=(window,)))
    rotations = quat.normalize(np.random.default_rng(0).normal(size=(2000, 4)))
    assert limit.violation(limit.clamp(rotations)).max() < 1e-12


def test_a_direction_straight_opposite_a_polygons_reference_crosses_its_boundary():
    """Opposite the reference every arc leads out; the arc's angle must not come out −π by
    rounding's sign (about one random pentagon in six), which left the direction itself, far
    outside, as the crossing."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        center = quat.normalize(rng.normal(size=3))
        plane_x = quat.normalize(np.cross(center, rng.normal(size=3)))
        angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, 5))
        corners = 0.5 * np.stack((np.cos(angles), np.sin(angles)), axis=1)
        window = PolygonWindow(center, plane_x, np.cross(center, plane_x), corners)
        crossing = window.crossing(-window.reference[None, :])
        assert window.contains(crossing, 1e-12)[0], f"crossing {crossing} outside {window}"


def test_an_elliptic_window_on_skewed_plane_axes_is_refused():
    """Its rim (drawn in the plane axes) and its inside test (measured along them) would be two
    different cones, and the clamp would leave directions outside."""
    with pytest.raises(ValueError, match="perpendicular"):
        EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS + 0.2 * X_AXIS, (0.8, 0.4))
    with pytest.raises(ValueError, match="perpendicular"):
        EllipticConeWindow(Y_AXIS + 0.3 * X_AXIS, X_AXIS, Z_AXIS, (0.8, 0.4))
