"""A chain's Time Limit (sessions/time_limit.py): Solve Now's restarts stop once it is spent,
the best pose found is kept, and Last Solve says the limit stopped it."""

import pytest


@pytest.mark.bpy
def test_a_spent_time_limit_stops_the_restarts_and_last_solve_says_so(run_session) -> None:
    run_session("time_limit.py")
