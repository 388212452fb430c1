"""Rotation modes, locks, bone layouts, transformed and animated rigs, targets, dependent
chains (see sessions/rig_space.py), one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "rig_space.py"))
def test_rig_spaces_rotation_modes_and_targets(step, session_steps, run_session_result):
    session_steps.check("rig_space", step, lambda: run_session_result("rig_space.py"))
