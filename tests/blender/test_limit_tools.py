"""Joint-limit tools and the viewport overlay (issue 6), each in one bpy 5.0 session, and the
same sessions in Debian's Blender 3.4 binary.

See ``sessions/limit_tools.py`` (presets, window shapes, copy, mirror, import/export, fit from
an action; every operator's error paths) and ``sessions/limit_overlay.py`` (which bones are
drawn, geometry equal to ``overlay_geometry.limit_overlay``, drawing into a GPUOffScreen, a
callback that never raises, and the draw handler gone after the add-on is disabled).
"""

import pytest

from tests.blender.conftest import SESSIONS
from tests.helpers import BLENDER_BINARY, run_in_blender_binary


@pytest.mark.bpy
def test_limit_tools(run_session):
    result = run_session("limit_tools.py")
    # Operator reports go to stdout in background mode: the fit reports each bone on one line.
    assert "Info: upper_arm.L: ball, 1 window (8 corners), twist" in result.stdout
    assert "Info: forearm.L: hinge about (1.00, 0.00, 0.00)" in result.stdout
    assert "Info: Fitted 2 bone(s) to 40 frames" in result.stdout
    assert (
        "Warning: Rest pose differs from the file's (limits are measured from rest): forearm.L (30.0°)" in result.stdout
    )


@pytest.mark.bpy
def test_limit_overlay(run_session):
    result = run_session("limit_overlay.py")
    assert "draw handler removed" in result.stdout


@pytest.mark.blender_binary
@pytest.mark.parametrize("script", ["limit_tools.py", "limit_overlay.py"])
def test_limit_tools_and_overlay_in_blender34(script, extension_zip, tmp_path):
    """The same sessions in Debian's Blender 3.4 (legacy add-on, Action.fcurves, Bone.select)."""
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")
    result = run_in_blender_binary(SESSIONS / script, tmp_path, workdir=tmp_path, addon_zip=extension_zip).check()
    assert " 0 failed" in result.stdout


@pytest.mark.bpy
def test_presets_fitted_to_the_rigs_rest_and_pose(run_session):
    result = run_session("preset_fit.py")
    # The twist moves exactly too (through the twist reference): nothing to warn about.
    assert "Info: upper_arm.L: shoulder preset, ball, fitted to its current pose\n" in result.stdout


@pytest.mark.bpy
def test_chain_and_limit_tools_refuse_hostile_input(run_session):
    run_session("tools_bad_input.py")
