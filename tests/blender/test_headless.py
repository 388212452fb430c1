"""Headless use, as documented in docs/headless.md:

* ``python -m quat_ik_addon bake FILE --chain NAME --frames A-B -o OUT`` with only the bpy module
  (``--kernel numpy`` too), and ``python -m quat_ik_addon --version`` without it;
* ``blender --background FILE --python-expr "import bpy; bpy.ops.quat_ik.bake(...)"`` (the
  real binary, Debian's Blender 3.4, with the add-on installed and enabled in its preferences).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import quat_ik_addon
from quat_ik_addon.solver.native import library
from tests.helpers import BLENDER_BINARY, BOOTSTRAP, REPO_ROOT, SUCCESS_MARKER, run_in_bpy

SESSIONS = Path(__file__).resolve().parent / "sessions"
ADDON_VERSION = ".".join(map(str, quat_ik_addon.bl_info["version"]))


def _run(command: list[str], workdir: Path, user: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user), "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.bpy
def test_python_module_command_line(run_session, extension_zip: Path, tmp_path: Path) -> None:
    run_session("smoke.py")  # writes tmp_path/smoke.blend with one Manual chain 'B2'
    blend, out = tmp_path / "smoke.blend", tmp_path / "out.blend"
    user = tmp_path / "cli_user"
    command = [sys.executable, "-m", "quat_ik_addon", "bake", str(blend), "--chain", "B2", "--frames", "3-12"]
    done = _run([*command, "-o", str(out)], tmp_path, user)
    assert done.returncode == 0, done.stdout + done.stderr
    assert out.is_file()
    assert f"quat_ik: solving on {library.load()[1].describe()}" in done.stdout, done.stdout
    solver = "native kernel" if library.load()[1].active else "numpy ("
    run_in_bpy(
        SESSIONS / "verify_bake.py",
        tmp_path,
        out,
        "Arm",
        "B2",
        "3",
        "12",
        solver,
        workdir=tmp_path,
        addon_zip=extension_zip,
    ).check()
    on_numpy = tmp_path / "numpy.blend"
    done = _run([*command, "--kernel", "numpy", "-o", str(on_numpy)], tmp_path, user)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "quat_ik: solving on numpy (--kernel numpy)" in done.stdout, done.stdout
    run_in_bpy(
        SESSIONS / "verify_bake.py",
        tmp_path,
        on_numpy,
        "Arm",
        "B2",
        "3",
        "12",
        "numpy (",
        workdir=tmp_path,
        addon_zip=extension_zip,
    ).check()

    failed = _run([*command[:-4], "--chain", "Leg", "-o", str(tmp_path / "never.blend")], tmp_path, user)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "No chain 'Leg'" in failed.stderr
    assert not (tmp_path / "never.blend").exists()

    eased = _run([*command, "--ease-jumps", "6", "-o", str(tmp_path / "eased.blend")], tmp_path, user)
    assert eased.returncode == 0, eased.stdout + eased.stderr
    looped = _run([*command, "--cyclic", "-o", str(tmp_path / "looped.blend")], tmp_path, user)
    assert looped.returncode == 0, looped.stdout + looped.stderr
    assert "Baked 1 chain(s) over 10 frames" in looped.stdout
    refused = _run([*command, "--ease-jumps", "-3", "-o", str(tmp_path / "never.blend")], tmp_path, user)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--ease-jumps: must be a whole number of frames, 0 or more, not '-3'" in refused.stderr
    assert not (tmp_path / "never.blend").exists()
    negative = _run([*command[:-2], "--frames=-4-2", "-o", str(tmp_path / "negative.blend")], tmp_path, user)
    assert negative.returncode == 0 and "over 7 frames" in negative.stdout, negative.stdout + negative.stderr


@pytest.mark.bpy
@pytest.mark.parametrize(
    ("case", "arguments", "message"),
    [
        ("missing input", ["missing.blend", "-o", "out.blend"], "no .blend file at 'missing.blend'"),
        ("output folder missing", ["smoke.blend", "-o", "nowhere/out.blend"], "give a file name in an existing folder"),
        ("output is a folder", ["smoke.blend", "-o", "."], "give a file name in an existing folder"),
        ("step 0", ["smoke.blend", "--step", "0", "-o", "out.blend"], "--step: must be a whole number of frames, 1"),
        ("NaN tolerance", ["smoke.blend", "--simplify", "nan", "-o", "out.blend"], "--simplify: must be a number"),
        ("frames past Blender's", ["smoke.blend", "--frames", "1-99999999", "-o", "out.blend"], "frames run from"),
        ("frames not a range", ["smoke.blend", "--frames", "1..5", "-o", "out.blend"], "frames must look like 1-250"),
        ("unknown kernel", ["smoke.blend", "--kernel", "fast", "-o", "out.blend"], "--kernel: invalid choice: 'fast'"),
    ],
)
def test_command_line_refuses_bad_arguments_before_baking(tmp_path: Path, case, arguments, message) -> None:
    (tmp_path / "smoke.blend").write_bytes(b"BLENDER")  # never opened: the arguments fail first
    done = _run([sys.executable, "-m", "quat_ik_addon", "bake", *arguments], tmp_path, tmp_path / "user")
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out.blend").exists()


@pytest.mark.parametrize("kernel_variable", [None, "0"], ids=["automatic", "QUAT_IK_NATIVE=0"])
def test_command_line_version_prints_the_add_on_version_and_the_solver_path_without_bpy(
    tmp_path: Path, kernel_variable: str | None, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.delenv(library.ENVIRONMENT_VARIABLE, raising=False)  # this process's answer is the automatic one
    request.addfinalizer(library.reset)
    (tmp_path / "bpy.py").write_text("raise ImportError('bpy was imported')\n")  # first on the path
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    if kernel_variable is None:
        library.reset()
        solver = library.load()[1].describe()
    else:
        env[library.ENVIRONMENT_VARIABLE] = kernel_variable
        solver = f"numpy (kernel disabled by QUAT_IK_NATIVE={kernel_variable})"
    command = [sys.executable, "-m", "quat_ik_addon", "--version"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [f"quat-ik {ADDON_VERSION}", f"solver: {solver}"], done.stdout


@pytest.mark.blender_binary
def test_blender_binary_python_expr(extension_zip: Path, tmp_path: Path) -> None:
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")
    user = tmp_path / "user"
    setup = [str(BLENDER_BINARY), "--background", "--python-exit-code", "1", "--python", str(BOOTSTRAP), "--"]
    setup += ["--install", str(extension_zip), str(SESSIONS / "smoke.py"), str(tmp_path), "--save-userpref"]
    done = _run(setup, tmp_path, user)
    assert done.returncode == 0 and SUCCESS_MARKER in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]

    expression = (
        "import bpy; bpy.ops.quat_ik.bake(chain_name='B2', frame_start=2, frame_end=9); "
        "bpy.ops.wm.save_as_mainfile(filepath=bpy.path.abspath('//expr.blend'))"
    )
    blend = tmp_path / "smoke.blend"
    command = [str(BLENDER_BINARY), "--background", str(blend), "--python-exit-code", "1", "--python-expr", expression]
    done = _run(command, tmp_path, user)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    verify = [str(BLENDER_BINARY), "--background", "--python-exit-code", "1", "--python", str(BOOTSTRAP), "--"]
    verify += [str(SESSIONS / "verify_bake.py"), str(tmp_path), str(tmp_path / "expr.blend"), "Arm", "B2", "2", "9"]
    done = _run(verify, tmp_path, user)
    assert done.returncode == 0 and SUCCESS_MARKER in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.blender_binary
def test_blender34_smoke(extension_zip: Path, tmp_path: Path) -> None:
    """The main path in Debian's Blender 3.4 (legacy add-on, Action.fcurves, Bone.select)."""
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")
    from tests.helpers import run_in_blender_binary

    result = run_in_blender_binary(SESSIONS / "smoke.py", tmp_path, workdir=tmp_path, addon_zip=extension_zip).check()
    assert "0 failed" in result.stdout
