"""The kernel's methods against the numpy reference: the same verdicts, limits, errors and poses.

Iterative solvers amplify rounding only where the path branches (a joint meeting a limit a
hair earlier, a tie between two windows, a step accepted by a last bit), so poses are compared
where both paths met the goal the same way and their poses agree, and the rest are counted
and must stay rare.

A single solve, which takes the shortcuts of ``tests/solver/test_single_solve_fast_path.py``,
gives on the kernel the same bits as its target solved in a batch.
"""

from __future__ import annotations

import numpy as np
import pytest
from chain_targets import reachable_targets
from random_chains import random_chain, random_goals

from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.measurements import goal_errors
from quat_ik_addon.solver.methods.ladder import run_method
from quat_ik_addon.solver.native import library
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import METHODS, SWEEP_ORDERS, SolveSettings
from quat_ik_addon.solver.solve import solve
from quat_ik_addon.solver.start_poses import initial_poses

LIMIT_SLACK = 1e-9  # radians: both paths keep every limit to this
POSE_MATCH = 1e-9  # the largest quaternion component difference counted as the same pose
ERROR_MATCH = 1e-12  # the kernel's reported errors against numpy's forward kinematics of its poses
# Problems whose two answers part ways (branch choices by rounding): at most this share.
PARTED_SHARE = 0.05


def _both(chain, goals, starts, settings, preferred=None):
    """run_method on both paths from the same starts."""
    native = run_method(chain, goals, starts.copy(), settings, preferred)
    with library.numpy_only():
        numpy_answer = run_method(chain, goals, starts.copy(), settings, preferred)
    return native, numpy_answer


def _compare(chain, goals, settings, native, reference) -> tuple[int, list[str]]:
    """Checks every row; returns how many rows parted ways and why (for the message)."""
    poses, iterations, (position, orientation, effector) = native
    ref_poses, _, (ref_position, ref_orientation, _) = reference
    assert np.all(np.isfinite(poses)) and np.all(iterations >= 0)
    with library.numpy_only():  # measured by the reference
        assert np.max(chain.limit_violation(poses), initial=0.0) <= LIMIT_SLACK
        assert np.max(chain.limit_violation(ref_poses), initial=0.0) <= LIMIT_SLACK
        measured_position, measured_orientation, measured_effector = goal_errors(chain, goals, poses)
    assert np.allclose(position, measured_position, rtol=0, atol=ERROR_MATCH * max(chain.reach, 1.0))
    assert np.allclose(orientation, measured_orientation, rtol=0, atol=ERROR_MATCH * 10)
    assert np.allclose(effector, measured_effector, rtol=0, atol=ERROR_MATCH * max(chain.reach, 1.0))
    tolerance = settings.absolute_tolerance(chain.reach)
    met = settings.reached(position, orientation, tolerance, chain.reach)
    ref_met = settings.reached(ref_position, ref_orientation, tolerance, chain.reach)
    same_pose = np.max(np.abs(np.abs(np.einsum("rbi,rbi->rb", poses, ref_poses)) - 1.0), axis=1) <= POSE_MATCH
    parted = (met != ref_met) | ~same_pose
    reasons = [
        f"row {row}: met {met[row]} / numpy {ref_met[row]}, errors {position[row]:.3g} / {ref_position[row]:.3g}"
        for row in np.nonzero(parted)[0][:5]
    ]
    return int(np.count_nonzero(parted)), reasons


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("order", SWEEP_ORDERS)
@pytest.mark.parametrize("name", ["arm3", "chain10", "chain30"])
def test_reference_chains_match_numpy(kernel, name, method, order):
    rng = np.random.default_rng(7)
    chain = reference_chains.REFERENCE_CHAINS[name]()
    count = 60
    goals = random_goals(rng, chain, count)
    starts = initial_poses(chain, chain.random_poses(rng, count), count)
    settings = SolveSettings(method=method, order=order, max_iterations=60)
    native, reference = _both(chain, goals, starts, settings)
    parted, reasons = _compare(chain, goals, settings, native, reference)
    assert parted <= PARTED_SHARE * count, f"{parted} of {count} rows parted ways: {reasons}"


@pytest.mark.parametrize("method", METHODS)
def test_pull_towards_preferred_poses_matches_numpy(kernel, method):
    rng = np.random.default_rng(11)
    chain = reference_chains.limited_chain(8)
    count = 40
    goals = random_goals(rng, chain, count)
    starts = initial_poses(chain, chain.random_poses(rng, count), count)
    preferred = chain.random_poses(rng, count)
    settings = SolveSettings(method=method, rest_pull=0.3, max_iterations=40)
    native, reference = _both(chain, goals, starts, settings, preferred)
    parted, reasons = _compare(chain, goals, settings, native, reference)
    assert parted <= PARTED_SHARE * count, f"{parted} of {count} rows parted ways: {reasons}"


def test_ten_thousand_random_problems_match_numpy(kernel):
    """100 random chains of 1-30 bones (every limit shape, stiffness, twist references, both
    clamp modes, offsets off the bone axis), 100 goals each: reachable, out of reach, with
    orientations and directions; every method in turn."""
    rng = np.random.default_rng(20261128)
    parted_total, problems, reasons = 0, 0, []
    for index in range(100):
        chain = random_chain(rng, int(rng.integers(1, 31)))
        goals = random_goals(rng, chain, 100)
        starts = initial_poses(chain, chain.random_poses(rng, 100), 100)
        method = METHODS[index % len(METHODS)]
        settings = SolveSettings(method=method, max_iterations=30, order=SWEEP_ORDERS[index % 2])
        native, reference = _both(chain, goals, starts, settings)
        parted, why = _compare(chain, goals, settings, native, reference)
        parted_total += parted
        problems += goals.count
        reasons += [f"chain {index} ({chain.n_bones} bones, {method}) {line}" for line in why[:1]]
    assert problems == 10_000
    assert parted_total <= PARTED_SHARE * problems, f"{parted_total} of {problems} parted ways: {reasons[:10]}"


RESULT_FIELDS = ("rotations", "effector", "position_error", "orientation_error", "iterations", "restarts", "converged")


def assert_same_bits(single, batch, row: int) -> None:
    for name in RESULT_FIELDS:
        mine, theirs = getattr(single, name), getattr(batch, name)[row : row + 1]
        assert mine.dtype == theirs.dtype, name
        assert np.array_equal(mine, theirs), f"{name}: {mine} alone, {theirs} in the batch"
    assert single.tolerance == batch.tolerance


@pytest.mark.parametrize("method", METHODS)
def test_one_target_solves_on_the_kernel_as_it_does_in_a_batch(kernel, rng, method):
    arm3 = reference_chains.arm3()
    # Without restarts: their random starts depend on which goals of the batch are unmet.
    targets, poses = reachable_targets(arm3, rng, 12)
    targets[::3] *= 1.5  # some out of reach: they miss
    starts = arm3.clamp_to_limits(poses[::-1])  # another target's pose: far from the answer
    settings = SolveSettings(method=method)
    batch = solve(arm3, Goals(targets), start_rotations=starts, settings=settings)
    for row in range(len(targets)):
        single = solve(arm3, targets[row : row + 1], start_rotations=starts[row], settings=settings)
        assert_same_bits(single, batch, row)
