"""Random Blender IK constraints converted to Quat IK chains (see sessions/random_ik_conversion.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_ik_conversion.py"))
def test_random_ik_constraints_convert_to_the_same_reach_and_pole_facing(step, session_steps, run_session_result):
    session_steps.check("random_ik_conversion", step, lambda: run_session_result("random_ik_conversion.py"))
