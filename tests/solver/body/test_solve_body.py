"""Bodies whose goals can all be met meet them all; what ``solve_body`` refuses."""

import numpy as np
import pytest
from body_helpers import LIMIT_SLACK, assert_result_is_honest, tails

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import BodySettings, Effector, Goal, Pin, solve_body
from quat_ik_addon.solver.body.goals import PIN_LEVEL, lay_out
from quat_ik_addon.solver.body.reference_bodies import legs

ROWS = 12
REACHED = 1e-5  # × the body's size: a met goal's position, checked by forward kinematics
REACHED_ANGLE = 1e-5  # radians


def _reachable(body, rng, count):
    poses = body.random_poses(rng, count)
    return body.forward_kinematics(poses)


def test_both_hands_reach_positions_together(upper_body, rng):
    pose = _reachable(upper_body, rng, ROWS)
    goals = [
        Goal("hand.L", position=tails(upper_body, pose, "hand.L")),
        Goal("hand.R", position=tails(upper_body, pose, "hand.R")),
    ]
    result = solve_body(upper_body, goals)
    assert_result_is_honest(upper_body, goals, result)
    assert result.level_met.all(), result.position_error
    assert result.position_error.max() <= REACHED * upper_body.size
    assert upper_body.limit_violation(result.rotations).max() <= LIMIT_SLACK


def test_hands_reach_positions_orientations_and_directions(upper_body, rng):
    pose = _reachable(upper_body, rng, ROWS)
    right_hand = upper_body.index("hand.R")
    left_forearm = upper_body.index("forearm.L")
    goals = [
        Goal("hand.L", position=tails(upper_body, pose, "hand.L")),
        Goal("hand.R", position=tails(upper_body, pose, "hand.R"), orientation=pose.rotations[:, right_hand]),
        Goal(
            Effector("forearm.L"),
            direction=quat.rotate(pose.rotations[:, left_forearm], [0.0, 0.0, 1.0]),
            aim_axis=(0.0, 0.0, 1.0),
        ),
    ]
    result = solve_body(upper_body, goals)
    assert_result_is_honest(upper_body, goals, result)
    assert result.level_met.all()
    assert result.position_error.max() <= REACHED * upper_body.size
    assert result.orientation_error.max() <= REACHED_ANGLE
    solved = upper_body.forward_kinematics(result.rotations)
    turned = quat.angle_between(solved.rotations[:, right_hand], pose.rotations[:, right_hand])
    assert turned.max() <= REACHED_ANGLE


def test_feet_reach_from_a_shared_hips(rng):
    body = legs()
    pose = _reachable(body, rng, ROWS)
    goals = [Goal("foot.L", position=tails(body, pose, "foot.L")), Goal("foot.R", position=tails(body, pose, "foot.R"))]
    result = solve_body(body, goals)
    assert_result_is_honest(body, goals, result)
    assert result.position_error.max() <= REACHED * body.size


def test_one_goal_set_as_single_arrays(upper_body):
    goal = Goal("hand.L", position=[-0.5, 0.7, 0.2])
    result = solve_body(upper_body, [goal])
    assert result.rotations.shape == (1, upper_body.n_bones, 4)
    assert result.stretch.shape == (1, upper_body.n_bones)
    assert result.levels == (0,)


@pytest.mark.parametrize(
    ("goals", "pins", "message"),
    [
        ([], (), "give at least one goal or pin"),
        ([Goal("tail", position=[0, 1, 0])], (), "the body has no bone 'tail'"),
        ([Goal("hand.L", position=[np.nan, 1, 0])], (), "position must be finite"),
        (
            [Goal("hand.L", position=np.zeros((3, 3))), Goal("hand.R", position=np.zeros((4, 3)))],
            (),
            "different numbers of rows",
        ),
        ([Goal("hand.L", orientation=[0, 0, 0, 0])], (), "zero quaternion"),
        ([Goal("hand.L", position=np.zeros((2, 4)))], (), r"must have shape \(3,\) or \(N, 3\)"),
        ([], (Pin("tail", position=[0, 1, 0]),), "the body has no bone 'tail'"),
    ],
)
def test_bad_goals_are_refused_with_a_reason(upper_body, goals, pins, message):
    with pytest.raises(ValueError, match=message):
        solve_body(upper_body, goals, pins)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Goal("hand.L"), "asks for nothing"),
        (lambda: Pin("hand.L"), "holds nothing"),
        (lambda: Goal("hand.L", position=[0, 1, 0], level=-1), "level must be a whole number >= 0"),
        (lambda: Goal("hand.L", position=[0, 1, 0], position_weight=float("inf")), "position_weight must be"),
        (lambda: Goal("hand.L", orientation=[1, 0, 0, 0], direction=[0, 1, 0]), "not both"),
        (lambda: BodySettings(max_iterations=-1), "max_iterations must be a whole number"),
        (lambda: BodySettings(damping=0.0), "damping must be a finite number > 0"),
        (lambda: BodySettings(refine_iterations=1.5), "refine_iterations must be a whole number"),
        (lambda: BodySettings(refine_stall_ratio=1.0), "refine_stall_ratio must be within"),
    ],
)
def test_bad_goals_and_settings_are_refused_when_made(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_start_rotations_are_refused(upper_body):
    goal = Goal("hand.L", position=[-0.5, 0.7, 0.2])
    with pytest.raises(ValueError, match="start rotations must be real, shaped"):
        solve_body(upper_body, [goal], start_rotations=np.ones((3, 4)))
    with pytest.raises(ValueError, match="zero quaternion"):
        solve_body(upper_body, [goal], start_rotations=np.zeros((upper_body.n_bones, 4)))


def test_a_part_of_weight_zero_asks_nothing(upper_body, rng):
    pose = _reachable(upper_body, rng, 4)
    hand = upper_body.index("hand.R")
    goals = [Goal("hand.R", position=[5.0, 5.0, 5.0], orientation=pose.rotations[:, hand], position_weight=0.0)]
    result = solve_body(upper_body, goals)
    assert result.level_met.all()
    assert result.orientation_error.max() <= REACHED_ANGLE
    assert np.all(result.position_error > 1.0)


SETTLED_WITHIN = 45  # steps: a level out of reach settles instead of running to max_iterations
SETTLED_MISS = 0.1  # relative: how much further the settled miss may be than a long solve's


def test_a_goal_out_of_reach_settles_early_and_close(upper_body, rng):
    pose = _reachable(upper_body, rng, 8)
    goals = [
        Goal("hand.L", position=tails(upper_body, pose, "hand.L")),
        Goal("hand.R", position=[3.0, 2.0, 0.0], level=1),  # far beyond the right arm's reach
    ]
    plain = {"restarts": 0, "top_restarts": 0, "use_stretch": False, "equal_start": False}  # (one solve)
    settled = solve_body(upper_body, goals, settings=BodySettings(**plain))
    assert_result_is_honest(upper_body, goals, settled)
    assert settled.iterations.max() <= SETTLED_WITHIN, settled.iterations
    # Iterating on until nothing at all improves brings the right hand hardly any closer.
    long = solve_body(upper_body, goals, settings=BodySettings(**plain, stall_ratio=0.0, max_iterations=400))
    assert np.all(long.iterations > settled.iterations)
    np.testing.assert_array_less(settled.position_error[:, 1], long.position_error[:, 1] * (1.0 + SETTLED_MISS))


def test_further_restart_rounds_are_only_for_an_unmet_top_level(upper_body, rng):
    pose = _reachable(upper_body, rng, 8)
    goals = [
        Goal("hand.L", position=tails(upper_body, pose, "hand.L")),
        Goal("hand.R", position=[3.0, 2.0, 0.0], level=1),  # never met: every row is restarted
    ]
    settings = BodySettings(restarts=1, top_restarts=3, use_stretch=False)
    result = solve_body(upper_body, goals, settings=settings)
    unrestarted = solve_body(upper_body, goals, settings=BodySettings(restarts=0, top_restarts=0, use_stretch=False))
    top_met_at_once = unrestarted.level_met[:, 0]
    assert top_met_at_once.any() and not result.level_met[:, 1].any()
    np.testing.assert_array_equal(result.restarts[top_met_at_once], settings.restarts)
    assert result.restarts.max() <= settings.top_restarts
    assert result.level_met[:, 0].all()


def test_goals_at_one_level_keep_the_pins_above_them(upper_body):
    goals = [
        Goal("hand.L", position=[-0.5, 0.7, 0.2], level=2),
        Goal("hand.R", position=[0.5, 0.7, 0.2], level=5),
        Goal("chest", direction=[0.0, 0.0, 1.0], level=2),
    ]
    tasks = lay_out(upper_body, goals, [Pin("spine", rotation=quat.IDENTITY)])
    merged = tasks.at_one_level()
    assert (tasks.goal_levels, merged.goal_levels) == (2, 1)
    assert merged.levels == (PIN_LEVEL, 2)
    np.testing.assert_array_equal(merged.level_of, [0, 1, 1, 1])
    np.testing.assert_array_equal(tasks.level_of, [0, 1, 2, 1])  # (the tasks laid out are kept as they are)
    assert merged.at_one_level() is merged
