"""The zip tools/build_extension.py makes: valid, laid out for every Blender we support, and
shipping exactly the add-on package."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import quat_ik_addon
from tools.build_extension import (
    ADDON_DIR,
    MANIFEST_PATH,
    REPO_ROOT,
    BuildError,
    ExcludePatterns,
    build,
    build_extension,
    find_extension_cli,
    run_extension_cli,
)

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


@pytest.mark.parametrize("blender_tools", [True, False], ids=["blender_tool", "plain_zipfile"])
def test_caches_tests_and_scratch_files_are_not_shipped(tmp_path: Path, blender_tools: bool) -> None:
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

    built = build(addon_dir=addon_copy, dist_dir=tmp_path / "dist", use_blender_tools=blender_tools, native=False)
    names = zip_names(built.zip_path)

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


def test_the_plain_zip_holds_exactly_what_blenders_build_holds(tmp_path: Path) -> None:
    """Without bpy the zip is written with zipfile: the same entries, byte for byte, as the zip
    Blender's tool builds, and it passes Blender's validator."""
    blenders = build(dist_dir=tmp_path / "blender", use_blender_tools=True, native=True)
    plain = build(dist_dir=tmp_path / "plain", use_blender_tools=False, native=True)
    assert (blenders.validated, plain.validated) == (True, False)
    with zipfile.ZipFile(blenders.zip_path) as theirs, zipfile.ZipFile(plain.zip_path) as ours:
        assert sorted(ours.namelist()) == sorted(theirs.namelist())
        differing = [name for name in theirs.namelist() if ours.read(name) != theirs.read(name)]
        assert differing == []
        libraries = [name for name in ours.namelist() if "/native/lib/" in name]
        assert len(libraries) == len(plain.native_platforms) == 6, libraries
    assert "Success" in run_extension_cli("validate", str(plain.zip_path))


def test_a_zip_builds_with_python_alone(tmp_path: Path) -> None:
    """``python -S``: no site-packages, so no bpy and no ziglang, as a plain Python 3.11. The
    zip still builds, without the kernel (the add-on then solves on numpy), says how it was
    made, and passes Blender's validator."""
    out = tmp_path / "dist"
    cli = subprocess.run(
        [sys.executable, "-S", str(REPO_ROOT / "tools" / "build_extension.py"), "--dist-dir", str(out)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    assert "validator did not run" in cli.stdout and "no native kernel" in cli.stdout, cli.stdout
    (zip_path,) = out.glob("*.zip")
    names = zip_names(zip_path)
    assert [name for name in names if "/native/lib/" in name] == []
    assert TOP_FOLDER + "solver/native/library.py" in names
    assert "Success" in run_extension_cli("validate", str(zip_path))


@pytest.mark.parametrize(
    ("path", "is_dir", "excluded"),
    [
        (("__pycache__",), True, True),
        (("solver", "__pycache__"), True, True),
        (("__pycache__",), False, False),  # "__pycache__/" names folders only
        (("solver", ".hidden"), False, True),
        (("old.zip",), False, True),
        (("solver", "old.zip"), False, False),  # "/*.zip": the top folder only
        (("rig.blend1",), False, True),
        (("rig.blend",), False, False),
        (("solver", "tests"), True, True),
        (("solver", "test_x.py"), False, True),
        (("solver", "latest_x.py"), False, False),
        (("out",), True, True),
        (("solver", "out"), True, False),  # "/out/": the top folder only
    ],
)
def test_the_plain_build_reads_exclude_patterns_as_blender_does(path, is_dir: bool, excluded: bool) -> None:
    patterns = tomllib.loads(MANIFEST_PATH.read_text())["build"]["paths_exclude_pattern"]
    blenders = blender_ext_module().PathPatternMatch(patterns).test_path("/".join(path) + ("/" if is_dir else ""))
    assert (ExcludePatterns(patterns).excludes(path, is_dir), blenders) == (excluded, excluded)


def blender_ext_module():
    """Blender's extension tool (from the bpy wheel) as a module, for its pattern matcher."""
    cli, _tags = find_extension_cli()
    spec = importlib.util.spec_from_file_location("blender_ext", cli)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("pattern", ["**/tests/", "!keep.py"])
def test_the_plain_build_refuses_patterns_it_does_not_implement(pattern: str) -> None:
    with pytest.raises(BuildError, match="without bpy"):
        ExcludePatterns([pattern])
