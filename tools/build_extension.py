"""Build the installable add-on: ``dist/quat_ik-<version>.zip``.

Each step exists because of how Blender treats extensions (see docs in BLENDER_NOTES):

0. Build the solver's C kernel for all six platforms (``tools/build_native.py``; a no-op when
   the libraries are up to date) into ``quat_ik_addon/solver/native/lib/<platform>/``. The
   libraries are never committed, so a clone has none until this runs; every zip carries all six
   (``--split-platforms`` would not filter them) and the loader picks this machine's.
1. Stage the contents of ``quat_ik_addon/`` and ``blender_manifest.toml`` in one temporary
   folder: Blender's ``build`` wants ``__init__.py`` beside the manifest.
2. Run Blender's own ``blender_ext.py build`` there (with ``--valid-tags``). It applies the
   manifest's ``paths_exclude_pattern`` and checks every manifest field.
3. Re-zip so every entry sits under one top folder ``quat_ik/``: Blender 3.4-4.1's legacy
   "Install add-on" unpacks a flat zip straight into ``scripts/addons/``, while 4.2+ accepts
   either layout.
4. Run ``blender_ext.py validate`` on the final zip, so the file that ships is the file checked.

The validator ships inside the ``bpy`` wheel; it is found through the installed package,
so this must run with the project's Python (``.venv/bin/python``).

Command line: ``python tools/build_extension.py [--dist-dir DIR] [--addon-dir DIR] [--manifest FILE]``
(exit 1 with the validator's messages on failure). From Python: ``build_extension()`` returns the zip path
or raises ``BuildError``.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script, this file's folder is on sys.path, not the repo

from tools.build_native import NativeBuildError, build_native  # noqa: E402  (needs sys.path above)

ADDON_DIR = REPO_ROOT / "quat_ik_addon"
MANIFEST_PATH = REPO_ROOT / "blender_manifest.toml"
DIST_DIR = REPO_ROOT / "dist"


class BuildError(RuntimeError):
    """The extension could not be built or did not validate; the message says why."""


def read_manifest(manifest_path: Path = MANIFEST_PATH) -> dict:
    with manifest_path.open("rb") as f:
        return tomllib.load(f)


def find_extension_cli() -> tuple[Path, Path]:
    """Paths of Blender's ``blender_ext.py`` and its tags file inside the installed bpy wheel."""
    spec = importlib.util.find_spec("bpy")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise BuildError(
            f"the bpy package is not installed for {sys.executable}; "
            "run `make test` (it creates .venv) or `pip install --group dev`"
        )
    bpy_dir = Path(next(iter(spec.submodule_search_locations)))
    # The scripts live under a "<major>.<minor>" folder; globbing keeps this working across bpy upgrades.
    clis = sorted(bpy_dir.glob("*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
    if not clis:
        raise BuildError(f"blender_ext.py not found under {bpy_dir}; is the bpy wheel complete?")
    cli = clis[-1]
    tags = cli.parents[3] / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    if not tags.is_file():
        raise BuildError(f"Blender's extension tags file not found at {tags}")
    return cli, tags


def run_extension_cli(subcommand: str, *args: str) -> str:
    """Run ``blender_ext.py <subcommand> ... --valid-tags <tags>``; return its output or raise BuildError."""
    cli, tags = find_extension_cli()
    command = [sys.executable, str(cli), subcommand, *args, "--valid-tags", str(tags)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0:
        raise BuildError(f"Blender's extension validator `{subcommand}` failed (exit {result.returncode}):\n{output}")
    return output


def rezip_under_top_folder(flat_zip: Path, out_zip: Path, top_folder: str) -> None:
    """Copy every entry of ``flat_zip`` into ``out_zip`` as ``<top_folder>/<entry>``."""
    partial = out_zip.with_name(out_zip.name + ".partial")  # never leave a half-written zip at out_zip
    with zipfile.ZipFile(flat_zip) as src, zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            moved = zipfile.ZipInfo(f"{top_folder}/{info.filename}", date_time=info.date_time)
            moved.external_attr = info.external_attr  # keeps file modes and the directory flag
            moved.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(moved, src.read(info))
    partial.replace(out_zip)


def build_extension(
    *, addon_dir: Path = ADDON_DIR, manifest_path: Path = MANIFEST_PATH, dist_dir: Path = DIST_DIR
) -> Path:
    """Build, re-zip and validate the extension; return the path of ``<dist_dir>/<id>-<version>.zip``."""
    manifest = read_manifest(manifest_path)
    package_id, version = manifest["id"], manifest["version"]
    if not (addon_dir / "__init__.py").is_file():
        raise BuildError(f"{addon_dir} is not a Python package (no __init__.py)")
    dist_dir.mkdir(parents=True, exist_ok=True)
    out_zip = dist_dir / f"{package_id}-{version}.zip"
    out_zip.unlink(missing_ok=True)  # if this build fails, no zip from an earlier one may pass for it
    try:
        build_native()  # into the repository's package, which addon_dir is (or was copied from)
    except NativeBuildError as error:
        raise BuildError(f"the native kernel did not build:\n{error}") from None

    with tempfile.TemporaryDirectory(prefix="quat_ik_build_") as tmp:
        staging, flat_dir = Path(tmp, "staging"), Path(tmp, "flat")
        # Copy everything, caches included: the manifest's exclude patterns decide what ships
        # (and test_build.py checks they do).
        shutil.copytree(addon_dir, staging)
        shutil.copy2(manifest_path, staging / "blender_manifest.toml")
        flat_dir.mkdir()
        try:
            run_extension_cli("build", "--source-dir", str(staging), "--output-dir", str(flat_dir))
        except BuildError as error:  # the validator names the staged copy; say what it was a copy of
            raise BuildError(f"{error}\n(staging folder = {addon_dir} + {manifest_path})") from None
        flat_zips = list(flat_dir.glob("*.zip"))
        if len(flat_zips) != 1:
            raise BuildError(f"expected one zip from Blender's build, found {[p.name for p in flat_zips]}")
        rezip_under_top_folder(flat_zips[0], out_zip, package_id)

    try:
        run_extension_cli("validate", str(out_zip))
    except BuildError:
        out_zip.unlink()  # a zip that failed validation must not look like a usable build
        raise
    return out_zip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist-dir", type=Path, default=DIST_DIR, help="where to write the zip (default: dist/)")
    parser.add_argument("--addon-dir", type=Path, default=ADDON_DIR, help="package to ship (default: quat_ik_addon/)")
    parser.add_argument("--manifest", type=Path, default=MANIFEST_PATH, help="default: blender_manifest.toml")
    args = parser.parse_args(argv)
    try:
        out_zip = build_extension(
            addon_dir=args.addon_dir.resolve(), manifest_path=args.manifest.resolve(), dist_dir=args.dist_dir.resolve()
        )
    except BuildError as error:
        print(f"build_extension: FAILED: {error}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(out_zip) as zf:
        n_files = sum(not name.endswith("/") for name in zf.namelist())
    print(f"build_extension: built and validated {out_zip} ({n_files} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
