"""Snap Target to Chain and Auto Keying in Blender (see sessions/snap_target.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_snapping_the_target_keeps_a_hand_made_pose(run_session):
    result = run_session("snap_target.py")
    # Operator reports go to stdout in background mode.
    assert "Info: Moved 'Target', 'Pole' to chain 'B2'" in result.stdout
    assert "Auto Keying keyed 'Target'" in result.stdout
    assert "3 bone(s) keyed (Auto Keying)" in result.stdout
    assert "ended elsewhere: a constraint, driver or parent moves it" in result.stdout
