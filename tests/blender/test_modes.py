"""Live and Per Frame modes, handlers (see sessions/live_and_frame.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_live_and_per_frame_modes(run_session):
    run_session("live_and_frame.py")


def test_live_solves_only_the_chains_whose_inputs_changed(run_session):
    run_session("live_chains.py")


def test_per_frame_solves_are_remembered_by_their_inputs(run_session):
    run_session("frame_cache.py")


def test_a_target_held_by_another_chain_is_reached_where_that_chain_puts_it(run_session):
    run_session("held_target.py")


def test_a_per_frame_chain_is_solved_when_its_file_loads(run_session):
    run_session("per_frame_on_load.py")
