"""Which solver path runs, in one line for a panel or a command line: the native kernel, or
numpy and why (``native/library.py`` decides whether the kernel loads; ``native/packing.py``
whether it knows every limit of a chain)."""

from __future__ import annotations

import weakref

from .chain import Chain
from .native import kernel_calls, library
from .native.packing import unsupported_reason
from .settings import SolveSettings


def describe(chain: Chain | None = None) -> str:
    """``native kernel`` or ``numpy (why)`` for solves of ``chain`` with ``kernel="auto"``
    settings; without a chain, the library's own line (``native kernel (linux-x64, interface
    1)``). A chain with a limit the kernel does not know runs on numpy even where it loaded.
    Cheap: ``library.load()`` decides once and caches its answer."""
    _, status = library.load()
    if chain is None or not status.active:
        return status.describe()
    line = _lines.get(chain)
    if line is None:
        reason = unsupported_reason(chain)
        line = _lines[chain] = "native kernel" if reason is None else f"numpy ({reason})"
    return line


# Per chain object (chains are immutable), with the library loaded: ``describe``'s line (each
# Live update records it on every chain it solved).
_lines: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def solves_natively(chain: Chain, settings: SolveSettings) -> bool:
    """Whether solves of ``chain`` with ``settings`` run on the native kernel (it loaded, passed
    its self-check, knows every limit of the chain, and the settings do not ask for numpy)."""
    return kernel_calls.kernel_for(chain, settings) is not None
