"""The same zip installs as a legacy add-on in Debian's Blender 3.4 binary (Preferences >
Add-ons > Install), works, and uninstalls cleanly: the sessions the bpy 5.0 tests run."""

from pathlib import Path

import pytest

from tests.helpers import SUCCESS_MARKER, run_in_blender_binary

SESSIONS = Path(__file__).resolve().parent / "sessions"

pytestmark = pytest.mark.blender_binary


def test_install_registers_everything_and_uninstall_leaves_nothing(extension_zip: Path, tmp_path: Path) -> None:
    result = run_in_blender_binary(SESSIONS / "install_use_uninstall.py", extension_zip, workdir=tmp_path)
    result.check()  # on failure, shows the session's output
    assert result.returncode == 0
    assert SUCCESS_MARKER in result.stdout
    assert "Blender 3.4" in result.stdout
    assert "nothing left behind" in result.stdout


def test_chain_survives_save_and_reload(extension_zip: Path, tmp_path: Path) -> None:
    blend = tmp_path / "arm3.blend"
    result = run_in_blender_binary(
        SESSIONS / "chain_survives_reload.py", blend, workdir=tmp_path, addon_zip=extension_zip
    )
    result.check()
    assert result.returncode == 0
    assert SUCCESS_MARKER in result.stdout
    assert blend.stat().st_size > 0
