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
from dataclasses import replace
from pathlib import Path

import pytest

import quat_ik_addon
from quat_ik_addon.solver.native import library
from tests.helpers import BLENDER_BINARY, BOOTSTRAP, REPO_ROOT, SUCCESS_MARKER, SessionResult, run_in_bpy
from tests.session_steps import steps_of

SESSIONS = Path(__file__).resolve().parent / "sessions"
ADDON_VERSION = ".".join(map(str, quat_ik_addon.bl_info["version"]))


def _run(command: list[str], workdir: Path, user: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "BLENDER_USER_RESOURCES": str(user), "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False)


KERNELS = {"automatic": (), "numpy": ("--kernel", "numpy")}  # --kernel of each verified bake


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where smoke.py writes smoke.blend (one Manual chain 'B2') for the command line to bake."""
    return tmp_path_factory.mktemp("smoke")


def _bake_command(smoke_dir: Path) -> list[str]:
    blend = smoke_dir / "smoke.blend"
    return [sys.executable, "-m", "quat_ik_addon", "bake", str(blend), "--chain", "B2", "--frames", "3-12"]


def _run_smoke(extension_zip: Path, smoke_dir: Path) -> SessionResult:
    return run_in_bpy(SESSIONS / "smoke.py", smoke_dir, workdir=smoke_dir, addon_zip=extension_zip)


def _smoke(session_steps, extension_zip: Path, smoke_dir: Path) -> SessionResult:
    """smoke.py's run (once per pytest session); fails the test unless it wrote its file."""
    run = session_steps.run("smoke", lambda: _run_smoke(extension_zip, smoke_dir))
    if run.result is None or not run.result.succeeded:
        pytest.fail(f"smoke.py failed, so there is no file to bake (see its steps): {run.ending()}", pytrace=False)
    return run.result


def _bake_and_verify(kernel: str, session_steps, extension_zip: Path, smoke_dir: Path) -> SessionResult:
    """The command line bakes smoke.blend with ``--kernel`` as ``KERNELS[kernel]`` says, then
    verify_bake.py checks the keys and the solver the bake names. The command line's output comes
    first in the result's stdout, so its lines can be asserted too; a failed bake is the result."""
    smoke = session_steps.run("smoke", lambda: _run_smoke(extension_zip, smoke_dir))
    if smoke.result is None:
        raise AssertionError(smoke.error)
    if not smoke.result.succeeded:
        return smoke.result  # no file to bake: the steps of the verification are not reached
    out = smoke_dir / f"{kernel}.blend"
    command = [*_bake_command(smoke_dir), *KERNELS[kernel], "-o", str(out)]
    done = _run(command, smoke_dir, smoke_dir / "cli_user")
    if done.returncode != 0 or not out.is_file():
        return SessionResult(tuple(command), done.returncode, done.stdout, done.stderr)
    if kernel == "numpy":
        solver = "numpy ("
    else:
        solver = "native kernel" if library.load()[1].active else "numpy ("
    workdir = smoke_dir / f"verify_{kernel}"
    verified = run_in_bpy(
        SESSIONS / "verify_bake.py",
        workdir,
        out,
        "Arm",
        "B2",
        "3",
        "12",
        solver,
        workdir=workdir,
        addon_zip=extension_zip,
    )
    return replace(verified, stdout=done.stdout + verified.stdout, stderr=done.stderr + verified.stderr)


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "smoke.py"))
def test_smoke_session_makes_the_file_the_command_line_bakes(step, session_steps, extension_zip, smoke_dir) -> None:
    session_steps.check("smoke", step, lambda: _run_smoke(extension_zip, smoke_dir))


@pytest.mark.bpy
@pytest.mark.parametrize("step", steps_of(SESSIONS / "verify_bake.py"))
@pytest.mark.parametrize("kernel", KERNELS)
def test_a_command_line_bake_keys_the_range_and_reaches_the_target(
    kernel, step, session_steps, extension_zip, smoke_dir
) -> None:
    session_steps.check(
        f"verify_bake {kernel}", step, lambda: _bake_and_verify(kernel, session_steps, extension_zip, smoke_dir)
    )


@pytest.mark.bpy
def test_python_module_command_line(session_steps, extension_zip: Path, smoke_dir: Path) -> None:
    _smoke(session_steps, extension_zip, smoke_dir)
    said = {
        "automatic": f"quat_ik: solving on {library.load()[1].describe()}",
        "numpy": "quat_ik: solving on numpy (--kernel numpy)",
    }
    for kernel, line in said.items():
        baked = session_steps.run(
            f"verify_bake {kernel}",
            lambda kernel=kernel: _bake_and_verify(kernel, session_steps, extension_zip, smoke_dir),
        )
        assert baked.result is not None and line in baked.result.stdout, baked.ending()
        assert (smoke_dir / f"{kernel}.blend").is_file(), baked.ending()

    command, user = _bake_command(smoke_dir), smoke_dir / "cli_user"
    failed = _run([*command[:-4], "--chain", "Leg", "-o", str(smoke_dir / "never.blend")], smoke_dir, user)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "No chain 'Leg'" in failed.stderr
    assert not (smoke_dir / "never.blend").exists()

    eased = _run([*command, "--ease-jumps", "6", "-o", str(smoke_dir / "eased.blend")], smoke_dir, user)
    assert eased.returncode == 0, eased.stdout + eased.stderr
    looped = _run([*command, "--cyclic", "-o", str(smoke_dir / "looped.blend")], smoke_dir, user)
    assert looped.returncode == 0, looped.stdout + looped.stderr
    assert "Baked 1 chain(s) over 10 frames" in looped.stdout
    refused = _run([*command, "--ease-jumps", "-3", "-o", str(smoke_dir / "never.blend")], smoke_dir, user)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--ease-jumps: must be a whole number of frames, 0 or more, not '-3'" in refused.stderr
    assert not (smoke_dir / "never.blend").exists()
    negative = _run([*command[:-2], "--frames=-4-2", "-o", str(smoke_dir / "negative.blend")], smoke_dir, user)
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


def _expression_bake_verified(extension_zip: Path, tmp_path: Path) -> SessionResult:
    """smoke.py in the 3.4 binary saves the user preferences with the add-on enabled, a
    ``--python-expr`` bakes its file, and verify_bake.py checks the bake: its result, or the
    result of the first of these that failed."""
    user = tmp_path / "user"
    launcher = [str(BLENDER_BINARY), "--background", "--python-exit-code", "1"]
    setup = [*launcher, "--python", str(BOOTSTRAP), "--", "--install", str(extension_zip)]
    setup += [str(SESSIONS / "smoke.py"), str(tmp_path), "--save-userpref"]
    expression = (
        "import bpy; bpy.ops.quat_ik.bake(chain_name='B2', frame_start=2, frame_end=9); "
        "bpy.ops.wm.save_as_mainfile(filepath=bpy.path.abspath('//expr.blend'))"
    )
    bake = [str(BLENDER_BINARY), "--background", str(tmp_path / "smoke.blend"), "--python-exit-code", "1"]
    bake += ["--python-expr", expression]
    verify = [*launcher, "--python", str(BOOTSTRAP), "--"]
    verify += [str(SESSIONS / "verify_bake.py"), str(tmp_path), str(tmp_path / "expr.blend"), "Arm", "B2", "2", "9"]
    for command, must_say_success in ((setup, True), (bake, False), (verify, True)):
        done = _run(command, tmp_path, user)
        result = SessionResult(tuple(command), done.returncode, done.stdout, done.stderr)
        if done.returncode != 0 or (must_say_success and SUCCESS_MARKER not in done.stdout):
            return result
    return result


def _need_blender_binary() -> None:
    if not BLENDER_BINARY.is_file():
        pytest.fail(f"{BLENDER_BINARY} not installed: run tools/ensure_debian_packages.sh (make test does)")


@pytest.mark.blender_binary
@pytest.mark.parametrize("step", steps_of(SESSIONS / "verify_bake.py"))
def test_blender_binary_python_expr(step, session_steps, extension_zip: Path, tmp_path: Path) -> None:
    _need_blender_binary()
    session_steps.check(
        "verify_bake blender-3.4 python-expr", step, lambda: _expression_bake_verified(extension_zip, tmp_path)
    )


@pytest.mark.blender_binary
@pytest.mark.parametrize("step", steps_of(SESSIONS / "smoke.py"))
def test_blender34_smoke(step, session_steps, run_binary_session_result) -> None:
    """The main path in Debian's Blender 3.4 (legacy add-on, Action.fcurves, Bone.select)."""
    _need_blender_binary()
    session_steps.check("smoke blender-3.4", step, lambda: run_binary_session_result("smoke.py"))
