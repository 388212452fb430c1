"""A bake longer than a block is read and solved a block at a time, so its working memory stays
bounded whatever the range, and a long bake says what it will cost before it starts
(sessions/bake_blocks.py, with blocks of 200 frames; one session per part, one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy

SCRIPT = SESSIONS / "bake_blocks.py"


@pytest.mark.parametrize("step", steps_of(SCRIPT, function="seams"))
def test_a_bake_of_several_blocks_keys_every_frame_without_a_jump_at_the_seams(step, session_steps, run_session_result):
    session_steps.check("bake_blocks seams", step, lambda: run_session_result(SCRIPT.name, "seams"))


@pytest.mark.parametrize("step", steps_of(SCRIPT, function="memory"))
def test_a_bakes_peak_memory_does_not_grow_with_its_range(step, session_steps, run_session_result):
    session_steps.check("bake_blocks memory", step, lambda: run_session_result(SCRIPT.name, "memory"))


@pytest.mark.parametrize("step", steps_of(SCRIPT, function="stopped"))
def test_an_error_in_a_later_block_leaves_the_scene_as_it_was(step, session_steps, run_session_result):
    session_steps.check("bake_blocks stopped", step, lambda: run_session_result(SCRIPT.name, "stopped"))


@pytest.mark.parametrize("step", steps_of(SCRIPT, function="cost"))
def test_a_long_bake_says_what_it_will_cost_before_it_starts(step, session_steps, run_session_result):
    session_steps.check("bake_blocks cost", step, lambda: run_session_result(SCRIPT.name, "cost"))
