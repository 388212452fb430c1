"""Random bakes over random animation, checked key by key (see sessions/random_bakes.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_random_bakes_keep_what_they_do_not_own(run_session):
    run_session("random_bakes.py")
