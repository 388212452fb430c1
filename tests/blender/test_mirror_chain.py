"""Mirror Chain in Blender (see sessions/mirror_chain.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_a_mirrored_chain_poses_the_mirror_image(run_session):
    result = run_session("mirror_chain.py")
    assert (
        "Info: Made chain 'arm.R' on 'hand.R'; made 'hand_ik.R', 'elbow_pole.R'; mirrored the joint limits of 3 bone(s)"
        in result.stdout
    )
    assert "Info: Updated chain 'arm.R' on 'hand.R'" in result.stdout
