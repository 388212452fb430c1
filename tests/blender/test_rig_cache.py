"""A chain's rig is read once and kept until what it is built from changes (see sessions/rig_cache.py),
one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "rig_cache.py"))
def test_a_rig_read_again_is_the_same_until_what_it_is_built_from_changes(step, session_steps, run_session_result):
    session_steps.check("rig_cache", step, lambda: run_session_result("rig_cache.py"))
