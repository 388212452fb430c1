"""sample_rigs/rig_math.py, numpy only: moving preset limits onto another rest pose, and the
Blender-IK limits the comparison gets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver import rig_spec as spec
from quat_ik_addon.solver.presets import load_preset
from quat_ik_addon.solver.rest_pose import bone_rest_matrix3
from quat_ik_addon.solver.spec_chain import solver_limit
from quat_ik_addon.solver.window_shapes import cone_window
from sample_rigs.rig_math import (
    blender_ik_limits,
    frame,
    rest_change,
    retarget_limit,
    roll_for_z,
    rotation_x,
    swing_twist_pose,
)

HANGING = frame((0.0, 0.0, -1.0), (0.0, -1.0, 0.0))  # a limb hanging down, +Z to the front
RNG_SEED = 5


def _turn(axis, degrees) -> np.ndarray:
    axis = np.asarray(axis, dtype=float)
    return quat.to_matrix(quat.from_axis_angle(axis / np.linalg.norm(axis), math.radians(degrees)))


def _rig_pose(change, k_inverse, anatomical_pose):
    """A rig pose from an anatomical one: Mᵀ q_anat K⁻¹ (rig_math's module docstring)."""
    return quat.multiply(quat.multiply(quat.conjugate(quat.from_matrix(change)), anatomical_pose), k_inverse)


@pytest.mark.parametrize("name", ["shoulder", "hip", "wrist", "ankle", "elbow", "knee"])
def test_a_rig_drawn_in_the_anatomical_pose_keeps_the_preset(name: str) -> None:
    limit = load_preset(name)
    change, k_inverse = rest_change(HANGING, HANGING, HANGING)
    moved = retarget_limit(limit, change, k_inverse)
    poses = quat.normalize(np.random.default_rng(RNG_SEED).normal(size=(500, 4)))
    np.testing.assert_allclose(
        solver_limit(moved.limit).violation(poses), solver_limit(limit).violation(poses), atol=1e-9
    )
    assert moved.twist_error_deg < 1e-6 and moved.hinge_residual_deg < 1e-6


@pytest.mark.parametrize("name", ["shoulder", "hip", "wrist", "ankle"])
def test_swing_maps_exactly_onto_any_rest_pose(name: str) -> None:
    """Whatever the rig's rest and roll, a direction is inside the moved windows exactly when
    the anatomical direction it stands for is inside the preset's."""
    limit = load_preset(name)
    rest = HANGING @ _turn((0.3, -0.5, 0.8), 50.0)  # an A-pose-like rest, off in every axis
    axes = rest @ _turn((0.0, 1.0, 0.0), 35.0)  # anatomy's axes: the rig's roll is 35° off
    change, k_inverse = rest_change(rest, HANGING, axes)
    moved = solver_limit(retarget_limit(limit, change, k_inverse).limit)
    anatomical = solver_limit(limit)
    poses = quat.normalize(np.random.default_rng(RNG_SEED).normal(size=(2000, 4)))
    rig_directions = quat.rotate_y_axis(_rig_pose(change, k_inverse, poses))
    inside_rig = moved.reach.contains(rig_directions, 1e-9)
    inside_anatomical = anatomical.reach.contains(quat.rotate_y_axis(poses), 1e-9)
    np.testing.assert_array_equal(inside_rig, inside_anatomical)


def test_twist_is_exact_when_only_the_roll_differs() -> None:
    limit = load_preset("wrist")
    axes = HANGING @ _turn((0.0, 1.0, 0.0), -40.0)  # the rig bone's roll is 40° off anatomy's
    change, k_inverse = rest_change(HANGING, HANGING, axes)
    moved = retarget_limit(limit, change, k_inverse)
    assert moved.twist_error_deg < 1e-6
    poses = solver_limit(limit).sample(np.random.default_rng(RNG_SEED), 300)
    violation = solver_limit(moved.limit).violation(_rig_pose(change, k_inverse, poses))
    assert np.max(violation) < 1e-9  # every anatomically allowed pose is allowed on the rig


def test_a_hinge_follows_the_rigs_rest_bend() -> None:
    """A knee drawn bent by 10° keeps its hinge axis and has its range shifted by the bend."""
    knee = load_preset("knee")  # about −X, 0–135°
    bent = HANGING @ _turn((-1.0, 0.0, 0.0), 10.0)  # the rig's shin, already 10° into flexion
    change, k_inverse = rest_change(bent, HANGING, bent)
    moved = retarget_limit(knee, change, k_inverse)
    assert moved.hinge_residual_deg < 1e-6
    np.testing.assert_allclose(moved.limit.axis, (-1.0, 0.0, 0.0), atol=1e-9)
    np.testing.assert_allclose(moved.limit.range_deg, (-10.0, 125.0), atol=1e-6)


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
