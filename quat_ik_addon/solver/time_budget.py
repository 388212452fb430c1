"""A solve's time budget: once it is spent, a solve stops improving and keeps its best so far.

Live, Per Frame and Solve Now must never freeze Blender. ``SolveSettings.time_limit`` (seconds)
bounds what a solve spends on the work that only improves an answer it already has: restart
rounds, and a shot's searches for misses and other branches. The work that makes the answer
(the method's own iterations, following a shot's frames) always finishes, so the poses are
complete and inside the limits; ``SolveResult.out_of_time`` says the budget ran out.

The budget is per thread, like ``interrupt``'s stop: ``spending(seconds)`` opens it around a
solve, and the solves inside that one (a shot's restarts) spend the same budget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_local = threading.local()


class Budget:
    """A deadline on ``time.monotonic()`` (None: no limit), and whether it was met past."""

    def __init__(self, seconds: float | None) -> None:
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.ran_out = False

    def spent(self) -> bool:
        """True once the deadline has passed (and remembered as ``ran_out``)."""
        if not self.ran_out and self.deadline is not None and time.monotonic() >= self.deadline:
            self.ran_out = True
        return self.ran_out


@contextmanager
def spending(seconds: float | None) -> Iterator[Budget]:
    """The budget solves in this thread spend inside the block: a new one of ``seconds``, or,
    inside another block already, that one's (an inner solve spends its caller's budget)."""
    outer = getattr(_local, "budget", None)
    if outer is not None:
        yield outer
        return
    _local.budget = Budget(seconds)
    try:
        yield _local.budget
    finally:
        _local.budget = None


def spent() -> bool:
    """Whether the budget of the solve running in this thread is spent (False outside one)."""
    budget = getattr(_local, "budget", None)
    return budget is not None and budget.spent()
