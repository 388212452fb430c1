"""What the two command lines say when they are given something wrong, and that what they print
is documented (issue 37): ``python -m quat_ik_addon bake`` and ``python -m quat_ik_addon.solver
solve``. Their solving and baking are tested with the solver (tests/solver) and headless
Blender (tests/blender/test_headless.py)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from quat_ik_addon.solver.cli import main as solver_main
from tests.helpers import REPO_ROOT, SessionResult, run_watched

HEADLESS_DOC = REPO_ROOT / "docs" / "headless.md"
ARM3_SPEC = REPO_ROOT / "sample_rigs" / "arm3.rig.json"  # one chain, named "arm"


def bake(tmp_path: Path, *arguments: str) -> SessionResult:
    """``python -m quat_ik_addon bake ...`` from ``tmp_path``, with a user folder of its own."""
    env = {
        **os.environ,
        "BLENDER_USER_RESOURCES": str(tmp_path / "user"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    return run_watched([sys.executable, "-m", "quat_ik_addon", "bake", *arguments], cwd=tmp_path, env=env)


def one_line(stream: str) -> str:
    lines = [line for line in stream.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stream, stream
    return lines[0]


def test_bake_refuses_a_file_that_is_not_a_blend_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a blend file\n")
    done = bake(tmp_path, "notes.txt", "-o", "out.blend")
    assert done.returncode == 2
    assert "'notes.txt' is not a .blend file" in done.stderr.splitlines()[-1], done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "out.blend").exists()


@pytest.mark.bpy
def test_bake_says_in_one_line_that_blender_cannot_open_a_damaged_blend(tmp_path: Path) -> None:
    (tmp_path / "damaged.blend").write_bytes(b"BLENDER-v300" + b"\0" * 64)  # a header, then nothing usable
    done = bake(tmp_path, "damaged.blend", "-o", "out.blend")
    assert done.returncode == 1, done.stdout + done.stderr
    line = one_line(done.stderr)
    assert line.startswith("quat_ik bake: cannot open damaged.blend: "), line
    assert not (tmp_path / "out.blend").exists()


def test_bake_help_says_frames_takes_one_frame_too(tmp_path: Path) -> None:
    from quat_ik_addon.__main__ import _parse_frames

    assert _parse_frames("10") == (10, 10)
    assert _parse_frames("1-250") == (1, 250)
    done = bake(tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    frames_help = " ".join(done.stdout.split()).split("--frames", 1)[1]
    assert "START-END|FRAME" in frames_help and "or one FRAME alone" in frames_help, done.stdout
    assert "`--frames N`: that one frame" in " ".join(HEADLESS_DOC.read_text().split())


def test_bake_takes_a_time_limit_in_seconds_and_refuses_a_negative_one(tmp_path: Path) -> None:
    from quat_ik_addon.__main__ import _tolerance

    assert _tolerance("2.5") == 2.5  # the type --time-limit parses with
    shown = bake(tmp_path, "--help")
    assert "--time-limit SECONDS" in shown.stdout, shown.stdout
    done = bake(tmp_path, "shot.blend", "--time-limit", "-1")
    assert done.returncode == 2 and "--time-limit" in done.stderr, done.stderr
    assert "--time-limit SECONDS" in " ".join(HEADLESS_DOC.read_text().split())


@pytest.mark.parametrize(
    ("chain", "expected"),
    [
        (
            "Arm",
            "--chain 'Arm': {spec} has no such chain; its chains: 'arm' (names are case-sensitive: did you mean 'arm'?)",
        ),
        ("leg", "--chain 'leg': {spec} has no such chain; its chains: 'arm'"),
    ],
)
def test_solver_names_the_chain_given_and_the_chains_there_are(
    chain: str, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    (tmp_path / "targets.json").write_text(json.dumps([[0.1, 0.3, 1.2]]))
    code = solver_main(["solve", str(ARM3_SPEC), "--chain", chain, "--targets", str(tmp_path / "targets.json")])
    assert code == 2
    assert one_line(capsys.readouterr().err) == "error: " + expected.format(spec=ARM3_SPEC)


def test_solver_asks_for_a_chain_only_when_the_spec_has_several(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    spec = json.loads(ARM3_SPEC.read_text())
    spec["chains"].append({**spec["chains"][0], "name": "arm_copy"})
    (tmp_path / "two.rig.json").write_text(json.dumps(spec))
    (tmp_path / "targets.json").write_text(json.dumps([[0.1, 0.3, 1.2]]))
    code = solver_main(["solve", str(tmp_path / "two.rig.json"), "--targets", str(tmp_path / "targets.json")])
    assert code == 2
    assert one_line(capsys.readouterr().err).endswith("has 2 chains ('arm', 'arm_copy'): name one with --chain")


def documented_output_fields() -> list[str]:
    """The field names of the output table in docs/headless.md's solver section."""
    section = HEADLESS_DOC.read_text().split("## The solver alone", 1)[1]
    table = section.split("| field | what it holds |", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", table, flags=re.MULTILINE)


def test_every_field_the_solver_prints_is_documented(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "targets.json").write_text(json.dumps({"positions": [[0.1, 0.3, 1.2]]}))
    assert solver_main(["solve", str(ARM3_SPEC), "--targets", str(tmp_path / "targets.json")]) == 0
    document = json.loads(capsys.readouterr().out)
    assert documented_output_fields() == list(document), "docs/headless.md's output table lists other fields"
