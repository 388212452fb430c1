"""Fixtures shared by every test folder.

* ``extension_zip``: the add-on zip, built and validated once per test session (into a temp
  folder, not ``dist/``) by ``tools/build_extension.py``.
* ``run_bpy_with_addon``: ``run_bpy_with_addon(script, *args)`` runs ``script`` (a Path, or a str
  of source) in a fresh bpy 5.0 session with that zip installed and enabled, and fails the test
  with the session's output unless the script returns cleanly. See ``tests/helpers.py`` for the
  lower-level runners (bpy module and Blender 3.4 binary).
* ``run_bpy_with_addon_result`` and ``run_blender_binary_result``: the same runs (in bpy 5.0, and
  in Debian's Blender 3.4 binary) returning the ``SessionResult`` without checking it.
* ``session_steps``: each named step of a session script as a pytest item; see
  ``tests/session_steps.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import SessionResult, run_in_blender_binary, run_in_bpy
from tests.session_steps import BoundSessionSteps, SessionSteps
from tools.build_extension import build_extension

# The same examples on every run: a property test fails for a reason, not for a lucky draw.
settings.register_profile("quat_ik", derandomize=True, deadline=None)
settings.load_profile("quat_ik")


@pytest.fixture(scope="session")
def extension_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_extension(dist_dir=tmp_path_factory.mktemp("dist"))


@pytest.fixture
def run_bpy_with_addon(extension_zip: Path, tmp_path: Path) -> Callable[..., SessionResult]:
    def run(script: Path | str, *args: str | Path) -> SessionResult:
        return run_in_bpy(script, *args, workdir=tmp_path, addon_zip=extension_zip).check()

    return run


@pytest.fixture
def run_bpy_with_addon_result(extension_zip: Path, tmp_path: Path) -> Callable[..., SessionResult]:
    def run(script: Path | str, *args: str | Path) -> SessionResult:
        return run_in_bpy(script, *args, workdir=tmp_path, addon_zip=extension_zip)

    return run


@pytest.fixture
def run_blender_binary_result(extension_zip: Path, tmp_path: Path) -> Callable[..., SessionResult]:
    def run(script: Path | str, *args: str | Path) -> SessionResult:
        return run_in_blender_binary(script, *args, workdir=tmp_path, addon_zip=extension_zip)

    return run


@pytest.fixture(scope="session")
def session_step_runs() -> SessionSteps:
    """The session scripts run so far in this pytest session, by key, read step by step."""
    return SessionSteps()


@pytest.fixture
def session_steps(session_step_runs: SessionSteps, request: pytest.FixtureRequest) -> BoundSessionSteps:
    """``session_steps.check(key, step, run)``: see ``tests/session_steps.py``."""
    return BoundSessionSteps(session_step_runs, request.node.module.__name__)
