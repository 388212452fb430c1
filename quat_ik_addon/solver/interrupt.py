"""Stopping a long solve from outside it, between its steps, and hearing how far it got.

A shot solved in a worker thread (the add-on's modal bake, so Blender's window stays live) runs
inside ``stoppable(stop, progress)``: the shot's solver calls ``checkpoint(fraction)`` between
its steps, which reports the fraction done to ``progress`` and raises ``Interrupted`` once the
``threading.Event`` ``stop`` is set. Outside ``stoppable`` (every other solve) a checkpoint
does nothing. The state is per thread, so solves in other threads are not affected.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Interrupted(Exception):
    """The solve was asked to stop (``stoppable``'s event was set)."""


_local = threading.local()


@contextmanager
def stoppable(stop: threading.Event, progress: Callable[[float], None] | None = None) -> Iterator[None]:
    """Solves in this thread, inside the block, stop at their next checkpoint once ``stop`` is
    set, and report each checkpoint's fraction to ``progress``."""
    previous = getattr(_local, "state", None)
    _local.state = (stop, progress)
    try:
        yield
    finally:
        _local.state = previous


def checkpoint(fraction: float) -> None:
    """Between two steps of a solve, ``fraction`` (0-1) of it done: report it, and raise
    ``Interrupted`` if the solve was asked to stop."""
    state = getattr(_local, "state", None)
    if state is None:
        return
    stop, progress = state
    if progress is not None:
        progress(fraction)
    if stop.is_set():
        raise Interrupted("the solve was stopped")
