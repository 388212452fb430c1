"""Chains follow bone renames; Influence keeps its own pose across renames and duplicates
(see sessions/renames.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_chains_follow_renamed_bones_and_armatures(run_session):
    run_session("renames.py")


def test_a_chain_whose_middle_bone_is_deleted_says_so(run_session):
    run_session("middle_bone_deleted.py")
