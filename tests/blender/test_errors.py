"""Bad input: a clear error and an unchanged scene (see sessions/errors.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_error_paths_report_and_change_nothing(run_session):
    run_session("errors.py")
