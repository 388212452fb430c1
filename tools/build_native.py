"""Build the solver's C kernel: one shared library per platform Blender ships on.

Every ``*.c`` in ``quat_ik_addon/solver/native/kernel/`` is compiled and linked in one step into
``quat_ik_addon/solver/native/lib/<platform>/<file>``, where ``solver/native/library.py`` looks
for it. Each step exists for a reason:

1. Zig's C compiler (``python -m ziglang cc``, the ``ziglang`` wheel pinned in pyproject.toml)
   cross-compiles for all six targets from one Linux machine, with its own libc headers and
   import libraries: no SDKs, no per-platform CI runners.
2. Linux targets name glibc 2.28 (``x86_64-linux-gnu.2.28``): the library then runs on every
   Linux that Blender's own binaries run on (the VFX Reference Platform's glibc), not only on
   this machine's newer one.
3. Flags: ``-std=c11 -O2``; ``-Wall -Wextra -Werror`` so a warning fails the build on every
   target alike; ``-fvisibility=hidden`` so only the ``QIK_EXPORT`` functions of qik.h are
   exported (tests/solver/native checks the exported set); ``-shared``, plus ``-fPIC`` where
   code must be position-independent (Linux, macOS; a Windows DLL has no such option). Linux
   also gets ``-lm`` (macOS and Windows keep libm in their C runtime) and ``-Wl,-z,defs``: an
   ELF shared library links with undefined symbols by default and would only fail when Blender
   loads it, while the Mach-O and PE linkers already refuse. A dylib records its own install
   name, by default the path it was linked at: ``@rpath/<file>`` keeps it independent of the
   build folder.
4. Each library is linked in a temporary folder (as the working directory, with a relative
   output name, so no temporary path is written into the binary) and only the library is moved
   into ``lib/``: the Windows linker writes an import library and a PDB beside the DLL, which
   must not ship, and an interrupted build never leaves a half-written library where the loader
   looks.
5. The six builds run two at a time (each ``zig cc`` is single-threaded for one small kernel;
   the first build of a Windows or macOS target also builds that libc into Zig's cache,
   ``~/.cache/zig``, once per machine).
6. A library is rebuilt only when a kernel file (``*.c``, ``*.h``, or the kernel folder itself,
   whose time changes when a file is added or removed) or this script (its flags) is newer than
   the library: ``make test`` calls this on every run. ``--force`` rebuilds all the same.

Command line: ``python tools/build_native.py [--force] [--host-only]`` prints one line per
library and exits 1 with the compiler's messages on failure. From Python: ``build_native()``
returns the libraries' paths or raises ``NativeBuildError``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[1]
NATIVE_DIR = REPO_ROOT / "quat_ik_addon" / "solver" / "native"
KERNEL_DIR = NATIVE_DIR / "kernel"
LIB_DIR = NATIVE_DIR / "lib"

PARALLEL_BUILDS = 2


class Platform(NamedTuple):
    zig_target: str
    file_name: str


# solver/native/library.py mirrors these names and file names (a test checks they agree).
PLATFORMS: dict[str, Platform] = {
    "linux-x64": Platform("x86_64-linux-gnu.2.28", "libquatik.so"),
    "linux-arm64": Platform("aarch64-linux-gnu.2.28", "libquatik.so"),
    "windows-x64": Platform("x86_64-windows-gnu", "quatik.dll"),
    "windows-arm64": Platform("aarch64-windows-gnu", "quatik.dll"),
    "macos-x64": Platform("x86_64-macos", "libquatik.dylib"),
    "macos-arm64": Platform("aarch64-macos", "libquatik.dylib"),
}

# -ffp-contract=off: no fused multiply-adds (clang fuses by default on arm64), whose different
# rounding would move the kernel's answers and tie decisions away from the numpy reference's.
# -s: no symbol tables beyond the exports (a quarter of the size).
COMMON_FLAGS = (
    "-std=c11",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-ffp-contract=off",
    "-fvisibility=hidden",
    "-shared",
    "-s",
)
# Step 3 of the module docstring: what each operating system adds.
SYSTEM_FLAGS = {
    "linux": ("-fPIC", "-Wl,-z,defs", "-lm"),
    "macos": ("-fPIC",),
    "windows": (),
}


class NativeBuildError(RuntimeError):
    """A library could not be built; the message holds the compiler's output."""


@dataclass(frozen=True)
class BuiltLibrary:
    platform: str
    path: Path
    rebuilt: bool
    seconds: float


def library_output(platform: str) -> Path:
    return LIB_DIR / platform / PLATFORMS[platform].file_name


def kernel_sources(kernel_dir: Path = KERNEL_DIR) -> list[Path]:
    return sorted(kernel_dir.glob("*.c"))


def compile_flags(platform: str) -> list[str]:
    target, file_name = PLATFORMS[platform]
    system = platform.split("-")[0]
    install_name = [f"-Wl,-install_name,@rpath/{file_name}"] if system == "macos" else []
    return ["-target", target, *COMMON_FLAGS, *SYSTEM_FLAGS[system], *install_name]


def compile_library(platform: str, sources: Sequence[Path], output: Path) -> None:
    """Compile and link ``sources`` into the shared library ``output`` for ``platform``.

    Links in a temporary folder and moves only the library into place (step 4 above).
    Raises NativeBuildError with the compiler's messages.
    """
    if not sources:
        raise NativeBuildError(f"{platform}: no C sources to compile")
    with tempfile.TemporaryDirectory(prefix=f"quat_ik_native_{platform}_") as tmp:
        linked = Path(tmp) / output.name
        command = [sys.executable, "-m", "ziglang", "cc", *compile_flags(platform)]
        command += [*(str(source.resolve()) for source in sources), "-o", output.name]
        try:
            result = subprocess.run(command, cwd=tmp, capture_output=True, text=True, check=False)
        except OSError as error:
            raise NativeBuildError(f"{platform}: could not start Zig ({error})") from None
        if result.returncode != 0 or not linked.is_file():
            messages = (result.stdout + result.stderr).strip()
            if "No module named ziglang" in messages:
                messages = f"the ziglang package is not installed for {sys.executable}; run `make venv`"
            raise NativeBuildError(f"{platform}: zig cc failed (exit {result.returncode}):\n{messages}")
        output.parent.mkdir(parents=True, exist_ok=True)
        # A dot-name: the manifest's ".*" pattern keeps it out of the zip if a copy is interrupted.
        partial = output.with_name(f".{output.name}.partial")
        shutil.copyfile(linked, partial)
        partial.chmod(0o755)
        partial.replace(output)


def newest_input_time(kernel_dir: Path = KERNEL_DIR) -> float:
    """Modification time of the newest input (step 6 above)."""
    inputs = [kernel_dir, Path(__file__), *kernel_dir.glob("*.c"), *kernel_dir.glob("*.h")]
    return max(path.stat().st_mtime for path in inputs)


def _build_one(platform: str, force: bool) -> BuiltLibrary:
    output = library_output(platform)
    if not force and output.is_file() and output.stat().st_mtime >= newest_input_time():
        return BuiltLibrary(platform, output, rebuilt=False, seconds=0.0)
    started = time.time()
    compile_library(platform, kernel_sources(), output)
    # Stamp the library with the time the sources were read, so a file saved during the build
    # counts as newer and is built next time.
    os.utime(output, (started, started))
    return BuiltLibrary(platform, output, rebuilt=True, seconds=time.time() - started)


def build_all(*, force: bool = False, platforms: Iterable[str] | None = None) -> list[BuiltLibrary]:
    """Build (or find up to date) each platform's library; raise NativeBuildError on any failure."""
    names = list(PLATFORMS if platforms is None else platforms)
    unknown = [name for name in names if name not in PLATFORMS]
    if unknown:
        raise NativeBuildError(f"unknown platform(s) {unknown}; known: {', '.join(PLATFORMS)}")
    with ThreadPoolExecutor(max_workers=PARALLEL_BUILDS) as pool:
        futures = {name: pool.submit(_build_one, name, force) for name in names}
    built, failures = [], {}
    for name, future in futures.items():
        try:
            built.append(future.result())
        except NativeBuildError as error:
            failures[name] = str(error)
    if failures:
        # The same warning fails every target alike: say it once, naming the platforms.
        by_message: dict[str, list[str]] = {}
        for name, message in failures.items():
            by_message.setdefault(message.removeprefix(f"{name}: "), []).append(name)
        raise NativeBuildError("\n\n".join(f"[{', '.join(names)}] {message}" for message, names in by_message.items()))
    return built


def build_native(force: bool = False, platforms: Iterable[str] | None = None) -> list[Path]:
    """Build the kernel for ``platforms`` (default: all six); return the libraries' paths."""
    return [library.path for library in build_all(force=force, platforms=platforms)]


def host_platform() -> str | None:
    """This machine's platform name, as the loader computes it."""
    sys.path.insert(0, str(REPO_ROOT))
    try:
        from quat_ik_addon.solver.native.library import platform_tag
    finally:
        sys.path.remove(str(REPO_ROOT))
    return platform_tag()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rebuild even when the libraries are up to date")
    parser.add_argument("--host-only", action="store_true", help="build only this machine's platform")
    args = parser.parse_args(argv)
    platforms = None
    if args.host_only:
        host = host_platform()
        if host is None:
            print(
                "build_native: FAILED: this machine is none of the platforms the kernel is built for", file=sys.stderr
            )
            return 1
        platforms = [host]
    try:
        libraries = build_all(force=args.force, platforms=platforms)
    except NativeBuildError as error:
        print(f"build_native: FAILED:\n{error}", file=sys.stderr)
        return 1
    for library in libraries:
        where = library.path.relative_to(REPO_ROOT) if library.path.is_relative_to(REPO_ROOT) else library.path
        size_kb = library.path.stat().st_size / 1024
        state = f"built in {library.seconds:.1f} s" if library.rebuilt else "up to date"
        print(f"build_native: {library.platform:<13} {where} ({size_kb:.0f} KB, {state})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
