"""Chains follow their tip bones through Join and Separate (see sessions/join_separate.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_chains_follow_joined_and_separated_bones(run_session):
    run_session("join_separate.py")
