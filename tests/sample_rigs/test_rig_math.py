"""sample_rigs/rig_math.py, numpy only: the Blender-IK limits the comparison gets, and pose
helpers (moving limits onto another rest pose is tests/solver/test_retarget.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.window_shapes import cone_window
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.rest_pose import bone_rest_matrix3
from sample_rigs.rig_math import blender_ik_limits, roll_for_z, rotation_x, swing_twist_pose


def test_blender_ik_limits_for_each_kind_of_joint() -> None:
    assert blender_ik_limits(spec.FixedLimit()).locked == ("x", "y", "z")
    assert blender_ik_limits(spec.FreeLimit()) == blender_ik_limits(spec.FreeLimit(stiffness=0.5))
    knee = blender_ik_limits(spec.HingeLimit(axis=(-1.0, 0.0, 0.0), range_deg=(0.0, 135.0)))
    assert knee.locked == ("y", "z")
    ((axis, low, high),) = knee.ranges
    assert axis == "x" and low == pytest.approx(-math.radians(135.0)) and high == 0.0
    # Blender's range must contain 0: a hinge from 30° to 90° becomes 0°–90°.
    ((_, low, high),) = blender_ik_limits(spec.HingeLimit(axis=(0.0, 0.0, 1.0), range_deg=(30.0, 90.0))).ranges
    assert (low, high) == (0.0, pytest.approx(math.radians(90.0)))
    # A cone is Blender's own elliptic swing limit with equal axes: exact.
    cone = blender_ik_limits(spec.BallLimit(windows=(cone_window(40.0),), twist_deg=(-20.0, 10.0)))
    ranges = {axis: (low, high) for axis, low, high in cone.ranges}
    for axis in "xz":
        np.testing.assert_allclose(ranges[axis], (-math.radians(40.0), math.radians(40.0)), atol=1e-6)
    np.testing.assert_allclose(ranges["y"], (-math.radians(20.0), math.radians(10.0)))


def test_swing_pose_and_roll_helpers() -> None:
    # 30° toward local +Z is a turn about +X; toward +X, one about −Z.
    np.testing.assert_allclose(
        quat.rotate_y_axis(swing_twist_pose(0.0, 30.0)), (0, math.cos(math.pi / 6), 0.5), atol=1e-12
    )
    np.testing.assert_allclose(
        quat.rotate_y_axis(swing_twist_pose(30.0, 0.0)), (0.5, math.cos(math.pi / 6), 0), atol=1e-12
    )
    np.testing.assert_allclose(rotation_x(90.0) @ (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), atol=1e-12)
    head, tail = (0.2, 0.0, 1.4), (0.2, 0.0, 1.1)
    roll = roll_for_z(head, tail, (0.0, -1.0, 0.0))
    z_axis = bone_rest_matrix3(head, tail, math.radians(roll))[:, 2]
    np.testing.assert_allclose(z_axis, (0.0, -1.0, 0.0), atol=1e-9)
