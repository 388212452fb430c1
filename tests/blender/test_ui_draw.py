"""Every panel, UI list, menu entry and operator dialog draws without an error and names only
what exists (see sessions/draw_everything.py; one item per step): the parts a window test never
opens."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "draw_everything.py"))
def test_every_draw_function_draws_and_names_only_what_exists(step, session_steps, run_session_result):
    session_steps.check("draw_everything", step, lambda: run_session_result("draw_everything.py"))
