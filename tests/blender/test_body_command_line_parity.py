"""A body solved by the panel and by ``solve-body`` comes out the same with the same defaults
(sessions/body_command_line_parity.py, one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "body_command_line_parity.py"))
def test_solve_body_gives_the_panels_answer(step, session_steps, run_session_result):
    session_steps.check("body_command_line_parity", step, lambda: run_session_result("body_command_line_parity.py"))
