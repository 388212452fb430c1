"""The sample rigs (issue 7): sample_rigs/make_rigs.py rebuilds them reproducibly, they load with
their chains, limits and targets, they solve, and the committed files are up to date. The
committed files are saved by the oldest supported Blender (3.4), and each opens and solves in
3.4 and in 5.0 (issue 37)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sample_rigs.make_rigs import OLDEST_BLENDER
from tests.helpers import REPO_ROOT, run_in_blender_binary, run_in_bpy
from tests.session_steps import steps_of

SESSIONS = Path(__file__).resolve().parent / "sessions"
SAMPLE_RIGS = REPO_ROOT / "sample_rigs"
RIG_NAMES = ("arm3", "human_arm", "leg", "robot5", "tentacle30", "rigify_human")
COMMIT_SIZE = 300 * 1024  # bytes: a committed .blend stays small (they are about 100-160 KiB)
REACHED = 1e-3  # scene units: a baked tip within 1 mm of its target
OPENED_IN = ("blender-3.4", "bpy-5.0")  # the oldest supported Blender and the newest


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "regenerate_and_solve.py"))
def test_rigs_regenerate_load_solve_and_match_the_committed_files(
    step, session_steps, run_bpy_with_addon_result, tmp_path: Path
) -> None:
    script = SESSIONS / "regenerate_and_solve.py"
    session_steps.check(
        "regenerate_and_solve", step, lambda: run_bpy_with_addon_result(script, tmp_path / "rigs", ",".join(RIG_NAMES))
    )


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


@pytest.fixture(scope="module")
def opened_rigs(extension_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each committed rig opened and baked in each Blender of ``OPENED_IN`` (one session per
    Blender, sessions/open_and_solve.py): {blender: {rig: record}}."""
    opened = {}
    for blender in OPENED_IN:
        workdir = tmp_path_factory.mktemp(f"open_{blender}")
        out = workdir / "opened.json"
        run = run_in_blender_binary if blender.startswith("blender") else run_in_bpy
        result = run(SESSIONS / "open_and_solve.py", out, ",".join(RIG_NAMES), workdir=workdir, addon_zip=extension_zip)
        if out.is_file():
            opened[blender] = json.loads(out.read_text())
        else:  # each test of this Blender says why
            opened[blender] = {"session failed": f"the session wrote no {out.name}"}
            try:
                result.check()
            except AssertionError as failure:
                opened[blender] = {"session failed": str(failure)}
    return opened


@pytest.mark.blender_binary
@pytest.mark.parametrize("blender", OPENED_IN)
@pytest.mark.parametrize("name", RIG_NAMES)
def test_every_committed_rig_opens_and_solves_in_the_oldest_and_newest_blender(
    opened_rigs: dict, blender: str, name: str
) -> None:
    assert "session failed" not in opened_rigs[blender], opened_rigs[blender]["session failed"]
    record = opened_rigs[blender].get(name)
    assert record is not None and "error" not in record, record
    saved_by = tuple(record["saved_by"][:2])
    assert saved_by == OLDEST_BLENDER, (
        f"{name}.blend was saved by Blender {saved_by}: run `blender -b --factory-startup --python "
        "sample_rigs/make_rigs.py` with Blender 3.4 so that every supported Blender opens it"
    )
    assert record["chains"], record
    assert record["bake"] == ["FINISHED"], record
    assert record["largest_error"] <= REACHED, (
        f"{name} in {blender}: a baked tip ends {record['largest_error']:.3g} away"
    )
