"""Learned start poses for a body (``body.learned_starts``): cold solves start from them and
meet more reachable goal sets without restarts than from rest; they round-trip through plain
arrays, pick starts by the goals' places (a goal switched off counts for nothing), and are
refused for another body."""

from dataclasses import replace

import numpy as np
import pytest
from body_helpers import LIMIT_SLACK

from quat_ik_addon.solver.body import Goal
from quat_ik_addon.solver.body.learned_starts import BodyLearnedStarts, learn_body_starts
from quat_ik_addon.solver.body.reference_bodies import random_body, tip_bones
from quat_ik_addon.solver.body.request import DEFAULT_BODY_SETTINGS, BodyOptions, BodyRequest, solve_body_request

NO_RESTARTS = replace(DEFAULT_BODY_SETTINGS, restarts=0, top_restarts=0)
SETS = 40
# Random 3-effector bodies on some of whose reachable goal sets a cold solve from rest, without
# restarts, ends short (and one where the learned starts miss one set that rest meets).
HARD_BODIES = (1, 4, 18, 19)


def reachable_sets(body, rng):
    """SETS goal sets every body pose inside the limits reaches: the first tip at priority 0,
    the others at 1."""
    tips = tip_bones(body)
    bones = np.array([body.index(tip) for tip in tips])
    pose = body.forward_kinematics(body.random_poses(rng, SETS))
    places = pose.points(bones, np.stack([[0.0, body.lengths[b], 0.0] for b in bones]))
    return [Goal(tip, position=places[:, k], level=int(k > 0)) for k, tip in enumerate(tips)]


@pytest.fixture(scope="module")
def hard_bodies():
    bodies = []
    for seed in HARD_BODIES:
        body = random_body(np.random.default_rng(seed), 3, 16)
        goals = reachable_sets(body, np.random.default_rng(100 + seed))
        bodies.append((body, goals, learn_body_starts(body, tip_bones(body))))
    return bodies


def test_cold_solves_from_learned_starts_meet_more_reachable_sets_than_from_rest(hard_bodies):
    from_rest = from_learned = 0
    for body, goals, learned in hard_bodies:
        rest = solve_body_request(body, BodyRequest(goals), BodyOptions(settings=NO_RESTARTS))
        start = BodyOptions(settings=NO_RESTARTS, learned_starts=learned)
        result = solve_body_request(body, BodyRequest(goals), start)
        from_rest, from_learned = from_rest + rest.all_met.sum(), from_learned + result.all_met.sum()
        assert np.all(np.isfinite(result.rotations))
        assert body.limit_violation(result.rotations).max() <= LIMIT_SLACK
        assert learned.starts.coverage >= 0.95, "the kept starts solve nearly every sample set"
    assert from_rest < len(hard_bodies) * SETS, "rest misses some: the bodies are hard enough to tell"
    assert from_learned > from_rest, (from_learned, from_rest)


def test_learned_starts_round_trip_through_plain_arrays(hard_bodies):
    body, goals, learned = hard_bodies[0]
    again = BodyLearnedStarts.from_arrays({name: np.array(value) for name, value in learned.to_arrays().items()})
    assert again.body_key == learned.body_key and again.fits(body)
    assert [e.bone for e in again.effectors] == [e.bone for e in learned.effectors]
    np.testing.assert_array_equal(again.starts_for(goals, SETS), learned.starts_for(goals, SETS))


def test_starts_are_picked_by_the_goals_places_and_an_unplaced_effector_counts_for_nothing(hard_bodies):
    body, goals, learned = hard_bodies[0]
    starts = learned.starts_for(goals, SETS)
    assert starts.shape == (SETS, body.n_bones, 4)
    # Each row's start is one of the kept poses.
    kept = learned.starts.start_rotations
    assert all(any(np.array_equal(row, pose) for pose in kept) for row in starts)
    # Without the lower goals, the rows are picked by the first effector's place alone.
    alone = learned.starts_for(goals[:1], SETS)
    assert alone.shape == starts.shape
    assert learned.starts_for([Goal(goals[0].effector, orientation=[1, 0, 0, 0])], SETS) is None


def test_a_warm_request_does_not_use_them_and_another_body_refuses_them(hard_bodies):
    body, goals, learned = hard_bodies[0]
    start = body.rest_pose(1)[0]
    warm = BodyRequest(goals, start=start)
    plain = solve_body_request(body, warm, BodyOptions(settings=NO_RESTARTS))
    with_learned = solve_body_request(body, warm, BodyOptions(settings=NO_RESTARTS, learned_starts=learned))
    np.testing.assert_array_equal(plain.rotations, with_learned.rotations)
    other = hard_bodies[1][0]
    with pytest.raises(ValueError, match="learned for another body"):
        solve_body_request(
            other, BodyRequest([Goal(tip_bones(other)[0], position=[0, 0.2, 0])]), BodyOptions(learned_starts=learned)
        )
    with pytest.raises(ValueError, match="learned_starts must be BodyLearnedStarts"):
        BodyOptions(learned_starts=learned.starts)
    with pytest.raises(ValueError, match="at least one effector"):
        learn_body_starts(body, [])
