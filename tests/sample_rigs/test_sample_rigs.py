"""The sample rigs (issue 7): sample_rigs/make_rigs.py rebuilds them reproducibly, they load with
their chains, limits and targets, they solve, and the committed files are up to date."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, run_in_blender_binary

SESSIONS = Path(__file__).resolve().parent / "sessions"
SAMPLE_RIGS = REPO_ROOT / "sample_rigs"
RIG_NAMES = ("arm3", "human_arm", "leg", "robot5", "tentacle30", "rigify_human")
COMMIT_SIZE = 300 * 1024  # bytes: a committed .blend stays small (they are about 100-160 KiB)


@pytest.mark.bpy
def test_rigs_regenerate_load_solve_and_match_the_committed_files(run_bpy_with_addon, tmp_path: Path) -> None:
    result = run_bpy_with_addon(SESSIONS / "regenerate_and_solve.py", tmp_path / "rigs", ",".join(RIG_NAMES))
    print(result.stdout)


@pytest.mark.parametrize("name", RIG_NAMES)
def test_every_rig_is_committed_and_small(name: str) -> None:
    for suffix in (".blend", ".rig.json"):
        path = SAMPLE_RIGS / f"{name}{suffix}"
        assert path.is_file(), f"{path} missing: run .venv/bin/python sample_rigs/make_rigs.py"
    size = (SAMPLE_RIGS / f"{name}.blend").stat().st_size
    assert size < COMMIT_SIZE, f"{name}.blend is {size / 1024:.0f} KiB; keep sample rigs small"


MAKE_RIGS_IN_34 = """
import sys
from pathlib import Path
from sample_rigs.make_rigs import main
assert main(["--out-dir", sys.argv[1], "--only", "arm3,rigify_human"]) == 0
for name in ("arm3", "rigify_human"):
    assert (Path(sys.argv[1]) / f"{name}.blend").is_file(), name
"""


@pytest.mark.blender_binary
def test_make_rigs_runs_in_blender_34(extension_zip: Path, tmp_path: Path) -> None:
    """The generator also builds rigs in the oldest supported Blender (for files it can open)."""
    out = tmp_path / "rigs"
    run_in_blender_binary(MAKE_RIGS_IN_34, out, workdir=tmp_path, addon_zip=extension_zip).check()
    assert (out / "arm3.rig.json").read_bytes() == (SAMPLE_RIGS / "arm3.rig.json").read_bytes()
