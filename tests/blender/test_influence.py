"""A chain's Influence in Blender (see sessions/influence.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_influence_blends_with_the_bones_own_pose(run_session):
    run_session("influence.py")
