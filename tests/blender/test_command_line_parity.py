"""The panel and the solver's command line share one pipeline and its defaults
(sessions/command_line_parity.py, one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "command_line_parity.py"))
def test_command_line_gives_the_panels_answer(step, session_steps, run_session_result):
    session_steps.check("command_line_parity", step, lambda: run_session_result("command_line_parity.py"))
