"""Helpers of the body solver's tests."""

import numpy as np


def tail_of(body, bone: str):
    """(k, 3) the bone's tail point in its frame from the head, for ``BodyPose.points``."""
    index = body.index(bone)
    return np.array([index]), np.array([[0.0, body.lengths[index], 0.0]])


def tails(body, pose, bone: str):
    """(N, 3) root-frame tails of ``bone`` at a ``BodyPose``."""
    return pose.points(*tail_of(body, bone))[:, 0]


LIMIT_SLACK = 1e-9  # radians: the most a returned joint may lie outside its limit, by the limit's own measure


def assert_result_is_honest(body, goals, result, pins=()):
    """The result's errors are those of forward kinematics of its rotations and stretch; every
    joint lies inside its limit and every stretch inside its range; nothing is NaN."""
    assert np.all(np.isfinite(result.rotations)) and np.all(np.isfinite(result.stretch))
    assert body.limit_violation(result.rotations).max() <= LIMIT_SLACK
    assert body.stretch_violation(result.stretch).max() == 0.0
    pose = body.forward_kinematics(result.rotations, result.stretch)
    for g, goal in enumerate(goals):
        bone = body.index(goal.effector.bone)
        point = pose.points(np.array([bone]), np.array([[0.0, body.lengths[bone], 0.0]]) + goal.effector.offset)[:, 0]
        if goal.position is not None:
            distance = np.linalg.norm(point - np.asarray(goal.position), axis=-1)
            np.testing.assert_allclose(result.position_error[:, g], distance, atol=1e-12)
    for p, pin in enumerate(pins):
        head = pose.heads[:, body.index(pin.bone)]
        if pin.position is not None:
            distance = np.linalg.norm(head - np.asarray(pin.position), axis=-1)
            np.testing.assert_allclose(result.pin_position_error[:, p], distance, atol=1e-12)
