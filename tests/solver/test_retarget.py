"""Moving a limit onto another rest frame (solver/limits/retarget.py): from armature-space frames
(a rig drawn in another rest pose or with other rolls) and from a rig posed in the anatomical
position."""

from __future__ import annotations

import math

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.presets import load_preset, preset_names
from quat_ik_addon.solver.limits.retarget import (
    axes_frame,
    fit_to_posture,
    front_twist,
    pose_change,
    rest_change,
    retarget_limit,
)
from quat_ik_addon.solver.limits.window_shapes import cone_window, window_rim, window_samples
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_limit, solver_window

HANGING = axes_frame((0.0, 0.0, -1.0), (0.0, -1.0, 0.0))  # a limb hanging down, +Z to the front
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


FRONT = np.array([0.0, -1.0, 0.0])


@pytest.mark.parametrize(
    "window",
    [
        cone_window(35.0, (0.2, 1.0, 0.3)),
        spec.EllipticConeWindow(half_angles_deg=(40.0, 20.0)),
        *load_preset("shoulder").windows,
    ],
)
def test_window_rim_runs_along_the_rim_and_samples_lie_inside(window) -> None:
    solver = solver_window(window)
    rim = window_rim(window, 120)
    assert np.all(solver.contains(rim, 1e-9))
    np.testing.assert_allclose(solver.closest(rim), rim, atol=1e-9)
    pushed = rim + 1e-4 * (rim - solver.reference)  # a hair away from the reference: outside
    assert not np.any(solver.contains(pushed / np.linalg.norm(pushed, axis=1, keepdims=True), 0.0))
    assert np.all(solver.contains(window_samples(window, 60, 3), 1e-9))


@pytest.mark.parametrize("half_angle", [90.0, 135.0, 180.0])
def test_samples_of_wide_cones_are_directions_inside(half_angle) -> None:
    """Chords from the centre to the rim of a 180° cone pass through 0: rings go by angle."""
    window = cone_window(half_angle)
    samples = window_samples(window, 240, 4)
    np.testing.assert_allclose(np.linalg.norm(samples, axis=1), 1.0, atol=1e-12)
    assert np.all(solver_window(window).contains(samples, 1e-9))
    # The reference, then rings evenly spread in angle out to the rim.
    angles = np.degrees(np.arccos(np.clip(samples @ (0.0, 1.0, 0.0), -1.0, 1.0)))
    expected = np.concatenate([[0.0], np.repeat(half_angle * np.arange(1, 5) / 4, 240)])
    np.testing.assert_allclose(angles, expected, atol=1e-6)


@pytest.mark.parametrize("name", ["shoulder", "wrist", "hip", "ankle"])
@pytest.mark.parametrize("roll", [0.0, 35.0, -120.0])
def test_a_t_pose_bone_posed_anatomically_gets_the_preset_motions(name: str, roll: float) -> None:
    """An arm drawn sideways (a T-pose) with any roll, posed hanging at the side with its front
    to the front: the fitted limit allows exactly the directions the preset allows, and the
    fit from the pose is the fit from the two frames."""
    preset = load_preset(name)
    anatomical = HANGING if name != "ankle" else axes_frame(FRONT, (0.0, 0.0, 1.0))
    rest = axes_frame((1.0, 0.0, 0.0), (0.0, 0.0, -1.0)) @ quat.to_matrix(quat.from_y_angle(math.radians(roll)))
    twisted = quat.from_y_angle(math.radians(roll + 20.0))  # posed with the bone's +Z 20° + roll off the front
    pose = quat.multiply(quat.from_matrix(rest.T @ anatomical), twisted)
    twist = front_twist(rest @ quat.to_matrix(pose), anatomical[:, 2])
    assert twist == pytest.approx(-math.radians(roll + 20.0))
    change, k_inverse = pose_change(pose, twist)
    # At the rig's rest, anatomy's axes are the bone's turned back by that twist.
    from_frames = rest_change(rest, anatomical, rest @ quat.to_matrix(quat.conjugate(twisted)))
    np.testing.assert_allclose(change, from_frames[0], atol=1e-12)
    assert quat.angle_between(k_inverse, from_frames[1]) < 1e-9

    fitted = retarget_limit(preset, change, k_inverse)
    moved, original = solver_limit(fitted.limit), solver_limit(preset)
    anatomical_poses = quat.normalize(np.random.default_rng(RNG_SEED).normal(size=(3000, 4)))
    rig_poses = quat.multiply(quat.multiply(quat.conjugate(quat.from_matrix(change)), anatomical_poses), k_inverse)
    # The bone points the same way in the armature either way, and is allowed there exactly when anatomy allows it.
    np.testing.assert_allclose(
        quat.rotate(quat.from_matrix(rest), quat.rotate_y_axis(rig_poses)),
        quat.rotate(quat.from_matrix(anatomical), quat.rotate_y_axis(anatomical_poses)),
        atol=1e-9,
    )
    np.testing.assert_array_equal(
        moved.reach.contains(quat.rotate_y_axis(rig_poses), 1e-9),
        original.reach.contains(quat.rotate_y_axis(anatomical_poses), 1e-9),
    )
    # With the twist measured through the reference, every pose is exactly as far outside.
    np.testing.assert_allclose(moved.violation(rig_poses), original.violation(anatomical_poses), atol=1e-9)
    # The anatomical zero itself is the posed rig pose; inside poses stay inside up to the twist error.
    assert quat.angle_between(quat.multiply(quat.conjugate(quat.from_matrix(change)), k_inverse), pose) < 1e-9
    allowed = original.sample(np.random.default_rng(RNG_SEED), 500)
    rig_allowed = quat.multiply(quat.multiply(quat.conjugate(quat.from_matrix(change)), allowed), k_inverse)
    errors = [fitted.twist_error_deg, fitted.twist_error_other_windows_deg]
    assert np.max(moved.violation(rig_allowed)) <= math.radians(max(errors)) + 1e-6


def test_a_hinge_posed_straight_from_a_bent_rest_shifts_past_180() -> None:
    """A hinge drawn 60° short of its anatomical zero: the range moves by 60° and may run
    through 180° (0°–150° becomes 60°–210°), bending the same way."""
    hinge = spec.HingeLimit(axis=(1.0, 0.0, 0.0), range_deg=(0.0, 150.0))
    pose = quat.from_axis_angle(
        np.array([1.0, 0.0, 0.0]), math.radians(60.0)
    )  # the anatomical zero is 60° along the hinge from the rig's rest
    fitted = retarget_limit(hinge, *pose_change(pose, 0.0))
    assert fitted.hinge_residual_deg < 1e-9
    assert fitted.limit.range_deg == pytest.approx((60.0, 210.0))
    moved = solver_limit(fitted.limit)
    angles = np.radians([60.0, 180.0, -150.0, 59.0, 0.0, -149.0])
    np.testing.assert_array_equal(moved.angle_range.contains(angles, 1e-9), [True, True, True, False, False, False])


def test_front_twist_cannot_tell_along_the_bone() -> None:
    assert front_twist(np.eye(3), (0.0, 2.0, 0.0)) == 0.0
    assert front_twist(np.eye(3), (1.0, 0.0, 0.0)) == pytest.approx(math.pi / 2)  # +Z turned onto +X about +Y


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_fits_its_own_anatomical_frame_unchanged(name: str) -> None:
    preset = load_preset(name)
    fitted = retarget_limit(preset, *pose_change(quat.IDENTITY, 0.0))
    poses = quat.normalize(np.random.default_rng(RNG_SEED).normal(size=(500, 4)))
    np.testing.assert_allclose(
        solver_limit(fitted.limit).violation(poses), solver_limit(preset).violation(poses), atol=1e-9
    )


def test_fit_to_posture_is_the_pose_change_with_the_twist_to_the_front() -> None:
    preset = load_preset("hip")
    pose = quat.normalize(np.array([0.9, 0.2, -0.3, 0.1]))
    frame = axes_frame((0.3, -0.2, -1.0), (0.5, 0.0, 0.2))
    fitted = fit_to_posture(preset, frame, pose, FRONT)
    expected = retarget_limit(preset, *pose_change(pose, front_twist(frame, FRONT)))
    assert fitted == expected


@pytest.mark.parametrize("name", ["shoulder", "hip", "wrist"])
def test_a_plain_twist_range_is_approximate_and_says_how_much(name: str) -> None:
    """Without a twist reference (the sample rigs, Blender's IK) the range is shifted by the
    mean offset over the main window, and the error bounds how far allowed poses stray."""
    preset = load_preset(name)
    rest = axes_frame((1.0, 0.0, 0.0), (0.0, -1.0, 0.0))  # a T-pose bone, +Z to the front
    change, k_inverse = rest_change(rest, HANGING)
    fitted = retarget_limit(preset, change, k_inverse, exact_twist=False)
    assert fitted.limit.twist_reference is None and fitted.twist_error_deg > 1.0
    allowed = solver_limit(preset).sample(np.random.default_rng(RNG_SEED), 500)
    rig = quat.multiply(quat.multiply(quat.conjugate(quat.from_matrix(change)), allowed), k_inverse)
    errors = max(fitted.twist_error_deg, fitted.twist_error_other_windows_deg)
    assert np.max(solver_limit(fitted.limit).violation(rig)) <= np.radians(errors) + 1e-6


def test_the_forearm_twist_is_fitted_from_the_palm_forward_posture() -> None:
    """The forearm twist preset counts from thumb-forward; a forearm hanging palm forward (its
    +Z to the side, the thumb's way) stands at full supination, so its rest is −90° in the
    preset's terms: pronation 80° is 170° from it, supination 80° is 10° from it, and
    thumb-forward (90° of pronation from the rest) is the middle."""
    preset = load_preset("forearm_twist")  # about +Y, -80°..80° (supination negative)
    lateral = np.array([1.0, 0.0, 0.0])  # a left arm: away from the body
    rest = axes_frame((0.0, 0.0, -1.0), lateral)
    fitted = fit_to_posture(preset, rest, quat.IDENTITY, lateral, math.radians(-90.0))
    assert fitted.hinge_residual_deg < 1e-9
    assert fitted.limit.axis == pytest.approx((0.0, 1.0, 0.0)) and fitted.limit.range_deg == pytest.approx(
        (10.0, 170.0)
    )
