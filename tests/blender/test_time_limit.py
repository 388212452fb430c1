"""A chain's Time Limit (sessions/time_limit.py, one item per step): Solve Now's restarts stop once
it is spent, the best pose found is kept, and Last Solve says the limit stopped it."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "time_limit.py"))
def test_a_spent_time_limit_stops_the_restarts_and_last_solve_says_so(step, session_steps, run_session_result):
    session_steps.check("time_limit", step, lambda: run_session_result("time_limit.py"))
