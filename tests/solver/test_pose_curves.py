"""Start guesses between solved frames: the per-joint cubic and its slerp fallback."""

import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.shots.pose_curves import between_poses, blend


def turning_poses(frames, axes, angle_of):
    """Poses (F, n, 4): joint j turned about its fixed axis by angle_of(frames)[..., j]."""
    return quat.from_axis_angle(np.broadcast_to(axes, (len(frames), *axes.shape)), angle_of(frames))


def test_a_cubic_motion_about_fixed_axes_is_reproduced_exactly(rng):
    axes = quat.normalize(rng.normal(size=(5, 3)))
    coefficients = rng.normal(scale=0.02, size=(4, 5))

    def angle_of(frames):
        t = np.asarray(frames, dtype=float)[:, None]
        return coefficients[0] + coefficients[1] * t + coefficients[2] * t**2 / 10 + coefficients[3] * t**3 / 100

    solved = np.array([0, 3, 7, 8, 14, 20, 23])
    wanted = np.setdiff1d(np.arange(24), solved)
    guesses = between_poses(turning_poses(solved, axes, angle_of), solved, wanted, np.ones(len(solved), dtype=bool))
    exact = turning_poses(wanted, axes, angle_of)
    assert np.max(quat.angle_between(guesses, exact)) < 1e-10


def test_frames_beside_a_rough_solved_frame_fall_back_to_slerp(rng):
    poses = quat.normalize(rng.normal(size=(6, 3, 4)))
    solved = np.array([0, 4, 8, 12, 16, 20])
    wanted = np.array([2, 6, 10, 18])
    smooth = np.array([True, True, True, False, True, True])  # frame 12 met no goal, or jumped
    guesses = between_poses(poses, solved, wanted, smooth)
    after = np.searchsorted(solved, wanted)
    slerped = blend(poses[after - 1], poses[after], 0.5)
    # Every gap's window of four solved frames includes frame 12.
    np.testing.assert_allclose(guesses, slerped, atol=1e-12)
    few = between_poses(poses[:3], solved[:3], np.array([1, 6]), np.ones(3, dtype=bool))
    np.testing.assert_allclose(few, blend(poses[[0, 1]], poses[[1, 2]], np.array([0.25, 0.5])), atol=1e-12)
