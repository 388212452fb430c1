"""A looping shot (a walk cycle) is solved so the pose loops too: no pop where it wraps."""

from dataclasses import replace

import numpy as np
import pytest

from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots import cycles
from quat_ik_addon.solver.shots.cycles import repeats_first, solve_cycle, wrap_turn
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import pose_distance

SETTINGS = SolveSettings(tolerance=1e-3)


def loop_path(frames: int, repeat_first: bool = False) -> np.ndarray:
    """The Blender benchmark's closed path (root frame of ``elliptic_chain``), one lap."""
    t = 2.0 * np.pi * np.arange(frames + repeat_first) / frames
    return np.stack((1.1 * np.sin(t), 0.8 * np.sin(2.0 * t + 0.4), 2.0 + 0.35 * np.cos(t)), axis=1)


@pytest.fixture(scope="module")
def chain():
    return reference_chains.elliptic_chain(10)


@pytest.fixture(scope="module")
def followed(chain):
    return solve_sequence(chain, loop_path(120), settings=SETTINGS)


@pytest.fixture(scope="module")
def looped(chain):
    return solve_cycle(chain, loop_path(120), settings=SETTINGS)


def steps(rotations):
    return pose_distance(rotations[1:], rotations[:-1])


def test_following_a_loop_once_does_not_close_it(followed):
    """The drift the cycle solve removes: a pose after the last frame's is far from the first's."""
    assert wrap_turn(followed.rotations, False) > 4.0 * np.max(steps(followed.rotations))


def test_a_cycle_wraps_as_smoothly_as_it_moves(followed, looped):
    assert np.all(looped.converged) and np.all(followed.converged)
    largest_step = np.max(steps(looped.rotations))
    assert largest_step <= 1.5 * np.max(steps(followed.rotations))
    assert wrap_turn(looped.rotations, False) <= 1.5 * largest_step


def test_a_cycle_keeps_the_limits(chain, looped):
    clamped = chain.clamp_to_limits(looped.rotations)
    assert np.max(pose_distance(clamped, looped.rotations)) < 1e-9


def test_a_cycle_keyed_with_its_first_pose_at_the_end_repeats_the_first_pose(chain, looped):
    goals = Goals.of(loop_path(120, repeat_first=True))
    assert repeats_first(chain, goals)
    result = solve_cycle(chain, goals, settings=SETTINGS)
    assert len(result.rotations) == 121
    np.testing.assert_array_equal(result.rotations[-1], result.rotations[0])
    np.testing.assert_allclose(result.rotations[:-1], looped.rotations, atol=1e-12)
    assert result.converged[-1]
    assert wrap_turn(result.rotations, True) <= 1.5 * np.max(steps(result.rotations[:-1]))


def test_an_open_path_is_not_taken_for_a_repeated_first_frame(chain):
    assert not repeats_first(chain, Goals.of(loop_path(120)))
    assert not repeats_first(chain, Goals.of(loop_path(120)[:2]))


def test_a_wrap_whose_spreading_would_lose_goals_stays_a_jump(chain, monkeypatch):
    """Where solving the spread poses again misses goals the lap met (a change of solution
    branch rather than a drift), the second lap is kept as it was."""
    goals = loop_path(60)
    first_lap = solve_sequence(chain, goals, settings=SETTINGS)
    second_lap = solve_sequence(chain, goals, start_rotations=first_lap.rotations[-1], settings=SETTINGS)
    solve_from = cycles.solve_from

    def missing_after_the_spread(chain, goals, rotations, **kwargs):
        result = solve_from(chain, goals, rotations, **kwargs)
        if goals.count > 1:  # the lap solved again from its spread poses
            result = replace(result, converged=np.zeros(goals.count, dtype=bool))
        return result

    monkeypatch.setattr(cycles, "solve_from", missing_after_the_spread)
    kept = solve_cycle(chain, goals, settings=SETTINGS)
    np.testing.assert_allclose(kept.rotations, second_lap.rotations, rtol=0.0, atol=1e-9)  # (numpy's last bits)
    assert wrap_turn(kept.rotations, False) > 2.0 * np.max(steps(kept.rotations))


def test_a_wrap_is_reported_only_where_it_pops(looped):
    from quat_ik_addon.solver import quaternion as quat
    from quat_ik_addon.solver.shots.cycles import visible_wrap_jump

    assert visible_wrap_jump(looped.rotations, False) == 0.0
    turned = looped.rotations.copy()
    # The last 10 frames turned 40° about the root's X: a pop where the loop wraps (and one
    # inside, which is not the wrap's business).
    turned[-10:, 0] = quat.multiply(quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), np.radians(40.0)), turned[-10:, 0])
    assert np.degrees(visible_wrap_jump(turned, False)) == pytest.approx(40.0, abs=2.0)
    # A posture drifting 40° over the lap: each step small, the wrap back to the start a pop.
    share = np.linspace(0.0, 1.0, len(turned))
    drifted = looped.rotations.copy()
    drifted[:, 0] = quat.multiply(
        quat.from_axis_angle(np.tile([1.0, 0.0, 0.0], (len(share), 1)), np.radians(40.0) * share), drifted[:, 0]
    )
    assert visible_wrap_jump(drifted, False) > 0.0
    # A tenth of the lap drifts 4°: too little to read as a pop.
    assert visible_wrap_jump(drifted[: len(drifted) // 10], False) == 0.0


def test_a_three_bone_loop_that_changes_branch_on_the_way_still_wraps():
    """The benchmark's 3-bone chain (half of each lap out of reach, a branch change between
    frames that reach): the second lap starts where the first ended and keeps its first pose,
    so the lap wraps about as far as the path moves per frame. (Carrying a branch back over
    the lap's first frame to remove a jump made it wrap 98°.)"""
    chain = reference_chains.elliptic_chain(3)
    path = loop_path(250)
    looped = solve_cycle(chain, path, settings=replace(SETTINGS, restarts=2))
    path_step = np.max(
        np.arccos(
            np.clip(
                np.sum(path[1:] * path[:-1], axis=1)
                / np.prod(np.linalg.norm(np.stack((path[1:], path[:-1])), axis=2), axis=0),
                -1.0,
                1.0,
            )
        )
    )
    assert wrap_turn(looped.rotations, False) <= 2.0 * path_step
