"""The one solve pipeline (solver/request.py) and the method ladder (solver/methods/ladder.py): the
command line solves through the pipeline with the panel's defaults and poles, and every method
of the ladder reports honest measurements."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.cli import _parser, main
from quat_ik_addon.solver.defaults import DEFAULT_SETTINGS
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.measurements import goal_errors
from quat_ik_addon.solver.methods import ladder as methods
from quat_ik_addon.solver.request import SolveOptions, SolveRequest, solve_request
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.rig.spec import load_rig_spec
from quat_ik_addon.solver.settings import METHODS, SolveSettings

REPO = Path(__file__).resolve().parents[2]
HUMAN_ARM_SPEC = REPO / "sample_rigs" / "human_arm.rig.json"


def _solve_on_command_line(tmp_path: Path, targets: dict, *flags: str) -> dict:
    (tmp_path / "targets.json").write_text(json.dumps(targets))
    out = tmp_path / "out.json"
    command = ["solve", str(HUMAN_ARM_SPEC), "--chain", "arm.L", "--targets", str(tmp_path / "targets.json")]
    assert main([*command, *flags, "-o", str(out)]) == 0
    return json.loads(out.read_text())


def test_command_line_defaults_are_the_pipelines():
    args = _parser().parse_args(["solve", "rig.json", "--targets", "t.json"])
    assert args.method == DEFAULT_SETTINGS.method
    assert args.restarts == DEFAULT_SETTINGS.restarts == 4
    assert args.max_iterations == DEFAULT_SETTINGS.max_iterations
    assert args.tolerance == DEFAULT_SETTINGS.tolerance
    assert args.pole_facing == SolveOptions().pole_facing
    assert args.kernel == DEFAULT_SETTINGS.kernel


def test_command_line_answers_are_the_pipelines_with_poles(tmp_path, rng):
    chain = Chain.from_rig_spec(load_rig_spec(HUMAN_ARM_SPEC), "arm.L")
    posed = chain.forward_kinematics(chain.random_poses(rng, 12))
    # Poles beside the elbows the random poses have, pushed outwards.
    poles = posed.heads[:, 2] + 0.5 * (posed.heads[:, 2] - posed.effector)
    angles_deg = np.linspace(-30.0, 30.0, 12)
    document = _solve_on_command_line(
        tmp_path,
        {"positions": posed.effector.tolist(), "poles": poles.tolist(), "pole_angles": angles_deg.tolist()},
        "--pole-angle",
        "0",
    )
    request = SolveRequest(Goals(posed.effector), poles=poles, pole_angles=np.radians(angles_deg))
    expected = solve_request(chain, request)
    np.testing.assert_allclose(np.array(document["rotations"]), expected.rotations, atol=1e-12)
    assert document["converged"] == expected.converged.tolist()
    assert document["tolerance"] == pytest.approx(DEFAULT_SETTINGS.tolerance)


def test_a_pole_on_the_command_line_turns_the_bend(tmp_path):
    """A goal below the shoulder of the hanging sample arm: its elbow bends forward whatever the
    pole (its limits), and turns toward a pole placed to either side of it."""
    chain = Chain.from_rig_spec(load_rig_spec(HUMAN_ARM_SPEC), "arm.L")
    rest = chain.forward_kinematics(chain.rest_pose(1))
    shoulder, tip = rest.heads[0, 1], rest.effector[0]
    goal = shoulder + 0.8 * (tip - shoulder)
    reach_axis = (goal - shoulder) / np.linalg.norm(goal - shoulder)
    elbow_sideways = []
    for sign in (1.0, -1.0):
        pole = rest.heads[0, 2] + [0.5 * sign, 0.0, 0.0]
        document = _solve_on_command_line(tmp_path, {"positions": [goal.tolist()], "poles": [pole.tolist()]})
        assert document["converged"] == [True]
        elbow = chain.forward_kinematics(np.array(document["rotations"])).heads[0, 2] - shoulder
        across = elbow - reach_axis * np.dot(elbow, reach_axis)
        elbow_sideways.append(across[0] / np.linalg.norm(across))
    turned_by_the_pole = 0.2  # the sine of the bend's turn between a pole on the left and one on the right
    assert elbow_sideways[0] - elbow_sideways[1] > turned_by_the_pole, elbow_sideways


@pytest.mark.parametrize(
    ("targets", "message"),
    [
        ({"positions": [[0, 0.3, 0]], "poles": [[0, 1]]}, "'poles' must be 1 finite"),
        ({"positions": [[0, 0.3, 0]], "poles": [[0, 1, 0]], "pole_angles": [1, 2]}, "'pole_angles' must be 1"),
        ({"positions": [[0, 0.3, 0]], "pole_angles": [10]}, "'pole_angles' without 'poles'"),
        ({"positions": [[0, 0.3, 0]], "pole": [[0, 1, 0]]}, "unknown keys ['pole']"),
    ],
)
def test_command_line_refuses_bad_poles_in_one_line(tmp_path, capsys, targets, message):
    (tmp_path / "targets.json").write_text(json.dumps(targets))
    command = ["solve", str(HUMAN_ARM_SPEC), "--chain", "arm.L", "--targets", str(tmp_path / "targets.json")]
    assert main(command) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1, error


def test_easing_and_cycles_need_a_sequence(tmp_path, capsys):
    (tmp_path / "targets.json").write_text(json.dumps([[0.0, 0.3, 0.0]]))
    command = ["solve", str(HUMAN_ARM_SPEC), "--chain", "arm.L", "--targets", str(tmp_path / "targets.json")]
    assert main([*command, "--cyclic"]) == 2
    assert "need --sequence" in capsys.readouterr().err


def test_a_cyclic_shot_reports_its_wrap_and_loops_smoothly(rng):
    chain = Chain.from_rig_spec(load_rig_spec(HUMAN_ARM_SPEC), "arm.L")
    rest_tip = chain.forward_kinematics(chain.rest_pose(1)).effector[0]
    phase = np.linspace(0.0, 2.0 * np.pi, 48, endpoint=False)
    circle = rest_tip * 0.8 + 0.1 * np.stack([np.cos(phase), np.sin(phase), np.zeros_like(phase)], axis=1)
    looped = solve_request(chain, SolveRequest(Goals(circle), shot=True), SolveOptions(cyclic=True))
    once = solve_request(chain, SolveRequest(Goals(circle), shot=True))
    assert once.wrap_jump == 0.0  # measured only for a loop
    largest_step = np.max(quat.angle_between(looped.rotations[1:], looped.rotations[:-1]))
    assert 0.0 <= looped.wrap_jump <= max(2.0 * largest_step, 1e-6)


def test_options_refuse_what_the_pipeline_cannot_do():
    with pytest.raises(ValueError, match="pole_facing"):
        SolveOptions(pole_facing="elbow")
    with pytest.raises(ValueError, match="pole_angle"):
        SolveOptions(pole_angle=float("nan"))


@pytest.mark.parametrize("method", METHODS)
def test_every_rung_of_the_ladder_measures_what_it_returns(method, limited_chain, rng):
    """Each method's reported errors are the forward kinematics of the poses it returns, and the
    poses stay inside the limits."""
    posed = limited_chain.forward_kinematics(limited_chain.random_poses(rng, 16))
    goals = Goals(posed.effector, orientations=posed.rotations[:, -1], orientation_weight=0.5)
    settings = SolveSettings(method=method, kernel="numpy")
    starts = limited_chain.clamp_to_limits(limited_chain.rest_pose(goals.count))
    answer = methods.method_for(settings).run(limited_chain, goals, starts.copy(), settings, None)
    position, orientation, effector = goal_errors(limited_chain, goals, answer.rotations)
    np.testing.assert_allclose(answer.measured[0], position, atol=1e-12)
    np.testing.assert_allclose(answer.measured[1], orientation, atol=1e-12)
    np.testing.assert_allclose(answer.measured[2], effector, atol=1e-12)
    assert np.max(limited_chain.limit_violation(answer.rotations)) <= 1e-9
    assert np.all(answer.iterations >= 0)


def test_finishing_only_unmet_rows_needs_a_method_that_names_them():
    ladder = methods.FirstThenFinish(methods.CyclicCoordinateDescent(), methods.DampedLeastSquares(), unmet_only=True)
    chain = reference_chains.REFERENCE_CHAINS["arm3"]()
    goals = Goals(np.array([[0.5, 1.0, 0.0]]))
    with pytest.raises(TypeError, match="does not say which rows"):
        ladder.run(chain, goals, chain.rest_pose(1), SolveSettings(), None)
