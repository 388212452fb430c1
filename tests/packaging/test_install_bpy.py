"""The built zip installs as an extension in bpy 5.0, works, and uninstalls cleanly."""

import shutil
from pathlib import Path

import pytest

from tests.helpers import run_in_bpy
from tools.build_extension import ADDON_DIR, build_extension

SESSIONS = Path(__file__).resolve().parent / "sessions"

pytestmark = pytest.mark.bpy


def test_install_registers_everything_and_uninstall_leaves_nothing(extension_zip: Path, tmp_path: Path) -> None:
    result = run_in_bpy(SESSIONS / "install_use_uninstall.py", extension_zip, workdir=tmp_path).check()
    assert "nothing left behind" in result.stdout


def test_chain_survives_save_and_reload(run_bpy_with_addon, tmp_path: Path) -> None:
    blend = tmp_path / "arm3.blend"
    run_bpy_with_addon(SESSIONS / "chain_survives_reload.py", blend)
    assert blend.stat().st_size > 0


LEAKY_REGISTER = """

# Appended by test_install_bpy: a register() that adds a handler unregister() never removes.
_register_without_leak = register


def register():
    import bpy

    _register_without_leak()
    bpy.app.handlers.load_post.append(_handler_left_behind)


def _handler_left_behind(*_args):
    pass
"""


def test_uninstall_check_catches_a_handler_left_behind(tmp_path: Path) -> None:
    # The leftover check above must be able to fail: build a copy of the add-on that leaks a handler.
    leaky_addon = tmp_path / "quat_ik_addon"
    shutil.copytree(ADDON_DIR, leaky_addon, ignore=shutil.ignore_patterns("__pycache__"))
    with (leaky_addon / "__init__.py").open("a") as init:
        init.write(LEAKY_REGISTER)
    leaky_zip = build_extension(addon_dir=leaky_addon, dist_dir=tmp_path / "dist")

    result = run_in_bpy(SESSIONS / "install_use_uninstall.py", leaky_zip, workdir=tmp_path)

    assert not result.succeeded
    assert "still there after uninstalling" in result.stderr
    assert "load_post" in result.stderr and "_handler_left_behind" in result.stderr
