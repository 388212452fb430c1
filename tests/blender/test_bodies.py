"""Chains that share bones solved as one body, pins and stretch in Blender (see
sessions/bodies.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "bodies.py"))
def test_chains_that_share_bones_solve_as_one_body(step, session_steps, run_session_result):
    session_steps.check("bodies", step, lambda: run_session_result("bodies.py"))
