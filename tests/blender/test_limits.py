"""Per-bone joint limits in Blender (see sessions/limits.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_joint_limits(run_session):
    run_session("limits.py")
