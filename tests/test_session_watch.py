"""Sessions are stopped when they go silent, not after a fixed total time, and a stopped session
says where it was (issue 35: on a busy machine one fixed timeout would fail every window test at once).
Plain Python stands in for Blender here."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers import run_watched
from tests.window.conftest import STEP_OF, WindowSession


def python(source: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(source)]


def test_a_session_that_keeps_printing_runs_past_the_silence_limit(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_watched(
        python("""
            import time
            for step in range(6):
                print("step", step, flush=True)
                time.sleep(0.4)
        """),
        cwd=tmp_path,
        silence_s=1.5,
    )
    assert time.monotonic() - started > 2.0  # longer in all than the silence allowed
    assert done.returncode == 0 and not done.stalled, done
    assert done.stdout.splitlines()[-1] == "step 5"


def test_a_silent_session_is_stopped_with_its_children_and_says_where_it_was(tmp_path: Path) -> None:
    marker = tmp_path / "child_still_running"
    done = run_watched(
        python(f"""
            import subprocess, sys, time
            # A child of its own (as xvfb-run starts an X server): it must go with the session.
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3); open({str(marker)!r}, 'w')"])
            print("checking the slow thing", flush=True)
            time.sleep(60)
        """),
        cwd=tmp_path,
        silence_s=1.0,
    )
    assert done.returncode != 0 and done.stalled, done
    assert "printed nothing for 1 s" in done.stalled and "'checking the slow thing'" in done.stalled, done.stalled
    with pytest.raises(AssertionError, match="checking the slow thing"):
        done.check()
    time.sleep(3.5)
    assert not marker.exists(), "the session's child outlived it"


def test_a_window_test_whose_step_never_ran_names_the_step_and_why(tmp_path: Path) -> None:
    session = WindowSession(
        results={"steps_done": ["set_up_window"], "running": "widen_sidebar", "undo": {}},
        output="window session: begin widen_sidebar\n",
        out_dir=tmp_path,
        command=("blender",),
        stopped="the session printed nothing for 240 s and was stopped",
    )
    with pytest.raises(pytest.fail.Exception) as failure:
        session.result("undo", "every:solve")
    message = str(failure.value)
    assert "recorded no undo/every:solve" in message and repr(STEP_OF["undo"]) in message, message
    assert "printed nothing for 240 s" in message and "it stopped in step 'widen_sidebar'" in message, message
