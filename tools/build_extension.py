"""Build the installable add-on: ``dist/quat_ik-<version>.zip``.

Each step exists because of how Blender treats extensions (see docs in BLENDER_NOTES):

0. Build the solver's C kernel for all six platforms (``tools/build_native.py``; a no-op when
   the libraries are up to date) into ``quat_ik_addon/solver/native/lib/<platform>/``. The
   libraries are never committed, so a clone has none until this runs; every zip carries all six
   (``--split-platforms`` would not filter them) and the loader picks this machine's. Without
   the ``ziglang`` package there is no compiler: the zip ships without libraries (none from an
   earlier build either) and the add-on solves on numpy, which the build says.
1. Stage the contents of ``quat_ik_addon/`` and ``blender_manifest.toml`` in one temporary
   folder: Blender's ``build`` wants ``__init__.py`` beside the manifest.
2. Run Blender's own ``blender_ext.py build`` there (with ``--valid-tags``). It applies the
   manifest's ``paths_exclude_pattern`` and checks every manifest field.
3. Re-zip so every entry sits under one top folder ``quat_ik/``: Blender 3.4-4.1's legacy
   "Install add-on" unpacks a flat zip straight into ``scripts/addons/``, while 4.2+ accepts
   either layout.
4. Run ``blender_ext.py validate`` on the final zip, so the file that ships is the file checked.

Blender's tool ships inside the ``bpy`` wheel (the 1 GB test set-up). Where ``bpy`` is not
installed, steps 2-4 become one: the staged files, filtered by the manifest's
``paths_exclude_pattern`` the way Blender's ``build`` filters them, are written under
``quat_ik/`` with Python's ``zipfile``, and nothing validates the result here;
``tests/packaging/test_build.py`` checks that this plain zip holds exactly the entries of
Blender's build and passes Blender's validator. So a zip needs only Python 3.11 (and the
``ziglang`` wheel for the kernel).

Command line: ``python tools/build_extension.py [--dist-dir DIR] [--addon-dir DIR] [--manifest FILE]``
(exit 1 with the validator's messages on failure; it prints which way it built and whether the
kernel is inside). From Python: ``build_extension()`` returns the zip path (``build()`` also
says how it was made) or raises ``BuildError``.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script, this file's folder is on sys.path, not the repo

from tools.build_native import LIB_DIR, NativeBuildError, build_native  # noqa: E402  (needs sys.path above)

ADDON_DIR = REPO_ROOT / "quat_ik_addon"
MANIFEST_PATH = REPO_ROOT / "blender_manifest.toml"
DIST_DIR = REPO_ROOT / "dist"
MANIFEST_NAME = "blender_manifest.toml"
# What Blender's build excludes when the manifest names no patterns (blender_ext.py, "build").
DEFAULT_EXCLUDE_PATTERNS = ("__pycache__/", ".*", "/*.zip", "*.blend[1-9]")


class BuildError(RuntimeError):
    """The extension could not be built or did not validate; the message says why."""


@dataclass(frozen=True)
class Build:
    """A built zip and how it was made."""

    zip_path: Path
    validated: bool  # made and checked by Blender's own tool (bpy installed), else a plain zip
    native_platforms: tuple[str, ...]  # platforms whose kernel library the zip carries (may be none)

    def describe(self) -> str:
        how = (
            "built and validated by Blender's extension tool"
            if self.validated
            else "built with Python's zipfile (no bpy here, so Blender's validator did not run; the tests run it)"
        )
        kernel = (
            f"native kernel for {len(self.native_platforms)} platforms"
            if self.native_platforms
            else "no native kernel (no ziglang package: the add-on solves on numpy; "
            "`pip install ziglang` and build again for the kernel)"
        )
        return f"{how}; {kernel}"


def read_manifest(manifest_path: Path = MANIFEST_PATH) -> dict:
    with manifest_path.open("rb") as f:
        return tomllib.load(f)


def blender_tools_available() -> bool:
    """Whether Blender's ``blender_ext.py`` can be found (the ``bpy`` wheel is installed)."""
    try:
        find_extension_cli()
    except BuildError:
        return False
    return True


def zig_available() -> bool:
    return importlib.util.find_spec("ziglang") is not None


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


class ExcludePatterns:
    """The manifest's ``paths_exclude_pattern`` as Blender's build reads them (gitignore style,
    ``PathPatternMatch`` in blender_ext.py): ``name`` matches at any depth, ``/name`` only at the
    top, a trailing ``/`` only folders, ``*`` never crosses a ``/``. Patterns this plain build
    does not implement (``**``, ``!`` negation) are refused rather than read differently."""

    def __init__(self, patterns: list[str] | tuple[str, ...]) -> None:
        self._patterns: list[tuple[tuple[str, ...], bool, bool]] = []
        for pattern in patterns:
            if "**" in pattern or pattern.startswith(("!", "\\!")):
                raise BuildError(
                    f"paths_exclude_pattern {pattern!r}: the build without bpy handles no '**' or '!' patterns; "
                    "build with Blender's tool (install bpy)"
                )
            anchored, folders_only = pattern.startswith("/"), pattern.endswith("/")
            parts = tuple(part for part in pattern.strip("/").split("/") if part)
            if parts:
                self._patterns.append((parts, anchored, folders_only))

    def excludes(self, parts: tuple[str, ...], is_dir: bool) -> bool:
        """Whether the path (its components, relative to the package) is left out."""
        for pattern, anchored, folders_only in self._patterns:
            if folders_only and not is_dir:
                continue
            if len(parts) < len(pattern) or (anchored and len(parts) != len(pattern)):
                continue
            tail = parts[-len(pattern) :]
            if all(fnmatch.fnmatchcase(part, glob) for part, glob in zip(tail, pattern, strict=True)):
                return True
        return False


def plain_zip(staging: Path, out_zip: Path, top_folder: str, manifest: dict) -> None:
    """Steps 2-3 without Blender's tool: the staged files the manifest's patterns keep, and the
    manifest, under ``<top_folder>/``, as Blender's build would select them."""
    build_section = manifest.get("build", {})
    if "paths" in build_section:
        raise BuildError("the manifest lists [build] paths; the build without bpy handles paths_exclude_pattern only")
    patterns = ExcludePatterns(build_section.get("paths_exclude_pattern", DEFAULT_EXCLUDE_PATTERNS))
    files: list[str] = []

    def walk(folder: Path, parts: tuple[str, ...]) -> None:
        for entry in sorted(folder.iterdir()):
            if entry.is_symlink():
                continue  # as Blender's build: links are never followed or shipped
            path = (*parts, entry.name)
            if patterns.excludes(path, entry.is_dir()):
                continue
            if entry.is_dir():
                walk(entry, path)
            elif entry.is_file() and path != (MANIFEST_NAME,):
                files.append("/".join(path))

    walk(staging, ())
    partial = out_zip.with_name(out_zip.name + ".partial")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as dst:
        for name in [MANIFEST_NAME, *files]:
            dst.write(staging / name, f"{top_folder}/{name}")
    partial.replace(out_zip)


def build(
    *,
    addon_dir: Path = ADDON_DIR,
    manifest_path: Path = MANIFEST_PATH,
    dist_dir: Path = DIST_DIR,
    use_blender_tools: bool | None = None,
    native: bool | None = None,
) -> Build:
    """Build the extension zip ``<dist_dir>/<id>-<version>.zip`` and say how it was made.

    ``use_blender_tools``: build and validate with Blender's tool (True), with plain ``zipfile``
    (False), or the first where ``bpy`` is installed (None). ``native``: build and ship the
    kernel libraries (True; fails without ``ziglang``), ship none (False), or build them where
    ``ziglang`` is installed (None).
    """
    manifest = read_manifest(manifest_path)
    package_id, version = manifest["id"], manifest["version"]
    if not (addon_dir / "__init__.py").is_file():
        raise BuildError(f"{addon_dir} is not a Python package (no __init__.py)")
    if use_blender_tools is None:
        use_blender_tools = blender_tools_available()
    if native is None:
        native = zig_available()
    dist_dir.mkdir(parents=True, exist_ok=True)
    out_zip = dist_dir / f"{package_id}-{version}.zip"
    out_zip.unlink(missing_ok=True)  # if this build fails, no zip from an earlier one may pass for it
    native_platforms: tuple[str, ...] = ()
    if native:
        try:
            libraries = build_native()  # into the repository's package, which addon_dir is (or was copied from)
        except NativeBuildError as error:
            raise BuildError(f"the native kernel did not build:\n{error}") from None
        native_platforms = tuple(sorted(library.parent.name for library in libraries))

    with tempfile.TemporaryDirectory(prefix="quat_ik_build_") as tmp:
        staging, flat_dir = Path(tmp, "staging"), Path(tmp, "flat")
        # Copy everything, caches included: the manifest's exclude patterns decide what ships
        # (and test_build.py checks they do).
        shutil.copytree(addon_dir, staging)
        shutil.copy2(manifest_path, staging / MANIFEST_NAME)
        if not native:  # libraries an earlier build left may be stale: ship none
            shutil.rmtree(staging / LIB_DIR.relative_to(ADDON_DIR), ignore_errors=True)
        if not use_blender_tools:
            plain_zip(staging, out_zip, package_id, manifest)
            return Build(out_zip, validated=False, native_platforms=native_platforms)
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
    return Build(out_zip, validated=True, native_platforms=native_platforms)


def build_extension(
    *, addon_dir: Path = ADDON_DIR, manifest_path: Path = MANIFEST_PATH, dist_dir: Path = DIST_DIR
) -> Path:
    """Build, re-zip and validate the extension with Blender's tool and the kernel (what the
    tests and the demo ship); return the path of ``<dist_dir>/<id>-<version>.zip``."""
    return build(
        addon_dir=addon_dir, manifest_path=manifest_path, dist_dir=dist_dir, use_blender_tools=True, native=True
    ).zip_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dist-dir", type=Path, default=DIST_DIR, help="where to write the zip (default: dist/)")
    parser.add_argument("--addon-dir", type=Path, default=ADDON_DIR, help="package to ship (default: quat_ik_addon/)")
    parser.add_argument("--manifest", type=Path, default=MANIFEST_PATH, help="default: blender_manifest.toml")
    args = parser.parse_args(argv)
    try:
        built = build(
            addon_dir=args.addon_dir.resolve(), manifest_path=args.manifest.resolve(), dist_dir=args.dist_dir.resolve()
        )
    except BuildError as error:
        print(f"build_extension: FAILED: {error}", file=sys.stderr)
        return 1
    with zipfile.ZipFile(built.zip_path) as zf:
        n_files = sum(not name.endswith("/") for name in zf.namelist())
    size_kb = built.zip_path.stat().st_size / 1024
    print(f"build_extension: {built.zip_path} ({n_files} files, {size_kb:.0f} KB): {built.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
