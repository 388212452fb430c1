"""The add-on preference *Native Kernel* (sessions/preferences.py, preferences_at_startup.py):
it switches the solver both ways, the preferences and the Last Solve box name the path that
ran, and a saved choice applies from startup, in bpy 5.0 and in Blender 3.4's binary, whose
``register()`` runs with a restricted context."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import BLENDER_BINARY, BOOTSTRAP, SUCCESS_MARKER

SESSIONS = Path(__file__).resolve().parent / "sessions"


def _run(launcher: list[str], arguments: list[str], workdir: Path, user: Path) -> subprocess.CompletedProcess:
    """A session whose Blender user folder is ``user``, kept from one session to the next."""
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user)}
    command = [*launcher, str(BOOTSTRAP), "--", *arguments]
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False)


def _assert_succeeded(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0 and SUCCESS_MARKER in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def _saved_off_then_started(launcher: list[str], extension_zip: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    install = ["--install", str(extension_zip), str(SESSIONS / "preferences.py"), str(tmp_path), "--save-off"]
    _assert_succeeded(_run(launcher, install, tmp_path, user))
    _assert_succeeded(_run(launcher, [str(SESSIONS / "preferences_at_startup.py"), str(tmp_path)], tmp_path, user))


@pytest.mark.bpy
def test_the_preference_switches_the_solver_both_ways_and_last_solve_names_the_path(run_session) -> None:
    run_session("preferences.py")


@pytest.mark.bpy
def test_a_saved_preference_applies_from_startup(extension_zip: Path, tmp_path: Path) -> None:
    _saved_off_then_started([sys.executable], extension_zip, tmp_path)


@pytest.mark.blender_binary
def test_a_saved_preference_applies_from_startup_in_blender_34(extension_zip: Path, tmp_path: Path) -> None:
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")
    launcher = [str(BLENDER_BINARY), "--background", "--python-exit-code", "1", "--python"]
    _saved_off_then_started(launcher, extension_zip, tmp_path)
