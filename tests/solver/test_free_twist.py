"""A tip whose twist is free keeps it where it was (``free_twist``): no spin a mesh would show."""

import numpy as np
import pytest
from test_ccd import assert_result_is_honest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.free_twist import (
    carry_tip_twist,
    carry_tip_twist_along,
    tip_twist_is_unseen,
    within_tip_twist_range,
)
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots.pose_jumps import visible_jumps
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import solve

Y = np.array([0.0, 1.0, 0.0])
CONE_30 = BallJoint((ConeWindow(Y, np.radians(30.0)),))


def one_bone(limit=CONE_30, effector_offset=(0.0, 0.0, 0.0)) -> Chain:
    return Chain(("bone",), quat.IDENTITY[None], np.zeros((1, 3)), np.ones(1), (limit,), np.asarray(effector_offset))


def two_bones(tip_limit) -> Chain:
    offsets = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    return Chain(("upper", "lower"), np.tile(quat.IDENTITY, (2, 1)), offsets, np.ones(2), (FreeJoint(), tip_limit))


def tip_turns(rotations: np.ndarray) -> np.ndarray:
    """Angle of the tip's rotation between consecutive poses."""
    return quat.angle_between(rotations[1:, -1], rotations[:-1, -1])


def direction_turns(rotations: np.ndarray) -> np.ndarray:
    """Angle the tip's direction (local +Y) swings between consecutive poses."""
    directions = quat.rotate_y_axis(rotations[:, -1])
    return quat.direction_angle(directions[1:], directions[:-1])


def random_tips(rng: np.random.Generator, count: int) -> np.ndarray:
    poses = rng.normal(size=(count, 1, 4))
    return quat.canonical(quat.normalize(poses))


POSITIONS = np.zeros((1, 3))


@pytest.mark.parametrize(
    ("chain", "goals", "unseen"),
    [
        (one_bone(), Goals(POSITIONS), True),
        (one_bone(FreeJoint()), Goals(POSITIONS), True),
        (one_bone(BallJoint((), AngleRange(-np.pi, np.pi))), Goals(POSITIONS), True),
        (one_bone(effector_offset=(0.0, 0.2, 0.0)), Goals(POSITIONS), True),
        (one_bone(BallJoint((), AngleRange(-0.5, 0.5))), Goals(POSITIONS), True),
        (one_bone(HingeJoint(np.array([1.0, 0.0, 0.0]))), Goals(POSITIONS), False),
        (one_bone(FixedJoint()), Goals(POSITIONS), False),
        (one_bone(effector_offset=(0.1, 0.0, 0.0)), Goals(POSITIONS), False),
        (one_bone(), Goals(POSITIONS, orientations=quat.IDENTITY[None]), False),
        (one_bone(), Goals(POSITIONS, directions=Y[None]), True),
        (one_bone(), Goals(POSITIONS, directions=Y[None], aim_axis=(1.0, 0.0, 0.0)), False),
        (two_bones(CONE_30), Goals(POSITIONS), True),
        (two_bones(HingeJoint(np.array([1.0, 0.0, 0.0]))), Goals(POSITIONS), False),
    ],
)
def test_the_tip_twist_is_unseen_where_a_ball_or_free_tip_turns_and_no_goal_sees_it(chain, goals, unseen):
    assert tip_twist_is_unseen(chain, goals) is unseen


def test_one_carry_keeps_each_direction_and_turns_the_shortest_way():
    rng = np.random.default_rng(3)
    starts, rotations = random_tips(rng, 200), random_tips(rng, 200)
    carried = carry_tip_twist(rotations, starts)
    np.testing.assert_allclose(quat.rotate_y_axis(carried[:, -1]), quat.rotate_y_axis(rotations[:, -1]), atol=1e-12)
    # The shortest arc between two directions turns by exactly the angle between them.
    turned = quat.angle_between(carried[:, -1], starts[:, -1])
    swung = quat.direction_angle(quat.rotate_y_axis(carried[:, -1]), quat.rotate_y_axis(starts[:, -1]))
    np.testing.assert_allclose(turned, swung, atol=1e-7)


def test_a_shot_carried_at_once_is_the_frame_by_frame_carry():
    rng = np.random.default_rng(4)
    # A wandering direction that passes the bone's own -Y, where the swing split is singular.
    angles = np.cumsum(rng.normal(0.0, 0.15, size=(300, 2)), axis=0) + np.array([np.pi * 0.9, 0.0])
    directions = np.stack(
        (
            np.sin(angles[:, 0]) * np.cos(angles[:, 1]),
            np.cos(angles[:, 0]),
            np.sin(angles[:, 0]) * np.sin(angles[:, 1]),
        ),
        axis=1,
    )
    twists = rng.uniform(-np.pi, np.pi, size=300)  # whatever twist each frame's solve left
    rotations = quat.multiply(quat.rotation_from_y(directions), quat.from_y_angle(twists))[:, None]
    start = random_tips(rng, 1)[0]
    carried = carry_tip_twist_along(rotations, start)
    expected, before = np.empty_like(rotations), start
    for frame in range(len(rotations)):
        expected[frame] = carry_tip_twist(rotations[frame : frame + 1], before[None])[0]
        before = expected[frame]
    assert np.max(quat.angle_between(carried[:, -1], expected[:, -1])) < 1e-7
    np.testing.assert_allclose(tip_turns(carried), direction_turns(carried), atol=1e-7)
    assert carry_tip_twist_along(rotations[:0], start).shape == (0, 1, 4)


def test_restarts_leave_a_one_bone_cone_with_its_start_twist():
    # A very stiff joint given one iteration stays short of its closest miss, so a random restart
    # (random twist included) comes closer and replaces the pose.
    chain = one_bone(BallJoint((ConeWindow(Y, np.radians(30.0)),), stiffness=0.95))
    start = quat.from_y_angle(np.radians(40.0))[None]  # twisted 40° at rest direction
    behind = np.array([[0.3, -0.8, 0.1], [-0.2, -0.7, 0.4]])  # within reach, out of the cone: restarts run
    settings = SolveSettings(restarts=3, seed=5, max_iterations=1)
    result = solve(chain, behind, start_rotations=start, settings=settings)
    assert_result_is_honest(chain, result, behind)
    assert np.all(result.restarts > 0)
    swung = quat.direction_angle(quat.rotate_y_axis(result.rotations[:, -1]), Y)
    np.testing.assert_allclose(quat.angle_between(result.rotations[:, -1], start), swung, atol=1e-7)


def test_a_shot_round_the_back_of_a_cone_turns_the_bone_only_as_its_direction_swings():
    """The closest direction a 30° cone allows to a target passing behind the bone sweeps round
    the cone's rim: smooth, so the bone must not spin about itself on the way."""
    chain = one_bone()
    x = np.linspace(-1.0, 1.0, 41)
    targets = np.stack((x, np.full(41, -1.0), np.full(41, 0.2)), axis=1)
    result = solve_sequence(chain, targets, settings=SolveSettings(restarts=4, seed=1))
    assert_result_is_honest(chain, result, targets)
    np.testing.assert_allclose(tip_turns(result.rotations), direction_turns(result.rotations), atol=1e-7)
    assert len(visible_jumps(result.rotations, np.arange(41))[0]) == 0


def test_a_tip_twist_within_a_range_keeps_the_start_twist_as_far_as_the_range_allows():
    """Inside its twist range a tip the goals do not see is as free as an unlimited one: a solve
    leaves it the start's twist carried along its swing, clamped into the range, not wherever
    its path (restarts from random twists included) left it."""
    tip = BallJoint((ConeWindow(Y, np.radians(60.0)),), AngleRange(np.radians(-30.0), np.radians(30.0)))
    chain = two_bones(tip)
    goals = Goals(np.zeros((1, 3)))
    assert tip_twist_is_unseen(chain, goals)
    rng = np.random.default_rng(8)
    targets = rng.normal(size=(60, 3))
    targets *= rng.uniform(0.3, 1.9, size=(60, 1)) / np.linalg.norm(targets, axis=1, keepdims=True)
    start = np.stack((quat.IDENTITY, quat.from_y_angle(np.radians(20.0))))
    result = solve(chain, targets, start_rotations=start, settings=SolveSettings(restarts=3, seed=2))
    assert_result_is_honest(chain, result, targets)
    assert np.any(result.restarts > 0)  # some came from random twists
    starts = np.broadcast_to(start, result.rotations.shape)
    expected = within_tip_twist_range(chain, carry_tip_twist(result.rotations, starts))
    assert np.max(quat.angle_between(result.rotations[:, -1], expected[:, -1])) < 1e-9
    assert np.max(tip.violation(result.rotations[:, -1])) < 1e-9
    # Where the carried twist left the range it was brought back, its direction kept.
    twisted = quat.multiply(result.rotations[:, -1], quat.from_y_angle(np.full(60, np.radians(50.0))))
    kept = tip.twist_clamped(twisted)
    assert np.max(tip.violation(kept)) < 1e-9
    np.testing.assert_allclose(quat.rotate_y_axis(kept), quat.rotate_y_axis(twisted), atol=1e-12)
