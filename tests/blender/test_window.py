"""In a real Blender window (Debian's 3.4 under xvfb): the sidebar panels draw without errors
and the modal bake runs to the end."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import BLENDER_BINARY, BOOTSTRAP, REPO_ROOT

SESSIONS = Path(__file__).resolve().parent / "sessions"


@pytest.mark.window
def test_sidebar_panels_draw_without_errors(extension_zip: Path, tmp_path: Path) -> None:
    if not BLENDER_BINARY.is_file() or shutil.which("xvfb-run") is None:
        pytest.fail("needs the Blender binary and xvfb-run: run tools/ensure_debian_packages.sh (make test does)")
    command = ["xvfb-run", "-a", "-s", "-screen 0 1600x900x24", str(BLENDER_BINARY), "--factory-startup"]
    command += ["--python", str(BOOTSTRAP), "--", "--install", str(extension_zip)]
    command += [str(SESSIONS / "window_panels.py"), str(tmp_path)]
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(tmp_path / "user"), "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False)
    output = done.stdout + done.stderr
    assert "WINDOW_PANELS_DONE" in done.stdout, output[-4000:]
    assert "MODAL_BAKE_STARTED {'RUNNING_MODAL'}" in done.stdout, output[-4000:]
    assert "MODAL_BAKE_DONE" in done.stdout, output[-4000:]
    assert "PRESET_MENU_OPENED {'INTERFACE'}" in done.stdout, output[-4000:]  # a popup, drawn as it opens
    assert "POSE_IK_MENU_OPENED {'INTERFACE'}" in done.stdout, output[-4000:]
    assert "Traceback" not in output and "Error in" not in output, output[-4000:]
    assert (tmp_path / "sidebar.png").stat().st_size > 10_000
