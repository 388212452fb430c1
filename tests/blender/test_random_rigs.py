"""Random rigs solved and baked, read back from Blender (see sessions/random_rigs.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_rigs_keep_limits_and_report_their_error(run_session):
    run_session("random_rigs.py")
