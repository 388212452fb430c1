"""Random rigs solved and baked, read back from Blender (see sessions/random_rigs.py), one item per
step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_rigs.py"))
def test_random_rigs_keep_limits_and_report_their_error(step, session_steps, run_session_result):
    session_steps.check("random_rigs", step, lambda: run_session_result("random_rigs.py"))
