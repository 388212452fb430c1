"""Fixtures for tests/blender: run a session script from ``sessions/`` in a fresh bpy 5.0
session with the add-on zip installed (``run_session``), and echo its per-check lines."""

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
