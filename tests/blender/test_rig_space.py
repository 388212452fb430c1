"""Rotation modes, locks, bone layouts, transformed and animated rigs, targets, dependent
chains (see sessions/rig_space.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_rig_spaces_rotation_modes_and_targets(run_session):
    run_session("rig_space.py")
