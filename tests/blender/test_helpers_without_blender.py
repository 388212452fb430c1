"""The Blender layer's numpy-only helpers, tested without starting Blender."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.blender.euler_curves import euler_curves
from quat_ik_addon.blender.euler_math import (
    EULER_ORDERS,
    both_triples,
    euler_to_quaternion,
    other_triple,
    quaternion_to_euler,
    wrapped_angles,
)
from quat_ik_addon.blender.keyframes import simplify
from quat_ik_addon.blender.locks import HeldChannels, LockedComponentsJoint, LockedEulerJoint
from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits import FreeJoint
from quat_ik_addon.solver.settings import SolveSettings


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
    other = wrapped_angles(other_triple(first, order))
    assert np.all(np.isclose(first[:, axis], 0.35, atol=1e-9) | np.isclose(other[:, axis], 0.35, atol=1e-9))
    assert np.all(joint.violation(clamped) < 1e-9)
    # Never further from q than setting the angle in the ±90° triple alone (the old rule).
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


def test_simplify_for_constant_keys_keeps_every_step_that_holding_would_lose() -> None:
    """Held keys play each kept key until the next: a ramp straight lines reproduce keeps a
    key wherever holding the one before would be off by more than the tolerance."""
    frames = np.arange(0.0, 41.0)
    values = np.stack((np.minimum(frames, 20.0) * 0.01, np.zeros(41)), axis=1)
    assert list(simplify(frames, values, 1e-3)) == [0, 20, 40]  # straight lines: the ramp's ends
    keep = simplify(frames, values, 0.025, "CONSTANT")
    held = values[keep][np.searchsorted(frames[keep], frames, side="right") - 1]
    assert np.max(np.abs(held - values)) <= 0.025 + 1e-12
    assert list(keep) == [0, 3, 6, 9, 12, 15, 18, 40]  # every third frame of the ramp, then its end


def _cold_solves(chain, goals, start):
    from quat_ik_addon.blender import solve_adapter

    options = solve_adapter.SolverOptions(settings=SolveSettings(tolerance=1e-5, restarts=2))
    outcomes = [
        solve_adapter.solve(chain, solve_adapter.SolveRequest(positions=goals[i : i + 1], start=start), options)
        for i in range(len(goals))
    ]
    return np.array([o.restarts[0] for o in outcomes]), np.array([o.converged[0] for o in outcomes])


def test_a_solve_without_a_start_starts_from_the_middle_of_the_limits() -> None:
    """Per Frame and Solve Now from the neutral pose: on the sample leg, whose straight rest
    pose sits at the knee's limit, solves from rest restart for about a quarter of reachable
    targets and from the middle of the limits for almost none."""
    from quat_ik_addon.blender import solve_adapter
    from quat_ik_addon.solver.rig_spec import load_rig_spec
    from quat_ik_addon.solver.spec_chain import chain_from_rig_spec
    from tests.helpers import REPO_ROOT

    spec = load_rig_spec(REPO_ROOT / "sample_rigs" / "leg.rig.json")
    chain = chain_from_rig_spec(spec, spec.chains[0].name)
    centre = chain.centre_pose()
    np.testing.assert_array_equal(solve_adapter.cold_start(chain), centre)
    # The centre pose's own effector is met where it starts: nothing to do.
    here = chain.forward_kinematics(centre[None]).effector
    outcome = solve_adapter.solve(
        chain, solve_adapter.SolveRequest(positions=here), solve_adapter.SolverOptions(settings=SolveSettings())
    )
    assert outcome.iterations[0] == 0 and np.allclose(outcome.rotations[0], quat.canonical(centre))

    goals = chain.forward_kinematics(chain.random_poses(np.random.default_rng(3), 40)).effector
    restarts_cold, met_cold = _cold_solves(chain, goals, None)
    restarts_rest, met_rest = _cold_solves(chain, goals, chain.rest_pose())
    assert met_cold.all() and met_rest.all()
    cold, rest = np.mean(restarts_cold > 0), np.mean(restarts_rest > 0)
    assert cold <= 0.05 and rest >= 0.15, (cold, rest)


def _cached_solve(chain, position) -> object:
    from quat_ik_addon.blender import solve_adapter, solve_cache

    request = solve_adapter.SolveRequest(positions=np.array([position], dtype=float))
    return solve_cache.solve(chain, request, solve_adapter.SolverOptions(settings=SolveSettings(restarts=1)))


def test_solve_cache_answers_remembered_solves_as_solved_and_keeps_to_its_byte_budget(monkeypatch) -> None:
    """A Per Frame solve asked again is answered from memory with the same outcome; the memory
    holds outcomes packed, drops the least recently used beyond ``MAX_BYTES``, and fits far
    more 3-bone solves than the 20,000 outcome objects it used to count."""
    from quat_ik_addon.blender import solve_cache
    from quat_ik_addon.solver.reference_chains import arm3

    chain = arm3()
    solve_cache.clear()
    first = _cached_solve(chain, (0.2, 0.4, 0.2))
    again = _cached_solve(chain, (0.2, 0.4, 0.2))
    assert dict(solve_cache.stats) == {"misses": 1, "hits": 1}
    for name in ("rotations", "position_error", "orientation_error", "iterations", "restarts", "converged"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
        assert getattr(again, name).shape == getattr(first, name).shape, name
    assert again.rotations.shape == (1, 3, 4) and again.converged.dtype == bool and again.converged[0]
    assert again.tolerance == first.tolerance and not again.rotations.flags.writeable  # shared by later hits

    per_entry = solve_cache.held_bytes()
    assert solve_cache.MAX_BYTES // per_entry >= 100_000, per_entry
    monkeypatch.setattr(solve_cache, "MAX_BYTES", 3 * per_entry)
    for x in (0.1, 0.12, 0.14, 0.16):
        _cached_solve(chain, (x, 0.4, 0.2))
    assert solve_cache.held_bytes() <= 3 * per_entry
    solve_cache.stats.clear()
    _cached_solve(chain, (0.16, 0.4, 0.2))  # the latest is kept
    _cached_solve(chain, (0.2, 0.4, 0.2))  # the oldest was dropped
    assert dict(solve_cache.stats) == {"hits": 1, "misses": 1}
    solve_cache.clear()
    assert solve_cache.held_bytes() == 0
