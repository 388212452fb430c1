"""Random bakes over random animation, checked key by key (see sessions/random_bakes.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_bakes.py"))
def test_random_bakes_keep_what_they_do_not_own(step, session_steps, run_session_result):
    session_steps.check("random_bakes", step, lambda: run_session_result("random_bakes.py"))
