"""Chains follow their tip bones through Join and Separate (see sessions/join_separate.py; one
item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "join_separate.py"))
def test_chains_follow_joined_and_separated_bones(step, session_steps, run_session_result):
    session_steps.check("join_separate", step, lambda: run_session_result("join_separate.py"))
