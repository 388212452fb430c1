"""Mirror Chain in Blender (see sessions/mirror_chain.py), one item per step."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy

# What Mirror Chain reports (background mode prints operator reports) in the steps that run it.
REPORTS = {
    "mirror copies the settings and mirrors target and pole": (
        "Info: Made chain 'arm.R' on 'hand.R'; made 'hand_ik.R', 'elbow_pole.R'; mirrored the joint limits of 3 bone(s)"
    ),
    "the right arm solves to the left's mirror image": "Info: Updated chain 'arm.R' on 'hand.R'",
}


@pytest.mark.parametrize("step", steps_of(SESSIONS / "mirror_chain.py"))
def test_a_mirrored_chain_poses_the_mirror_image(step, session_steps, run_session_result):
    lines = session_steps.check("mirror_chain", step, lambda: run_session_result("mirror_chain.py"))
    if step in REPORTS:
        assert REPORTS[step] in lines
