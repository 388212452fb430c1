"""A solve's time limit: restarts and a shot's searches stop once it is spent, the answer stands."""

from __future__ import annotations

import numpy as np
import pytest

from quat_ik_addon.solver import time_budget
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots import sequence
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import solve

LIMIT_SLACK = 1e-9


def out_of_limits_targets(chain, count: int) -> np.ndarray:
    """Within the chain's length, behind it: restarts are tried and cannot meet them all."""
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(count, 3))
    directions[:, 1] = -np.abs(directions[:, 1])
    return 0.8 * chain.reach * directions / np.linalg.norm(directions, axis=1, keepdims=True)


def test_a_spent_budget_skips_the_restarts_and_keeps_the_answer():
    chain = reference_chains.arm3()
    targets = out_of_limits_targets(chain, 20)
    unlimited = solve(chain, targets, settings=SolveSettings(restarts=4))
    spent = solve(chain, targets, settings=SolveSettings(restarts=4, time_limit=0.0))
    assert not unlimited.out_of_time and unlimited.restarts.any()
    assert spent.out_of_time and not spent.restarts.any()
    assert np.all(np.isfinite(spent.rotations))
    assert np.max(chain.limit_violation(spent.rotations)) <= LIMIT_SLACK
    # What the method alone reached stands: as a solve whose restarts draw no candidates.
    without = solve(chain, targets, settings=SolveSettings(restarts=4, restart_candidates=0))
    np.testing.assert_allclose(spent.position_error, without.position_error, atol=1e-12)


def test_a_budget_that_lasts_changes_nothing():
    chain = reference_chains.arm3()
    targets = out_of_limits_targets(chain, 10)
    plain = solve(chain, targets, settings=SolveSettings(restarts=2))
    roomy = solve(chain, targets, settings=SolveSettings(restarts=2, time_limit=600.0))
    assert not roomy.out_of_time
    np.testing.assert_array_equal(roomy.rotations, plain.rotations)


def test_a_shot_out_of_time_still_poses_every_frame_and_skips_its_searches(monkeypatch):
    chain = reference_chains.elliptic_chain(3)
    t = np.linspace(0.0, 2.0 * np.pi, 120)
    path = np.stack((1.1 * np.sin(t), 0.8 * np.sin(2.0 * t), 2.0 + 0.35 * np.cos(t)), axis=1)
    searches = []
    for name in ("_bridge_misses", "_probe_misses", "_repair_jumps", "_rescue_misses", "_settle_misses"):
        step = getattr(sequence, name)
        monkeypatch.setattr(sequence, name, lambda *a, step=step, name=name: (searches.append(name), step(*a))[1])
    full = solve_sequence(chain, path, settings=SolveSettings(tolerance=1e-3, restarts=2))
    assert not full.out_of_time and len(searches) >= 5
    searches.clear()
    cut = solve_sequence(chain, path, settings=SolveSettings(tolerance=1e-3, restarts=2, time_limit=0.0))
    assert cut.out_of_time and searches == []
    assert cut.rotations.shape == full.rotations.shape and np.all(np.isfinite(cut.rotations))
    assert np.max(chain.limit_violation(cut.rotations)) <= LIMIT_SLACK
    assert np.all(cut.restarts == 0)


def test_inner_solves_spend_their_callers_budget():
    with time_budget.spending(0.0) as outer:
        with time_budget.spending(600.0) as inner:
            assert inner is outer and time_budget.spent()
    assert not time_budget.spent()  # outside any solve


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_a_time_limit_must_be_a_finite_number_of_seconds(bad):
    with pytest.raises(ValueError, match="time_limit"):
        SolveSettings(time_limit=bad)
