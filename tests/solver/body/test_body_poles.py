"""Pole targets in a body (``body.poles``): a chain's bend turns toward its pole below the bones
it shares, the goals stay met, a pole its limits keep away is faced no worse than without it,
Live settles, and bad poles are refused."""

import numpy as np
import pytest
from body_helpers import LIMIT_SLACK, tails

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import Goal
from quat_ik_addon.solver.body.poles import BodyPole, facing_off
from quat_ik_addon.solver.body.request import BodyRequest, solve_body_request

ROWS = 24
LEFT_ARM = ("upper_arm.L", "forearm.L", "hand.L")  # below the chest both arms share
# Half the rows or more face a pole put where a reachable pose's elbow points within this; on
# the others the limits hold the upper arm's turn back (the elbow is a hinge).
FACED_DEG = 2.0
SLACK_DEG = 1e-3


@pytest.fixture
def arm_goals(upper_body, rng):
    """Both hands at random reachable places, and a pole off the left arm's line on the side its
    elbow pointed at that pose (where the arm can bend to face it)."""
    pose = upper_body.forward_kinematics(upper_body.random_poses(rng, ROWS))
    left, right = tails(upper_body, pose, "hand.L"), tails(upper_body, pose, "hand.R")
    shoulder = pose.heads[:, upper_body.index("upper_arm.L")]
    elbow = pose.heads[:, upper_body.index("forearm.L")]
    middle = 0.5 * (shoulder + left)
    goals = [Goal("hand.L", position=left), Goal("hand.R", position=right, level=1)]
    return goals, middle + 3.0 * (elbow - middle), middle - 3.0 * (elbow - middle)


@pytest.fixture
def x_axis_pole(upper_body, rng):
    """The left hand at random reachable places, and a pole where the upper arm's X axis pointed
    at that pose (facing "root_x": Blender's IK)."""
    pose = upper_body.forward_kinematics(upper_body.random_poses(rng, ROWS))
    left = tails(upper_body, pose, "hand.L")
    upper_arm = upper_body.index("upper_arm.L")
    x_axis = quat.rotate(pose.rotations[:, upper_arm], np.array([1.0, 0.0, 0.0]))
    return [Goal("hand.L", position=left)], 0.5 * (pose.heads[:, upper_arm] + left) + x_axis


def off_deg(body, rotations, pole):
    rows = len(rotations)
    poles = [(pole, np.broadcast_to(pole.position, (rows, 3)), np.broadcast_to(pole.angle, (rows,)))]
    return np.degrees(facing_off(body, rotations, poles))


@pytest.mark.parametrize("facing", ["bend", "root_x"])
def test_a_pole_turns_the_bend_toward_it_and_keeps_the_goals(upper_body, arm_goals, x_axis_pole, facing):
    goals, pole_side = x_axis_pole if facing == "root_x" else arm_goals[:2]
    pole = BodyPole(LEFT_ARM, pole_side, facing=facing)
    plain = solve_body_request(upper_body, BodyRequest(goals))
    faced = solve_body_request(upper_body, BodyRequest(goals, poles=[pole]))
    before, after = off_deg(upper_body, plain.rotations, pole), off_deg(upper_body, faced.rotations, pole)
    assert np.all(after <= before + SLACK_DEG), "a pole never leaves a bend facing it worse"
    assert np.mean(after < FACED_DEG) >= 0.5, f"faced: {np.round(after, 1)}"
    assert np.median(before) > 10 * FACED_DEG, "without the pole, the bends point elsewhere"
    assert np.all(faced.all_met >= plain.all_met), "where the goals were met, they still are"
    assert upper_body.limit_violation(faced.rotations).max() <= LIMIT_SLACK
    assert np.all(np.isfinite(faced.rotations))


def test_poles_on_opposite_sides_bend_the_arm_apart(upper_body, arm_goals):
    goals, pole_side, other_side = arm_goals
    one = solve_body_request(upper_body, BodyRequest(goals, poles=[BodyPole(LEFT_ARM, pole_side)]))
    two = solve_body_request(upper_body, BodyRequest(goals, poles=[BodyPole(LEFT_ARM, other_side)]))
    elbow = upper_body.index("forearm.L")
    apart = np.linalg.norm(
        upper_body.forward_kinematics(one.rotations).heads[:, elbow]
        - upper_body.forward_kinematics(two.rotations).heads[:, elbow],
        axis=1,
    )
    assert np.median(apart) > 0.05, f"elbows apart (m): {np.round(apart, 3)}"


def test_the_pole_angle_turns_the_bend_past_the_pole(upper_body, arm_goals):
    goals, pole_side, _ = arm_goals
    turned = BodyPole(LEFT_ARM, pole_side, angle=np.radians(30.0))
    faced = solve_body_request(upper_body, BodyRequest(goals, poles=[turned]))
    # Facing the turned pole means the bend stands 30° past the pole itself.
    met = off_deg(upper_body, faced.rotations, turned) < FACED_DEG
    assert met.any()
    at_pole = off_deg(upper_body, faced.rotations[met], BodyPole(LEFT_ARM, pole_side[met]))
    np.testing.assert_allclose(at_pole, 30.0, atol=FACED_DEG)


def test_a_row_whose_pole_is_off_is_solved_as_without_it(upper_body, arm_goals):
    goals, pole_side, _ = arm_goals
    switched = pole_side.copy()
    switched[::2] = np.nan
    plain = solve_body_request(upper_body, BodyRequest(goals))
    faced = solve_body_request(upper_body, BodyRequest(goals, poles=[BodyPole(LEFT_ARM, switched)]))
    np.testing.assert_array_equal(faced.rotations[::2], plain.rotations[::2])


def test_a_warm_solve_of_its_own_answer_stays(upper_body, arm_goals):
    goals, pole_side, _ = arm_goals
    request = BodyRequest(goals, poles=[BodyPole(LEFT_ARM, pole_side)])
    first = solve_body_request(upper_body, request)
    again = solve_body_request(upper_body, BodyRequest(goals, poles=request.poles, start=first.rotations))
    np.testing.assert_allclose(again.rotations, first.rotations, atol=1e-9)


@pytest.mark.parametrize(
    ("pole", "message"),
    [
        (BodyPole(("forearm.L", "upper_arm.L"), [0, 0, 1]), "must each hang from the one before"),
        (BodyPole(("hand.L",), [0, 0, 1]), "has no bend to turn"),
        (BodyPole(("nose", "hand.L"), [0, 0, 1]), "nose"),
    ],
)
def test_a_pole_on_bones_that_make_no_chain_is_refused(upper_body, pole, message):
    with pytest.raises(ValueError, match=message):
        solve_body_request(upper_body, BodyRequest([Goal("hand.L", position=[0.5, 0.5, 0.0])], poles=[pole]))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: BodyPole((), [0, 0, 1]), "bone names"),
        (lambda: BodyPole(LEFT_ARM, [0, 0, 1], facing="up"), "facing must be one of"),
        (lambda: BodyPole(LEFT_ARM, [0, 0, 1], angle=float("nan")), "must be finite radians"),
        (
            lambda: BodyRequest([Goal("hand.L", position=[0, 1, 0])], poles=[BodyPole(LEFT_ARM, [0, np.inf, 1])]),
            "finite",
        ),
        (lambda: BodyRequest([Goal("hand.L", position=[0, 1, 0])], poles=["pole"]), "BodyPole objects"),
        (
            lambda: BodyRequest(
                [Goal("hand.L", position=np.zeros((3, 3)))], poles=[BodyPole(LEFT_ARM, np.zeros((2, 3)))]
            ),
            "different numbers of rows",
        ),
    ],
)
def test_bad_poles_are_refused_with_a_message(make, message):
    with pytest.raises(ValueError, match=message):
        make()
