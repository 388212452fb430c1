"""Bad input: a clear error and an unchanged scene (see sessions/errors.py); and a bake keeps
what is not its own (sessions/shared_action.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_error_paths_report_and_change_nothing(run_session):
    run_session("errors.py")


def test_a_bake_into_an_action_another_rig_plays_keeps_that_rigs_keys(run_session):
    run_session("shared_action.py")


def test_a_bake_keys_what_plays_for_steps_partial_keys_and_remapped_time(run_session):
    run_session("bake_channels.py")
