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

Sessions are stopped when they go **silent**, not after a fixed total time: a busy or slow
machine makes a session slower as a whole, while a session that hangs stops printing. Session
scripts print as they go (``Checks`` prints every check), so ``run_watched`` stops a session
only after ``SESSION_SILENCE_S`` without a line, and the failure quotes the last line printed:
the check after it is the one that hung or was slow.

This module is imported inside sessions too (for ``SUCCESS_MARKER``): keep it free of pytest
and of anything the Blender 3.4 Python lacks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent
BOOTSTRAP = TESTS_DIR / "session_bootstrap.py"
BLENDER_BINARY = Path(os.environ.get("QUAT_IK_BLENDER_BINARY", "/usr/bin/blender"))
SUCCESS_MARKER = "QUAT_IK_SESSION_OK"
# A session that prints nothing for this long is stopped (the slowest single check of a session
# takes well under a minute on a 2-core machine; five times that allows for a busy one).
SESSION_SILENCE_S = 300
# For callers that still give subprocess.run a total time limit.
SESSION_TIMEOUT_S = 900
# What the add-on's app handlers and timer print when they catch an exception they did not
# expect (a bug: they must never raise into Blender, so they report instead). A session that
# printed it fails, whatever its own checks said. (The overlay's draw callback is left out: in
# the background it fails on purpose until the GPU works, and its tests check that.)
HANDLER_BUG_MARKER = "failed unexpectedly"
# How a session script's named steps show in its output (``Checks.step`` prints them, and
# ``tests/session_steps.py`` reads them): the begin line, the step's lines, then the end line
# with the step's name and "ok" or "FAIL".
STEP_BEGIN = "--- step: "
STEP_END = "--- end step: "


@dataclass(frozen=True)
class SessionResult:
    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    stalled: str = ""  # why the session was stopped (it went silent), or "" when it ended by itself

    @property
    def succeeded(self) -> bool:
        return (
            not self.stalled
            and self.returncode == 0
            and SUCCESS_MARKER in self.stdout
            and HANDLER_BUG_MARKER not in self.stdout
        )

    def check(self) -> SessionResult:
        """Return self if the session succeeded, else raise AssertionError showing its output."""
        if not self.succeeded:
            raise AssertionError(
                (f"{self.stalled}\n" if self.stalled else "")
                + f"Blender session failed (exit {self.returncode}, success marker "
                f"{'present' if SUCCESS_MARKER in self.stdout else 'missing'}"
                f"{', a handler failed unexpectedly' if HANDLER_BUG_MARKER in self.stdout else ''})\n"
                f"command: {' '.join(self.command)}\n"
                f"--- stdout (last 80 lines) ---\n{_tail(self.stdout)}\n"
                f"--- stderr (last 80 lines) ---\n{_tail(self.stderr)}"
            )
        return self


def run_watched(
    command: list[str] | tuple[str, ...],
    *,
    cwd: Path,
    env: dict[str, str] | None = None,
    silence_s: float = SESSION_SILENCE_S,
    on_line=None,
) -> SessionResult:
    """Run ``command`` to its end, stopping it only when it prints nothing (stdout or stderr)
    for ``silence_s`` seconds; ``on_line(line)`` sees each stdout line as it comes. The result's
    ``stalled`` then says so and quotes the last line the session printed."""
    # Unbuffered: a Python session's lines arrive as printed (Blender's own Python ignores the
    # environment, so session scripts print with flush=True).
    env = {**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"}
    # A session of its own, so stopping it stops what it started too (xvfb-run's X server).
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    streams: dict[str, list[str]] = {"stdout": [], "stderr": []}
    last = {"time": time.monotonic(), "line": ""}
    lock = threading.Lock()

    def pump(name: str, stream) -> None:
        for line in stream:
            with lock:
                streams[name].append(line)
                last["time"], last["line"] = time.monotonic(), line.rstrip()
            if on_line is not None and name == "stdout":
                on_line(line.rstrip("\n"))

    readers = [threading.Thread(target=pump, args=(name, getattr(process, name)), daemon=True) for name in streams]
    for reader in readers:
        reader.start()
    started, stalled = time.monotonic(), ""
    while process.poll() is None:
        with lock:
            quiet = time.monotonic() - last["time"]
            last_line = last["line"]
        if quiet > silence_s:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            stalled = (
                f"the session printed nothing for {silence_s:.0f} s and was stopped "
                f"({time.monotonic() - started:.0f} s after it started); its last line: {last_line!r}"
            )
            break
        time.sleep(0.2)
    process.wait()
    for reader in readers:
        reader.join(timeout=10)
    return SessionResult(
        tuple(command), process.returncode, "".join(streams["stdout"]), "".join(streams["stderr"]), stalled
    )


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
    return run_watched(command, cwd=workdir, env=env)


def _tail(text: str, n_lines: int = 80) -> str:
    return "\n".join(text.splitlines()[-n_lines:])
