"""Twist, hinge and ball-joint clamps: always inside, nearest where it should be."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow
from quat_ik_addon.solver.rig.reference_chains import X_AXIS, Y_AXIS, Z_AXIS, polygon_window_deg

RNG = np.random.default_rng(7)
ROTATIONS = quat.normalize(RNG.normal(size=(5000, 4)))
angles = st.floats(-np.pi, np.pi)


@given(st.floats(-2.0 * np.pi, np.pi), st.floats(0.0, 2.0 * np.pi), angles)
def test_angle_range_clamp_picks_the_nearest_angle_inside(low, width, angle):
    high = min(low + width, 2.0 * np.pi)
    allowed = AngleRange(low, high)
    clamped = allowed.clamp(angle)
    assert allowed.contains(clamped)
    # Brute force: no angle in the range is nearer round the circle.
    grid = np.linspace(low, high, 2001)
    nearest = np.min(np.abs(quat.wrap_angle(grid - angle)))
    assert abs(quat.wrap_angle(clamped - angle)) <= nearest + 1e-9


def test_a_range_that_excludes_zero_sends_zero_to_its_nearer_end():
    knee = AngleRange(np.radians(0.5), np.radians(170))
    assert np.isclose(knee.clamp(0.0), np.radians(0.5))
    # -175° is nearer to 170° the other way round the circle.
    assert np.isclose(knee.clamp(np.radians(-175)), np.radians(170))


def test_angle_range_rejects_min_above_max():
    with pytest.raises(ValueError, match="min"):
        AngleRange(1.0, 0.0)


@pytest.mark.parametrize("low, high", [(-1.0, 7.0), (-7.0, 0.0), (3.0, 7.0)])
def test_angle_range_rejects_ends_past_a_turn_and_spans_over_one(low, high):
    with pytest.raises(ValueError, match="one turn"):
        AngleRange(low, high)


@pytest.mark.parametrize("low, high", [(150.0, 210.0), (-210.0, -150.0)])
def test_a_range_through_180_holds_the_back_of_the_circle_only(low, high):
    allowed = AngleRange(np.radians(low), np.radians(high))
    inside = np.radians([150.0, 170.0, 180.0, -180.0, -170.0, -150.0])
    outside = np.radians([0.0, 140.0, -140.0, 90.0])
    assert allowed.contains(inside).all() and not allowed.contains(outside).any()
    assert np.allclose(allowed.clamp(inside), quat.wrap_angle(inside))
    assert np.allclose(
        allowed.clamp(np.radians([140.0, -140.0, 10.0, -10.0])), np.radians([150.0, -150.0, 150.0, -150.0])
    )
    assert abs(quat.wrap_angle(allowed.middle - np.pi)) < 1e-12
    assert allowed.contains(allowed.sample(RNG, 200)).all()


LIMITS = {
    "hinge": HingeJoint(X_AXIS, AngleRange(np.radians(0.5), np.radians(170))),
    "hinge_tilted_axis": HingeJoint(np.array([1.0, 0.2, -0.3]), AngleRange(np.radians(-30), np.radians(45))),
    "hinge_unlimited": HingeJoint(Z_AXIS),
    "twist_only": BallJoint((), AngleRange(np.radians(-20), np.radians(35))),
    "twist_not_containing_zero": BallJoint((), AngleRange(np.radians(100), np.radians(170))),
    "twist_through_180": BallJoint((ConeWindow(Y_AXIS, 0.7),), AngleRange(np.radians(-215), np.radians(-160))),
    "hinge_through_180": HingeJoint(X_AXIS, AngleRange(np.radians(140), np.radians(235))),
    "ball_polygon": BallJoint(
        (polygon_window_deg([(-40, -30), (50, -30), (60, 40), (-30, 50)]),), AngleRange(-1.0, 1.0)
    ),
    "ball_polygon_boundary": BallJoint(
        (polygon_window_deg([(-40, -30), (50, -30), (60, 40), (-30, 50)]),), AngleRange(-1.0, 1.0), "boundary"
    ),
    "ball_elliptic": BallJoint((EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (1.0, 0.3)),), None),
    "ball_two_windows": BallJoint((ConeWindow(Y_AXIS, 0.5), ConeWindow(-Y_AXIS, 0.5)), AngleRange(-0.2, 0.2)),
    "ball_outside_rest": BallJoint((polygon_window_deg([(20, 20), (50, 20), (40, 50)]),), AngleRange(0.3, 0.6)),
    "ball_twist_reference": BallJoint(
        (polygon_window_deg([(-40, -30), (50, -30), (60, 40), (-30, 50)], center=np.array([0.6, 0.3, -0.5])),),
        AngleRange(-0.5, 0.8),
        twist_reference=quat.normalize(np.array([0.8, 0.3, -0.2, 0.4])),
    ),
    "fixed": FixedJoint(),
    "free": FreeJoint(),
}


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_clamp_always_lands_inside_and_is_idempotent(name):
    limit = LIMITS[name]
    clamped = limit.clamp(ROTATIONS)
    assert np.all(np.isfinite(clamped))
    np.testing.assert_allclose(np.linalg.norm(clamped, axis=1), 1.0, atol=1e-12)
    assert np.max(limit.violation(clamped)) < 1e-9
    assert np.max(quat.angle_between(limit.clamp(clamped), clamped)) < 1e-9


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_poses_sampled_inside_are_inside_and_untouched(name):
    limit = LIMITS[name]
    inside = limit.sample(np.random.default_rng(3), 2000)
    assert np.max(limit.violation(inside)) < 1e-9
    assert np.max(quat.angle_between(limit.clamp(inside), inside)) < 1e-9


def test_rest_pose_outside_the_limits_is_brought_inside():
    limit = LIMITS["ball_outside_rest"]
    assert limit.violation(quat.IDENTITY[None])[0] > 0.1
    assert limit.violation(limit.clamp(quat.IDENTITY[None]))[0] < 1e-9


def test_twist_clamp_keeps_the_direction_and_changes_only_the_twist():
    limit = LIMITS["twist_only"]
    clamped = limit.clamp(ROTATIONS)
    np.testing.assert_allclose(quat.rotate_y_axis(clamped), quat.rotate_y_axis(ROTATIONS), atol=1e-9)


def test_hinge_clamp_is_a_rotation_about_the_axis():
    limit = LIMITS["hinge_tilted_axis"]
    clamped = limit.clamp(ROTATIONS)
    np.testing.assert_allclose(
        quat.rotate(clamped, limit.axis), np.broadcast_to(limit.axis, (len(clamped), 3)), atol=1e-9
    )


def test_hinge_step_turns_exactly_onto_a_reachable_target():
    hinge = HingeJoint(X_AXIS, AngleRange(-np.pi / 2, np.pi / 2))
    to_effector = np.array([[0.0, 1.0, 0.0]])
    to_target = np.array([[0.0, np.cos(0.4), np.sin(0.4)]])
    turned = hinge.step_towards(quat.IDENTITY[None], to_effector[:, None], to_target[:, None], np.ones(1))
    np.testing.assert_allclose(quat.rotate(turned, to_effector), to_target, atol=1e-12)


def test_fast_paths_change_nothing_but_speed():
    window = polygon_window_deg([(-40, -30), (50, -30), (60, 40), (-30, 50)])
    fast = BallJoint((window,), AngleRange(-1.0, 1.0), use_fast_paths=True)
    slow = BallJoint((window,), AngleRange(-1.0, 1.0), use_fast_paths=False)
    # Equal up to rounding: BLAS may round a subset of rows differently from the whole batch.
    np.testing.assert_allclose(fast.clamp(ROTATIONS), slow.clamp(ROTATIONS), rtol=0, atol=1e-12)


def test_stiff_joint_takes_only_its_share_of_the_step():
    stiff = FreeJoint(stiffness=0.75)
    turned = stiff.step_towards(quat.IDENTITY[None], np.array([[[0, 1.0, 0]]]), np.array([[[1.0, 0, 0]]]), np.ones(1))
    assert np.isclose(quat.angle_between(turned, quat.IDENTITY)[0], 0.25 * np.pi / 2)
