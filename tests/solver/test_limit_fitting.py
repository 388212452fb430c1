"""Limits learned from animation, on synthetic motions whose true limits are known.

The fitted limit must allow every observed pose (checked with the solver's own limits) and
be not much larger than the truth (solid angles, fitted over true).  The measured ratios are
printed with ``pytest -s`` and asserted below 1.25 with no margin and enough corners.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.fitting import (
    LimitFitError,
    fit_ball_limit,
    fit_hinge_limit,
    fit_limit,
    hinge_axis,
    smallest_arc,
)
from quat_ik_addon.solver.limits.reach_windows import EllipticConeWindow, PolygonWindow
from quat_ik_addon.solver.limits.window_shapes import (
    cone_polygon,
    elliptic_cone_window,
    rectangle_window,
    window_solid_angle,
    windows_solid_angle,
)
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_limit, solver_window

TRUE_POLYGON = spec.PolygonWindow(vertices_deg=((-40, -30), (50, -30), (60, 40), (-30, 50), (-55, 10)))
TRUE_ELLIPSE = elliptic_cone_window((55.0, 25.0), center=(0.3, 1.0, -0.2), x_axis=(1.0, 0.0, 1.0))
TRUE_TWIST = (-50.0, 70.0)


def _boundary_directions(window: spec.ReachWindow, count: int, rng: np.random.Generator) -> np.ndarray:
    """Directions spread along the window's rim (on its great-circle edges or its ellipse)."""
    solver = solver_window(window)
    if isinstance(solver, PolygonWindow):
        corners = solver.corner_directions
        edge = rng.integers(0, len(corners), count)
        t = rng.uniform(size=(count, 1))
        points = (1.0 - t) * corners[edge] + t * corners[(edge + 1) % len(corners)]
        return points / np.linalg.norm(points, axis=1, keepdims=True)
    assert isinstance(solver, EllipticConeWindow)
    return solver.rim(rng.uniform(0.0, 2.0 * np.pi, count))


def _motion(window: spec.ReachWindow, rng: np.random.Generator, inside: int = 3000, rim: int = 1500) -> np.ndarray:
    """Pose rotations: uniform inside the true limit plus dense along its rim, twists in TRUE_TWIST."""
    truth = spec.BallLimit(windows=(window,), twist_deg=TRUE_TWIST)
    poses = solver_limit(truth).sample(rng, inside)
    directions = _boundary_directions(window, rim, rng)
    twists = rng.uniform(*np.radians(TRUE_TWIST), rim)
    twists[:2] = np.radians(TRUE_TWIST)  # the twist range's ends are seen
    rim_poses = quat.multiply(quat.rotation_from_y(directions), quat.from_y_angle(twists))
    return np.concatenate((poses, rim_poses))


def _assert_allows_every_pose(limit: spec.JointLimit, poses: np.ndarray) -> None:
    solver = solver_limit(limit)
    assert np.all(solver.violation(poses) == 0.0)
    np.testing.assert_allclose(solver.clamp(poses), quat.normalize(poses), atol=0.0)


@pytest.mark.parametrize(("name", "window"), [("polygon", TRUE_POLYGON), ("ellipse", TRUE_ELLIPSE)])
def test_fit_without_margin_is_tight(name: str, window: spec.ReachWindow) -> None:
    rng = np.random.default_rng(1)
    poses = _motion(window, rng)
    fit = fit_limit(poses, margin_deg=0.0, max_vertices=24)
    assert isinstance(fit.limit, spec.BallLimit) and fit.report.kind == "ball"
    assert len(fit.limit.windows) == 1 and len(fit.limit.windows[0].vertices_deg) <= 24
    _assert_allows_every_pose(fit.limit, poses)
    assert fit.report.samples_outside == 0
    ratio = window_solid_angle(fit.limit.windows[0]) / window_solid_angle(window)
    print(f"\n{name}: fitted/true solid angle {ratio:.4f} with margin 0 and 24 corners")
    assert 0.97 < ratio < 1.25
    low, high = fit.limit.twist_deg
    assert TRUE_TWIST[0] - 1e-5 <= low <= TRUE_TWIST[0] and TRUE_TWIST[1] <= high <= TRUE_TWIST[1] + 1e-5


@pytest.mark.parametrize("corners", [4, 6, 8, 12])
def test_fewer_corners_still_contain_everything(corners: int) -> None:
    rng = np.random.default_rng(2)
    poses = _motion(TRUE_ELLIPSE, rng, inside=1500, rim=800)
    fit = fit_limit(poses, margin_deg=0.0, max_vertices=corners)
    window = fit.limit.windows[0]
    assert len(window.vertices_deg) <= corners
    _assert_allows_every_pose(fit.limit, poses)
    ratio = window_solid_angle(window) / window_solid_angle(TRUE_ELLIPSE)
    print(f"\nellipse with {corners} corners: fitted/true solid angle {ratio:.4f}")
    # A circumscribed k-gon of an ellipse exceeds it by (k/π)·tan(π/k) − 1: 27 % for 4, 10 % for 6.
    assert ratio < (corners / math.pi) * math.tan(math.pi / corners) * 1.08
    assert fit.report.windows[0].growth >= 1.0


def test_margin_keeps_a_band_around_every_sample() -> None:
    rng = np.random.default_rng(3)
    poses = _motion(TRUE_POLYGON, rng, inside=800, rim=800)
    margin = 5.0
    fit = fit_limit(poses, margin_deg=margin, max_vertices=16)
    directions = quat.rotate_y_axis(poses)
    pushed = []
    for turn in np.linspace(0.0, 2.0 * np.pi, 12, endpoint=False):
        first = quat.any_perpendicular(directions)
        across = np.cos(turn) * first + np.sin(turn) * np.cross(directions, first)
        angle = math.radians(0.99 * margin)
        pushed.append(math.cos(angle) * directions + math.sin(angle) * across)
    reach = solver_limit(fit.limit).reach
    assert np.all(reach.contains(np.concatenate(pushed), 0.0))
    tight = fit_limit(poses, margin_deg=0.0, max_vertices=16)
    grown = window_solid_angle(fit.limit.windows[0]) / window_solid_angle(tight.limit.windows[0])
    assert 1.0 < grown < 1.6
    assert fit.limit.twist_deg == pytest.approx((TRUE_TWIST[0] - margin, TRUE_TWIST[1] + margin), abs=1e-5)


def test_directions_beyond_a_hemisphere_split_into_windows() -> None:
    """A bone that swings through a 115° cone (beyond any one window) and one that visits two
    opposite regions: several windows, whose union allows every pose."""
    rng = np.random.default_rng(4)
    wide = solver_limit(spec.BallLimit(windows=(spec.ConeWindow(half_angle_deg=115.0),), twist_deg=TRUE_TWIST))
    two_sides = solver_limit(
        spec.BallLimit(
            windows=(cone_polygon(25.0, 6, center=(1.0, 0.2, 0.0)), cone_polygon(25.0, 6, center=(-1.0, 0.2, 0.0)))
        )
    )
    for truth, expected_windows in ((wide, range(2, 5)), (two_sides, [2])):
        poses = truth.sample(rng, 4000)
        fit = fit_limit(poses, margin_deg=1.0, max_vertices=16)
        assert len(fit.limit.windows) in expected_windows
        _assert_allows_every_pose(fit.limit, poses)
        fitted = windows_solid_angle(fit.limit.windows)
        true = windows_solid_angle(truth.windows)
        print(f"\n{len(fit.limit.windows)} windows: fitted/true solid angle {fitted / true:.3f}")
        assert fitted / true < 1.3


def test_too_spread_out_is_an_error() -> None:
    rng = np.random.default_rng(5)
    everywhere = quat.normalize(rng.normal(size=(3000, 4)))
    with pytest.raises(LimitFitError, match="max_windows"):
        fit_limit(everywhere, max_windows=2)


def test_smallest_arc_handles_wrap_around() -> None:
    assert smallest_arc(np.radians([-30.0, 10.0, 60.0])) == pytest.approx(tuple(np.radians([-30.0, 60.0])))
    low, high = smallest_arc(np.radians([170.0, 179.0, -175.0, -160.0]))
    assert (math.degrees(low), math.degrees(high)) == pytest.approx((170.0, 200.0))
    assert smallest_arc([0.5]) == (0.5, 0.5)


def _twisting(twists_deg: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(6)
    directions = solver_window(cone_polygon(30.0, 5)).corner_directions
    picks = directions[rng.integers(0, len(directions), len(twists_deg))]
    return quat.multiply(quat.rotation_from_y(picks), quat.from_y_angle(np.radians(twists_deg)))


def test_twist_through_180_runs_past_180() -> None:
    poses = _twisting(np.array([150.0, 175.0, -178.0, -170.0, 160.0]))
    fit = fit_ball_limit(poses, margin_deg=1.0)
    assert fit.limit.twist_deg == pytest.approx((149.0, 191.0))
    assert fit.report.twist_arc_deg == pytest.approx((150.0, 190.0))
    _assert_allows_every_pose(fit.limit, poses)
    # Nothing of the front of the circle is allowed: twists go to the nearer end round it.
    twist_range = solver_limit(fit.limit).twist_range
    assert twist_range.clamp(np.radians([0.0, -20.0])) == pytest.approx(np.radians([149.0, -169.0]))


def test_twist_near_180_grows_past_it() -> None:
    fit = fit_ball_limit(_twisting(np.array([170.0, 178.0, 175.0])), margin_deg=5.0)
    assert fit.limit.twist_deg == pytest.approx((165.0, 183.0))
    _assert_allows_every_pose(fit.limit, _twisting(np.array([170.0, 178.0, 175.0])))


def test_twist_and_margin_covering_the_circle_is_free() -> None:
    fit = fit_ball_limit(_twisting(np.linspace(-179.0, 179.0, 40)), margin_deg=5.0)
    assert fit.limit.twist_deg is None
    assert any("whole circle" in note for note in fit.report.notes)


def test_twist_all_round_but_one_gap_keeps_the_gap() -> None:
    # Samples 9.2° apart with a 2° margin leave one gap of 5.2° where the arc starts past 0.
    poses = _twisting(np.linspace(-179.0, 179.0, 40))
    fit = fit_ball_limit(poses, margin_deg=2.0)
    low, high = fit.limit.twist_deg
    assert -360.0 <= low < high <= 360.0 and 354.0 < high - low < 356.0
    _assert_allows_every_pose(fit.limit, poses)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.3, -0.2, 0.9)])
def test_hinge_motion_fits_a_hinge(axis) -> None:
    rng = np.random.default_rng(7)
    unit = np.asarray(axis) / np.linalg.norm(axis)
    angles = rng.uniform(np.radians(-30.0), np.radians(100.0), 500)
    angles[:2] = np.radians([-30.0, 100.0])
    wobble = quat.from_axis_angle(quat.any_perpendicular(unit), rng.normal(0.0, np.radians(0.1), 500))
    poses = quat.multiply(wobble, quat.from_axis_angle(unit, angles))
    fit = fit_limit(poses, margin_deg=2.0)
    assert isinstance(fit.limit, spec.HingeLimit) and fit.report.kind == "hinge"
    sign = 1.0 if unit[np.argmax(np.abs(unit))] > 0 else -1.0
    np.testing.assert_allclose(fit.limit.axis, sign * unit, atol=2e-3)
    expected = (-32.0, 102.0) if sign > 0 else (-102.0, 32.0)
    assert fit.limit.range_deg == pytest.approx(expected, abs=0.5)
    assert fit.report.hinge_residual_deg < 1.0
    assert fit.report.samples_outside == 0


def test_ball_motion_is_not_taken_for_a_hinge() -> None:
    poses = _motion(TRUE_POLYGON, np.random.default_rng(8), inside=300, rim=100)
    assert fit_limit(poses).report.kind == "ball"
    assert hinge_axis(poses)[1] > 10.0
    forced = fit_hinge_limit(poses)
    assert isinstance(forced.limit, spec.HingeLimit) and forced.report.hinge_residual_deg > 10.0
    assert forced.report.samples_outside == 0  # every hinge angle seen is in the range


def test_degenerate_motions_fit_a_cone() -> None:
    still = np.tile(quat.IDENTITY, (10, 1))
    fit = fit_limit(still, margin_deg=3.0)
    assert fit.report.kind == "ball"
    (cone,) = fit.limit.windows
    assert isinstance(cone, spec.ConeWindow) and cone.center == (0.0, 1.0, 0.0)
    assert cone.half_angle_deg == pytest.approx(3.0)
    nodding = quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.radians(np.linspace(-20.0, 40.0, 30)))
    arc_fit = fit_limit(nodding, kind="ball", margin_deg=1.0)
    assert isinstance(arc_fit.limit.windows[0], spec.ConeWindow)
    _assert_allows_every_pose(arc_fit.limit, nodding)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 4"):
        fit_ball_limit(np.tile(quat.IDENTITY, (3, 1)), max_vertices=3)
    with pytest.raises(LimitFitError):
        fit_limit(np.zeros((0, 4)))
    with pytest.raises(LimitFitError):
        fit_limit(np.zeros((5, 3)))
    with pytest.raises(ValueError):
        fit_limit(np.tile(quat.IDENTITY, (3, 1)), kind="elbow")  # type: ignore[arg-type]


@settings(max_examples=20, deadline=None)
@given(
    half_u=st.floats(3.0, 60.0),
    half_v=st.floats(3.0, 60.0),
    center=st.tuples(st.floats(-1, 1), st.floats(0.3, 1), st.floats(-1, 1)),
    corners=st.integers(4, 12),
    seed=st.integers(0, 2**32 - 1),
)
def test_fitted_limit_always_allows_the_samples(half_u, half_v, center, corners, seed) -> None:
    rng = np.random.default_rng(seed)
    truth = rectangle_window(half_u, half_v, center=center)
    poses = _motion(truth, rng, inside=300, rim=200)
    fit = fit_limit(poses, margin_deg=0.0, max_vertices=corners)
    _assert_allows_every_pose(fit.limit, poses)
    assert all(len(window.vertices_deg) <= corners for window in fit.limit.windows)
