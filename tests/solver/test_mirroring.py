"""Left ↔ right: Blender's name flipping, and limits mirrored across X = 0 checked pose by pose."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.mirroring import (
    MIRROR_X,
    mirror_limit,
    mirror_limit_exact,
    mirror_name,
    mirror_pose_rotation,
    mirror_x_rest_matrix,
    mirroring_matrix,
)
from quat_ik_addon.solver.limits.window_shapes import cone_polygon, elliptic_polygon, rectangle_window
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.rest_pose import bone_rest_matrix3
from quat_ik_addon.solver.rig.spec_chain import solver_limit

DATA = Path(__file__).parent / "data"

# bpy.utils.flip_name(name) and flip_name(name, strip_digits=True) as printed by bpy 5.0.1.
FLIPPED_BY_BLENDER = {
    "hand.L": ("hand.R", "hand.R"),
    "hand.R": ("hand.L", "hand.L"),
    "hand_l": ("hand_r", "hand_r"),
    "hand-L": ("hand-R", "hand-R"),
    "hand L": ("hand R", "hand R"),
    "L.hand": ("R.hand", "R.hand"),
    "R_hand": ("L_hand", "L_hand"),
    "l-hand": ("r-hand", "r-hand"),
    "r hand": ("l hand", "l hand"),
    "hand.L.001": ("hand.R.001", "hand.R"),
    "hand.R.012": ("hand.L.012", "hand.L"),
    "LeftHand": ("RightHand", "RightHand"),
    "rightHand": ("leftHand", "leftHand"),
    "handLeft": ("handRight", "handRight"),
    "hand_right": ("hand_left", "hand_left"),
    "LEFTHAND": ("RIGHTHAND", "RIGHTHAND"),
    "HANDRIGHT": ("HANDLEFT", "HANDLEFT"),
    "UpperLeftArm": ("UpperLeftArm", "UpperLeftArm"),
    "Left": ("Left", "Left"),
    "left1": ("left1", "left1"),
    "leftleft": ("rightleft", "rightleft"),
    "Rightleft": ("Leftleft", "Leftleft"),
    "hand.l.5": ("hand.r.5", "hand.r"),
    "hand.L.5a": ("hand.L.5a", "hand.L.5a"),
    "bone.1abc2": ("bone.1abc2", "bone"),
    "xL": ("xL", "xL"),
    "L": ("L", "L"),
    ".L": (".L", ".L"),
    "bright": ("bleft", "bleft"),
    "copyright": ("copyleft", "copyleft"),
    "hand.L.": ("hand.L.", "hand.L."),
    "hand..L": ("hand..R", "hand..R"),
    "mixamorig:LeftHand": ("mixamorig:LeftHand", "mixamorig:LeftHand"),
    "thigh.L.001.002": ("thigh.L.001.002", "thigh.L.001"),
    "hand.001": ("hand.001", "hand"),
    "LeftArm.003": ("RightArm.003", "RightArm"),
    "armLEft": ("armRIGHT", "armRIGHT"),
    "ArmRIght": ("ArmLEFT", "ArmLEFT"),
    "Righty": ("Lefty", "Lefty"),
    "Lefty": ("Lefty", "Lefty"),
    "foot_l_ik": ("foot_l_ik", "foot_l_ik"),
    "ñleft": ("ñright", "ñright"),
    "Ñ.L": ("Ñ.R", "Ñ.R"),
    "L.R": ("L.L", "L.L"),
    "hand.L.001.R": ("hand.L.001.L", "hand.L.001.L"),
}


@pytest.mark.parametrize("name", sorted(FLIPPED_BY_BLENDER))
def test_mirror_name_matches_blender(name: str) -> None:
    flipped, stripped = FLIPPED_BY_BLENDER[name]
    assert mirror_name(name) == flipped
    assert mirror_name(name, strip_number=True) == stripped


@pytest.mark.parametrize("name", ["upper_arm.L", "hand_r.003", "LeftFoot", "R-thumb", "toeRight", "finger.l"])
def test_mirror_name_round_trips(name: str) -> None:
    assert mirror_name(name) != name
    assert mirror_name(mirror_name(name)) == name


# --------------------------------------------------------------------------- frames


def test_mirror_x_rest_matrix_is_what_symmetrize_builds() -> None:
    """Mirrored head and tail with the roll negated give M R D (Blender's vec_roll_to_mat3)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        head, tail, roll = rng.normal(size=3), rng.normal(size=3), rng.uniform(-np.pi, np.pi)
        source = bone_rest_matrix3(head, tail, roll)
        target = bone_rest_matrix3(MIRROR_X @ head, MIRROR_X @ tail, -roll)
        np.testing.assert_array_equal(target, mirror_x_rest_matrix(source))


def test_exact_mirror_pose_is_blenders_paste_flipped() -> None:
    rng = np.random.default_rng(8)
    rest = quat.to_matrix(quat.normalize(rng.normal(size=4)))
    q = quat.normalize(rng.normal(size=(50, 4)))
    mirrored = mirror_pose_rotation(q, rest, mirror_x_rest_matrix(rest))
    expected = quat.canonical(q * np.array([1.0, 1.0, -1.0, -1.0]))
    np.testing.assert_allclose(mirrored, expected, atol=1e-12)


def test_bones_that_are_not_mirror_images_are_refused() -> None:
    rest = bone_rest_matrix3((0, 0, 0), (1, 0, 0), 0.0)
    tilted = bone_rest_matrix3((0, 0, 0), (-1, 0.2, 0), 0.0)
    with pytest.raises(ValueError, match="not mirror images"):
        mirroring_matrix(rest, tilted)
    with pytest.raises(ValueError, match="rotation"):
        mirroring_matrix(np.diag([1.0, 1.0, -1.0]), rest)


def test_roll_difference_is_found() -> None:
    rest = bone_rest_matrix3((0.1, 0.2, 0.0), (0.5, 0.1, 0.3), 0.4)
    rolled = bone_rest_matrix3(MIRROR_X @ (0.1, 0.2, 0.0), MIRROR_X @ np.array((0.5, 0.1, 0.3)), -0.4 + 0.3)
    np.testing.assert_array_equal(mirroring_matrix(rest, mirror_x_rest_matrix(rest)), MIRROR_X)
    reflection = mirroring_matrix(rest, rolled)
    np.testing.assert_allclose(reflection, rolled.T @ MIRROR_X @ rest, atol=1e-12)
    assert np.linalg.det(reflection) == pytest.approx(-1.0)


# --------------------------------------------------------------------------- limits


def _arm_limits() -> list[spec.JointLimit]:
    rig = spec.load_rig_spec(DATA / "arm3.rig.json")
    return [rig.limit_for(name) for name in rig.bone_names]


def _hand_made_limits() -> list[spec.JointLimit]:
    tilted = (0.3, 0.8, -0.5)
    return [
        spec.BallLimit(
            windows=(
                rectangle_window((-30, 70), (-10, 45)),
                cone_polygon(35.0, 7, center=tilted, rotation_deg=10.0),
                elliptic_polygon((50.0, 20.0), 9, center=(1.0, 0.2, 0.0), x_axis=(0.0, 1.0, 1.0)),
                spec.EllipticConeWindow(
                    half_angles_deg=(40.0, 15.0), center=(-1.0, 0.0, 0.0)
                ),  # default u falls back to Z
                spec.PolygonWindow(vertices_deg=((-20, -20), (25, -10), (5, 30)), center=(1.0, 0.0, 0.0)),
                spec.ConeWindow(half_angle_deg=120.0, center=(0.2, -1.0, 0.4)),
            ),
            twist_deg=(-35.0, 80.0),
            stiffness=0.25,
        ),
        spec.BallLimit(  # a preset fitted to another rest: twist measured through a reference
            windows=(cone_polygon(50.0, 8, center=tilted),),
            twist_deg=(-60.0, 45.0),
            twist_reference=(0.8, 0.2, -0.4, 0.4),
        ),
        spec.HingeLimit(axis=(0.0, 1.0, 0.0), range_deg=(-80.0, 60.0)),
        spec.HingeLimit(axis=(-1.0, 0.2, 0.3), range_deg=(5.0, 150.0), stiffness=0.1),
        spec.HingeLimit(axis=(0.0, 0.0, 1.0)),
        spec.FreeLimit(stiffness=0.5),
        spec.FixedLimit(),
    ]


LIMITS = _arm_limits() + _hand_made_limits()


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: type(limit).__name__)
def test_exact_mirror_twice_gives_back_the_same_numbers(limit: spec.JointLimit) -> None:
    once = mirror_limit_exact(limit)
    assert mirror_limit_exact(once) == limit
    assert spec.RigSpec(name="m", bones=(spec.BoneSpec(name="b", head=(0, 0, 0), tail=(0, 1, 0)),), limits={"b": once})


def test_exact_mirror_flips_signs_as_documented() -> None:
    ball = spec.BallLimit(
        windows=(spec.PolygonWindow(vertices_deg=((-40, -30), (50, -30), (60, 40))),), twist_deg=(-10.0, 70.0)
    )
    mirrored = mirror_limit_exact(ball)
    assert mirrored.windows[0].vertices_deg == ((40.0, -30.0), (-50.0, -30.0), (-60.0, 40.0))
    assert mirrored.windows[0].x_axis is None
    assert mirrored.twist_deg == (-70.0, 10.0)
    knee = spec.HingeLimit(axis=(1.0, 0.0, 0.0), range_deg=(0.5, 170.0))
    assert mirror_limit_exact(knee) == knee
    twist_hinge = mirror_limit_exact(spec.HingeLimit(axis=(0.0, 1.0, 0.0), range_deg=(-80.0, 60.0)))
    assert twist_hinge.axis == (0.0, 1.0, 0.0) and twist_hinge.range_deg == (-60.0, 80.0)


def _rest_pair(rng: np.random.Generator, roll_difference: float) -> tuple[np.ndarray, np.ndarray]:
    head, tail, roll = rng.normal(size=3), rng.normal(size=3), rng.uniform(-np.pi, np.pi)
    source = bone_rest_matrix3(head, tail, roll)
    target = bone_rest_matrix3(MIRROR_X @ head, MIRROR_X @ tail, -roll + roll_difference)
    return source, target


def _test_poses(limit: spec.JointLimit, rng: np.random.Generator, count: int) -> np.ndarray:
    """Uniform poses, poses inside the limit, and poses just either side of its boundary."""
    solver = solver_limit(limit)
    uniform = quat.normalize(rng.normal(size=(count, 4)))
    inside = solver.sample(rng, count)
    clamped = solver.clamp(uniform)
    axes = rng.normal(size=(count, 3))
    nudge = quat.from_axis_angle(axes / np.linalg.norm(axes, axis=1, keepdims=True), rng.uniform(0.0, 0.02, count))
    return np.concatenate((uniform, inside, clamped, quat.multiply(nudge, clamped)))


@pytest.mark.parametrize("roll_difference", [0.0, 0.7, -2.5])
@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: type(limit).__name__)
def test_mirrored_poses_keep_their_side_of_the_mirrored_limit(limit: spec.JointLimit, roll_difference: float) -> None:
    """A mirrored pose is as far outside the mirrored limit as the pose is outside the limit:
    inside stays inside, outside stays outside (the mirror is an isometry of rotations)."""
    rng = np.random.default_rng(11)
    source_rest, target_rest = _rest_pair(rng, roll_difference)
    mirrored_limit = mirror_limit(limit, source_rest, target_rest)
    poses = _test_poses(limit, rng, 400)
    mirrored_poses = mirror_pose_rotation(poses, source_rest, target_rest)
    before = solver_limit(limit).violation(poses)
    after = solver_limit(mirrored_limit).violation(mirrored_poses)
    np.testing.assert_allclose(after, before, atol=1e-9)
    assert np.any(before > 1e-3) or isinstance(limit, spec.FreeLimit)
    assert np.any(before == 0.0)


@pytest.mark.parametrize("limit", LIMITS, ids=lambda limit: type(limit).__name__)
def test_mirroring_there_and_back_with_rolls_is_the_identity(limit: spec.JointLimit) -> None:
    rng = np.random.default_rng(12)
    source_rest, target_rest = _rest_pair(rng, 1.1)
    back = mirror_limit(mirror_limit(limit, source_rest, target_rest), target_rest, source_rest)
    _assert_limits_close(back, limit)
    poses = _test_poses(limit, rng, 200)
    np.testing.assert_allclose(solver_limit(back).violation(poses), solver_limit(limit).violation(poses), atol=1e-9)


def _assert_limits_close(got: spec.JointLimit, expected: spec.JointLimit) -> None:
    assert type(got) is type(expected)
    if isinstance(expected, spec.BallLimit):
        assert got.twist_deg == expected.twist_deg and got.stiffness == expected.stiffness
        assert (got.twist_reference is None) == (expected.twist_reference is None)
        if expected.twist_reference is not None:
            assert quat.angle_between(np.array(got.twist_reference), np.array(expected.twist_reference)) < 1e-9
        for window, original in zip(got.windows, expected.windows, strict=True):
            assert type(window) is type(original)
            np.testing.assert_allclose(
                np.asarray(window.center) / np.linalg.norm(window.center),
                np.asarray(original.center) / np.linalg.norm(original.center),
                atol=1e-9,
            )
            for name in ("vertices_deg", "half_angles_deg", "half_angle_deg"):
                if hasattr(original, name):
                    np.testing.assert_allclose(getattr(window, name), getattr(original, name), atol=1e-9)
    elif isinstance(expected, spec.HingeLimit):
        np.testing.assert_allclose(got.axis, expected.axis, atol=1e-9)
        if expected.range_deg is not None:
            np.testing.assert_allclose(got.range_deg, expected.range_deg, atol=1e-9)
    else:
        assert got == expected


@settings(max_examples=40, deadline=None)
@given(
    a=st.floats(-80, 80),
    b=st.floats(-80, 80),
    size=st.floats(2, 40),
    twist=st.tuples(st.floats(-180, 180), st.floats(-180, 180)).map(sorted),
    center=st.tuples(st.floats(-1, 1), st.floats(0.1, 1), st.floats(-1, 1)),
    seed=st.integers(0, 2**32 - 1),
)
def test_mirror_random_windows(a, b, size, twist, center, seed) -> None:
    """Random rectangles and twist ranges: exact round trip, and an isometry on poses."""
    u0, v0 = max(a - size, -89.0), max(b - size, -89.0)
    u1, v1 = min(a + size, 89.0), min(b + size, 89.0)
    window = rectangle_window((u0, u1), (v0, v1), center=center)
    limit = spec.BallLimit(windows=(window,), twist_deg=tuple(twist))
    mirrored = mirror_limit_exact(limit)
    assert mirror_limit_exact(mirrored) == limit
    rng = np.random.default_rng(seed)
    rest = quat.to_matrix(quat.normalize(rng.normal(size=4)))
    poses = _test_poses(limit, rng, 50)
    flipped = mirror_pose_rotation(poses, rest, mirror_x_rest_matrix(rest))
    np.testing.assert_allclose(
        solver_limit(mirrored).violation(flipped), solver_limit(limit).violation(poses), atol=1e-9
    )


def test_mirrored_twist_range_is_negated_even_with_rolls() -> None:
    rng = np.random.default_rng(3)
    source_rest, target_rest = _rest_pair(rng, 0.9)
    limit = spec.BallLimit(windows=(spec.ConeWindow(half_angle_deg=40.0),), twist_deg=(-20.0, 75.0))
    mirrored = mirror_limit(limit, source_rest, target_rest)
    assert mirrored.twist_deg == (-75.0, 20.0)
    assert math.isclose(mirrored.windows[0].half_angle_deg, 40.0)
