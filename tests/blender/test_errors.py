"""Bad input: a clear error and an unchanged scene (see sessions/errors.py); and a bake keeps
what is not its own (sessions/shared_action.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "errors.py"))
def test_error_paths_report_and_change_nothing(step, session_steps, run_session_result):
    session_steps.check("errors", step, lambda: run_session_result("errors.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "shared_action.py"))
def test_a_bake_into_an_action_another_rig_plays_keeps_that_rigs_keys(step, session_steps, run_session_result):
    session_steps.check("shared_action", step, lambda: run_session_result("shared_action.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "bake_channels.py"))
def test_a_bake_keys_what_plays_for_steps_partial_keys_and_remapped_time(step, session_steps, run_session_result):
    session_steps.check("bake_channels", step, lambda: run_session_result("bake_channels.py"))


def test_a_bake_warns_of_modifiers_and_blending_that_change_its_keys_as_they_play(session_steps, run_session_result):
    run = session_steps.run("bake_channels", lambda: run_session_result("bake_channels.py"))
    # The bake's warnings go to stdout in background mode, among the lines of the step that bakes.
    noise = run.lines_of("a bake into curves with a Noise modifier")
    assert "F-curve modifiers on B1 change the baked keys as they play" in noise
    combined = run.lines_of("a bake into an action combined over an NLA track")
    assert "the action plays blended (Combine, influence 1) with the NLA tracks below it" in combined
