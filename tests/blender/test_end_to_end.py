"""Add a chain, solve, bake, save and reload, in one bpy session (see sessions/end_to_end.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_add_solve_bake_save_reload(run_session):
    run_session("end_to_end.py")


def test_a_bake_reports_its_pose_jumps_and_steps_through_them(run_session):
    run_session("bake_jumps.py")
