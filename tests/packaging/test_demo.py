"""`make demo` keeps working: tools/demo.py builds, installs, rigs, bakes and saves the demo rig."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT, SESSION_TIMEOUT_S, run_in_bpy

pytestmark = pytest.mark.bpy

CHECK_ARM3 = """
import sys
import bpy
bpy.ops.wm.open_mainfile(filepath=sys.argv[1])
ob = bpy.data.objects["Arm3"]
assert [(c.tip_bone, c.chain_length) for c in ob.quat_ik.chains] == [("Bone.002", 3)], list(ob.quat_ik.chains)
assert ob.animation_data is not None and ob.animation_data.action is not None, "no baked action"
"""


def test_demo_saves_an_arm_with_a_quat_ik_chain(tmp_path: Path, extension_zip: Path) -> None:
    out_dir = tmp_path / "out"
    demo = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "demo.py"), "--out-dir", str(out_dir), "--dist-dir", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "demo: baked frames" in demo.stdout
    assert "demo: done" in demo.stdout
    # Reading the chain back needs the add-on, which the demo installed only in its own temp folder.
    run_in_bpy(CHECK_ARM3, out_dir / "arm3.blend", workdir=tmp_path, addon_zip=extension_zip).check()
