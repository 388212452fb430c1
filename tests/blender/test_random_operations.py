"""Random sequences of operators and edits on a small character (see sessions/random_operations.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_operations.py"))
def test_random_operations_fail_clearly_keep_poses_finite_and_files_reopen(step, session_steps, run_session_result):
    session_steps.check("random_operations", step, lambda: run_session_result("random_operations.py"))
