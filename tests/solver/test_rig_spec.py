"""The rig spec: loading, saving, validation messages, window-plane geometry."""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quat_ik_addon.solver.limits.window_frames import (
    polygon_plane_problem,
    polygon_plane_vertices,
    polygon_signed_area,
    window_plane_axes,
)
from quat_ik_addon.solver.rig.spec import (
    FORMAT,
    BallLimit,
    BoneSpec,
    ChainSpec,
    ConeWindow,
    EllipticConeWindow,
    FixedLimit,
    FreeLimit,
    HingeLimit,
    PolygonWindow,
    RigSpec,
    RigSpecError,
    load_rig_spec,
    loads_rig_spec,
)
from quat_ik_addon.solver.rig.spec_chain import solver_limit

REPO = Path(__file__).resolve().parents[2]
ARM3 = REPO / "tests" / "solver" / "data" / "arm3.rig.json"
DOC = REPO / "docs" / "rig_spec.md"


@pytest.fixture
def arm3_dict() -> dict[str, Any]:
    return json.loads(ARM3.read_text(encoding="utf-8"))


# ----------------------------------------------------------------------------- the example file


def test_example_file_loads() -> None:
    spec = load_rig_spec(ARM3)
    assert spec.name == "arm3"
    assert spec.bone_names == ("upper_arm", "forearm", "hand")
    assert spec.chain_bones("arm") == ("upper_arm", "forearm", "hand")
    assert spec.bone("forearm").parent == "upper_arm"
    assert spec.bone("forearm").length == pytest.approx(0.25)
    shoulder = spec.limit_for("upper_arm")
    assert isinstance(shoulder, BallLimit)
    assert [type(w) for w in shoulder.windows] == [PolygonWindow, ConeWindow]
    assert shoulder.twist_deg == (-60.0, 60.0)
    elbow = spec.limit_for("forearm")
    assert isinstance(elbow, HingeLimit)
    assert elbow.range_deg == (0.5, 170.0)
    assert elbow.axis == (1.0, 0.0, 0.0)
    wrist = spec.limit_for("hand")
    assert isinstance(wrist, BallLimit)
    assert isinstance(wrist.windows[0], ConeWindow)
    assert wrist.twist_deg is None


def test_example_file_is_in_canonical_form() -> None:
    text = ARM3.read_text(encoding="utf-8")
    assert load_rig_spec(ARM3).dumps() == text


def test_documentation_example_is_valid_and_matches_its_description() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.DOTALL)
    assert blocks, "docs/rig_spec.md should show a complete example"
    specs = [loads_rig_spec(block) for block in blocks if '"format"' in block]
    assert specs
    assert specs[0].chains  # the complete example has a chain


def test_queries() -> None:
    spec = load_rig_spec(ARM3)
    assert spec.chain("arm").length == 3
    with pytest.raises(KeyError, match="no bone 'elbow'"):
        spec.bone("elbow")
    with pytest.raises(KeyError, match="no chain 'leg'"):
        spec.chain_bones("leg")
    with pytest.raises(KeyError):
        spec.limit_for("elbow")


def test_bones_without_an_entry_are_free() -> None:
    spec = RigSpec(name="two", bones=(BoneSpec(name="a", head=(0, 0, 0), tail=(0, 1, 0)),))
    assert spec.limit_for("a") == FreeLimit()
    assert spec.limit_for("a").stiffness == 0.0


def test_chain_by_root_counts_from_the_tip() -> None:
    spec = RigSpec(
        name="leg",
        bones=(
            BoneSpec(name="hip", head=(0, 0, 1), tail=(0, 0, 0.9)),
            BoneSpec(name="thigh", head=(0, 0, 0.9), tail=(0, 0, 0.5), parent="hip"),
            BoneSpec(name="shin", head=(0, 0, 0.5), tail=(0, 0, 0.1), parent="thigh"),
            BoneSpec(name="foot", head=(0, 0, 0.1), tail=(0, -0.1, 0), parent="shin"),
        ),
        chains=(ChainSpec(name="leg", tip="foot", root="thigh"), ChainSpec(name="just_foot", tip="foot", length=1)),
    )
    assert spec.chain_bones("leg") == ("thigh", "shin", "foot")
    assert spec.chain_bones("just_foot") == ("foot",)


def test_parents_may_be_listed_after_children() -> None:
    spec = RigSpec(
        name="reversed",
        bones=(
            BoneSpec(name="child", head=(0, 1, 0), tail=(0, 2, 0), parent="root"),
            BoneSpec(name="root", head=(0, 0, 0), tail=(0, 1, 0)),
        ),
        chains=(ChainSpec(name="c", tip="child", length=2),),
    )
    assert spec.chain_bones("c") == ("root", "child")


# ----------------------------------------------------------------------------- dataclasses


def test_dataclasses_are_frozen_and_normalise_sequences_to_tuples() -> None:
    bone = BoneSpec(name="a", head=[0, 0, 0], tail=np.array([0.0, 1.0, 0.0]), roll_deg=5)
    assert bone.head == (0.0, 0.0, 0.0) and isinstance(bone.tail, tuple)
    assert isinstance(bone.roll_deg, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        bone.name = "b"  # type: ignore[misc]
    window = PolygonWindow(vertices_deg=[[-30, -45], [30, -45], [30, 45], [-30, 45]])
    assert window.vertices_deg[0] == (-30.0, -45.0)
    assert window.center == (0.0, 1.0, 0.0)
    limit = BallLimit(windows=[window], twist_deg=[-10, 10])
    assert limit.windows == (window,) and limit.twist_deg == (-10.0, 10.0)


def test_direct_construction_is_validated_too() -> None:
    with pytest.raises(RigSpecError, match=r"range_deg: min 170 > max 10"):
        HingeLimit(range_deg=(170, 10))
    with pytest.raises(RigSpecError, match=r"bone 'ghost': limits: there is no bone of this name"):
        RigSpec(
            name="r",
            bones=(BoneSpec(name="a", head=(0, 0, 0), tail=(0, 1, 0)),),
            limits={"ghost": FixedLimit()},
        )


def test_spec_equality_and_dict_round_trip() -> None:
    spec = load_rig_spec(ARM3)
    assert RigSpec.from_dict(spec.to_dict()) == spec
    assert spec != dataclasses.replace(spec, name="other")


# ----------------------------------------------------------------------------- error messages


def _set(path: str, value: Any) -> Callable[[dict], None]:
    """A mutation setting a value at a dotted path ("limits.forearm.range_deg", "bones.1.parent")."""

    def mutate(data: dict) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return mutate


def _delete(path: str) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        del target[last]

    return mutate


def _polygon(vertices: list) -> Callable[[dict], None]:
    return _set("limits.upper_arm.windows.0.vertices_deg", vertices)


def _add_bone(bone: dict) -> Callable[[dict], None]:
    return lambda data: data["bones"].append(bone)


NAN = float("nan")
INF = float("inf")

# (id, mutation of the arm3 example, substrings the message must contain)
ERROR_CASES: list[tuple[str, Callable[[dict], None], tuple[str, ...]]] = [
    ("unknown_format", _set("format", "other.rig"), ("format:", "quat_ik.rig_spec")),
    ("unknown_version", _set("version", 2), ("version:", "unsupported version 2")),
    ("version_as_text", _set("version", "1"), ("version:",)),
    ("missing_bones", _delete("bones"), ("bones: missing",)),
    ("unknown_top_key", _set("bone", []), ("unknown key 'bone'",)),
    ("name_not_text", _set("name", 3), ("name:", "expected a string")),
    (
        "duplicate_bone",
        _add_bone({"name": "hand", "head": [0, 0, 0], "tail": [0, 1, 0]}),
        ("bone 'hand'", "name:", "duplicate bone name"),
    ),
    ("unknown_parent", _set("bones.2.parent", "wrist"), ("bone 'hand'", "parent:", "'wrist' is not a bone")),
    ("self_parent", _set("bones.0.parent", "upper_arm"), ("bone 'upper_arm'", "parent:", "cycle")),
    ("parent_cycle", _set("bones.0.parent", "hand"), ("bone 'upper_arm'", "parent:", "cycle")),
    ("zero_length", _set("bones.1.tail", [0.0, 0.3, 0.0]), ("bone 'forearm'", "tail:", "zero length")),
    ("tiny_length", _set("bones.1.tail", [0.0, 0.3, 1e-10]), ("bone 'forearm'", "tail:", "zero length")),
    ("nan_head", _set("bones.1.head", [0.0, NAN, 0.0]), ("bone 'forearm'", "head[1]:", "finite")),
    ("inf_tail", _set("bones.1.tail", [INF, 0.3, 0.0]), ("bone 'forearm'", "tail[0]:", "finite")),
    ("nan_roll", _set("bones.0.roll_deg", NAN), ("bone 'upper_arm'", "roll_deg:", "finite")),
    ("text_roll", _set("bones.0.roll_deg", "90"), ("bone 'upper_arm'", "roll_deg:", "expected a number")),
    ("bool_coordinate", _set("bones.0.head", [0, True, 0]), ("bone 'upper_arm'", "head[1]:", "expected a number")),
    ("short_head", _set("bones.0.head", [0, 0]), ("bone 'upper_arm'", "head:", "expected 3 numbers, got 2")),
    ("head_not_list", _set("bones.0.head", "origin"), ("bone 'upper_arm'", "head:", "expected a list")),
    ("bone_name_missing", _delete("bones.1.name"), ("bones[1]", "name: missing")),
    ("bone_name_empty", _set("bones.1.name", ""), ("bones[1]", "name:")),
    ("bone_unknown_key", _set("bones.1.rol", 3), ("bone 'forearm'", "unknown key 'rol'")),
    ("bone_not_object", _set("bones.1", [1, 2]), ("bones[1]", "expected a JSON object")),
    ("unknown_limit_type", _set("limits.hand.type", "saddle"), ("bone 'hand'", "limits.type:", "unknown limit type")),
    ("limit_type_missing", _delete("limits.hand.type"), ("bone 'hand'", "limits.type: missing")),
    ("limit_unknown_key", _set("limits.forearm.limits", [0, 1]), ("bone 'forearm'", "limits:", "unknown key")),
    ("fixed_with_stiffness", _set("limits.hand", {"type": "fixed", "stiffness": 0.5}), ("bone 'hand'", "limits:")),
    (
        "limit_for_unknown_bone",
        _set("limits.elbow", {"type": "free"}),
        ("bone 'elbow'", "limits:", "no bone of this name"),
    ),
    (
        "unknown_window_shape",
        _set("limits.hand.windows.0.shape", "star"),
        ("bone 'hand'", "limits.windows[0].shape:", "unknown window shape"),
    ),
    (
        "window_missing_angle",
        _delete("limits.hand.windows.0.half_angle_deg"),
        ("bone 'hand'", "limits.windows[0].half_angle_deg: missing"),
    ),
    (
        "polygon_two_vertices",
        _polygon([[-10, -10], [10, 10]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "at least 3 vertices"),
    ),
    (
        "polygon_zero_area",
        _polygon([[-10, -10], [0, 0], [10, 10]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "zero area"),
    ),
    (
        "polygon_non_convex",
        _polygon([[-30, -30], [30, -30], [30, 30], [0, 0], [-30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "not convex"),
    ),
    (
        "polygon_bow_tie",
        _polygon([[-30, -30], [30, 30], [30, -30], [-30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "polygon crosses itself"),
    ),
    (
        "polygon_lopsided_bow_tie",
        _polygon([[-30, -30], [50, 40], [50, -30], [-30, 20]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "polygon crosses itself"),
    ),
    (
        "polygon_pentagram",
        _polygon([[30 * math.cos(a), 30 * math.sin(a)] for a in np.radians(90 + 144 * np.arange(5))]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "crosses itself"),
    ),
    (
        "polygon_repeated_vertex",
        _polygon([[-30, -30], [30, -30], [30, -30], [30, 30], [-30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg:", "same point"),
    ),
    (
        "polygon_angle_90",
        _polygon([[-30, -30], [90, -30], [30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg[1]:", "below 90"),
    ),
    (
        "polygon_angle_minus_120",
        _polygon([[-30, -30], [30, -120], [30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg[1]:", "below 90"),
    ),
    (
        "polygon_vertex_three_numbers",
        _polygon([[-30, -30, 0], [30, -30], [30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg[0]:", "expected 2 numbers"),
    ),
    (
        "polygon_nan_vertex",
        _polygon([[-30, NAN], [30, -30], [30, 30]]),
        ("bone 'upper_arm'", "limits.windows[0].vertices_deg[0][1]:", "finite"),
    ),
    (
        "zero_center",
        _set("limits.upper_arm.windows.1.center", [0, 0, 0]),
        ("bone 'upper_arm'", "limits.windows[1].center:", "non-zero"),
    ),
    (
        "nan_center",
        _set("limits.upper_arm.windows.1.center", [NAN, 1, 0]),
        ("bone 'upper_arm'", "limits.windows[1].center[0]:", "finite"),
    ),
    (
        "center_four_numbers",
        _set("limits.upper_arm.windows.1.center", [0, 1, 0, 0]),
        ("bone 'upper_arm'", "limits.windows[1].center:", "expected 3 numbers"),
    ),
    (
        "x_axis_parallel_to_center",
        _set("limits.upper_arm.windows.0.x_axis", [0, -2, 0]),
        ("bone 'upper_arm'", "limits.windows[0].x_axis:", "parallel"),
    ),
    ("zero_hinge_axis", _set("limits.forearm.axis", [0, 0, 0]), ("bone 'forearm'", "limits.axis:", "non-zero")),
    ("nan_hinge_axis", _set("limits.forearm.axis", [0, 0, NAN]), ("bone 'forearm'", "limits.axis[2]:", "finite")),
    (
        "cone_zero",
        _set("limits.hand.windows.0.half_angle_deg", 0),
        ("bone 'hand'", "limits.windows[0].half_angle_deg:", "(0, 180]"),
    ),
    (
        "cone_above_180",
        _set("limits.hand.windows.0.half_angle_deg", 180.5),
        ("bone 'hand'", "limits.windows[0].half_angle_deg:", "(0, 180]"),
    ),
    (
        "cone_negative",
        _set("limits.hand.windows.0.half_angle_deg", -5),
        ("bone 'hand'", "limits.windows[0].half_angle_deg:", "(0, 180]"),
    ),
    (
        "elliptic_90",
        _set("limits.hand.windows.0", {"shape": "elliptic_cone", "half_angles_deg": [90, 20]}),
        ("bone 'hand'", "limits.windows[0].half_angles_deg:", "[0.01, 90)"),
    ),
    (
        "elliptic_zero",
        _set("limits.hand.windows.0", {"shape": "elliptic_cone", "half_angles_deg": [30, 0]}),
        ("bone 'hand'", "limits.windows[0].half_angles_deg:", "[0.01, 90)"),
    ),
    (
        "elliptic_sliver",  # narrower, the closest point on the ellipse loses digits
        _set("limits.hand.windows.0", {"shape": "elliptic_cone", "half_angles_deg": [45, 0.005]}),
        ("bone 'hand'", "limits.windows[0].half_angles_deg:", "[0.01, 90)"),
    ),
    (
        "twist_min_above_max",
        _set("limits.upper_arm.twist_deg", [60, -60]),
        ("bone 'upper_arm'", "limits.twist_deg:", "min 60 > max -60"),
    ),
    (
        "twist_over_a_turn",
        _set("limits.upper_arm.twist_deg", [-200, 170]),
        ("bone 'upper_arm'", "limits.twist_deg:", "min -200 to max 170 spans more than one turn"),
    ),
    (
        "twist_three_numbers",
        _set("limits.upper_arm.twist_deg", [-20, 0, 20]),
        ("bone 'upper_arm'", "limits.twist_deg:", "expected 2 numbers"),
    ),
    (
        "hinge_min_above_max",
        _set("limits.forearm.range_deg", [170, 10]),
        ("bone 'forearm'", "limits.range_deg:", "min 170 > max 10"),
    ),
    (
        "hinge_outside_360",
        _set("limits.forearm.range_deg", [0.5, 390]),
        ("bone 'forearm'", "limits.range_deg:", "max 390 is outside [-360, 360]"),
    ),
    ("stiffness_above_1", _set("limits.forearm.stiffness", 1.5), ("bone 'forearm'", "limits.stiffness:", "[0, 1]")),
    ("stiffness_negative", _set("limits.upper_arm.stiffness", -0.1), ("bone 'upper_arm'", "limits.stiffness:")),
    ("stiffness_nan", _set("limits.hand.stiffness", NAN), ("bone 'hand'", "limits.stiffness:", "finite")),
    ("chain_tip_unknown", _set("chains.0.tip", "wrist"), ("chain 'arm'", "tip:", "'wrist' is not a bone")),
    ("chain_length_zero", _set("chains.0.length", 0), ("chain 'arm'", "length:", "at least 1")),
    (
        "chain_too_long",
        _set("chains.0.length", 5),
        ("chain 'arm'", "length:", "5 exceeds the 3 bones from 'hand' to the root"),
    ),
    ("chain_length_fraction", _set("chains.0.length", 2.5), ("chain 'arm'", "length:", "whole number")),
    (
        "chain_root_not_ancestor",
        _set("chains.0", {"name": "arm", "tip": "hand", "root": "hand_twin"}),
        ("chain 'arm'", "root:", "'hand_twin' is not 'hand' or an ancestor of it"),
    ),
    (
        "chain_length_and_root",
        _set("chains.0.root", "upper_arm"),
        ("chain 'arm'", "length:", "either length or root"),
    ),
    ("chain_neither", _delete("chains.0.length"), ("chain 'arm'", "length:", "give length or root")),
    (
        "chain_nan_offset",
        _set("chains.0.effector_offset", [0, 0, NAN]),
        ("chain 'arm'", "effector_offset[2]:", "finite"),
    ),
    (
        "duplicate_chain",
        lambda d: d["chains"].append(dict(d["chains"][0])),
        ("chain 'arm'", "name:", "duplicate chain name"),
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in ERROR_CASES], ids=[c[0] for c in ERROR_CASES])
def test_error_names_the_culprit_and_the_field(
    arm3_dict: dict, mutate: Callable[[dict], None], expected: tuple[str, ...]
) -> None:
    data = copy.deepcopy(arm3_dict)
    mutate(data)
    with pytest.raises(RigSpecError) as caught:
        RigSpec.from_dict(data)
    message = str(caught.value)
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"
    assert isinstance(caught.value, ValueError)
    # The same problem read from text names the same culprit.
    with pytest.raises(RigSpecError) as from_text:
        loads_rig_spec(json.dumps(data))
    assert str(from_text.value) == message


def test_root_that_is_not_an_ancestor(arm3_dict: dict) -> None:
    arm3_dict["bones"].append({"name": "spine", "head": [0, 0, -1], "tail": [0, 0, 0]})
    arm3_dict["chains"][0] = {"name": "arm", "tip": "hand", "root": "spine"}
    with pytest.raises(RigSpecError, match=r"chain 'arm': root: 'spine' is not 'hand' or an ancestor of it"):
        RigSpec.from_dict(arm3_dict)


def test_error_attributes_point_at_the_bone(arm3_dict: dict) -> None:
    arm3_dict["limits"]["forearm"]["range_deg"] = [170, 10]
    with pytest.raises(RigSpecError) as caught:
        RigSpec.from_dict(arm3_dict)
    err = caught.value
    assert str(err) == "bone 'forearm': limits.range_deg: min 170 > max 10"
    assert (err.bone, err.subject, err.field, err.problem) == (
        "forearm",
        "bone 'forearm'",
        "limits.range_deg",
        "min 170 > max 10",
    )
    arm3_dict["limits"]["forearm"]["range_deg"] = [0, 10]
    arm3_dict["chains"][0]["length"] = 9
    with pytest.raises(RigSpecError) as caught:
        RigSpec.from_dict(arm3_dict)
    assert caught.value.chain == "arm" and caught.value.bone is None


def test_bad_json_names_the_line() -> None:
    text = ARM3.read_text(encoding="utf-8").replace('"name": "forearm",', '"name": "forearm"', 1)
    line = next(i for i, row in enumerate(text.splitlines(), start=1) if '"name": "forearm"' in row)
    with pytest.raises(RigSpecError, match=rf"invalid JSON at line {line}, column \d+"):
        loads_rig_spec(text)


def test_json_keys_given_twice_are_rejected() -> None:
    text = ARM3.read_text(encoding="utf-8").replace(
        '"forearm": {"type": "hinge"', '"forearm": {"type": "fixed"}, "forearm": {"type": "hinge"'
    )
    with pytest.raises(RigSpecError, match=r"limits: key 'forearm' is given twice"):
        loads_rig_spec(text)


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(RigSpecError, match="expected a JSON object"):
        loads_rig_spec("[1, 2]")


def test_file_errors_name_the_file(tmp_path: Path, arm3_dict: dict) -> None:
    arm3_dict["bones"][2]["parent"] = "wrist"
    path = tmp_path / "broken.rig.json"
    path.write_text(json.dumps(arm3_dict), encoding="utf-8")
    with pytest.raises(RigSpecError) as caught:
        load_rig_spec(path)
    assert str(caught.value) == f"{path}: bone 'hand': parent: 'wrist' is not a bone"
    assert caught.value.source == str(path)
    with pytest.raises(OSError):
        load_rig_spec(tmp_path / "missing.rig.json")


def test_save_then_load(tmp_path: Path) -> None:
    spec = load_rig_spec(ARM3)
    path = tmp_path / "copy.rig.json"
    spec.save(path)
    assert load_rig_spec(path) == spec
    assert path.read_text(encoding="utf-8") == ARM3.read_text(encoding="utf-8")


def test_optional_fields_take_their_documented_defaults() -> None:
    spec = loads_rig_spec(
        json.dumps(
            {
                "format": FORMAT,
                "version": 1,
                "name": "minimal",
                "bones": [{"name": "a", "head": [0, 0, 0], "tail": [0, 0, 1]}],
                "limits": {
                    "a": {"type": "ball", "windows": [{"shape": "cone", "half_angle_deg": 45}]},
                },
            }
        )
    )
    bone = spec.bone("a")
    assert bone.parent is None and bone.roll_deg == 0.0
    assert spec.chains == ()
    limit = spec.limit_for("a")
    assert limit == BallLimit(windows=(ConeWindow(half_angle_deg=45.0),))
    assert limit.windows[0].center == (0.0, 1.0, 0.0)
    assert HingeLimit().axis == (1.0, 0.0, 0.0) and HingeLimit().range_deg is None


# ----------------------------------------------------------------------------- window geometry


def test_window_plane_axes_for_the_rest_direction() -> None:
    c, u, v = window_plane_axes((0, 1, 0))
    np.testing.assert_allclose(c, [0, 1, 0])
    np.testing.assert_allclose(u, [1, 0, 0])
    np.testing.assert_allclose(v, [0, 0, 1])
    np.testing.assert_allclose(window_plane_axes()[1], [1, 0, 0])


def test_window_plane_axes_fall_back_to_z_when_the_centre_is_along_x() -> None:
    c, u, v = window_plane_axes((2, 0, 0))
    np.testing.assert_allclose((c, u, v), [[1, 0, 0], [0, 0, 1], [0, 1, 0]])
    c, u, v = window_plane_axes((-1, 0, 0))
    np.testing.assert_allclose((c, u, v), [[-1, 0, 0], [0, 0, 1], [0, -1, 0]])


def test_window_plane_axes_honour_an_explicit_x_axis() -> None:
    c, u, v = window_plane_axes((0, 1, 0), x_axis=(1, 5, 1))
    np.testing.assert_allclose(u, np.array([1, 0, 1]) / math.sqrt(2))
    np.testing.assert_allclose(v, np.cross(u, c))
    with pytest.raises(ValueError, match="parallel"):
        window_plane_axes((0, 1, 0), x_axis=(0, -3, 0))
    with pytest.raises(ValueError, match="non-zero"):
        window_plane_axes((0, 0, 0))


@settings(max_examples=200, deadline=None)
@given(st.tuples(*[st.floats(-10, 10, allow_nan=False)] * 3).filter(lambda c: np.linalg.norm(c) > 1e-3))
def test_window_plane_axes_are_a_right_handed_frame(center: tuple[float, float, float]) -> None:
    c, u, v = window_plane_axes(center)
    frame = np.array([u, c, v]).T  # (u, c, v) plays the role of (X, Y, Z)
    np.testing.assert_allclose(frame.T @ frame, np.eye(3), atol=1e-9)
    assert np.linalg.det(frame) == pytest.approx(1.0)
    np.testing.assert_allclose(c, np.array(center) / np.linalg.norm(center))


def test_polygon_plane_vertices_are_tangents_counter_clockwise() -> None:
    rectangle = [[-30, -45], [30, -45], [30, 45], [-30, 45]]
    t30, t45 = math.tan(math.radians(30)), 1.0
    for winding in (rectangle, rectangle[::-1]):
        points = polygon_plane_vertices(PolygonWindow(vertices_deg=winding))
        assert points.shape == (4, 2)
        assert polygon_signed_area(points) > 0
        assert {tuple(np.round(p, 12)) for p in points} == {
            (round(sx * t30, 12), round(sy * t45, 12)) for sx in (-1, 1) for sy in (-1, 1)
        }
    np.testing.assert_allclose(
        polygon_plane_vertices(rectangle), polygon_plane_vertices(PolygonWindow(vertices_deg=rectangle))
    )


def _convex_polygons() -> st.SearchStrategy[np.ndarray]:
    """Points on an ellipse in the tan plane, at well-separated increasing angles."""

    @st.composite
    def build(draw: st.DrawFn) -> np.ndarray:
        count = draw(st.integers(3, 9))
        gaps = np.array(draw(st.lists(st.floats(0.5, 1.0), min_size=count, max_size=count)))
        angles = np.cumsum(gaps / gaps.sum() * 2 * math.pi) + draw(st.floats(0, 6.3))
        radius_u, radius_v = draw(st.floats(0.05, 5.0)), draw(st.floats(0.05, 5.0))
        shift = np.array([draw(st.floats(-2, 2)), draw(st.floats(-2, 2))])
        return shift + np.stack([radius_u * np.cos(angles), radius_v * np.sin(angles)], axis=1)

    return build()


@settings(max_examples=200, deadline=None)
@given(_convex_polygons(), st.booleans(), st.data())
def test_convex_polygons_pass_and_swapped_corners_fail(points: np.ndarray, reverse: bool, data: st.DataObject) -> None:
    if reverse:
        points = points[::-1]
    assert polygon_plane_problem(points) is None
    degrees = np.degrees(np.arctan(points))
    window = PolygonWindow(vertices_deg=degrees.tolist())
    np.testing.assert_allclose(polygon_plane_vertices(window), points if not reverse else points[::-1], atol=1e-9)
    if len(points) >= 4:
        i = data.draw(st.integers(0, len(points) - 1))
        swapped = points.copy()
        j = (i + 1) % len(points)
        swapped[[i, j]] = swapped[[j, i]]
        assert polygon_plane_problem(swapped) is not None


def test_collinear_corners_are_allowed() -> None:
    assert polygon_plane_problem([[0, 0], [1, 0], [2, 0], [2, 1], [0, 1]]) is None


# ----------------------------------------------------------------------------- round trips


finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)
vec3 = st.tuples(finite, finite, finite)
direction = st.tuples(*[st.floats(-5, 5, allow_nan=False)] * 3).filter(lambda v: np.linalg.norm(v) > 1e-3)
degrees_range = st.tuples(st.floats(-180, 180), st.floats(-180, 180)).map(lambda r: tuple(sorted(r)))
stiffness = st.floats(0, 1)


@st.composite
def x_axes(draw: st.DrawFn, center: tuple[float, float, float]) -> tuple[float, float, float] | None:
    axis = draw(st.none() | direction)
    if axis is None:
        return None
    c = np.array(center) / np.linalg.norm(center)
    a = np.array(axis) / np.linalg.norm(axis)
    return axis if np.linalg.norm(np.cross(a, c)) > 1e-3 else None


@st.composite
def windows(draw: st.DrawFn) -> PolygonWindow | ConeWindow | EllipticConeWindow:
    center = draw(direction)
    shape = draw(st.sampled_from(["polygon", "rectangle", "cone", "elliptic_cone"]))
    if shape == "cone":
        return ConeWindow(center=center, half_angle_deg=draw(st.floats(0, 180, exclude_min=True)))
    if shape == "elliptic_cone":
        half = st.floats(0.01, 90, exclude_max=True)
        return EllipticConeWindow(center=center, x_axis=draw(x_axes(center)), half_angles_deg=(draw(half), draw(half)))
    if shape == "rectangle":
        # An axis-aligned rectangle in degrees stays a rectangle in the tan plane.
        a = sorted(
            draw(
                st.lists(st.floats(-89, 89), min_size=2, max_size=2, unique=True).filter(
                    lambda p: abs(p[0] - p[1]) > 0.01
                )
            )
        )
        b = sorted(
            draw(
                st.lists(st.floats(-89, 89), min_size=2, max_size=2, unique=True).filter(
                    lambda p: abs(p[0] - p[1]) > 0.01
                )
            )
        )
        vertices = [(a[0], b[0]), (a[1], b[0]), (a[1], b[1]), (a[0], b[1])]
    else:
        vertices = [tuple(p) for p in np.degrees(np.arctan(draw(_convex_polygons()))).tolist()]
    if draw(st.booleans()):
        vertices = vertices[::-1]
    return PolygonWindow(center=center, x_axis=draw(x_axes(center)), vertices_deg=tuple(vertices))


limits = st.one_of(
    st.builds(
        BallLimit,
        windows=st.lists(windows(), max_size=3).map(tuple),
        twist_deg=st.none() | degrees_range,
        stiffness=stiffness,
    ),
    st.builds(HingeLimit, axis=direction, range_deg=st.none() | degrees_range, stiffness=stiffness),
    st.builds(FreeLimit, stiffness=stiffness),
    st.just(FixedLimit()),
)


@st.composite
def rig_specs(draw: st.DrawFn) -> RigSpec:
    count = draw(st.integers(1, 6))
    names = draw(st.lists(st.text(min_size=1, max_size=12), min_size=count, max_size=count, unique=True))
    bones = []
    for i, name in enumerate(names):
        head = draw(vec3)
        tail = draw(vec3.filter(lambda t, h=head: math.dist(t, h) > 1e-6))
        parent = draw(st.none() | st.sampled_from(names[:i])) if i else None
        bones.append(BoneSpec(name=name, head=head, tail=tail, roll_deg=draw(finite), parent=parent))
    spec = RigSpec(name=draw(st.text(max_size=10)), bones=tuple(bones))
    limited = draw(st.lists(st.sampled_from(names), unique=True))
    chains = []
    for k, tip in enumerate(draw(st.lists(st.sampled_from(names), max_size=3))):
        lineage = [tip]
        while spec.bone(lineage[-1]).parent is not None:
            lineage.append(spec.bone(lineage[-1]).parent)
        if draw(st.booleans()):
            chain = ChainSpec(name=f"chain{k}", tip=tip, length=draw(st.integers(1, len(lineage))))
        else:
            chain = ChainSpec(name=f"chain{k}", tip=tip, root=draw(st.sampled_from(lineage)))
        chains.append(dataclasses.replace(chain, effector_offset=draw(vec3)))
    return RigSpec(
        name=spec.name, bones=spec.bones, chains=tuple(chains), limits={name: draw(limits) for name in limited}
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rig_specs())
def test_valid_specs_round_trip_exactly(spec: RigSpec) -> None:
    data = spec.to_dict()
    assert RigSpec.from_dict(data) == spec
    assert RigSpec.from_dict(data).to_dict() == data
    text = spec.dumps()
    reloaded = loads_rig_spec(text)
    assert reloaded == spec
    # repr() of a float is unique to its bits (-0.0 included), so equal text is bit-exact.
    assert reloaded.dumps() == text
    assert json.loads(text) == data


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rig_specs())
def test_every_chain_lists_parent_linked_bones_from_root_to_tip(spec: RigSpec) -> None:
    for chain in spec.chains:
        names = spec.chain_bones(chain.name)
        assert names[-1] == chain.tip
        if chain.length is not None:
            assert len(names) == chain.length
        else:
            assert names[0] == chain.root
        for parent, child in itertools.pairwise(names):
            assert spec.bone(child).parent == parent


def test_degrees_are_kept_bit_exactly() -> None:
    awkward = [0.1, -0.0, 1e-300, 5e-324, 29.999999999999996, 170.00000000000003]
    text = ARM3.read_text(encoding="utf-8")
    data = json.loads(text)
    data["limits"]["upper_arm"]["windows"][1]["half_angle_deg"] = awkward[4]
    data["limits"]["forearm"]["range_deg"] = [awkward[0], awkward[5]]
    data["bones"][0]["roll_deg"] = awkward[1]
    data["bones"][1]["roll_deg"] = awkward[2]
    data["bones"][2]["roll_deg"] = awkward[3]
    spec = RigSpec.from_dict(data)
    again = loads_rig_spec(spec.dumps())
    assert math.copysign(1.0, again.bone("upper_arm").roll_deg) == -1.0
    assert again.bone("hand").roll_deg == 5e-324
    assert again.limit_for("forearm").range_deg == (0.1, 170.00000000000003)
    assert again.limit_for("upper_arm").windows[1].half_angle_deg == 29.999999999999996


def test_a_range_through_180_round_trips_and_means_the_back_of_the_circle(arm3_dict) -> None:
    arm3_dict["limits"]["forearm"]["range_deg"] = [150, 210]
    spec = loads_rig_spec(json.dumps(arm3_dict))
    assert spec.limits["forearm"].range_deg == (150.0, 210.0)
    assert loads_rig_spec(spec.dumps()) == spec
    solver = solver_limit(spec.limits["forearm"])
    assert solver.angle_range.contains(np.pi) and not solver.angle_range.contains(0.0)


def test_a_twist_reference_round_trips_normalised_and_is_checked(arm3_dict) -> None:
    arm3_dict["limits"]["upper_arm"]["twist_reference"] = [2.0, 0.0, 2.0, 0.0]
    spec = loads_rig_spec(json.dumps(arm3_dict))
    reference = spec.limits["upper_arm"].twist_reference
    assert reference == pytest.approx((math.sqrt(0.5), 0.0, math.sqrt(0.5), 0.0))
    assert loads_rig_spec(spec.dumps()) == spec
    arm3_dict["limits"]["upper_arm"]["twist_reference"] = [0, 0, 0, 0]
    with pytest.raises(RigSpecError, match=r"bone 'upper_arm': limits.twist_reference: must be a non-zero quaternion"):
        loads_rig_spec(json.dumps(arm3_dict))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"[" * 100_000, "cannot be read"),
        (b'{"version": ' + b"9" * 5000 + b"}", "cannot be read"),
    ],
    ids=["not_utf8", "nested_past_the_stack", "huge_integer"],
)
def test_unreadable_files_are_rig_spec_errors(tmp_path, content, message):
    path = tmp_path / "hostile.rig.json"
    path.write_bytes(content)
    with pytest.raises(RigSpecError, match=message) as caught:
        load_rig_spec(path)
    assert str(path) in str(caught.value)
