"""Finds and loads the native kernel, or says plainly why the numpy solver runs instead.

The kernel is a shared library built by ``tools/build_native.py`` into
``lib/<platform>/<file>`` beside this module, one per platform Blender ships on. Importing this
module does nothing but define names: it never loads a library and never raises, so the solver
imports it with ``bpy`` absent and with no library present.

``load()`` runs on first use (the first solve that could use the kernel, or a UI drawing the
status) and decides once per process; its answer is cached until ``reset()``. Each step that
can fail falls back to numpy with a reason, never an exception:

1. ``QUAT_IK_NATIVE`` in the environment: ``0``, ``off``, ``false`` or ``numpy`` turns the
   kernel off (anything else, or unset, means automatic); then the add-on's preference
   (``set_preference``).
2. The platform: one of ``LIBRARY_FILES``'s six, else there is no library to load.
3. The file, ``ctypes.CDLL``, every function of ``abi.FUNCTIONS``, and the interface version:
   a library built from another ``qik.h`` is refused.
4. ``_self_check``: the kernel must answer known problems as the numpy solver does.

A library, once loaded by the operating system, stays loaded until the process ends:
``reset()`` only forgets the cached answer, so the next ``load()`` decides again.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import abi

LIB_DIR = Path(__file__).resolve().parent / "lib"

# tools/build_native.py's PLATFORMS, by file name (tests/solver/native checks they agree).
LIBRARY_FILES = {
    "linux-x64": "libquatik.so",
    "linux-arm64": "libquatik.so",
    "windows-x64": "quatik.dll",
    "windows-arm64": "quatik.dll",
    "macos-x64": "libquatik.dylib",
    "macos-arm64": "libquatik.dylib",
}

ENVIRONMENT_VARIABLE = "QUAT_IK_NATIVE"
DISABLING_VALUES = frozenset({"0", "off", "false", "numpy"})

_SYSTEMS = {"linux": "linux", "win32": "windows", "darwin": "macos"}
_MACHINES = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}


@dataclass(frozen=True)
class NativeStatus:
    """Which solver path runs and why: ``active`` for the kernel, else numpy with the reason."""

    active: bool
    reason: str
    path: str | None
    version: int | None

    def describe(self) -> str:
        """One line for a UI: ``native kernel (linux-x64, interface 4)`` or ``numpy (<reason>)``."""
        return f"native kernel ({self.reason})" if self.active else f"numpy ({self.reason})"


_lock = threading.Lock()
_cached: tuple[ctypes.CDLL | None, NativeStatus] | None = None
_preference_enabled = True


def platform_tag() -> str | None:
    """This machine's platform name among ``LIBRARY_FILES`` (e.g. ``linux-x64``), or None.

    From ``sys.platform`` and ``platform.machine()``; a 32-bit Python is None too (the
    libraries are 64-bit only).
    """
    return tag_for(sys.platform, platform.machine(), struct.calcsize("P"))


def tag_for(system: str, machine: str, pointer_size: int = 8) -> str | None:
    """``platform_tag``'s rule for a given ``sys.platform``, machine name and pointer size."""
    system_name = next((name for prefix, name in _SYSTEMS.items() if system.startswith(prefix)), None)
    machine_name = _MACHINES.get(machine.lower())
    if system_name is None or machine_name is None or pointer_size != 8:
        return None
    return f"{system_name}-{machine_name}"


def library_path(tag: str) -> Path:
    """Where platform ``tag``'s library is: ``lib/<tag>/<file>`` beside this module."""
    return LIB_DIR / tag / LIBRARY_FILES[tag]


def set_preference(enabled: bool) -> None:
    """The add-on preference: False forces numpy, True lets ``load()`` decide.

    Called by the preference's update callback (and at registration); forgets the cached
    answer so the next ``load()`` applies it.
    """
    global _preference_enabled
    _preference_enabled = bool(enabled)
    reset()


@contextlib.contextmanager
def numpy_only() -> Iterator[None]:
    """Within the block every solve runs on the numpy reference (tests compare the two paths;
    benchmarks measure both). Not for use while another thread solves."""
    global _preference_enabled
    kept = _preference_enabled
    set_preference(False)
    try:
        yield
    finally:
        set_preference(kept)


def reset() -> None:
    """Forget the cached answer (tests, the preference). Does not unload a loaded library."""
    global _cached
    with _lock:
        _cached = None


def load() -> tuple[ctypes.CDLL | None, NativeStatus]:
    """The kernel library with its functions declared, or None, and the status saying why.

    Runs the checks of the module docstring on the first call after import or ``reset()``
    and returns the cached answer after that. Never raises.
    """
    global _cached
    cached = _cached  # once decided, read without the lock: every solve asks (one reference read is atomic)
    if cached is not None:
        return cached
    with _lock:
        if _cached is None:
            try:
                _cached = _load_uncached()
            except Exception as error:  # a bug in a check must still mean numpy, not a broken add-on
                _cached = None, _numpy(f"kernel loading failed unexpectedly: {type(error).__name__}: {error}")
        return _cached


def _self_check(library: ctypes.CDLL) -> str | None:
    """Run the kernel on canned problems and compare with the numpy solver's answers.

    Returns None when every answer agrees, else a one-line reason (``load()`` then uses numpy).
    Runs once per ``load()`` decision, after the library passed every other check.
    """
    from .self_check import check

    return check(library)


def _numpy(reason: str, path: Path | None = None, version: int | None = None) -> NativeStatus:
    return NativeStatus(
        active=False, reason=" ".join(reason.split()), path=None if path is None else str(path), version=version
    )


def _load_uncached() -> tuple[ctypes.CDLL | None, NativeStatus]:
    setting = os.environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if setting.lower() in DISABLING_VALUES:
        return None, _numpy(f"kernel disabled by {ENVIRONMENT_VARIABLE}={setting}")
    if not _preference_enabled:
        return None, _numpy("kernel disabled in the add-on's preferences")

    tag = platform_tag()
    if tag is None:
        return None, _numpy(
            f"no kernel built for this platform ({sys.platform}, {platform.machine() or 'unknown machine'})"
        )
    path = library_path(tag)
    if not path.is_file():
        return None, _numpy(f"no kernel library at {path}", path)
    try:
        library = ctypes.CDLL(str(path))
    except OSError as error:
        return None, _numpy(f"kernel library failed to load: {error}", path)
    try:
        abi.declare(library)
    except AttributeError as error:
        return None, _numpy(f"kernel library lacks a function: {error}", path)

    version = int(library.qik_interface_version())
    if version != abi.INTERFACE_VERSION:
        return None, _numpy(
            f"kernel library has interface {version}, this add-on needs interface {abi.INTERFACE_VERSION}",
            path,
            version,
        )
    failure = _self_check(library)
    if failure is not None:
        return None, _numpy(f"kernel self-check failed: {failure}", path, version)
    return library, NativeStatus(active=True, reason=f"{tag}, interface {version}", path=str(path), version=version)
