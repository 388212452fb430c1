"""The version matrix: the same zip, end to end (install, enable, add chain, solve, bake, save,
reload, disable), in every supported Blender.

* bpy 4.2 LTS and 4.5 LTS: the PyPI wheels, each in its own venv (``.venv-bpy42``,
  ``.venv-bpy45``, made by ``make compat-venvs``), started as a subprocess with that venv's
  Python — a venv holds one bpy, and pytest itself runs in ``.venv`` only;
* bpy 5.0: this venv's Python (the full suite runs there too; this is the same smoke for
  comparison);
* Blender 3.4: Debian's binary in ``--background`` mode, the zip installed as a legacy add-on.

The session script is ``sessions/smoke.py``; each of its steps is an item per Blender.
Sessions of the main suite whose subject moved with Blender's APIs (bakes into actions
with and without slots, bone renames and joins, shared actions) and the random rigs, bakes,
bad input and operations (every rotation mode and rig space, destination and key layout,
fault, operator, read back from that version's own evaluation) run again in bpy 4.2 and 4.5,
the joins and the random sessions in the 3.4 binary.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import BOOTSTRAP, REPO_ROOT, SESSION_TIMEOUT_S, SessionResult, run_in_blender_binary
from tests.session_steps import steps_of, steps_of_each

SMOKE = Path(__file__).resolve().parent / "sessions" / "smoke.py"


def venv_python(name: str) -> Path:
    return REPO_ROOT / name / "bin" / "python"


def run_in_python(
    python: Path, script: Path, *args: str | Path, workdir: Path, install: Path | None = None
) -> SessionResult:
    """Run ``script`` through the session bootstrap with another Python (another venv's bpy);
    ``install``: the extension zip the bootstrap installs and enables first.

    The same contract as ``tests.helpers.run_in_bpy``: a fresh, empty Blender user folder
    inside ``workdir``, the repository on ``sys.path``, the success marker on a clean return.
    """
    if not python.is_file():
        raise AssertionError(f"{python} not found: run `make compat-venvs` (`make test` does it)")
    workdir.mkdir(parents=True, exist_ok=True)
    user_resources = tempfile.mkdtemp(prefix="blender_user_", dir=workdir)
    installing = ("--install", str(install)) if install is not None else ()
    command = (str(python), str(BOOTSTRAP), "--", *installing, str(script), *(str(a) for a in args))
    env = {**os.environ, "BLENDER_USER_RESOURCES": user_resources}
    done = subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=SESSION_TIMEOUT_S, check=False
    )
    return SessionResult(command, done.returncode, done.stdout, done.stderr)


# (how to start it, the version it must report, the id of the test and of its session key)
BPY_MODULES = [
    pytest.param(venv_python(".venv-bpy42"), "4.2.23", id="bpy-4.2-lts"),
    pytest.param(venv_python(".venv-bpy45"), "4.5.15", id="bpy-4.5-lts"),
    pytest.param(Path(sys.executable), "5.0.1", id="bpy-5.0"),
]
SMOKE_STEPS = steps_of(SMOKE)


def _smoke_in_bpy(session_steps, python: Path, version: str, extension_zip: Path, tmp_path: Path):
    return session_steps.run(
        f"compat smoke bpy {version}", lambda: run_in_python(python, SMOKE, extension_zip, tmp_path, workdir=tmp_path)
    )


def _smoke_in_blender34(session_steps, extension_zip: Path, tmp_path: Path):
    return session_steps.run(
        "compat smoke blender-3.4", lambda: run_in_blender_binary(SMOKE, extension_zip, tmp_path, workdir=tmp_path)
    )


def assert_ran_clean(run, version_line: str = "") -> None:
    """The session ran (in the Blender that ``version_line`` names) and printed no traceback."""
    assert run.result is not None, run.ending()
    assert version_line in run.result.stdout, run.ending()
    assert "Traceback" not in run.result.stdout + run.result.stderr, run.ending()


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize("step", SMOKE_STEPS)
@pytest.mark.parametrize(("python", "version"), BPY_MODULES)
def test_smoke_in_bpy_module(
    python: Path, version: str, step, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    run = _smoke_in_bpy(session_steps, python, version, extension_zip, tmp_path)
    session_steps.check(run.key, step, lambda: run.result)


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize(("python", "version"), BPY_MODULES)
def test_smoke_in_bpy_module_ran_in_that_version_without_a_traceback(
    python: Path, version: str, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    assert_ran_clean(_smoke_in_bpy(session_steps, python, version, extension_zip, tmp_path), f"VERSION {version}\n")


@pytest.mark.version_matrix
@pytest.mark.blender_binary
@pytest.mark.parametrize("step", SMOKE_STEPS)
def test_smoke_in_blender34_binary(step, session_steps, extension_zip: Path, tmp_path: Path) -> None:
    run = _smoke_in_blender34(session_steps, extension_zip, tmp_path)
    session_steps.check(run.key, step, lambda: run.result)


@pytest.mark.version_matrix
@pytest.mark.blender_binary
def test_smoke_in_blender34_binary_ran_in_34_without_a_traceback(
    session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    assert_ran_clean(_smoke_in_blender34(session_steps, extension_zip, tmp_path), "VERSION 3.4.")


# Sessions of the main suite whose subject changed with Blender's action and data APIs (slots
# from 4.4, session_uid), and the random sessions (every rotation mode and rig space,
# destination and key layout, fault and operator, read back from each version's own
# evaluation): run again in the LTS modules (the --install form of the bootstrap).
BLENDER_SESSIONS = REPO_ROOT / "tests" / "blender" / "sessions"
# Random rigs, bakes, bad input, chain trees, IK conversions and operations (every rotation
# mode and rig space, destination and key layout, fault and operator), read back from each
# version's evaluation.
RANDOM_SESSIONS = (
    "random_bad_input.py",
    "random_bakes.py",
    "random_chain_trees.py",
    "random_ik_conversion.py",
    "random_operations.py",
    "random_rigs.py",
)
ACROSS_VERSIONS = ("bake_channels.py", "join_separate.py", "renames.py", "shared_action.py", *RANDOM_SESSIONS)


LTS_MODULES = [
    pytest.param(venv_python(".venv-bpy42"), "bpy-4.2-lts", id="bpy-4.2-lts"),
    pytest.param(venv_python(".venv-bpy45"), "bpy-4.5-lts", id="bpy-4.5-lts"),
]


def _in_lts(session_steps, python: Path, blender: str, session: str, extension_zip: Path, tmp_path: Path):
    script = BLENDER_SESSIONS / session
    return session_steps.run(
        f"{blender} {session}",
        lambda: run_in_python(python, script, tmp_path, workdir=tmp_path, install=extension_zip),
    )


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize(("session", "step"), steps_of_each(BLENDER_SESSIONS / name for name in ACROSS_VERSIONS))
@pytest.mark.parametrize(("python", "blender"), LTS_MODULES)
def test_sessions_in_lts_bpy_modules(
    python: Path, blender: str, session: str, step, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    run = _in_lts(session_steps, python, blender, session, extension_zip, tmp_path)
    session_steps.check(run.key, step, lambda: run.result)


@pytest.mark.version_matrix
@pytest.mark.bpy
@pytest.mark.parametrize("session", ACROSS_VERSIONS)
@pytest.mark.parametrize(("python", "blender"), LTS_MODULES)
def test_sessions_in_lts_bpy_modules_print_no_traceback(
    python: Path, blender: str, session: str, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    assert_ran_clean(_in_lts(session_steps, python, blender, session, extension_zip, tmp_path))


# Sessions whose subject leans on data behaviour that changed since 3.4 (session_uid, pose bone
# ID properties carried by Join, Separate and Symmetrize), and the random sessions, in Debian's
# 3.4 binary too.
IN_BLENDER34 = ("join_separate.py", *RANDOM_SESSIONS)


def _in_blender34(session_steps, session: str, extension_zip: Path, tmp_path: Path):
    script = BLENDER_SESSIONS / session
    return session_steps.run(
        f"blender-3.4 {session}",
        lambda: run_in_blender_binary(script, tmp_path, workdir=tmp_path, addon_zip=extension_zip),
    )


@pytest.mark.version_matrix
@pytest.mark.blender_binary
@pytest.mark.parametrize(("session", "step"), steps_of_each(BLENDER_SESSIONS / name for name in IN_BLENDER34))
def test_sessions_in_blender34_binary(session: str, step, session_steps, extension_zip: Path, tmp_path: Path) -> None:
    run = _in_blender34(session_steps, session, extension_zip, tmp_path)
    session_steps.check(run.key, step, lambda: run.result)


@pytest.mark.version_matrix
@pytest.mark.blender_binary
@pytest.mark.parametrize("session", IN_BLENDER34)
def test_sessions_in_blender34_binary_print_no_traceback(
    session: str, session_steps, extension_zip: Path, tmp_path: Path
) -> None:
    assert_ran_clean(_in_blender34(session_steps, session, extension_zip, tmp_path))
