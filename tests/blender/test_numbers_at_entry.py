"""Import Rig Limits refuses numbers a rig spec cannot hold in one line and changes nothing
(sessions/rig_spec_numbers.py; the solver's side is tests/solver/test_numbers_at_entry.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_import_rig_limits_refuses_numbers_it_cannot_hold_in_one_line_and_changes_nothing(run_session):
    run_session("rig_spec_numbers.py")
