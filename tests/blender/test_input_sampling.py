"""A bake's inputs sampled from the F-curves equal those read frame by frame, the fast path
refuses what it cannot vouch for, and bakes write the same keys either way
(see sessions/input_sampling.py; one item per step, in each Blender)."""

from pathlib import Path

import pytest

from tests.blender.conftest import SESSIONS
from tests.compat.test_version_matrix import BPY_MODULES, run_in_python
from tests.session_steps import steps_of

SESSION = SESSIONS / "input_sampling.py"
STEPS = steps_of(SESSION)


@pytest.mark.bpy
@pytest.mark.parametrize("step", STEPS)
def test_sampled_inputs_match_frame_by_frame(step, session_steps, run_session_result):
    session_steps.check("input_sampling", step, lambda: run_session_result(SESSION.name))


# The same session in the other supported Blenders: the fast path reads actions through
# ``compat`` (action.fcurves before 4.4, a slot's channelbag after) and must agree everywhere.
def run_in_older_bpy(python: Path, extension_zip: Path, tmp_path: Path):
    return lambda: run_in_python(python, SESSION, tmp_path, extension_zip, workdir=tmp_path)


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize("step", STEPS)
@pytest.mark.parametrize(("python", "version"), BPY_MODULES[:2])
def test_sampled_inputs_in_older_bpy(
    python: Path, version: str, step, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    session_steps.check(f"input_sampling bpy {version}", step, run_in_older_bpy(python, extension_zip, tmp_path))


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize(("python", "version"), BPY_MODULES[:2])
def test_older_bpy_runs_the_version_it_says(
    python: Path, version: str, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    run = session_steps.run(f"input_sampling bpy {version}", run_in_older_bpy(python, extension_zip, tmp_path))
    assert f"VERSION {version}\n" in run.stdout


@pytest.mark.version_matrix
@pytest.mark.blender_binary
@pytest.mark.parametrize("step", STEPS)
def test_sampled_inputs_in_blender34_binary(step, session_steps, run_binary_session_result) -> None:
    session_steps.check("input_sampling blender 3.4", step, lambda: run_binary_session_result(SESSION.name))


@pytest.mark.version_matrix
@pytest.mark.blender_binary
def test_blender34_binary_runs_the_version_it_says(session_steps, run_binary_session_result) -> None:
    run = session_steps.run("input_sampling blender 3.4", lambda: run_binary_session_result(SESSION.name))
    assert "VERSION 3.4." in run.stdout
