"""Fixtures for tests/blender: run a session script from ``sessions/`` in a fresh bpy 5.0
session with the add-on zip installed (``run_session``), and echo its per-check lines.

``run_session_result`` and ``run_binary_session_result`` run it the same way (in bpy 5.0, and in
Debian's Blender 3.4 binary) and return the ``SessionResult`` unchecked, for
``session_steps.check`` (``tests/session_steps.py``), which passes or fails each step alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import SessionResult

SESSIONS = Path(__file__).resolve().parent / "sessions"


@pytest.fixture
def run_session(run_bpy_with_addon, tmp_path: Path) -> Callable[..., SessionResult]:
    """``run_session("end_to_end.py", *args)``: the script gets ``tmp_path`` as its first argument."""

    def run(script: str, *args: str | Path) -> SessionResult:
        result = run_bpy_with_addon(SESSIONS / script, tmp_path, *args)
        print(result.stdout)  # the per-check lines, shown with -s or on failure
        return result

    return run


@pytest.fixture
def run_session_result(run_bpy_with_addon_result, tmp_path: Path) -> Callable[..., SessionResult]:
    """``run_session_result("pole.py", *args)``: as ``run_session``, without failing the test."""

    def run(script: str, *args: str | Path) -> SessionResult:
        return run_bpy_with_addon_result(SESSIONS / script, tmp_path, *args)

    return run


@pytest.fixture
def run_binary_session_result(run_blender_binary_result, tmp_path: Path) -> Callable[..., SessionResult]:
    """``run_binary_session_result("limits.py", *args)``: the same in Debian's Blender 3.4 binary."""

    def run(script: str, *args: str | Path) -> SessionResult:
        return run_blender_binary_result(SESSIONS / script, tmp_path, *args)

    return run
