"""``python -m quat_ik_addon.solver solve-body``: the same answers and defaults as the Python
pipeline (``body.request``), bodies read from rig specs, one line for every bad input, and the
example in docs/headless.md."""

import json
import re
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import Effector, Goal, Pin
from quat_ik_addon.solver.body.poles import BodyPole
from quat_ik_addon.solver.body.request import BodyOptions, BodyRequest, solve_body_request
from quat_ik_addon.solver.body.settings import BODY_TOP_RESTARTS_MAX, BodySettings, body_settings_from
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.cli import _body_targets, _parser, body_options, main
from quat_ik_addon.solver.defaults import DEFAULT_SETTINGS
from quat_ik_addon.solver.rig.rest_pose import spec_rest_matrices
from quat_ik_addon.solver.rig.spec import load_rig_spec
from quat_ik_addon.solver.rig.spec_body import body_from_rig_spec

REPO = Path(__file__).resolve().parents[3]
HUMAN = REPO / "sample_rigs" / "rigify_human.rig.json"  # chains arm.L, arm.R, leg.L, leg.R, each from the armature
HEADLESS_DOC = REPO / "docs" / "headless.md"
FRAMES = 6


def torso_spec() -> dict:
    """A rig spec with a spine chain and two arm chains hanging from its chest, and a chain of
    the left forearm and hand alone (its root's parent, the upper arm, outside a body without
    the arm chain)."""
    bones = [
        ("spine", None, [0, 0, 1.0], [0, 0, 1.3]),
        ("chest", "spine", [0, 0, 1.3], [0, 0.02, 1.6]),
        ("upper_arm.L", "chest", [0.15, 0.02, 1.55], [0.45, 0.05, 1.45]),
        ("forearm.L", "upper_arm.L", [0.45, 0.05, 1.45], [0.7, 0.0, 1.3]),
        ("hand.L", "forearm.L", [0.7, 0.0, 1.3], [0.8, -0.02, 1.25]),
        ("upper_arm.R", "chest", [-0.15, 0.02, 1.55], [-0.45, 0.05, 1.45]),
        ("forearm.R", "upper_arm.R", [-0.45, 0.05, 1.45], [-0.7, 0.0, 1.3]),
        ("hand.R", "forearm.R", [-0.7, 0.0, 1.3], [-0.8, -0.02, 1.25]),
    ]
    return {
        "format": "quat_ik.rig_spec",
        "version": 1,
        "name": "torso",
        "bones": [
            {"name": name, "parent": parent, "head": head, "tail": tail, "roll_deg": 10.0}
            for name, parent, head, tail in bones
        ],
        "chains": [
            {"name": "spine", "tip": "chest", "length": 2},
            {"name": "arm.L", "tip": "hand.L", "length": 3},
            {"name": "arm.R", "tip": "hand.R", "length": 3},
            {"name": "lower_arm.L", "tip": "hand.L", "length": 2},
        ],
        "limits": {
            "spine": {"type": "ball", "windows": [{"shape": "cone", "center": [0, 1, 0], "half_angle_deg": 25}]},
            "forearm.L": {"type": "hinge", "axis": [1, 0, 0], "range_deg": [0, 150]},
            "forearm.R": {"type": "hinge", "axis": [1, 0, 0], "range_deg": [0, 150]},
        },
    }


@pytest.fixture
def torso(tmp_path):
    path = tmp_path / "torso.rig.json"
    path.write_text(json.dumps(torso_spec()))
    return path


def effector_tail(body, pose, chain):
    """(N, 3) the chain's effector (its tip's tail plus offset) at a ``BodyPose``."""
    tip = body.index(chain.bone_names[-1])
    local = np.array([0.0, chain.lengths[-1], 0.0]) + chain.effector_offset
    return pose.points(np.array([tip]), local[None])[:, 0]


def test_a_body_from_a_rig_spec_has_the_spec_s_rest_pose_in_armature_space(torso):
    rig = load_rig_spec(torso)
    matrices = spec_rest_matrices(rig)
    for chains in (["spine", "arm.L", "arm.R"], ["lower_arm.L"], ["arm.R", "spine"]):
        body = body_from_rig_spec(rig, chains)
        rest = body.forward_kinematics(body.rest_pose(1))
        for b, name in enumerate(body.bone_names):
            np.testing.assert_allclose(rest.heads[0, b], matrices[name][:3, 3], atol=1e-12)
            frame = quat.to_matrix(rest.rotations[0, b])
            np.testing.assert_allclose(frame, matrices[name][:3, :3], atol=1e-12)
    arms = body_from_rig_spec(rig, ["spine", "arm.L", "arm.R"])
    chest = arms.index("chest")
    assert arms.parents[arms.index("upper_arm.L")] == chest and arms.parents[arms.index("upper_arm.R")] == chest


def write_shot(tmp_path, torso, rng):
    """A body targets file for the torso's spine and arms (goals made by poses inside the
    limits, the right hand switched off on frame 2, the spine pinned on frames 1-3), and the
    body, goals and pins the Python API gets for it."""
    rig = load_rig_spec(torso)
    names = ["spine", "arm.L", "arm.R"]
    body = body_from_rig_spec(rig, names)
    pose = body.forward_kinematics(body.random_poses(rng, FRAMES))
    chains = {name: Chain.from_rig_spec(rig, name) for name in names}
    left, right = effector_tail(body, pose, chains["arm.L"]), effector_tail(body, pose, chains["arm.R"])
    left_hand = pose.rotations[:, body.index("hand.L")]
    spine_turn = pose.rotations[0, body.index("spine")]
    rows = right.tolist()
    rows[2] = None
    document = {
        "goals": {
            "arm.L": {"positions": left.tolist(), "orientations": left_hand.tolist(), "orientation_weight": 0.5},
            "arm.R": {"positions": rows, "level": 1},
        },
        "pins": [{"bone": "spine", "rotation": spine_turn.tolist(), "frames": [1, 3]}],
    }
    (tmp_path / "shot.json").write_text(json.dumps(document))
    right_off = right.copy()
    right_off[2] = np.nan
    pinned = np.full((FRAMES, 4), np.nan)
    pinned[1:4] = spine_turn
    goals = [
        Goal(Effector.of_chain(chains["arm.L"]), position=left, orientation=left_hand, orientation_weight=0.5),
        Goal(Effector.of_chain(chains["arm.R"]), position=right_off, level=1),
    ]
    return body, goals, [Pin("spine", rotation=pinned)]


@pytest.mark.parametrize("shot", [False, True], ids=["targets", "shot"])
def test_the_command_line_answers_as_solve_body_request(tmp_path, torso, rng, shot):
    body, goals, pins = write_shot(tmp_path, torso, rng)
    out = tmp_path / "out.json"
    command = ["solve-body", str(torso), "--chains", "spine,arm.L,arm.R", "--targets", str(tmp_path / "shot.json")]
    assert main([*command, "-o", str(out), *(["--sequence"] if shot else [])]) == 0
    document = json.loads(out.read_text())
    result = solve_body_request(body, BodyRequest(goals, pins, shot=shot), BodyOptions())
    assert document["bones"] == list(body.bone_names)
    assert document["goals"] == ["arm.L", "arm.R"] and document["pins"] == ["spine"]
    np.testing.assert_array_equal(document["rotations"], result.rotations)
    np.testing.assert_array_equal(document["stretch"], result.stretch)
    for field in ("position_error", "orientation_error", "pin_position_error", "pin_rotation_error"):
        np.testing.assert_array_equal(document[field], getattr(result, field))
    assert document["met"] == result.all_met.tolist()
    assert document["level_met"] == result.level_met.tolist()
    assert document["pins_held"] == result.pins_held.tolist()
    assert document["position_error"][2][1] == 0.0  # the right hand is off on frame 2
    assert document["pin_rotation_error"][0] == [0.0] and document["pin_rotation_error"][4] == [0.0]


def test_the_command_line_s_defaults_are_the_python_api_s(tmp_path, torso, rng):
    args = _parser().parse_args(["solve-body", str(torso), "--targets", "body.json"])
    assert body_options(args) == BodyOptions()
    # ... and the panel's: its first chain's settings (DEFAULT_SETTINGS by default), made body settings.
    assert BodyOptions().settings == body_settings_from(DEFAULT_SETTINGS)
    assert BodyOptions().settings.tolerance == DEFAULT_SETTINGS.tolerance
    assert args.sequence == BodyRequest([Goal("hand.L", position=[0, 1, 0])]).shot
    (tmp_path / "plain.json").write_text(json.dumps({"goals": {"arm.L": {"positions": [[0.5, 0.0, 1.3]]}}}))
    chains = {"arm.L": Chain.from_rig_spec(load_rig_spec(torso), "arm.L")}
    goals, pins, stretch, poles = _body_targets(tmp_path / "plain.json", chains)
    plain, default = goals["arm.L"], Goal("hand.L", position=[0, 1, 0])
    assert (plain.position_weight, plain.orientation_weight, plain.level) == (
        default.position_weight,
        default.orientation_weight,
        default.level,
    )
    assert pins == [] and stretch == {} and poles == []


def test_the_command_line_s_flags_are_the_panel_s_chain_settings(torso):
    flags = ["--max-iterations", "20", "--restarts", "7", "--tolerance", "0.01", "--kernel", "numpy"]
    args = _parser().parse_args(["solve-body", str(torso), "--targets", "body.json", *flags])
    chain_settings = replace(DEFAULT_SETTINGS, max_iterations=20, restarts=7, tolerance=0.01, kernel="numpy")
    settings = body_options(args).settings
    assert settings == body_settings_from(chain_settings)
    assert (settings.max_iterations, settings.tolerance, settings.kernel) == (20, 0.01, "numpy")
    assert (settings.restarts, settings.top_restarts) == (1, BODY_TOP_RESTARTS_MAX)


def test_a_warm_body_solve_takes_no_restart_round_for_lower_goals():
    cold, warm = body_settings_from(DEFAULT_SETTINGS), body_settings_from(DEFAULT_SETTINGS, warm=True)
    assert (cold.restarts, warm.restarts) == (1, 0)
    assert warm.top_restarts == cold.top_restarts == min(DEFAULT_SETTINGS.restarts, BODY_TOP_RESTARTS_MAX)
    never = body_settings_from(replace(DEFAULT_SETTINGS, restarts=0))
    assert (never.restarts, never.top_restarts) == (0, 0)


def test_a_body_tolerance_in_units_or_relative_to_its_size():
    assert BodySettings(tolerance=0.01).tolerances(2.0) == (0.01, 0.005)
    assert BodySettings(relative_tolerance=1e-3).tolerances(2.0) == (2e-3, 1e-3)
    assert BodySettings(tolerance=0.0).distance_tolerance(2.0) == 2e-9  # 0: rounding at the body's size
    with pytest.raises(ValueError, match="tolerance must be a finite number >= 0"):
        BodySettings(tolerance=-1.0)


def test_a_pole_in_the_targets_file_is_the_python_api_s_chain_pole(tmp_path, torso, capsys):
    hand, pole = [0.55, -0.35, 1.2], [0.5, 0.6, 1.9]
    targets = {"goals": {"arm.L": {"positions": [hand], "poles": [pole], "pole_angle": 20.0}}}
    (tmp_path / "pole.json").write_text(json.dumps(targets))
    command = ["solve-body", str(torso), "--chains", "spine,arm.L", "--targets", str(tmp_path / "pole.json")]
    assert main([*command, "-o", str(tmp_path / "out.json")]) == 0
    document = json.loads((tmp_path / "out.json").read_text())
    body = body_from_rig_spec(load_rig_spec(torso), ["spine", "arm.L"])
    arm = ("upper_arm.L", "forearm.L", "hand.L")  # none shared with the spine chain: all its own
    goal = Goal(Effector.of_chain(Chain.from_rig_spec(load_rig_spec(torso), "arm.L")), position=hand)
    with_pole = BodyRequest([goal], poles=[BodyPole(arm, pole, angle=np.radians(20.0))])
    np.testing.assert_array_equal(document["rotations"], solve_body_request(body, with_pole).rotations)
    plain = solve_body_request(body, BodyRequest([goal])).rotations
    assert np.abs(np.array(document["rotations"]) - plain).max() > 0.01, "the pole changed the answer"
    # A chain all of whose bones but its last the body's other chains hold has no bend to turn.
    (tmp_path / "none.json").write_text(
        json.dumps({"goals": {"lower_arm.L": {"positions": [hand], "poles": [pole]}, "arm.L": {"positions": [hand]}}})
    )
    command = ["solve-body", str(torso), "--chains", "arm.L,lower_arm.L", "--targets", str(tmp_path / "none.json")]
    assert main(command) == 2
    assert "the pole of 'lower_arm.L' has no bones of its own to turn" in capsys.readouterr().err


def test_every_chain_of_the_spec_makes_the_body_by_default_and_stretch_is_read(tmp_path, capsys):
    targets = {
        "goals": {"arm.L": {"positions": [[0.9, 0.1, 1.3]]}},  # past the arm's reach: the forearm stretches
        "stretch": {"forearm.L": {"minimum": 0.9, "maximum": 1.5}},
    }
    (tmp_path / "far.json").write_text(json.dumps(targets))
    assert main(["solve-body", str(HUMAN), "--targets", str(tmp_path / "far.json")]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["chains"] == ["arm.L", "arm.R", "leg.L", "leg.R"]
    assert document["solver"].startswith("numpy")
    forearm = document["bones"].index("forearm.L")
    assert document["stretch"][0][forearm] > 1.0
    assert captured.err.strip() in ("1/1 frames reached", "0/1 frames reached")


BAD_TARGETS = {
    "an unknown key": ({"goal": {}}, "unknown keys ['goal']; it holds goals, pins, stretch"),
    "a chain not in the body": ({"goals": {"leg.L": {"positions": [[0, 0, 1]]}}}, "unknown keys ['leg.L']"),
    "an unknown goal key": ({"goals": {"arm.L": {"position": [0, 0, 1]}}}, "goal of 'arm.L': unknown keys"),
    "a goal asking nothing": ({"goals": {"arm.L": {"level": 1}}}, "asks for nothing"),
    "a pin without a bone": ({"pins": [{"position": [0, 0, 1]}]}, "pin 0 needs a 'bone' name"),
    "a pin of a bone not in the body": ({"pins": [{"bone": "foot.L", "position": [0, 0, 1]}]}, "no bone 'foot.L'"),
    "frames past the rows": (
        {"goals": {"arm.L": {"positions": [[0, 0, 1]] * 3, "frames": [1, 3]}}},
        "'frames' must be [first, last] rows within 0-2",
    ),
    "rows of different lengths": (
        {"goals": {"arm.L": {"positions": [[0, 0, 1]] * 3}, "arm.R": {"positions": [[0, 0, 1]] * 2}}},
        "different numbers of rows: [2, 3]",
    ),
    "a row part switched off": ({"goals": {"arm.L": {"positions": [[0, "x", 1]]}}}, "could not convert"),
    "a zero quaternion": ({"pins": [{"bone": "hand.L", "rotation": [0, 0, 0, 0]}]}, "is the zero quaternion"),
    "stretch of a bone not in the body": (
        {"goals": {"arm.L": {"positions": [[0, 0, 1]]}}, "stretch": {"shin.L": {"maximum": 1.2}}},
        "stretch given for bones no chain holds: ['shin.L']",
    ),
    "a stretch below its rest length": (
        {"goals": {"arm.L": {"positions": [[0, 0, 1]]}}, "stretch": {"forearm.L": {"maximum": 0.5}}},
        "stretch maximum must be in [1, 1000]",
    ),
    "not an object": ([[0, 0, 1]], "must be a JSON object, not list"),
    "a pole facing nowhere known": (
        {"goals": {"arm.L": {"positions": [[0.5, 0, 1]], "poles": [[0.5, -1, 1]], "pole_facing": "up"}}},
        "facing must be one of",
    ),
    "a pole row of two numbers": ({"goals": {"arm.L": {"positions": [[0.5, 0, 1]], "poles": [[0.5, -1]]}}}, "(3,)"),
}


@pytest.mark.parametrize("case", BAD_TARGETS)
def test_a_bad_targets_file_is_one_error_line_and_status_2(tmp_path, capsys, case):
    targets, message = BAD_TARGETS[case]
    (tmp_path / "bad.json").write_text(json.dumps(targets))
    code = main(["solve-body", str(HUMAN), "--chains", "arm.L,arm.R", "--targets", str(tmp_path / "bad.json")])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert message in lines[0]


BAD_FLAGS = {
    "an unknown chain": (["--chains", "arm.L,Arm.R"], "--chains 'Arm.R': "),
    "a chain twice": (["--chains", "arm.L,arm.L"], "name each chain once"),
    "a negative tolerance": (["--tolerance", "-1"], "--tolerance must be a number >= 0"),
    "a negative time limit": (["--time-limit", "-1"], "time_limit must be a finite number of seconds >= 0"),
    "negative restarts": (["--restarts", "-1"], "restarts must be a whole number >= 0"),
}


@pytest.mark.parametrize("case", BAD_FLAGS)
def test_a_bad_flag_is_one_error_line_and_status_2(tmp_path, capsys, case):
    flags, message = BAD_FLAGS[case]
    (tmp_path / "ok.json").write_text(json.dumps({"goals": {"arm.L": {"positions": [[0.6, 0.0, 1.3]]}}}))
    code = main(["solve-body", str(HUMAN), "--targets", str(tmp_path / "ok.json"), *flags])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), lines
    assert message in lines[0]


def test_a_missing_targets_file_is_one_error_line(tmp_path, capsys):
    assert main(["solve-body", str(HUMAN), "--targets", str(tmp_path / "none.json")]) == 2
    assert "cannot read targets" in capsys.readouterr().err


def body_section() -> str:
    return HEADLESS_DOC.read_text().split("## A body: `solve-body`", 1)[1].split("\n## ", 1)[0]


def test_the_documented_example_runs_as_a_module(tmp_path):
    section = body_section()
    example = re.search(r"```json\n(.*?)```", section, flags=re.DOTALL).group(1)
    (tmp_path / "body.json").write_text(example)
    command = re.search(r"```sh\n(python -m quat_ik_addon\.solver solve-body .*?)\n```", section).group(1)
    arguments = [
        str(tmp_path / word) if word in ("body.json", "out.json") else word for word in shlex.split(command)[1:]
    ]
    run = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, cwd=REPO, check=False)
    assert run.returncode == 0, run.stderr
    document = json.loads((tmp_path / "out.json").read_text())
    assert all(document["met"]), document
    assert run.stderr.strip() == f"{len(document['met'])}/{len(document['met'])} frames reached"
    table = section.split("| field | what it holds for a body |", 1)[1].split("\n\n", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE) == list(document)
