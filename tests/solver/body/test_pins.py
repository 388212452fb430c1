"""A pinned bone holds its pin while other effectors pull, and ranks above every goal."""

import numpy as np
from body_helpers import assert_result_is_honest, tails

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import Goal, Pin, solve_body
from quat_ik_addon.solver.body.reference_bodies import legs

ROWS = 10
PIN_HELD = 1e-4  # × the body's size: the most a pinned head may slide
PIN_TURN = 1e-4  # radians: the most a pinned bone may turn


def _planted(body, rng, bone):
    """Start poses inside the limits and the pinned bone's head and frame in them."""
    start = body.random_poses(rng, ROWS)
    pose = body.forward_kinematics(start)
    index = body.index(bone)
    return start, pose.heads[:, index], pose.rotations[:, index]


def test_a_planted_foot_holds_while_the_other_foot_is_pulled_away(rng):
    body = legs()
    start, head, frame = _planted(body, rng, "foot.L")
    pins = [Pin("foot.L", position=head, rotation=frame)]
    pulled_to = rng.normal(size=(ROWS, 3)) * 2.0  # mostly out of reach with the left foot planted
    goals = [Goal("foot.R", position=pulled_to)]
    result = solve_body(body, goals, pins, start_rotations=start)
    assert_result_is_honest(body, goals, result, pins)
    assert result.pins_held.all()
    assert result.pin_position_error.max() <= PIN_HELD * body.size
    solved = body.forward_kinematics(result.rotations, result.stretch)
    foot = body.index("foot.L")
    assert np.linalg.norm(solved.heads[:, foot] - head, axis=-1).max() <= PIN_HELD * body.size
    assert quat.angle_between(solved.rotations[:, foot], frame).max() <= PIN_TURN
    # The pull moved the rest of the body: the right foot came closer than it started.
    started = np.linalg.norm(tails(body, body.forward_kinematics(start), "foot.R") - pulled_to, axis=-1)
    assert np.all(result.position_error[:, 0] <= started + 1e-9)
    assert np.mean(result.position_error[:, 0] < started - 1e-3) > 0.5


def test_a_pin_ranks_above_the_highest_goal(rng):
    body = legs()
    start, head, _ = _planted(body, rng, "foot.L")
    pins = [Pin("foot.L", position=head)]
    away = head + np.array([0.0, 0.0, 0.5])  # asks the pinned foot itself to move
    goals = [Goal("foot.L", position=away, level=0), Goal("foot.R", position=head, level=1)]
    result = solve_body(body, goals, pins, start_rotations=start)
    assert_result_is_honest(body, goals, result, pins)
    assert result.pin_position_error.max() <= PIN_HELD * body.size
    assert np.all(result.position_error[:, 0] > 0.1)


def test_a_pinned_hand_holds_while_the_other_hand_reaches(upper_body, rng):
    start, head, frame = _planted(upper_body, rng, "hand.R")
    pins = [Pin("hand.R", position=head, rotation=frame)]
    goals = [Goal("hand.L", position=rng.normal(size=(ROWS, 3)))]
    result = solve_body(upper_body, goals, pins, start_rotations=start)
    assert_result_is_honest(upper_body, goals, result, pins)
    assert result.pin_position_error.max() <= PIN_HELD * upper_body.size
    assert result.pin_rotation_error.max() <= PIN_TURN
