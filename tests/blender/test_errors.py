"""Bad input: a clear error and an unchanged scene (see sessions/errors.py); and a bake keeps
what is not its own (sessions/shared_action.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_error_paths_report_and_change_nothing(run_session):
    run_session("errors.py")


def test_a_bake_into_an_action_another_rig_plays_keeps_that_rigs_keys(run_session):
    run_session("shared_action.py")


def test_a_bake_keys_what_plays_for_steps_partial_keys_and_remapped_time(run_session):
    result = run_session("bake_channels.py")
    noise = result.stdout.split("---- bake into curves with a Noise modifier")[1].split("----")[0]
    assert "F-curve modifiers on B1 change the baked keys as they play" in noise
    combined = result.stdout.split("---- bake into an action combined over an NLA track")[1]
    assert "the action plays blended (Combine, influence 1) with the NLA tracks below it" in combined
