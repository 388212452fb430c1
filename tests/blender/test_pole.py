"""Pole targets in Blender: Solve Now, Live and Bake bend toward the pole (sessions/pole.py)."""

import pytest


@pytest.mark.bpy
def test_pole_target_decides_the_bend(run_session):
    run_session("pole.py")
