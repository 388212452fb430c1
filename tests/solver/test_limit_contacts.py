"""Which way a clamp turned joints back (``limit_contacts``), and DLS sliding along limits with it."""

from pathlib import Path

import numpy as np
import pytest
from test_sequence_and_cli import wave_pose_path

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.contacts import SLOTS, LimitContacts
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import EllipticConeWindow
from quat_ik_addon.solver.methods import dls
from quat_ik_addon.solver.rig.reference_chains import X_AXIS, Y_AXIS, Z_AXIS, elliptic_chain
from quat_ik_addon.solver.rig.spec import load_rig_spec
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.solve import solve_from

REPO = Path(__file__).resolve().parents[2]
BALL = BallJoint((EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (np.radians(50), np.radians(35))),), AngleRange(-0.5, 0.5))
HINGE = HingeJoint(X_AXIS, AngleRange(0.0, 2.0))


def contacts_of(limit, turned):
    """The contact axes of one joint clamped by ``limit``, and the clamped rotation."""
    turned = quat.normalize(np.asarray(turned, dtype=float))[None, None]
    clamped = limit.clamp(turned)
    axes = LimitContacts(((limit, np.array([0])),), 1).axes(turned, clamped, np.array([0]), np.array([0]))
    return axes[0], clamped[0, 0]


def swing_twist(swing_axis, swing_deg, twist):
    """The rotation pointing the bone by ``swing_deg`` about ``swing_axis``, twisted ``twist`` rad."""
    direction = quat.rotate(quat.from_axis_angle(np.asarray(swing_axis, float), np.radians(swing_deg)), Y_AXIS)
    return quat.from_swing_twist_y(direction, np.asarray(twist))


def test_a_swing_clamp_presses_about_the_arc_it_turned_the_bone_along_only():
    # 70° between the ellipse's axes: outside; twist 0.3 inside its range. The closest rim
    # direction is not on the way back to the centre (an ellipse), so the direction turns
    # sideways as well as back.
    turned = swing_twist(np.array([1.0, 0.0, 0.6]) / np.linalg.norm([1.0, 0.0, 0.6]), 70.0, 0.3)
    axes, clamped = contacts_of(BALL, turned)
    direction_before, direction_after = quat.rotate(turned, Y_AXIS), quat.rotate(clamped, Y_AXIS)
    arc = np.cross(direction_before, direction_after)
    np.testing.assert_allclose(axes[0], arc / np.linalg.norm(arc), atol=1e-12)
    np.testing.assert_array_equal(axes[1], 0.0)
    # The rotation the clamp made has a share about the bone itself (the swing/twist split
    # keeps the twist while the direction moves): pressing along it would block twist too.
    back = quat.rotation_vector(quat.multiply(clamped, quat.conjugate(quat.normalize(turned))))
    assert abs(np.dot(back / np.linalg.norm(back), direction_after)) > 0.05


def test_a_twist_clamp_presses_about_the_bone_towards_the_range():
    for twist, sign in ((0.9, -1.0), (-0.9, 1.0)):
        axes, clamped = contacts_of(BALL, swing_twist(Z_AXIS, 20.0, twist))
        np.testing.assert_array_equal(axes[0], 0.0)
        np.testing.assert_allclose(axes[1], sign * quat.rotate(clamped, Y_AXIS), atol=1e-12)


def test_a_twist_measured_from_a_reference_presses_about_the_bone_too():
    """A fitted limit measures twist from a reference frame (``twist_reference``): its twist
    clamp still turns the bone about itself only, and that is the axis pressed."""
    reference = quat.from_axis_angle(np.array([0.0, 0.6, 0.8]), 0.7)
    limit = BallJoint(BALL.windows, AngleRange(-0.5, 0.5), twist_reference=reference)
    direction = quat.rotate(quat.from_axis_angle(Z_AXIS, np.radians(20.0)), Y_AXIS)
    turned = limit._join(direction, np.asarray(0.9))
    axes, clamped = contacts_of(limit, turned)
    assert limit.split(clamped[None])[1][0] == pytest.approx(0.5)
    np.testing.assert_array_equal(axes[0], 0.0)
    np.testing.assert_allclose(axes[1], -direction, atol=1e-12)


def test_a_window_without_a_twist_range_presses_the_swing_only():
    limit = BallJoint(BALL.windows, None)
    axes, _ = contacts_of(limit, swing_twist(X_AXIS, -80.0, 2.5))
    assert np.linalg.norm(axes[0]) == pytest.approx(1.0)
    np.testing.assert_array_equal(axes[1], 0.0)


def test_both_parts_clamped_give_two_perpendicular_axes():
    axes, _ = contacts_of(BALL, swing_twist(X_AXIS, -80.0, 1.2))
    np.testing.assert_allclose(np.linalg.norm(axes, axis=-1), 1.0, atol=1e-12)
    assert abs(np.dot(axes[0], axes[1])) < 1e-12


def test_a_hinge_presses_along_its_axis_towards_its_range():
    axes, _ = contacts_of(HINGE, quat.from_axis_angle(X_AXIS, 2.4))
    np.testing.assert_allclose(axes[0], -X_AXIS, atol=1e-12)
    np.testing.assert_array_equal(axes[1], 0.0)
    axes, _ = contacts_of(HINGE, quat.from_axis_angle(X_AXIS, -0.3))
    np.testing.assert_allclose(axes[0], X_AXIS, atol=1e-12)


@pytest.mark.parametrize("seed", range(2))
def test_dls_slides_along_limit_corners_to_goals_a_few_degrees_away(seed):
    """Goals met by poses on the human arm's limits' corners, DLS started 2° away (every joint
    turned 2° about a random axis, clamped): it meets every one within 20 iterations. With one
    axis along the rotation each clamp made, and joints let go of by the steepest descent's
    sign, about 7 of every 400 (over six such paths) stopped a few degrees short, pressed
    into a corner."""
    chain = Chain.from_rig_spec(load_rig_spec(REPO / "sample_rigs" / "human_arm.rig.json"), "arm.L")
    truth = wave_pose_path(chain, np.random.default_rng(seed), 400, 0.9)
    free = wave_pose_path(chain, np.random.default_rng(seed), 400, 0.9, clamped=False)
    joints_on_limits = np.sum(quat.angle_between(truth, free) > 1e-6, axis=-1)
    assert np.mean(joints_on_limits >= 2) > 0.5
    posed = chain.forward_kinematics(truth)
    goals = Goals(positions=posed.effector, orientations=posed.rotations[:, -1])
    axes = np.random.default_rng(100 + seed).normal(size=(400, chain.n_bones, 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    start = chain.clamp_to_limits(quat.multiply(quat.from_rotation_vector(np.radians(2.0) * axes), truth))
    settings = SolveSettings(method="dls", max_iterations=20, tolerance=1e-3, restarts=0)
    result = solve_from(chain, goals, start, settings=settings)
    assert np.all(result.converged), np.nonzero(~result.converged)[0]
    assert np.max(chain.limit_violation(result.rotations)) <= 1e-9


def test_an_axis_the_goals_cannot_see_is_not_let_go_of_on_rounding_noise():
    """A held axis is let go of where turning inwards about it would reduce what the step
    leaves: a clearly positive multiplier. Where turning about it moves nothing the goals see
    (a tip's twist under a position goal on its axis) its column is rounding noise, and a
    noise-signed multiplier let numpy's last bits (which Blender 3.4's numpy picks by memory
    alignment) decide, and a redundant chain's Per Frame pose then depended on the order
    frames were played."""
    chain = elliptic_chain(3)
    pre = chain.forward_kinematics(chain.centre_pose()[None]).pre_rotations
    rng = np.random.default_rng(3)
    blocks = rng.normal(size=(1, 3, 3, 3))
    blocks[0, 2] = 1e-17 * rng.normal(size=(3, 3))  # the tip moves nothing the goal sees
    pressed = np.zeros((1, 3, SLOTS, 3))
    pressed[0, 2, 1] = Y_AXIS  # the tip's twist
    pressed[0, 0, 0] = X_AXIS  # the first joint's swing, which the goal sees
    for first_helps in (True, False):
        allowed = dls._AllowedTurns(chain, pre)
        allowed.keep_pressed(pressed, blocks)
        joints, columns = allowed.held[1], allowed.held[4]
        # What is left lines up with both columns: each multiplier is positive.
        left = columns[joints == 0, :, 0] * (1.0 if first_helps else -1.0) + 1e3 * columns[joints == 2, :, 1]
        jacobian = np.zeros((1, 3, 9))
        _, _, still, let_go = allowed.let_go(jacobian, left)
        assert let_go == first_helps
        np.testing.assert_array_equal(still[joints == 2], pressed[0, 2][None])  # never let go of
        assert np.any(still[joints == 0] != 0.0) != first_helps
