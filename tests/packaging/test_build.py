"""The zip tools/build_extension.py makes: valid, laid out for every Blender we support, and
shipping exactly the add-on package."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import quat_ik_addon
from tools.build_extension import ADDON_DIR, MANIFEST_PATH, REPO_ROOT, BuildError, build_extension, run_extension_cli

TOP_FOLDER = "quat_ik/"


def zip_names(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as zf:
        return zf.namelist()


def test_zip_passes_blenders_validator(extension_zip: Path) -> None:
    output = run_extension_cli("validate", str(extension_zip))  # raises BuildError on any error
    assert "Success" in output


def test_every_entry_sits_under_one_top_folder(extension_zip: Path) -> None:
    # Blender 3.4's legacy installer unpacks a flat zip straight into scripts/addons/.
    names = zip_names(extension_zip)
    assert [n for n in names if not n.startswith(TOP_FOLDER)] == []
    assert {TOP_FOLDER + "__init__.py", TOP_FOLDER + "blender_manifest.toml"} <= set(names)


def test_zip_ships_every_source_file_of_the_package(extension_zip: Path) -> None:
    shipped = {n.removeprefix(TOP_FOLDER) for n in zip_names(extension_zip) if n.endswith(".py")}
    sources = {p.relative_to(ADDON_DIR).as_posix() for p in ADDON_DIR.rglob("*.py") if "__pycache__" not in p.parts}
    assert shipped == sources


def test_caches_tests_and_scratch_files_are_not_shipped(tmp_path: Path) -> None:
    # Plant junk in a copy of the package: the manifest's exclude patterns must keep all of it out.
    addon_copy = tmp_path / "quat_ik_addon"
    shutil.copytree(ADDON_DIR, addon_copy)
    junk = [
        "__pycache__/__init__.cpython-311.pyc",
        "solver/__pycache__/anything.cpython-311.pyc",
        "stray.pyc",
        "tests/test_inside_package.py",
        "solver/test_something.py",
        "conftest.py",
        ".hidden_scratch",
        "rig.blend1",
        "old_build.zip",
    ]
    for rel in junk:
        (addon_copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (addon_copy / rel).write_bytes(b"junk")

    names = zip_names(build_extension(addon_dir=addon_copy, dist_dir=tmp_path / "dist"))

    assert [TOP_FOLDER + rel for rel in junk if TOP_FOLDER + rel in names] == []
    assert [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/tests/" in n] == []
    assert TOP_FOLDER + "solver/__init__.py" in names


def test_manifest_pyproject_and_bl_info_versions_agree() -> None:
    manifest = tomllib.loads(MANIFEST_PATH.read_text())
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    bl_info_version = ".".join(map(str, quat_ik_addon.bl_info["version"]))
    assert manifest["version"] == pyproject["project"]["version"] == bl_info_version


def test_zip_is_named_after_id_and_version(extension_zip: Path) -> None:
    manifest = tomllib.loads(MANIFEST_PATH.read_text())
    assert extension_zip.name == f"{manifest['id']}-{manifest['version']}.zip"


def test_invalid_manifest_fails_loudly_and_leaves_no_zip(tmp_path: Path) -> None:
    bad_manifest = tmp_path / "blender_manifest.toml"
    # Blender's validator rejects a tagline ending in punctuation.
    bad_text, n_replaced = re.subn(
        r'^tagline = ".*"$', 'tagline = "Ends with a period."', MANIFEST_PATH.read_text(), flags=re.M
    )
    assert n_replaced == 1
    bad_manifest.write_text(bad_text)
    with pytest.raises(BuildError, match="tagline"):
        build_extension(manifest_path=bad_manifest, dist_dir=tmp_path / "dist_api")

    cli = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "build_extension.py"), "--manifest", str(bad_manifest),
         "--dist-dir", str(tmp_path / "dist_cli")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 1
    assert "build_extension: FAILED" in cli.stderr
    assert "tagline" in cli.stderr
    assert list((tmp_path / "dist_cli").glob("*.zip")) == []
