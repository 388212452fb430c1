"""Random rigs whose chains hang from other chains (see sessions/random_chain_trees.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_chain_trees_reach_in_one_update(run_session):
    run_session("random_chain_trees.py")
