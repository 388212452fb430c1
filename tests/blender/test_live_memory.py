"""What Live remembers between updates never answers for what changed (see
sessions/live_memory.py), one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "live_memory.py"))
def test_live_answers_after_a_change_as_a_rig_built_with_it(step, session_steps, run_session_result):
    session_steps.check("live_memory", step, lambda: run_session_result("live_memory.py"))
