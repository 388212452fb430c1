"""Import Rig Limits refuses numbers a rig spec cannot hold in one line and changes nothing
(sessions/rig_spec_numbers.py, one item per step; the solver's side is
tests/solver/test_numbers_at_entry.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "rig_spec_numbers.py"))
def test_import_rig_limits_refuses_numbers_it_cannot_hold_in_one_line_and_changes_nothing(
    step, session_steps, run_session_result
):
    session_steps.check("rig_spec_numbers", step, lambda: run_session_result("rig_spec_numbers.py"))
