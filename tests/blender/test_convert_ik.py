"""Blender's IK constraint taken over by a Quat IK chain (see sessions/convert_ik.py; one item
per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "convert_ik.py"))
def test_an_ik_constraint_becomes_a_quat_ik_chain(step, session_steps, run_session_result):
    session_steps.check("convert_ik", step, lambda: run_session_result("convert_ik.py"))


def test_the_conversion_says_what_it_carried_over(session_steps, run_session_result):
    run = session_steps.run("convert_ik", lambda: run_session_result("convert_ik.py"))
    # Operator reports go to stdout in background mode, among the lines of the step that converts.
    arm = run.lines_of("the arm's constraint becomes a chain with its bones, pole and limits")
    assert "Info: Chain 'B3' from IK constraint 'IK': B1 > B2 > B3 reaching for 'Hand'" in arm
    assert "joint limits from IK limits: B2 (hinge)" in arm
    assert "not carried over" not in run.result.stdout  # nothing dropped: no stretch, full weight
    leg = run.lines_of("a constraint to the top matching rotation becomes a chain")
    assert "Info: Chain 'B2' from IK constraint 'IK': B0 > B1 > B2 reaching for 'Foot'" in leg
