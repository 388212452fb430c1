"""A library-overridden rig keeps its chain changes and added chains (see sessions/library_override.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_chains_of_a_library_override_change_and_survive_reopening(run_session):
    run_session("library_override.py")
