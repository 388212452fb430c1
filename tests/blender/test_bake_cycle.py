"""A Cyclic bake loops without a pop (see sessions/bake_cycle.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "bake_cycle.py"))
def test_a_cyclic_bake_wraps_smoothly(step, session_steps, run_session_result):
    session_steps.check("bake_cycle", step, lambda: run_session_result("bake_cycle.py"))
