"""Joint-limit tools and the viewport overlay (issue 6), each in one bpy 5.0 session, and the
same sessions in Debian's Blender 3.4 binary.

See ``sessions/limit_tools.py`` (presets, window shapes, copy, mirror, import/export, fit from
an action; every operator's error paths) and ``sessions/limit_overlay.py`` (which bones are
drawn, geometry equal to ``overlay_geometry.limit_overlay``, drawing into a GPUOffScreen, a
callback that never raises, and the draw handler gone after the add-on is disabled).
"""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of, steps_of_each


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "limit_tools.py"))
def test_limit_tools(step, session_steps, run_session_result):
    session_steps.check("limit_tools", step, lambda: run_session_result("limit_tools.py"))


@pytest.mark.bpy
def test_limit_tools_report_what_they_fitted_and_imported(session_steps, run_session_result):
    run = session_steps.run("limit_tools", lambda: run_session_result("limit_tools.py"))
    # Operator reports go to stdout in background mode: the fit reports each bone on one line.
    fitted = run.lines_of("fitting an action makes a ball and a hinge that hold every keyed pose")
    assert "Info: upper_arm.L: ball, 1 window (8 corners), twist" in fitted
    assert "Info: forearm.L: hinge about (1.00, 0.00, 0.00)" in fitted
    assert "Info: Fitted 2 bone(s) to 40 frames" in fitted
    imported = run.lines_of("import onto a bone whose rest differs imports with a warning")
    assert "Warning: Rest pose differs from the file's (limits are measured from rest): forearm.L (30.0°)" in imported


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "limit_overlay.py"))
def test_limit_overlay(step, session_steps, run_session_result):
    lines = session_steps.check("limit_overlay", step, lambda: run_session_result("limit_overlay.py"))
    if step == "disabling removes the draw handler and what it kept":
        assert "draw handler removed" in lines


@pytest.mark.blender_binary
@pytest.mark.parametrize(
    ("script", "step"), steps_of_each(SESSIONS / name for name in ("limit_tools.py", "limit_overlay.py"))
)
def test_limit_tools_and_overlay_in_blender34(script, step, session_steps, run_binary_session_result):
    """The same sessions in Debian's Blender 3.4 (legacy add-on, Action.fcurves, Bone.select)."""
    session_steps.check(f"blender 3.4 {script}", step, lambda: run_binary_session_result(script))


# Fitted to the anatomical pose, the twist moves exactly too (through the twist reference): the
# report has nothing to warn about.
PRESET_FIT_REPORT = "Info: upper_arm.L: shoulder preset, ball, fitted to its current pose"


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "preset_fit.py"))
def test_presets_fitted_to_the_rigs_rest_and_pose(step, session_steps, run_session_result):
    lines = session_steps.check("preset_fit", step, lambda: run_session_result("preset_fit.py"))
    if step == "the T-pose arm fitted to its anatomical pose":
        assert PRESET_FIT_REPORT in lines.splitlines()


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "tools_bad_input.py"))
def test_chain_and_limit_tools_refuse_hostile_input(step, session_steps, run_session_result):
    session_steps.check("tools_bad_input", step, lambda: run_session_result("tools_bad_input.py"))
