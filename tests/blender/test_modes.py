"""Live and Per Frame modes, handlers (see sessions/live_and_frame.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_live_and_per_frame_modes(run_session):
    run_session("live_and_frame.py")
