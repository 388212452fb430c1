"""A bake longer than a block is read and solved a block at a time, so its working memory stays
bounded whatever the range, and a long bake says what it will cost before it starts
(sessions/bake_blocks.py, with blocks of 200 frames)."""

import pytest

pytestmark = pytest.mark.bpy


def test_a_bake_of_several_blocks_keys_every_frame_without_a_jump_at_the_seams(run_session):
    run_session("bake_blocks.py", "seams")


def test_a_bakes_peak_memory_does_not_grow_with_its_range(run_session):
    run_session("bake_blocks.py", "memory")


def test_an_error_in_a_later_block_leaves_the_scene_as_it_was(run_session):
    run_session("bake_blocks.py", "stopped")


def test_a_long_bake_says_what_it_will_cost_before_it_starts(run_session):
    run_session("bake_blocks.py", "cost")
