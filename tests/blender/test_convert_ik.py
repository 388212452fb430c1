"""Blender's IK constraint taken over by a Quat IK chain (see sessions/convert_ik.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_an_ik_constraint_becomes_a_quat_ik_chain(run_session):
    result = run_session("convert_ik.py")
    # Operator reports go to stdout in background mode: what is not carried over is said.
    assert "Info: Chain 'B3' from IK constraint 'IK': B1 > B2 > B3 reaching for 'Hand'" in result.stdout
    assert "joint limits from IK limits: B2 (hinge)" in result.stdout
    assert "not carried over" not in result.stdout  # nothing dropped: no stretch, full weight
    assert "Info: Chain 'B2' from IK constraint 'IK': B0 > B1 > B2 reaching for 'Foot'" in result.stdout
