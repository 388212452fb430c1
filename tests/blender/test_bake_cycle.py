"""A Cyclic bake loops without a pop (see sessions/bake_cycle.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_a_cyclic_bake_wraps_smoothly(run_session):
    run_session("bake_cycle.py")
