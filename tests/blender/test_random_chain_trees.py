"""Random rigs whose chains hang from other chains (see sessions/random_chain_trees.py)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "random_chain_trees.py"))
def test_random_chain_trees_reach_in_one_update(step, session_steps, run_session_result):
    session_steps.check("random_chain_trees", step, lambda: run_session_result("random_chain_trees.py"))
