"""A bake's inputs sampled from the F-curves equal those read frame by frame, the fast path
refuses what it cannot vouch for, and bakes write the same keys either way
(see sessions/input_sampling.py)."""

from pathlib import Path

import pytest

from tests.compat.test_version_matrix import BPY_MODULES, run_in_python
from tests.helpers import run_in_blender_binary

SESSION = Path(__file__).resolve().parent / "sessions" / "input_sampling.py"


@pytest.mark.bpy
def test_sampled_inputs_match_frame_by_frame(run_session):
    run_session("input_sampling.py")


# The same session in the other supported Blenders: the fast path reads actions through
# ``compat`` (action.fcurves before 4.4, a slot's channelbag after) and must agree everywhere.
@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize(("python", "version"), BPY_MODULES[:2])
def test_sampled_inputs_in_older_bpy(python: Path, version: str, extension_zip: Path, tmp_path: Path) -> None:
    result = run_in_python(python, SESSION, tmp_path, extension_zip, workdir=tmp_path)
    print(result.stdout)
    result.check()
    assert f"VERSION {version}\n" in result.stdout


@pytest.mark.version_matrix
@pytest.mark.blender_binary
def test_sampled_inputs_in_blender34_binary(extension_zip: Path, tmp_path: Path) -> None:
    result = run_in_blender_binary(SESSION, tmp_path, workdir=tmp_path, addon_zip=extension_zip)
    print(result.stdout)
    result.check()
    assert "VERSION 3.4." in result.stdout
