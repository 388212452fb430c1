"""The sample rig ``rigify_body`` (issue 36): a walking Rigify metarig solved as bodies, its
feet pinned while they stand (see sessions/sample_body.py; one item per step)."""

import pytest

from tests.blender.conftest import SESSIONS
from tests.session_steps import steps_of

pytestmark = pytest.mark.bpy


@pytest.mark.parametrize("step", steps_of(SESSIONS / "sample_body.py"))
def test_the_walking_body_sample(step, session_steps, run_session_result):
    session_steps.check("sample_body", step, lambda: run_session_result("sample_body.py"))


PIN_SHARE = 1e-4  # the demo's largest pin slip over its body's size stays within issue 36's goal
SMOOTH_RATIO = 2.0  # a smooth shot: no joint turns in a frame more than twice what the animation needs


def test_the_demo_summarises_the_body_beside_blenders_ik(tmp_path, extension_zip) -> None:
    """`make demo` on rigify_body: both bakes, the body table in summary.md and .json, a plot."""
    import json
    import sys

    from tests.helpers import REPO_ROOT, run_watched

    command = [sys.executable, str(REPO_ROOT / "tools" / "demo.py"), "--out-dir", str(tmp_path / "out"),
               "--dist-dir", str(tmp_path), "--only", "rigify_body"]  # fmt: skip
    demo = run_watched(command, cwd=tmp_path)
    output = demo.stdout + demo.stderr
    assert demo.returncode == 0, output
    out = tmp_path / "out"
    png = (out / "rigify_body.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000, "the rig's plot"
    body = json.loads((out / "summary.json").read_text())["bodies"]["rigify_body"]
    assert len(body["pins"]) == 4, body["pins"]
    assert body["pin_slip_max_share"] <= PIN_SHARE, body["pins"]
    assert body["top_met_share"]["quat_ik"] == 1.0, body["goals"]
    assert body["frames_breaching"]["quat_ik"] == 0, body["limit_breach_max_deg"]
    lower = [g for g in body["goals"] if not g["top"]]
    assert [g["chain"] for g in lower] == ["arm.L"], body["goals"]
    assert set(body["largest_joint_change_deg"]) == {"quat_ik", "blender_ik"} and body["animation_needs_deg"][0] > 0
    largest, needed = body["largest_joint_change_deg"]["quat_ik"][0], body["animation_needs_deg"][0]
    assert largest <= SMOOTH_RATIO * needed, (
        f"a joint turns {largest:.3g}° in a frame; the animation needs {needed:.3g}°"
    )
    assert "| `rigify_body` | Quat IK | Blender IK |" in (out / "summary.md").read_text(), output
