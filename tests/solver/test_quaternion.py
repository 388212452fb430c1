"""Quaternion algebra against rotation matrices and known rotations."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from quat_ik_addon.solver import quaternion as quat

finite = st.floats(-10, 10, allow_nan=False)
vectors = arrays(float, 3, elements=finite).filter(lambda v: np.linalg.norm(v) > 1e-3)
quaternions = arrays(float, 4, elements=finite).filter(lambda q: np.linalg.norm(q) > 1e-3).map(quat.normalize)


@given(quaternions, quaternions, vectors)
def test_multiply_composes_rotations_like_matrices(p, q, v):
    np.testing.assert_allclose(
        quat.rotate(quat.multiply(p, q), v), quat.to_matrix(p) @ quat.to_matrix(q) @ v, atol=1e-9
    )


@given(quaternions, quaternions, vectors)
def test_one_pose_in_plain_floats_agrees_with_the_batched_forms(p, q, v):
    np.testing.assert_allclose(quat.multiply_one(p.tolist(), q.tolist()), quat.multiply(p, q), rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(quat.rotate_one(q.tolist(), v.tolist()), quat.rotate(q, v), rtol=0.0, atol=1e-12)


@given(quaternions)
def test_matrix_round_trip(q):
    back = quat.from_matrix(quat.to_matrix(q))
    assert quat.angle_between(back, q) < 1e-7


@given(vectors, vectors)
def test_rotation_between_maps_a_onto_b_by_the_shortest_arc(a, b):
    r = quat.rotation_between(a, b)
    a_unit, b_unit = a / np.linalg.norm(a), b / np.linalg.norm(b)
    np.testing.assert_allclose(quat.rotate(r, a_unit), b_unit, atol=1e-9)
    assert np.isclose(np.linalg.norm(r), 1.0)
    # Shortest arc: the rotation angle is the angle between the vectors.
    assert abs(quat.angle_between(r, quat.IDENTITY) - quat.direction_angle(a, b)) < 1e-7


@pytest.mark.parametrize("a", [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.3, -0.2, 0.9], [1e-9, 1, 0]])
def test_rotation_between_antiparallel_is_a_half_turn(a):
    a = np.asarray(a, float)
    r = quat.rotation_between(a, -a)
    assert np.all(np.isfinite(r))
    np.testing.assert_allclose(quat.rotate(r, a / np.linalg.norm(a)), -a / np.linalg.norm(a), atol=1e-9)


def test_rotation_between_zero_vector_is_identity():
    np.testing.assert_array_equal(quat.rotation_between([0, 0, 0], [1, 0, 0]), quat.IDENTITY)
    np.testing.assert_array_equal(quat.rotation_between([1, 0, 0], [0, 0, 0]), quat.IDENTITY)


@given(vectors)
def test_rotation_from_y_matches_general_form_and_has_no_y_component(d):
    d = d / np.linalg.norm(d)
    s = quat.rotation_from_y(d)
    np.testing.assert_allclose(quat.rotate(s, [0, 1, 0]), d, atol=1e-9)
    assert s[2] == 0.0  # Blow: a simple rotation from the bone axis has no component along it


def test_rotation_from_minus_y_is_half_turn_about_z_like_blender():
    np.testing.assert_allclose(quat.rotation_from_y([0, -1, 0]), [0, 0, 0, 1])


@given(quaternions)
def test_swing_twist_reconstructs_the_rotation(q):
    d, twist = quat.swing_twist_y(q)
    rebuilt = quat.multiply(quat.rotation_from_y(d), quat.from_y_angle(twist))
    assert quat.angle_between(rebuilt, q) < 1e-7
    assert -np.pi < twist <= np.pi


@given(quaternions)
def test_from_swing_twist_is_the_product_of_its_swing_and_twist(q):
    d, twist = quat.swing_twist_y(q)
    joined = quat.from_swing_twist_y(d, twist)
    np.testing.assert_allclose(joined, quat.multiply(quat.rotation_from_y(d), quat.from_y_angle(twist)), atol=1e-12)
    assert quat.angle_between(joined, q) < 1e-7


def test_from_swing_twist_straight_down_turns_half_about_z_then_twists():
    np.testing.assert_allclose(quat.from_swing_twist_y([0.0, -1.0, 0.0], 0.0), [0, 0, 0, 1])
    twisted = quat.from_swing_twist_y([0.0, -1.0, 0.0], 0.5)
    np.testing.assert_allclose(twisted, quat.multiply([0, 0, 0, 1], quat.from_y_angle(0.5)), atol=1e-15)


@given(st.floats(-3.1, 3.1), vectors)
def test_twist_about_recovers_a_pure_axis_rotation(angle, axis):
    axis = axis / np.linalg.norm(axis)
    assert abs(quat.twist_about(quat.from_axis_angle(axis, angle), axis) - angle) < 1e-9


def test_rotate_y_axis_and_blow_early_accept_value_agree_with_full_rotation():
    q = quat.normalize(np.random.default_rng(1).normal(size=(100, 4)))
    full = quat.rotate(q, [0, 1, 0])
    np.testing.assert_allclose(quat.rotate_y_axis(q), full, atol=1e-12)
    np.testing.assert_allclose(quat.y_of_rotated_y_axis(q), full[:, 1], atol=1e-12)


def test_angle_between_keeps_precision_near_zero():
    tiny = 1e-10
    q = quat.from_axis_angle(np.array([0, 0, 1.0]), tiny)
    assert abs(quat.angle_between(quat.IDENTITY, q) - tiny) < 1e-16


@settings(max_examples=50)
@given(quaternions, st.floats(0, 1))
def test_slerp_from_identity_scales_the_angle(q, fraction):
    part = quat.slerp_from_identity(q, fraction)
    assert abs(quat.angle_between(quat.IDENTITY, part) - fraction * quat.angle_between(quat.IDENTITY, q)) < 1e-7


def test_normalize_never_returns_nan():
    np.testing.assert_array_equal(quat.normalize(np.zeros(4)), quat.IDENTITY)


@given(quaternions)
def test_from_rotation_vector_inverts_rotation_vector(q):
    back = quat.from_rotation_vector(quat.rotation_vector(q))
    assert quat.angle_between(back, q) < 1e-7
    assert abs(np.linalg.norm(back) - 1.0) < 1e-12


def test_from_rotation_vector_of_tiny_and_zero_turns():
    tiny = np.array([[0.0, 0.0, 0.0], [1e-12, 0.0, 0.0], [0.0, 3e-9, 4e-9]])
    turned = quat.from_rotation_vector(tiny)
    np.testing.assert_array_equal(turned[0], quat.IDENTITY)
    np.testing.assert_allclose(turned[:, 1:], 0.5 * tiny, rtol=1e-12, atol=0.0)  # sin(θ/2)/θ → 1/2
    np.testing.assert_allclose(np.linalg.norm(turned, axis=-1), 1.0, atol=1e-15)
