"""The one real-window Blender session the tests in this folder read (run once per test run).

``window_session`` builds the rig headless (``sessions/build_rig.py``, Blender 3.4 binary),
then opens it in Debian's Blender 3.4 in a real window under ``xvfb-run``, with the add-on
installed, and runs ``sessions/window_ui.py`` there (screenshots, add-on disabled
screenshots, undo). It returns a ``WindowSession``: the parsed ``results.json``, the
session's output, and where the PNGs are.

The session runs many steps one after another (a few minutes on a busy 2-core machine). It is
stopped only when it prints nothing for ``WINDOW_SILENCE_S`` (each step prints as it begins and
ends), never after a fixed total time, and ``results.json`` is saved after every step: a test
whose results were recorded passes or fails on them, and one whose step never ran fails with
the step that was running and why the session stopped (``WindowSession.result``).

Set ``QUAT_IK_SCREENSHOTS_DIR`` to a folder to have the tests copy the screenshots the README
uses into it once their checks pass (``tools/screenshots.py`` does that for docs/screenshots/).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import BLENDER_BINARY, BOOTSTRAP, SessionResult, run_in_blender_binary, run_watched

SESSIONS = Path(__file__).resolve().parent / "sessions"
SCREEN = "1600x1000x24"  # the X screen; Blender's window fills it
# The window session is stopped after this long without a line of output. Its longest step
# (the bake Esc stops half way) prints within a minute on a busy 2-core machine.
WINDOW_SILENCE_S = 240
DONE_MARKER = "WINDOW_SESSION_DONE"  # printed by window_ui.py when it quits, even after an error

# Which step of window_ui.py records each entry of results.json.
STEP_OF = {
    "sidebar": "widen_sidebar",
    "overlay_toggle": "overlay_on",
    "shots": "screenshots",
    "layouts": "screenshots",
    "panels_drawn": "screenshots",
    "live_rest": "live_rest",
    "undo": "undo_cases",
    "rotate_tool_locks": "rotate_tool_locks",
    "cancel_bake": "cancel_bake_while_solving",
    "failed_bake": "cancel_bake_while_solving",
    "bake_polls": "stop_a_long_solve",
    "stop_long_solve": "stop_a_long_solve",
    "symmetrize": "symmetrize_limits",
    "delete_target": "delete_target_undo",
    "join": "join_undo_redo",
}


@dataclass(frozen=True)
class WindowSession:
    results: dict
    output: str  # stdout + stderr of the window session
    out_dir: Path
    command: tuple[str, ...]
    stopped: str = ""  # why the session ended before its last step ("" when it ran them all)

    def result(self, key: str, *within: str):
        """``results[key][within[0]]...``, or a failure saying which step of the session never
        recorded it and why: the session went silent in a step, or a step raised."""
        value, path = self.results.get(key), [key]
        for name in within:
            value = value.get(name) if isinstance(value, dict) else None
            path.append(name)
        if value is None:
            running = self.results.get("running")
            pytest.fail(
                f"the window session recorded no {'/'.join(path)} (made by its step {STEP_OF.get(key, '?')!r}): "
                f"{self.stopped or 'it ran every step'}"
                + (f"; it stopped in step {running!r}" if running else "")
                + f"\n{self.describe()}"
            )
        return value

    def shot(self, name: str) -> dict:
        return self.result("shots", name)

    def describe(self, n_lines: int = 60) -> str:
        tail = "\n".join(self.output.splitlines()[-n_lines:])
        return f"command: {' '.join(self.command)}\n--- output (last {n_lines} lines) ---\n{tail}"


def window_command(blend: Path, script: Path, *args: str | Path, addon_zip: Path) -> list[str]:
    if shutil.which("xvfb-run") is None or not BLENDER_BINARY.is_file():
        raise AssertionError(
            "the window tests need xvfb-run and Debian's Blender 3.4: run `make test` as root, or "
            "apt-get install -y blender python3-numpy xvfb xauth libgl1-mesa-dri"
        )
    return [
        "xvfb-run", "--auto-servernum", "--server-args", f"-screen 0 {SCREEN}",
        str(BLENDER_BINARY), "--factory-startup", "--enable-event-simulate", str(blend),
        "--python", str(BOOTSTRAP), "--", "--install", str(addon_zip), str(script), *map(str, args),
    ]  # fmt: skip


def run_in_window(
    blend: Path, script: Path, *args: str | Path, workdir: Path, addon_zip: Path, silence_s: float = WINDOW_SILENCE_S
) -> SessionResult:
    """``script`` in Debian's Blender 3.4 in a window under xvfb, ``blend`` open and the add-on
    installed, with a new, empty Blender user folder in ``workdir``; the result unchecked (a
    session script with steps passes it to ``session_steps.check``, see tests/session_steps.py)."""
    command = window_command(blend, script, *args, addon_zip=addon_zip)
    user_resources = Path(tempfile.mkdtemp(prefix="blender_user_", dir=workdir))
    # TMPDIR & co.: Blender writes quit.blend to its temp folder on quitting.
    temp = {name: str(workdir) for name in ("TMPDIR", "TEMP", "TMP")}
    env = {**os.environ, **temp, "BLENDER_USER_RESOURCES": str(user_resources)}
    return run_watched(command, cwd=workdir, env=env, silence_s=silence_s)


@pytest.fixture(scope="session")
def window_session(extension_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> WindowSession:
    workdir = tmp_path_factory.mktemp("window")
    blend = workdir / "rig.blend"
    run_in_blender_binary(SESSIONS / "build_rig.py", blend, workdir=workdir, addon_zip=extension_zip).check()

    out_dir = workdir / "screenshots"
    out_dir.mkdir()
    done = run_in_window(blend, SESSIONS / "window_ui.py", out_dir, workdir=workdir, addon_zip=extension_zip)
    command = done.command
    output = done.stdout + done.stderr
    (workdir / "window_session.log").write_text(output)
    results_file = out_dir / "results.json"
    results = json.loads(results_file.read_text()) if results_file.is_file() else {}
    if done.stalled:
        stopped = done.stalled
    elif "error" in results:
        stopped = f"step {results.get('running')!r} raised:\n{results['error']}"
    elif DONE_MARKER not in done.stdout:
        stopped = f"Blender ended (exit {done.returncode}) before the session's last step"
    else:
        stopped = ""
    return WindowSession(results, output, out_dir, tuple(command), stopped)


@pytest.fixture(scope="session")
def publish_dir() -> Path | None:
    """Where passing tests copy the README's screenshots, or None (the default: nowhere)."""
    folder = os.environ.get("QUAT_IK_SCREENSHOTS_DIR")
    return Path(folder).resolve() if folder else None
