"""Live and Per Frame modes, handlers (see sessions/live_and_frame.py and the other sessions
below); one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "live_and_frame.py"))
def test_live_and_per_frame_modes(step, session_steps, run_session_result):
    session_steps.check("live_and_frame", step, lambda: run_session_result("live_and_frame.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "live_chains.py"))
def test_live_solves_only_the_chains_whose_inputs_changed(step, session_steps, run_session_result):
    session_steps.check("live_chains", step, lambda: run_session_result("live_chains.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "frame_cache.py"))
def test_per_frame_solves_are_remembered_by_their_inputs(step, session_steps, run_session_result):
    session_steps.check("frame_cache", step, lambda: run_session_result("frame_cache.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "held_target.py"))
def test_a_target_held_by_another_chain_is_reached_where_that_chain_puts_it(step, session_steps, run_session_result):
    session_steps.check("held_target", step, lambda: run_session_result("held_target.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "per_frame_on_load.py"))
def test_a_per_frame_chain_is_solved_when_its_file_loads(step, session_steps, run_session_result):
    session_steps.check("per_frame_on_load", step, lambda: run_session_result("per_frame_on_load.py"))
