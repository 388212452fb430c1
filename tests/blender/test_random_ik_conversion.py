"""Random Blender IK constraints converted to Quat IK chains (see sessions/random_ik_conversion.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_ik_constraints_convert_to_the_same_reach_and_pole_facing(run_session):
    run_session("random_ik_conversion.py")
