"""A library-overridden rig keeps its chain changes and added chains (see sessions/library_override.py)."""

import pytest

pytestmark = pytest.mark.bpy


def test_chains_of_a_library_override_change_and_survive_reopening(run_session):
    result = run_session("library_override.py")
    # The override's joint limits are the library's: Convert and Mirror say they left them.
    assert "IK limits not converted: Armature 'Arm' is a library override" in result.stdout
    assert "joint limits not mirrored: Armature 'Sided' is a library override" in result.stdout
