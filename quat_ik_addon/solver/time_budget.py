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
from contextlib import AbstractContextManager

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


class _Spending:
    """``spending``'s block, a plain class: a generator-made context manager costs every solve
    about a microsecond more (a few percent of a warm single solve on the kernel)."""

    __slots__ = ("opened", "seconds")

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.opened = False

    def __enter__(self) -> Budget:
        outer = getattr(_local, "budget", None)
        if outer is not None:
            return outer
        budget = _local.budget = Budget(self.seconds)
        self.opened = True
        return budget

    def __exit__(self, *_exception: object) -> None:
        if self.opened:
            _local.budget = None


def spending(seconds: float | None) -> AbstractContextManager[Budget]:
    """The budget solves in this thread spend inside the block: a new one of ``seconds``, or,
    inside another block already, that one's (an inner solve spends its caller's budget)."""
    return _Spending(seconds)


def spent() -> bool:
    """Whether the budget of the solve running in this thread is spent (False outside one)."""
    budget = getattr(_local, "budget", None)
    return budget is not None and budget.spent()
