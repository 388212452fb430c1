"""The add-on preference *Native Kernel* (sessions/preferences.py, preferences_at_startup.py):
it switches the solver both ways, the preferences and the Last Solve box name the path that
ran, and a saved choice applies from startup, in bpy 5.0 and in Blender 3.4's binary, whose
``register()`` runs with a restricted context. One item per step of each session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.blender.conftest import SESSIONS
from tests.helpers import BLENDER_BINARY, BOOTSTRAP, SessionResult
from tests.session_steps import steps_of

STARTUP_STEPS = steps_of(SESSIONS / "preferences_at_startup.py")


def _run(launcher: list[str], arguments: list[str], workdir: Path, user: Path) -> SessionResult:
    """A session whose Blender user folder is ``user``, kept from one session to the next."""
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user)}
    command = [*launcher, str(BOOTSTRAP), "--", *arguments]
    done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False)
    return SessionResult(tuple(command), done.returncode, done.stdout, done.stderr)


def _saved_off_then_started(launcher: list[str], extension_zip: Path, tmp_path: Path) -> SessionResult:
    """preferences.py saves the preference off; a new session starts on those preferences and runs
    preferences_at_startup.py. Its result, or the first session's if that one failed (then every
    step of the second is not reached, shown with the first one's output)."""
    user = tmp_path / "user"
    install = ["--install", str(extension_zip), str(SESSIONS / "preferences.py"), str(tmp_path), "--save-off"]
    saved = _run(launcher, install, tmp_path, user)
    if not saved.succeeded:
        return saved
    return _run(launcher, [str(SESSIONS / "preferences_at_startup.py"), str(tmp_path)], tmp_path, user)


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "preferences.py"))
def test_the_preference_switches_the_solver_both_ways_and_last_solve_names_the_path(
    step, session_steps, run_session_result
) -> None:
    session_steps.check("preferences", step, lambda: run_session_result("preferences.py"))


@pytest.mark.bpy
@pytest.mark.parametrize("step", STARTUP_STEPS)
def test_a_saved_preference_applies_from_startup(step, session_steps, extension_zip: Path, tmp_path: Path) -> None:
    session_steps.check(
        "preferences_at_startup bpy-5.0",
        step,
        lambda: _saved_off_then_started([sys.executable], extension_zip, tmp_path),
    )


@pytest.mark.blender_binary
@pytest.mark.parametrize("step", STARTUP_STEPS)
def test_a_saved_preference_applies_from_startup_in_blender_34(
    step, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")
    launcher = [str(BLENDER_BINARY), "--background", "--python-exit-code", "1", "--python"]
    session_steps.check(
        "preferences_at_startup blender-3.4",
        step,
        lambda: _saved_off_then_started(launcher, extension_zip, tmp_path),
    )
