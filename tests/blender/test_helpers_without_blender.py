"""The Blender layer's numpy-only helpers, tested without starting Blender."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.blender.keyframes import simplify
from quat_ik_addon.blender.locks import EULER_ORDERS, LockedEulerJoint, euler_to_quaternion, quaternion_to_euler
from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits import FreeJoint


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


def test_locked_euler_joint_keeps_locked_angles_exactly() -> None:
    joint = LockedEulerJoint(FreeJoint(), "ZXY", (False, True, False), (0.0, 0.35, 0.0))
    rng = np.random.default_rng(1)
    q = quat.normalize(rng.normal(size=(50, 4)))
    clamped = joint.clamp(q)
    euler = quaternion_to_euler(clamped, "ZXY")
    assert np.allclose(euler[:, 1], 0.35, atol=1e-12)
    assert np.all(joint.violation(clamped) < 1e-9)


def test_simplify_keeps_ends_corners_and_stays_within_tolerance() -> None:
    frames = np.arange(0.0, 101.0)
    values = np.stack((np.where(frames < 50, frames, 100 - frames), np.sin(frames / 15.0)), axis=1)
    keep = simplify(frames, values, 0.01)
    assert keep[0] == 0 and keep[-1] == 100 and 50 in keep
    assert len(keep) < 40
    for channel in range(2):
        rebuilt = np.interp(frames, frames[keep], values[keep, channel])
        assert np.max(np.abs(rebuilt - values[:, channel])) <= 0.01 + 1e-12
    assert list(simplify(frames, np.zeros((101, 4)), 1e-6)) == [0, 100]
