"""Add a chain, solve, bake, save and reload, in one bpy session (see sessions/end_to_end.py),
and a bake's pose jumps (sessions/bake_jumps.py); one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "end_to_end.py"))
def test_add_solve_bake_save_reload(step, session_steps, run_session_result):
    session_steps.check("end_to_end", step, lambda: run_session_result("end_to_end.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "bake_jumps.py"))
def test_a_bake_reports_its_pose_jumps_and_steps_through_them(step, session_steps, run_session_result):
    session_steps.check("bake_jumps", step, lambda: run_session_result("bake_jumps.py"))
