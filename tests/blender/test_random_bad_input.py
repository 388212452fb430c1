"""Random bad input through Solve Now, Bake and Live (see sessions/random_bad_input.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_bad_input_finishes_finite_or_fails_with_nothing_changed(run_session):
    run_session("random_bad_input.py")
