"""A library-overridden rig keeps its chain changes and added chains (see
sessions/library_override.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "library_override.py"))
def test_chains_of_a_library_override_change_and_survive_reopening(step, session_steps, run_session_result):
    session_steps.check("library_override", step, lambda: run_session_result("library_override.py"))


def test_convert_and_mirror_say_they_left_the_librarys_limits(session_steps, run_session_result):
    run = session_steps.run("library_override", lambda: run_session_result("library_override.py"))
    # The override's joint limits are the library's: Convert and Mirror say they left them.
    converted = run.lines_of("an IK constraint converts on the override and leaves its limits")
    assert "IK limits not converted: Armature 'Arm' is a library override" in converted
    mirrored = run.lines_of("a chain mirrors on the override and leaves its limits")
    assert "joint limits not mirrored: Armature 'Sided' is a library override" in mirrored
