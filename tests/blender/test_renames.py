"""Chains follow bone renames; Influence keeps its own pose across renames and duplicates
(see sessions/renames.py); a chain whose middle bone is deleted says so (sessions/middle_bone_deleted.py).
One item per step of each session."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "renames.py"))
def test_chains_follow_renamed_bones_and_armatures(step, session_steps, run_session_result):
    session_steps.check("renames", step, lambda: run_session_result("renames.py"))


@pytest.mark.parametrize("step", steps_of(SESSIONS / "middle_bone_deleted.py"))
def test_a_chain_whose_middle_bone_is_deleted_says_so(step, session_steps, run_session_result):
    session_steps.check("middle_bone_deleted", step, lambda: run_session_result("middle_bone_deleted.py"))
