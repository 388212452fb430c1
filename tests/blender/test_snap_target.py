"""Snap Target to Chain and Auto Keying in Blender (see sessions/snap_target.py), one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy

# What the operators report (background mode prints operator reports) in the steps that run them.
REPORTS = {
    "snap puts the target on the tip and moves the pole": ["Info: Moved 'Target', 'Pole' to chain 'B2'"],
    "auto keying keys the snapped target and the solved bones": [
        "Auto Keying keyed 'Target'",
        "3 bone(s) keyed (Auto Keying)",
    ],
    "a constrained target finishes with a warning": ["ended elsewhere: a constraint, driver or parent moves it"],
}


@pytest.mark.parametrize("step", steps_of(SESSIONS / "snap_target.py"))
def test_snapping_the_target_keeps_a_hand_made_pose(step, session_steps, run_session_result):
    lines = session_steps.check("snap_target", step, lambda: run_session_result("snap_target.py"))
    for report in REPORTS.get(step, ()):
        assert report in lines
