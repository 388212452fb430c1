"""A chain's rig is read once and kept until what it is built from changes (see sessions/rig_cache.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_a_rig_read_again_is_the_same_until_what_it_is_built_from_changes(run_session):
    run_session("rig_cache.py")
