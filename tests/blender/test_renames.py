"""Chains follow bone renames; Influence keeps its own pose across renames and duplicates
(see sessions/renames.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_chains_follow_renamed_bones_and_armatures(run_session):
    run_session("renames.py")
