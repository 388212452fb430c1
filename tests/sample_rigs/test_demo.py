"""`make demo` keeps working: tools/demo.py builds and installs the add-on, bakes a sample rig with
Quat IK and with Blender's IK, plots it, writes the summary, and round-trips the bake through
BVH; and it fails loudly. (Replaces tests/packaging/test_demo.py, which checked the old demo.)"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, SessionResult, run_in_bpy, run_watched

pytestmark = pytest.mark.bpy

CHECK_BAKED = """
import sys
import bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
ob = bpy.data.objects["Arm3"]
assert [(c.name, c.tip_bone, c.chain_length) for c in ob.quat_ik.chains] == [("arm", "wrist", 3)]
assert ob.animation_data.action.name == "Quat IK bake", ob.animation_data.action
blender = bpy.data.actions["Blender IK bake"]
assert blender.use_fake_user, "Blender's bake is kept in the file"
"""


def run_demo(tmp_path: Path, *args: str) -> SessionResult:
    """The demo as a user runs it; stopped only if it prints nothing for a long while."""
    command = [sys.executable, str(REPO_ROOT / "tools" / "demo.py"), "--out-dir", str(tmp_path / "out"),
               "--dist-dir", str(tmp_path), *args]  # fmt: skip
    return run_watched(command, cwd=tmp_path)


def test_demo_bakes_plots_summarises_and_round_trips_bvh(tmp_path: Path, extension_zip: Path) -> None:
    demo = run_demo(tmp_path, "--only", "arm3")
    output = demo.stdout + demo.stderr
    assert demo.returncode == 0, output
    out = tmp_path / "out"
    assert "demo: arm3: 200 frames; Quat IK" in demo.stdout, output
    assert "| arm3 | 200 | Quat IK |" in demo.stdout and "| arm3 | 200 | Blender IK |" in demo.stdout, output
    assert "demo: done in" in demo.stdout, output
    png = (out / "arm3.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000, "the rig's plot"
    summary = json.loads((out / "summary.json").read_text())
    ours = summary["rigs"]["arm3"]["quat_ik"]
    assert ours["frames"] == 200 and ours["reached"] == 200, ours
    assert ours["violation_max_deg"] < 0.1, ours
    assert summary["bvh"]["ok"] and summary["bvh"]["frames"] == 200, summary["bvh"]
    assert (out / "arm3.bvh").read_text().startswith("HIERARCHY")
    assert (out / "summary.md").read_text().startswith("# quat-ik demo")
    # Opening the baked file needs the add-on, which the demo installed only in its own temp folder.
    run_in_bpy(CHECK_BAKED, out / "arm3.blend", workdir=tmp_path, addon_zip=extension_zip).check()


def test_demo_fails_with_a_clear_message(tmp_path: Path) -> None:
    demo = run_demo(tmp_path, "--only", "arm3,no_such_rig")
    assert demo.returncode == 1, demo.stdout + demo.stderr
    assert "demo: FAILED: no sample rig no_such_rig; the rigs are arm3, human_arm" in demo.stdout, demo.stdout


def test_the_bvh_check_compares_only_the_tails_bvh_records(tmp_path: Path) -> None:
    """rigify_human's spine bones have several children, whose tails the BVH importer cannot
    know: the round trip still checks every head, rotation and recorded tail, and passes."""
    demo = run_demo(tmp_path, "--only", "rigify_human")
    assert demo.returncode == 0, demo.stdout + demo.stderr
    bvh = json.loads((tmp_path / "out" / "summary.json").read_text())["bvh"]
    assert bvh["ok"] and bvh["bones"] > 150 and bvh["position_error"] < 1e-5, bvh
