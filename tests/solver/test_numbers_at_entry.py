"""Numbers are checked once, where they enter, for what the arithmetic after them can hold: a
rig spec's file (one error naming the file, bone and field) and the solver's classes built
through the Python API (a ValueError at construction, never an error or a wrong answer in
the middle of a solve)."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import LARGEST_SIZE, SMALLEST_REACH, Chain
from quat_ik_addon.solver.cli import main
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.rig.spec import RigSpecError, loads_rig_spec
from quat_ik_addon.solver.solve import solve

ARM3 = Path(__file__).resolve().parent / "data" / "arm3.rig.json"
X, Y, Z = np.eye(3)
HUGE_INTEGER = 10**400  # written by json as "1" and 400 zeros: no float holds it


@pytest.fixture
def arm3() -> dict:
    return json.loads(ARM3.read_text(encoding="utf-8"))


def _with_every_limit_field(spec: dict) -> dict:
    """arm3 with one limit of each kind and every optional field, so every numeric field is present."""
    spec = copy.deepcopy(spec)
    spec["limits"]["upper_arm"]["windows"].append(
        {"shape": "elliptic_cone", "center": [0, 1, 0], "x_axis": [1, 0, 0], "half_angles_deg": [30, 20]}
    )
    spec["limits"]["upper_arm"]["windows"][0]["x_axis"] = [1, 0, 0]
    spec["limits"]["upper_arm"]["twist_reference"] = [1, 0, 0, 0]
    return spec


# Every number a rig spec holds: (path into the JSON, the field its error names).
NUMERIC_FIELDS = {
    "roll": (("bones", 1, "roll_deg"), "bone 'forearm': roll_deg"),
    "head": (("bones", 1, "head", 0), "bone 'forearm': head[0]"),
    "tail": (("bones", 2, "tail", 1), "bone 'hand': tail[1]"),
    "effector_offset": (("chains", 0, "effector_offset", 2), "chain 'arm': effector_offset[2]"),
    "hinge_axis": (("limits", "forearm", "axis", 0), "bone 'forearm': limits.axis[0]"),
    "hinge_range": (("limits", "forearm", "range_deg", 1), "bone 'forearm': limits.range_deg[1]"),
    "stiffness": (("limits", "forearm", "stiffness"), "bone 'forearm': limits.stiffness"),
    "twist": (("limits", "upper_arm", "twist_deg", 0), "bone 'upper_arm': limits.twist_deg[0]"),
    "twist_reference": (
        ("limits", "upper_arm", "twist_reference", 3),
        "bone 'upper_arm': limits.twist_reference[3]",
    ),
    "cone_center": (
        ("limits", "upper_arm", "windows", 1, "center", 0),
        "bone 'upper_arm': limits.windows[1].center[0]",
    ),
    "cone_half_angle": (
        ("limits", "upper_arm", "windows", 1, "half_angle_deg"),
        "bone 'upper_arm': limits.windows[1].half_angle_deg",
    ),
    "polygon_center": (
        ("limits", "upper_arm", "windows", 0, "center", 1),
        "bone 'upper_arm': limits.windows[0].center[1]",
    ),
    "polygon_x_axis": (
        ("limits", "upper_arm", "windows", 0, "x_axis", 0),
        "bone 'upper_arm': limits.windows[0].x_axis[0]",
    ),
    "polygon_corner": (
        ("limits", "upper_arm", "windows", 0, "vertices_deg", 2, 1),
        "bone 'upper_arm': limits.windows[0].vertices_deg[2][1]",
    ),
    "ellipse_center": (
        ("limits", "upper_arm", "windows", 2, "center", 2),
        "bone 'upper_arm': limits.windows[2].center[2]",
    ),
    "ellipse_x_axis": (
        ("limits", "upper_arm", "windows", 2, "x_axis", 0),
        "bone 'upper_arm': limits.windows[2].x_axis[0]",
    ),
    "ellipse_half_angle": (
        ("limits", "upper_arm", "windows", 2, "half_angles_deg", 0),
        "bone 'upper_arm': limits.windows[2].half_angles_deg[0]",
    ),
}


def _set(data: dict, path: tuple, value: object) -> None:
    *parents, last = path
    for key in parents:
        data = data[key]
    data[last] = value


def _text_with(spec: dict, path: tuple, value: object) -> str:
    spec = _with_every_limit_field(spec)
    _set(spec, path, value)
    return json.dumps(spec)


def test_every_numeric_field_is_reached_by_the_table(arm3) -> None:
    """The table's paths exist in the spec they edit (else a test below would check nothing)."""
    spec = _with_every_limit_field(arm3)
    loads_rig_spec(json.dumps(spec))  # valid as it stands
    for path, _field in NUMERIC_FIELDS.values():
        node = spec
        for key in path:
            node = node[key]
        assert isinstance(node, (int, float)), path


@pytest.mark.parametrize("name", sorted(NUMERIC_FIELDS))
def test_a_json_integer_too_large_for_a_float_names_its_field(arm3, name) -> None:
    path, field = NUMERIC_FIELDS[name]
    with pytest.raises(RigSpecError) as caught:
        loads_rig_spec(_text_with(arm3, path, HUGE_INTEGER), source="big.rig.json")
    message = str(caught.value)
    assert message.startswith(f"big.rig.json: {field}: an integer of about 401 digits is too large"), message
    assert "\n" not in message


@pytest.mark.parametrize("value", [1e200, -1e13, float("nan"), float("inf")], ids=["1e200", "-1e13", "nan", "inf"])
@pytest.mark.parametrize("name", sorted(NUMERIC_FIELDS))
def test_a_number_past_what_the_arithmetic_holds_names_its_field(arm3, name, value) -> None:
    """NaN and infinity (JSON's NaN and Infinity) are not numbers; past ±1e12 a direction's squared
    length, or a coordinate in Blender's single precision, runs out of range or digits."""
    path, field = NUMERIC_FIELDS[name]
    with pytest.raises(RigSpecError) as caught:
        loads_rig_spec(_text_with(arm3, path, value), source="big.rig.json")
    message = str(caught.value)
    assert message.startswith(f"big.rig.json: {field}: "), message
    assert ("too large" in message) == math.isfinite(value), message


def test_the_command_line_reports_a_huge_integer_in_one_line(tmp_path, capsys) -> None:
    spec = json.loads(ARM3.read_text(encoding="utf-8"))
    spec["bones"][0]["roll_deg"] = HUGE_INTEGER
    path = tmp_path / "big.rig.json"
    path.write_text(json.dumps(spec))
    (tmp_path / "targets.json").write_text("[[0.1, 0.4, 0.2]]")
    assert main(["solve", str(path), "--targets", str(tmp_path / "targets.json")]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        f"error: {path}: bone 'upper_arm': roll_deg: an integer of about 401 digits is too large: numbers lie within ±1e+12"
    ]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("limits", "forearm", "axis"), [0, 0, 0], "non-zero direction"),
        (("limits", "upper_arm", "twist_reference"), [0, 0, 0, 0], "non-zero quaternion"),
        (("limits", "upper_arm", "windows", 1, "half_angle_deg"), 0, r"must be in \(0, 180\]"),
        (("limits", "upper_arm", "windows", 1, "half_angle_deg"), 180.5, r"must be in \(0, 180\]"),
        (("limits", "upper_arm", "windows", 2, "half_angles_deg"), [0, 20], r"\[0.01, 90\)"),
        (("limits", "upper_arm", "windows", 2, "half_angles_deg"), [30, 90], r"\[0.01, 90\)"),
        (("limits", "upper_arm", "windows", 0, "vertices_deg"), [[0, 0], [10, 0]], "at least 3 vertices"),
        (("limits", "upper_arm", "windows", 0, "vertices_deg"), [[0, 0], [10, 0], [20, 0]], "zero area"),
        (("limits", "upper_arm", "windows", 0, "vertices_deg"), [[0, 0], [10, 0], [0, 0]], "same point"),
        (("limits", "upper_arm", "windows", 0, "vertices_deg"), [[0, 0], [90, 0], [0, 20]], "below 90"),
        (("limits", "upper_arm", "windows", 0, "x_axis"), [0, 3, 0], "parallel to center"),
        (("limits", "forearm", "stiffness"), 1.5, r"in \[0, 1\]"),
        (("limits", "forearm", "stiffness"), -0.1, r"in \[0, 1\]"),
        (("limits", "forearm", "range_deg"), [-400, 10], r"outside \[-360, 360\]"),
        (("bones", 1, "tail"), [0.0, 0.3, 1e-10], "zero length"),
    ],
    ids=[
        "zero_axis",
        "zero_twist_reference",
        "zero_cone",
        "cone_past_180",
        "zero_ellipse",
        "ellipse_at_90",
        "two_corners",
        "collinear_corners",
        "repeated_corner",
        "corner_at_90",
        "x_axis_along_centre",
        "stiffness_above_1",
        "stiffness_below_0",
        "range_past_a_turn",
        "bone_shorter_than_1e-9",
    ],
)
def test_values_out_of_range_name_their_field(arm3, path, value, message) -> None:
    with pytest.raises(RigSpecError, match=message):
        loads_rig_spec(_text_with(arm3, path, value))


# ----------------------------------------------------------------------------- the solver's classes


def _hinge_rotation(axis: np.ndarray, degrees: float) -> np.ndarray:
    return quat.from_axis_angle(axis, math.radians(degrees))[None, :]


@pytest.mark.parametrize("scale", [1e200, 1e-200, 1e-13], ids=["1e200", "1e-200", "1e-13"])
def test_a_hinge_axis_of_any_finite_length_is_the_axis_and_its_violation_agrees(scale) -> None:
    """[1e200, 0, 0] squared overflows: normalised naively it would be the zero vector, the clamp
    would leave the bone 30° outside its range and the violation would report 0."""
    hinge = HingeJoint(scale * X, AngleRange(math.radians(-30), math.radians(30)))
    np.testing.assert_array_equal(hinge.axis, X)
    outside = _hinge_rotation(X, 60.0)
    assert hinge.violation(outside)[0] == pytest.approx(math.radians(30), abs=1e-12)
    clamped = hinge.clamp(outside)
    assert quat.angle_between(clamped, _hinge_rotation(X, 30.0))[0] == pytest.approx(0.0, abs=1e-12)
    assert hinge.violation(clamped)[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("scale", [1e200, 1e-200], ids=["1e200", "1e-200"])
def test_a_window_centre_of_any_finite_length_is_its_direction_and_its_violation_agrees(scale) -> None:
    """A cone centred on [1e200, 0, 0] let the bone end 61° outside it while the violation said 0."""
    ball = BallJoint((ConeWindow(scale * X, math.radians(29)),))
    np.testing.assert_array_equal(ball.windows[0].center, X)
    along_y = quat.IDENTITY[None, :]  # the bone along +Y: 90° from +X, 61° outside the cone
    assert ball.violation(along_y)[0] == pytest.approx(math.radians(61), abs=1e-9)
    clamped = ball.clamp(along_y)
    assert ball.violation(clamped)[0] == pytest.approx(0.0, abs=1e-9)
    assert quat.rotate_y_axis(clamped)[0] @ X == pytest.approx(math.cos(math.radians(29)), abs=1e-9)
    for window in (
        EllipticConeWindow(scale * Y, scale * X, scale * Z, (0.5, 0.3)),
        PolygonWindow(scale * Y, scale * X, scale * Z, np.tan(np.radians([(-20, -20), (20, -20), (0, 30)]))),
    ):
        np.testing.assert_allclose(np.stack((window.center, window.plane_x, window.plane_y)), np.eye(3)[[1, 0, 2]])
        assert window.contains(Y[None, :])[0]


def test_a_zero_half_angle_elliptic_cone_is_refused_where_it_is_built() -> None:
    """It divided by zero in the middle of a solve."""
    with pytest.raises(ValueError, match="elliptic window half-angle must be in"):
        EllipticConeWindow(Y, X, Z, (0.0, 0.3))


BAD_CLASSES = {
    "ellipse_negative": lambda: EllipticConeWindow(Y, X, Z, (-0.1, 0.3)),
    "ellipse_at_90": lambda: EllipticConeWindow(Y, X, Z, (0.3, math.pi / 2)),
    "ellipse_nan": lambda: EllipticConeWindow(Y, X, Z, (float("nan"), 0.3)),
    "ellipse_one_angle": lambda: EllipticConeWindow(Y, X, Z, (0.3,)),
    "ellipse_zero_centre": lambda: EllipticConeWindow(0 * Y, X, Z, (0.3, 0.3)),
    "ellipse_inf_axis": lambda: EllipticConeWindow(Y, np.array([np.inf, 0.0, 0.0]), Z, (0.3, 0.3)),
    "cone_zero": lambda: ConeWindow(Y, 0.0),
    "cone_past_pi": lambda: ConeWindow(Y, 3.2),
    "cone_nan": lambda: ConeWindow(Y, float("nan")),
    "cone_zero_centre": lambda: ConeWindow(np.zeros(3), 0.5),
    "cone_nan_centre": lambda: ConeWindow(np.array([np.nan, 1.0, 0.0]), 0.5),
    "polygon_two_corners": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1, 0)]),
    "polygon_repeated_corner": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1, 0), (0, 0)]),
    "polygon_collinear": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1, 0), (2, 0)]),
    "polygon_not_convex": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1, 0), (0.2, 0.2), (0, 1)]),
    "polygon_nan_corner": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1, np.nan), (0, 1)]),
    "polygon_huge_corner": lambda: PolygonWindow(Y, X, Z, [(0, 0), (1e300, 0), (0, 1)]),
    "polygon_parallel_axes": lambda: PolygonWindow(Y, X, X, [(0, 0), (1, 0), (0, 1)]),
    "polygon_axes_along_centre": lambda: PolygonWindow(Y, X, Y, [(0, 0), (1, 0), (0, 1)]),
    "hinge_zero_axis": lambda: HingeJoint(np.zeros(3)),
    "hinge_nan_axis": lambda: HingeJoint(np.array([np.nan, 0.0, 0.0])),
    "hinge_stiffness_above_1": lambda: HingeJoint(X, None, 1.5),
    "hinge_stiffness_nan": lambda: HingeJoint(X, None, float("nan")),
    "hinge_range_not_a_range": lambda: HingeJoint(X, (0.0, 1.0)),
    "ball_stiffness_negative": lambda: BallJoint((), None, stiffness=-0.1),
    "ball_zero_twist_reference": lambda: BallJoint((), AngleRange(-1, 1), twist_reference=np.zeros(4)),
    "ball_nan_twist_reference": lambda: BallJoint((), AngleRange(-1, 1), twist_reference=[np.nan, 0, 0, 0]),
    "free_stiffness_above_1": lambda: FreeJoint(2.0),
    "fixed_stiffness_inf": lambda: FixedJoint(float("inf")),
    "range_nan": lambda: AngleRange(float("nan"), 1.0),
    "range_huge_integer": lambda: AngleRange(0.0, HUGE_INTEGER),
}


@pytest.mark.parametrize("name", sorted(BAD_CLASSES))
def test_bad_values_are_refused_where_a_limit_is_built(name) -> None:
    with pytest.raises(ValueError):
        BAD_CLASSES[name]()


def test_a_huge_twist_reference_is_its_rotation() -> None:
    ball = BallJoint((), AngleRange(-1, 1), twist_reference=[1e200, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ball.twist_reference, quat.IDENTITY)


# ----------------------------------------------------------------------------- chains


def _scaled(chain: Chain, scale: float) -> Chain:
    return Chain(
        chain.bone_names,
        chain.rest_rotations,
        chain.rest_offsets * scale,
        chain.lengths * scale,
        chain.limits,
        chain.effector_offset * scale,
    )


BAD_CHAINS = {
    "length_nan": lambda c: Chain(c.bone_names, c.rest_rotations, c.rest_offsets, [0.3, np.nan, 0.1], c.limits),
    "length_zero": lambda c: Chain(c.bone_names, c.rest_rotations, c.rest_offsets, [0.3, 0.0, 0.1], c.limits),
    "length_huge": lambda c: Chain(c.bone_names, c.rest_rotations, c.rest_offsets, [0.3, 1e60, 0.1], c.limits),
    "offset_huge": lambda c: Chain(c.bone_names, c.rest_rotations, c.rest_offsets + 1e60, c.lengths, c.limits),
    "effector_offset_inf": lambda c: Chain(
        c.bone_names, c.rest_rotations, c.rest_offsets, c.lengths, c.limits, [0, np.inf, 0]
    ),
    "reach_tiny": lambda c: _scaled(c, 1e-12),
    "rest_rotation_zero": lambda c: Chain(
        c.bone_names, np.zeros((3, 4)), c.rest_offsets, c.lengths, c.limits, c.effector_offset
    ),
    "rest_rotation_nan": lambda c: Chain(
        c.bone_names, np.full((3, 4), np.nan), c.rest_offsets, c.lengths, c.limits, c.effector_offset
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_CHAINS))
def test_bad_values_are_refused_where_a_chain_is_built(name) -> None:
    with pytest.raises(ValueError):
        BAD_CHAINS[name](reference_chains.arm3())


def test_a_rest_rotation_of_huge_components_is_its_rotation() -> None:
    chain = reference_chains.arm3()
    huge = Chain(chain.bone_names, 1e200 * chain.rest_rotations, chain.rest_offsets, chain.lengths, chain.limits)
    np.testing.assert_allclose(huge.rest_rotations, chain.rest_rotations, atol=1e-15)


@pytest.mark.parametrize("scale", [SMALLEST_REACH / 0.65, LARGEST_SIZE], ids=["smallest_reach", "largest_size"])
def test_chains_at_the_sizes_allowed_solve_as_at_unit_size(scale, rng) -> None:
    """The bounds are where the solver still works: arm3 (reach 0.65) scaled to them meets the same
    goals, position and orientation, as at its own size."""
    chain = reference_chains.arm3()
    poses = chain.random_poses(rng, 8)
    goals = chain.forward_kinematics(poses)
    at_scale = _scaled(chain, scale)
    result = solve(at_scale, Goals(goals.effector * scale, goals.rotations[:, -1]))
    unit = solve(chain, Goals(goals.effector, goals.rotations[:, -1]))
    np.testing.assert_array_equal(result.converged, unit.converged)
    assert np.count_nonzero(result.converged) >= 6
    np.testing.assert_allclose(result.orientation_error, unit.orientation_error, atol=1e-6)
