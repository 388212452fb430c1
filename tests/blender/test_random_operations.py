"""Random sequences of operators and edits on a small character (see sessions/random_operations.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_operations_fail_clearly_keep_poses_finite_and_files_reopen(run_session):
    run_session("random_operations.py")
