"""Euler angles in Blender's conventions and continuous Euler curves (numpy alone)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.euler_angles import (
    EULER_ORDERS,
    both_triples,
    euler_to_quaternion,
    other_triple,
    quaternion_to_euler,
)
from quat_ik_addon.solver.euler_curves import euler_curves


def _axis_matrix(axis: int, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    i, j = [(1, 2), (2, 0), (0, 1)][axis]
    m = np.eye(3)
    m[i, i], m[i, j], m[j, i], m[j, j] = c, -s, s, c
    return m


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_matches_blenders_convention_and_round_trips(order: str) -> None:
    rng = np.random.default_rng(7)
    for euler in rng.uniform(-1.4, 1.4, size=(20, 3)):
        # Blender's order "XYZ" applies X first: R = Rz @ Ry @ Rx (mathutils.Euler.to_matrix).
        i, j, k = ("XYZ".index(c) for c in order)
        expected = _axis_matrix(k, euler[k]) @ _axis_matrix(j, euler[j]) @ _axis_matrix(i, euler[i])
        q = euler_to_quaternion(euler, order)
        assert np.allclose(quat.to_matrix(q), expected, atol=1e-12)
        assert np.allclose(quaternion_to_euler(q, order), euler, atol=1e-9)


def tumbling_path(rng, frames: int) -> np.ndarray:
    """(F, 4) a rotation turning about a wandering axis, several whole turns, through every
    gimbal lock, with random signs (q and −q alike)."""
    speeds = rng.normal(size=(frames, 3)) * 0.02 + np.array([0.09, 0.05, 0.07])
    q = np.empty((frames, 4))
    q[0] = quat.normalize(rng.normal(size=4))
    for f in range(1, frames):
        q[f] = quat.normalize(quat.multiply(quat.from_rotation_vector(speeds[f]), q[f - 1]))
    return q * rng.choice([-1.0, 1.0], size=(frames, 1))


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_euler_curves_are_the_rotations_and_never_jump(order: str) -> None:
    rng = np.random.default_rng(3)
    q = tumbling_path(rng, 600)
    for triple in both_triples(q, order):
        assert np.allclose(quat.angle_between(euler_to_quaternion(triple, order), q), 0.0, atol=1e-7)
    for previous in (None, np.array([7.0, -9.5, 13.0])):
        curves = euler_curves(q, order, previous)
        assert np.allclose(quat.angle_between(euler_to_quaternion(curves, order), q), 0.0, atol=1e-7)
        # A frame turns the bone by at most ~0.14 rad: a key-to-key step of more than a
        # quarter turn on one channel would be a jump between triples or by a whole turn.
        steps = np.abs(np.diff(curves if previous is None else np.vstack((previous, curves)), axis=0))
        assert np.max(steps[1:]) < 0.5 * np.pi
        if previous is not None:  # continued from the value before, whole turns and all
            assert np.max(steps[0]) < np.pi
    assert euler_curves(q[:0], order).shape == (0, 3)


@pytest.mark.parametrize("order", EULER_ORDERS)
def test_the_other_triple_is_wrapped_into_the_one_range_and_is_the_same_rotation(order: str) -> None:
    """Half turns land on the range's closed end: (−π, π], as ``quaternion.wrap_angle`` wraps."""
    assert quat.wrap_angle(-math.pi) == math.pi and quat.wrap_angle(math.pi) == math.pi
    q = euler_to_quaternion(np.array([[0.0, 0.0, 0.0], [0.4, -1.2, 3.0], [-3.1, 0.3, 0.0]]), order)
    first, other = both_triples(q, order)
    assert np.all((other > -math.pi) & (other <= math.pi)), other
    assert np.max(quat.angle_between(euler_to_quaternion(other, order), q)) < 1e-12
    np.testing.assert_allclose(other, quat.wrap_angle(other_triple(first, order)), atol=0.0)
