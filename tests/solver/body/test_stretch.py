"""Stretch: used only where the rotations cannot reach, always inside its range."""

import numpy as np
from body_helpers import assert_result_is_honest, tails

from quat_ik_addon.solver.body import Body, BodySettings, Goal, Stretch, solve_body
from quat_ik_addon.solver.body.reference_bodies import upper_body

ROWS = 10
REST_LENGTH = 1e-12  # a stretch this close to 1 is no stretch (it is set, never solved, to 1)


def _stiffened(body: Body, stiffness: float) -> Body:
    stretch = tuple(None if s is None else Stretch(s.minimum, s.maximum, stiffness) for s in body.stretch)
    return Body(
        body.bone_names, body.parents, body.rest_rotations, body.rest_offsets, body.lengths, body.limits, stretch
    )


def test_no_stretch_where_the_rotations_reach(rng):
    body = upper_body(stretchy_arms=True)
    pose = body.forward_kinematics(body.random_poses(rng, ROWS))
    goals = [Goal("hand.L", position=tails(body, pose, "hand.L")), Goal("hand.R", position=tails(body, pose, "hand.R"))]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    assert result.level_met.all()
    assert np.max(np.abs(result.stretch - 1.0)) <= REST_LENGTH


def _far_targets(rng, count, reach_times):
    """Targets about the left hand's rest direction from the root, ``reach_times`` its rest
    distance away."""
    body = upper_body()
    rest_hand = tails(body, body.forward_kinematics(body.rest_pose(1)), "hand.L")[0]
    directions = rest_hand / np.linalg.norm(rest_hand) + rng.normal(size=(count, 3)) * 0.05
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return reach_times * np.linalg.norm(rest_hand) * directions


def test_stretch_reaches_what_the_rotations_cannot(rng):
    body = upper_body(stretchy_arms=True)
    targets = _far_targets(rng, ROWS, 1.3)  # beyond the unstretched body, within the stretched one
    goals = [Goal("hand.L", position=targets)]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    unstretched = solve_body(body, goals, settings=BodySettings(use_stretch=False))
    assert np.all(unstretched.position_error[:, 0] > 0.02), "the targets must lie beyond the unstretched body"
    assert result.level_met.all(), result.position_error
    arm = [body.index("upper_arm.L"), body.index("forearm.L")]
    assert np.all(result.stretch[:, arm].max(axis=1) > 1.0 + 1e-3)
    assert result.stretch.max() <= 1.5 and result.stretch.min() >= 0.8
    others = [i for i in range(body.n_bones) if i not in arm]
    assert np.all(result.stretch[:, others] == 1.0)


def test_stretch_stops_at_its_range(rng):
    body = upper_body(stretchy_arms=True)
    goals = [Goal("hand.L", position=_far_targets(rng, ROWS, 3.0))]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    arm = [body.index("upper_arm.L"), body.index("forearm.L")]
    assert np.all(result.stretch[:, arm] <= 1.5)
    # Out of reach, the arm stretches all it may (less what a miss held still may creep).
    assert np.all(result.stretch[:, arm].max(axis=1) >= 1.5 - 1e-4)


def test_a_bone_of_stiffness_one_never_stretches(rng):
    body = _stiffened(upper_body(stretchy_arms=True), 1.0)
    goals = [Goal("hand.L", position=_far_targets(rng, ROWS, 1.3))]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    assert np.all(result.stretch == 1.0)
    assert not result.level_met.any()


def test_a_stiff_stretch_still_reaches(rng):
    body = _stiffened(upper_body(stretchy_arms=True), 0.8)
    goals = [Goal("hand.L", position=_far_targets(rng, ROWS, 1.3))]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    assert result.level_met.all()
