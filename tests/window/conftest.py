"""The one real-window Blender session the tests in this folder read (run once per test run).

``window_session`` builds the rig headless (``sessions/build_rig.py``, Blender 3.4 binary),
then opens it in Debian's Blender 3.4 in a real window under ``xvfb-run``, with the add-on
installed, and runs ``sessions/window_ui.py`` there (screenshots, add-on disabled
screenshots, undo). It returns a ``WindowSession``: the parsed ``results.json``, the
session's output, and where the PNGs are.

Set ``QUAT_IK_SCREENSHOTS_DIR`` to a folder to have the tests copy the screenshots the README
uses into it once their checks pass (``tools/screenshots.py`` does that for docs/screenshots/).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import BLENDER_BINARY, BOOTSTRAP, run_in_blender_binary

SESSIONS = Path(__file__).resolve().parent / "sessions"
SCREEN = "1600x1000x24"  # the X screen; Blender's window fills it
WINDOW_TIMEOUT_S = 300
DONE_MARKER = "WINDOW_SESSION_DONE"  # printed by window_ui.py when it quits, even after an error


@dataclass(frozen=True)
class WindowSession:
    results: dict
    output: str  # stdout + stderr of the window session
    out_dir: Path
    command: tuple[str, ...]

    def shot(self, name: str) -> dict:
        assert name in self.results["shots"], f"no screenshot {name!r}: {sorted(self.results['shots'])}"
        return self.results["shots"][name]

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


@pytest.fixture(scope="session")
def window_session(extension_zip: Path, tmp_path_factory: pytest.TempPathFactory) -> WindowSession:
    workdir = tmp_path_factory.mktemp("window")
    blend = workdir / "rig.blend"
    run_in_blender_binary(SESSIONS / "build_rig.py", blend, workdir=workdir, addon_zip=extension_zip).check()

    out_dir = workdir / "screenshots"
    out_dir.mkdir()
    command = window_command(blend, SESSIONS / "window_ui.py", out_dir, addon_zip=extension_zip)
    user_resources = workdir / "blender_user"
    user_resources.mkdir()
    # TMPDIR & co.: Blender writes quit.blend to its temp folder on quitting.
    temp = {name: str(workdir) for name in ("TMPDIR", "TEMP", "TMP")}
    env = {**os.environ, **temp, "BLENDER_USER_RESOURCES": str(user_resources)}
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=WINDOW_TIMEOUT_S, check=False
    )
    output = done.stdout + done.stderr
    (workdir / "window_session.log").write_text(output)
    results_file = out_dir / "results.json"
    assert DONE_MARKER in done.stdout and results_file.is_file(), (
        f"the window session did not finish (exit {done.returncode})\ncommand: {' '.join(command)}\n{output[-6000:]}"
    )
    session = WindowSession(json.loads(results_file.read_text()), output, out_dir, tuple(command))
    assert "error" not in session.results, (
        f"the window session raised:\n{session.results['error']}\n{session.describe()}"
    )
    return session


@pytest.fixture(scope="session")
def publish_dir() -> Path | None:
    """Where passing tests copy the README's screenshots, or None (the default: nowhere)."""
    folder = os.environ.get("QUAT_IK_SCREENSHOTS_DIR")
    return Path(folder).resolve() if folder else None
