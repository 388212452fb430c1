"""Run a script in a fresh Blender session, from a test.

``bpy`` state is global and an add-on's registration outlives a test, so anything that touches
Blender runs in a new process:

* ``run_in_bpy(script, *args, workdir=tmp_path, addon_zip=None)`` runs it with this venv's Python,
  i.e. the bpy 5.0 module;
* ``run_in_blender_binary(...)`` runs it with Debian's Blender 3.4 binary
  (``--background --factory-startup --python-exit-code 1``).

Both give the session a new, empty Blender user folder inside ``workdir``
(``BLENDER_USER_RESOURCES``, so the developer's own Blender setup is never read or changed) and
start it through ``tests/session_bootstrap.py``, which puts the repository root on ``sys.path``
(so scripts can ``from tools.blender_session import install_addon, make_bone_chain`` and
``from tests.addon_footprint import ...``), installs and enables ``addon_zip`` first if given,
and prints ``SUCCESS_MARKER`` when the script returns without raising.

``script`` is a ``Path`` to a file or a ``str`` of Python source. Arguments reach the script
as ``sys.argv[1:]`` (``Path`` arguments made absolute: the session runs in ``workdir``).
Call ``.check()`` on the result to fail the test with the session's output unless it
succeeded. Most tests want the fixtures in ``tests/conftest.py`` instead: ``extension_zip``
and ``run_bpy_with_addon``.

This module is imported inside sessions too (for ``SUCCESS_MARKER``): keep it free of pytest
and of anything the Blender 3.4 Python lacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
BOOTSTRAP = TESTS_DIR / "session_bootstrap.py"
BLENDER_BINARY = Path(os.environ.get("QUAT_IK_BLENDER_BINARY", "/usr/bin/blender"))
SUCCESS_MARKER = "QUAT_IK_SESSION_OK"
SESSION_TIMEOUT_S = 600
# What the add-on's app handlers and timer print when they catch an exception they did not
# expect (a bug: they must never raise into Blender, so they report instead). A session that
# printed it fails, whatever its own checks said. (The overlay's draw callback is left out: in
# the background it fails on purpose until the GPU works, and its tests check that.)
HANDLER_BUG_MARKER = "failed unexpectedly"


@dataclass(frozen=True)
class SessionResult:
    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and SUCCESS_MARKER in self.stdout and HANDLER_BUG_MARKER not in self.stdout

    def check(self) -> SessionResult:
        """Return self if the session succeeded, else raise AssertionError showing its output."""
        if not self.succeeded:
            raise AssertionError(
                f"Blender session failed (exit {self.returncode}, success marker "
                f"{'present' if SUCCESS_MARKER in self.stdout else 'missing'}"
                f"{', a handler failed unexpectedly' if HANDLER_BUG_MARKER in self.stdout else ''})\n"
                f"command: {' '.join(self.command)}\n"
                f"--- stdout (last 80 lines) ---\n{_tail(self.stdout)}\n"
                f"--- stderr (last 80 lines) ---\n{_tail(self.stderr)}"
            )
        return self


def run_in_bpy(script: Path | str, *args: str | Path, workdir: Path, addon_zip: Path | None = None) -> SessionResult:
    """Run ``script`` in a fresh bpy 5.0 session (this venv's Python); see the module docstring."""
    return _run([sys.executable, str(BOOTSTRAP)], script, args, workdir=workdir, addon_zip=addon_zip)


def run_in_blender_binary(
    script: Path | str, *args: str | Path, workdir: Path, addon_zip: Path | None = None
) -> SessionResult:
    """Run ``script`` in Debian's Blender 3.4 binary, headless; see the module docstring."""
    if not BLENDER_BINARY.is_file():
        raise AssertionError(
            f"{BLENDER_BINARY} not found: install Debian's Blender (`make test` does it when run as root, "
            "or: apt-get install -y blender xvfb xauth libgl1-mesa-dri)"
        )
    # Without --python-exit-code 1 a script that raises still exits 0.
    launcher = [str(BLENDER_BINARY), "--background", "--factory-startup", "--python-exit-code", "1"]
    return _run([*launcher, "--python", str(BOOTSTRAP)], script, args, workdir=workdir, addon_zip=addon_zip)


def _run(
    launcher: list[str], script: Path | str, args: tuple, *, workdir: Path, addon_zip: Path | None
) -> SessionResult:
    workdir.mkdir(parents=True, exist_ok=True)
    if isinstance(script, str):  # source code: give it a file so tracebacks show its lines
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="session_", dir=workdir, delete=False) as f:
            f.write(script)
        script = Path(f.name)
    user_resources = Path(tempfile.mkdtemp(prefix="blender_user_", dir=workdir))
    install = ["--install", str(addon_zip.resolve())] if addon_zip is not None else []
    # The session runs in workdir, so Path arguments are made absolute; str arguments pass as they are.
    script_args = [str(a.resolve()) if isinstance(a, Path) else a for a in args]
    command = (*launcher, "--", *install, str(script), *script_args)
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user_resources)}
    completed = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False
    )
    return SessionResult(command, completed.returncode, completed.stdout, completed.stderr)


def _tail(text: str, n_lines: int = 80) -> str:
    return "\n".join(text.splitlines()[-n_lines:])
