"""A chain's Influence in Blender (see sessions/influence.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "influence.py"))
def test_influence_blends_with_the_bones_own_pose(step, session_steps, run_session_result):
    session_steps.check("influence", step, lambda: run_session_result("influence.py"))
