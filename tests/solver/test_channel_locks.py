"""Locked rotation channels as joint limits, and the channel values a locked bone is written
with (numpy alone): locked values stay exact and the rotations stay the solved ones."""

from __future__ import annotations

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.euler_angles import EULER_ORDERS, euler_to_quaternion, other_triple, quaternion_to_euler
from quat_ik_addon.solver.limits.channel_locks import HeldChannels, LockedComponentsJoint, LockedEulerJoint
from quat_ik_addon.solver.limits.joints import FreeJoint


@pytest.mark.parametrize("order", EULER_ORDERS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_locked_euler_joint_keeps_locked_angles_exactly(order: str, axis: int) -> None:
    """An Euler bone's channels are one of its rotation's two Euler triples: the lock allows a
    rotation when either has the locked angle, brings others to the nearer of the rotations
    setting it in one triple or the other, and the writer writes the triple that has it."""
    locked = tuple(i == axis for i in range(3))
    values = tuple(0.35 if i == axis else 0.0 for i in range(3))
    joint = LockedEulerJoint(FreeJoint(), order, locked, values)
    rng = np.random.default_rng(1)
    q = quat.normalize(rng.normal(size=(200, 4)))
    clamped = joint.clamp(q)
    first = quaternion_to_euler(clamped, order)
    other = quat.wrap_angle(other_triple(first, order))
    assert np.all(np.isclose(first[:, axis], 0.35, atol=1e-9) | np.isclose(other[:, axis], 0.35, atol=1e-9))
    assert np.all(joint.violation(clamped) < 1e-9)
    # Never further from q than setting the angle in the ±90° triple alone.
    only_first = quaternion_to_euler(q, order)
    only_first[:, axis] = 0.35
    assert np.all(
        quat.angle_between(clamped, q) <= quat.angle_between(euler_to_quaternion(only_first, order), q) + 1e-12
    )
    # Written from either triple (as Euler continuity may leave it), the held angle is exact
    # and the rotation the solved one.
    held = HeldChannels(order, locked, values)
    for rows in (first, other_triple(first, order) + 2.0 * np.pi):
        written = held.restore(rows)
        assert np.all(written[:, axis] == 0.35)
        assert np.max(quat.angle_between(euler_to_quaternion(written, order), clamped)) < 1e-9


# (w, x, y, z) channels locked in 4D, and held raw values: some on a ray, some at zero.
FOUR_D_LOCKS = [
    ((False, True, False, False), (0.9, 0.25, -0.1, 0.3)),
    ((True, False, False, False), (1.3, 0.0, 0.0, 0.0)),
    ((False, True, True, False), (0.5, -0.2, 0.35, 0.1)),
    ((False, True, True, True), (0.2, 0.3, -0.6, 0.2)),  # the axis fixed: a hinge about it
    ((False, True, False, True), (1.0, 0.0, 0.0, 0.0)),  # locked at zero (the rest pose)
    ((True, True, False, False), (0.7, -0.4, 0.5, 0.5)),
    ((False, True, True, False), (0.8, 1e-4, 2e-4, 0.6)),  # held nearly at zero: still allowed
]


@pytest.mark.parametrize(("locked", "held"), FOUR_D_LOCKS)
def test_4d_locked_quaternion_keeps_its_raw_channels(locked, held) -> None:
    """Blender's 4D locking keeps the locked raw entries and normalises the whole: the joint
    clamps into the rotations that allows, and the writer's raw values keep the locked
    entries exactly while meaning the same rotation."""
    joint = LockedComponentsJoint(FreeJoint(), locked, held)
    rng = np.random.default_rng(3)
    q = quat.normalize(rng.normal(size=(200, 4)))
    clamped = joint.clamp(q)
    assert np.all(np.isfinite(clamped))
    assert np.max(quat.angle_between(joint.clamp(clamped), clamped)) < 1e-9  # inside stays put
    now = quat.normalize(np.array(held))
    assert quat.angle_between(joint.clamp(now), now) < 1e-9  # the bone's own rotation is allowed
    assert np.all(joint.violation(clamped) < 1e-9)
    # One locked non-zero entry fixes only its sign, which q or −q always has: nothing to clamp.
    constrains = sum(locked) > 1 or not np.any(np.array(held)[list(locked)])
    assert (np.max(joint.violation(q)) > 0.1) == constrains
    signs = rng.choice([-1.0, 1.0], size=(200, 1))
    raw = HeldChannels("QUATERNION", locked, held).restore(signs * clamped)
    np.testing.assert_array_equal(
        raw[:, list(locked)], np.broadcast_to(np.array(held)[list(locked)], (200, sum(locked)))
    )
    assert np.max(quat.angle_between(quat.normalize(raw), clamped)) < 1e-9
    # A rotation some raw values with those entries make is left alone (nearest is itself).
    free = rng.normal(size=(200, 4))
    free[:, list(locked)] = np.array(held)[list(locked)]
    made = quat.normalize(free)
    np.testing.assert_allclose(np.abs(np.einsum("ij,ij->i", joint.clamp(made), made)), 1.0, atol=1e-12)


def _axis_angle(q: np.ndarray) -> np.ndarray:
    sin_half = np.linalg.norm(q[:, 1:], axis=1)
    return np.concatenate(((2.0 * np.arctan2(sin_half, q[:, 0]))[:, None], q[:, 1:] / sin_half[:, None]), axis=1)


@pytest.mark.parametrize(
    ("locked", "held"),
    [
        ((True, False, False, False), (0.8, 0.0, 1.0, 0.0)),  # the angle: any axis, 0.8 rad about it
        ((True, False, False, False), (-2.5, 0.0, 1.0, 0.0)),
        ((False, True, False, False), (0.8, 0.6, 0.8, 0.0)),
        ((True, True, True, False), (1.1, 0.3, -0.5, 0.9)),
        ((False, True, True, True), (0.4, 0.0, 2.0, 0.0)),  # the axis: a hinge about Y
    ],
)
def test_4d_locked_axis_angle_keeps_its_angle_and_axis_entries(locked, held) -> None:
    joint = LockedComponentsJoint(FreeJoint(), locked, (0.0, *held[1:]), held[0] if locked[0] else None)
    rng = np.random.default_rng(5)
    clamped = joint.clamp(quat.normalize(rng.normal(size=(200, 4))))
    assert np.max(quat.angle_between(joint.clamp(clamped), clamped)) < 1e-9
    values = _axis_angle(clamped)
    # As the writer's continuity may give them: either side of the axis, whole turns added.
    flip = rng.choice([-1.0, 1.0], size=(200, 1))
    values = flip * values
    values[:, 0] += 2.0 * np.pi * rng.integers(-1, 2, size=200)
    raw = HeldChannels("AXIS_ANGLE", locked, held).restore(values)
    np.testing.assert_array_equal(
        raw[:, list(locked)], np.broadcast_to(np.array(held)[list(locked)], (200, sum(locked)))
    )
    axis = raw[:, 1:] / np.linalg.norm(raw[:, 1:], axis=1, keepdims=True)
    assert np.max(quat.angle_between(quat.from_axis_angle(axis, raw[:, 0]), clamped)) < 1e-9
