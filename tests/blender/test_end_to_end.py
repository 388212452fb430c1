"""Add a chain, solve, bake, save and reload, in one bpy session (see sessions/end_to_end.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_add_solve_bake_save_reload(run_session):
    run_session("end_to_end.py")
