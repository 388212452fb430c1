"""The kernel's restart round (``qik_restart_round``) and its measures (``qik_measure``,
``qik_pose_distance_rows``) against the numpy reference.

A round's candidates are solved on the kernel either way (``run_method``); the kernel's round
also ranks them and takes the best, which the numpy round does with the same rules. Both must
pick the same candidate for every row, so the poses, errors and iterations they leave agree to
the bit: the tie slack (1e-9 of the reach) is far above the rounding that tells the two pose
distances apart.
"""

from __future__ import annotations

import numpy as np
import pytest
from random_chains import random_chain, random_goals

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.measurements import goal_errors
from quat_ik_addon.solver.native import kernel_calls, library
from quat_ik_addon.solver.rig.reference_chains import elliptic_chain
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.solve import pose_distance, restart, solve

ERROR_MATCH = 1e-12  # the kernel's measures against numpy's, relative to the reach (radians for angles)

pytestmark = pytest.mark.skipif(library.load()[0] is None, reason="the native kernel did not load here")


@pytest.fixture
def numpy_rounds(monkeypatch):
    """Within the fixture's test, restart rounds rank their candidates in numpy (solved on the kernel)."""

    def use(on: bool) -> None:
        if on:
            monkeypatch.setattr(kernel_calls, "restart_round", lambda *args, **kwargs: None)
        else:
            monkeypatch.undo()

    return use


def _assert_same(native, reference) -> None:
    for name in ("rotations", "position_error", "orientation_error", "iterations", "restarts", "converged"):
        assert np.array_equal(getattr(native, name), getattr(reference, name)), name


@pytest.mark.parametrize("with_reference", [False, True])
def test_random_problems_restart_as_the_numpy_round_does(numpy_rounds, with_reference):
    """Random chains and goals (reachable, out of reach, orientations, directions) solved with
    restarts, from rest and, with a reference pose, as Live solves: every row picks alike."""
    rng = np.random.default_rng(36)
    restarted = 0
    for index in range(30):
        chain = random_chain(rng, int(rng.integers(1, 8)))
        goals = random_goals(rng, chain, 24)
        reference = chain.random_poses(rng, goals.count) if with_reference else None
        settings = SolveSettings(max_iterations=30, restarts=3, restart_candidates=5, seed=index)
        native = solve(chain, goals, reference_rotations=reference, settings=settings)
        numpy_rounds(True)
        expected = solve(chain, goals, reference_rotations=reference, settings=settings)
        numpy_rounds(False)
        _assert_same(native, expected)
        restarted += int(np.count_nonzero(native.restarts))
    assert restarted > 50  # the rounds ran


def test_a_shots_probes_take_what_the_numpy_round_takes(numpy_rounds):
    """``restart`` as a shot's probes call it: a closer miss switches branch only by the gain,
    and rows marked to give up get no second round once the first found nothing."""
    chain = elliptic_chain(3)
    rng = np.random.default_rng(3)
    goals = random_goals(rng, chain, 40)
    poses = chain.random_poses(rng, goals.count)
    give_up = rng.random(goals.count) < 0.5
    settings = SolveSettings(tolerance=1e-3, restarts=4)
    for gain in (0.002 * chain.reach, 0.0):
        native, native_replaced = restart(chain, goals, poses, settings=settings, switch_gain=gain, give_up=give_up)
        numpy_rounds(True)
        expected, replaced = restart(chain, goals, poses, settings=settings, switch_gain=gain, give_up=give_up)
        numpy_rounds(False)
        _assert_same(native, expected)
        assert np.array_equal(native_replaced, replaced)
        assert native_replaced.any() and not native_replaced.all()


def test_a_round_the_kernel_refuses_runs_in_numpy(monkeypatch):
    """A round whose inputs the kernel cannot take as they are (poses not laid out in place) is
    ranked in numpy, alike."""
    chain = elliptic_chain(3)
    goals = random_goals(np.random.default_rng(4), chain, 12)
    settings = SolveSettings(max_iterations=30, restarts=2)
    expected = solve(chain, goals, settings=settings)
    refused = []
    original = kernel_calls.restart_round

    def refusing(*args, **kwargs):
        refused.append(True)
        return None

    monkeypatch.setattr(kernel_calls, "restart_round", refusing)
    again = solve(chain, goals, settings=settings)
    monkeypatch.setattr(kernel_calls, "restart_round", original)
    assert refused
    _assert_same(again, expected)


def test_the_round_refuses_what_it_cannot_take():
    """``qik_restart_round`` refuses rows out of range and a rule it does not know, writing nothing."""
    chain = elliptic_chain(3)
    kernel, _ = library.load()
    goals = random_goals(np.random.default_rng(6), chain, 4)
    rotations = chain.random_poses(np.random.default_rng(7), 4)
    errors = tuple(np.ascontiguousarray(e) for e in goal_errors(chain, goals, rotations)[:2])
    iterations = np.zeros(4, dtype=np.int64)
    starts = chain.random_poses(np.random.default_rng(8), 6)
    budget = SolveSettings(max_iterations=20)
    kept = rotations.copy(), errors[0].copy(), iterations.copy()
    for unmet, rule in ((np.array([1, 7]), 0), (np.array([1, 2]), 9)):
        taken = kernel_calls.restart_round(
            kernel,
            chain,
            goals,
            budget,
            budget,
            rotations,
            errors,
            iterations,
            unmet,
            starts,
            None,
            None,
            rule,
            0.0,
            0.0,
        )
        assert taken is None
        assert np.array_equal(rotations, kept[0]) and np.array_equal(errors[0], kept[1])
        assert np.array_equal(iterations, kept[2])


def test_measures_match_numpy():
    """``qik_measure`` and ``qik_pose_distance_rows`` against numpy's forward kinematics and angles,
    on random chains and goals of every kind; a shape the kernel does not take is measured in numpy."""
    rng = np.random.default_rng(9)
    for _ in range(40):
        chain = random_chain(rng, int(rng.integers(1, 12)))
        goals = random_goals(rng, chain, 30)
        poses = chain.random_poses(rng, goals.count)
        others = chain.random_poses(rng, goals.count)
        measured = kernel_calls.measure(chain, goals, poses)
        distance = kernel_calls.pose_distance(poses, others)
        with library.numpy_only():
            expected = goal_errors(chain, goals, poses)
            expected_distance = pose_distance(poses, others)
        scale = max(chain.reach, 1.0)
        assert measured is not None and distance is not None
        assert np.allclose(measured[0], expected[0], rtol=0, atol=ERROR_MATCH * scale)
        assert np.allclose(measured[1], expected[1], rtol=0, atol=ERROR_MATCH * 10)
        assert np.allclose(measured[2], expected[2], rtol=0, atol=ERROR_MATCH * scale)
        assert np.allclose(distance, expected_distance, rtol=0, atol=ERROR_MATCH * 10)
    assert kernel_calls.measure(chain, goals, poses[:-1]) is None  # one goal a pose, else numpy
    assert kernel_calls.pose_distance(poses, others[:-1]) is None  # shapes that broadcast: numpy
    assert pose_distance(poses[0], others).shape == (goals.count,)
    assert np.isnan(kernel_calls.pose_distance(np.full((1, 2, 4), np.nan), quat.IDENTITY[None, None].repeat(2, 1)))
