"""Random bad input through Solve Now, Bake and Live (see sessions/random_bad_input.py), one item per
step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_bad_input.py"))
def test_random_bad_input_finishes_finite_or_fails_with_nothing_changed(step, session_steps, run_session_result):
    session_steps.check("random_bad_input", step, lambda: run_session_result("random_bad_input.py"))
