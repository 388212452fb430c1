"""Per-bone joint limits in Blender (see sessions/limits.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "limits.py"))
def test_joint_limits(step, session_steps, run_session_result):
    session_steps.check("limits", step, lambda: run_session_result("limits.py"))
