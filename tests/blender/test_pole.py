"""Pole targets in Blender: Solve Now, Live and Bake bend toward the pole (sessions/pole.py, one
item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "pole.py"))
def test_pole_target_decides_the_bend(step, session_steps, run_session_result):
    session_steps.check("pole", step, lambda: run_session_result("pole.py"))
