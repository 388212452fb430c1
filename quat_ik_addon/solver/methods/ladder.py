"""The solve methods as one short ladder: CCD, DLS, and "first one, then finish with the other".

A method turns (N, n, 4) poses toward their goals and returns the best poses it found, the
iterations each row took and the poses' goal errors (``MethodRun``). ``method_for`` maps a
``SolveSettings.method`` name onto the ladder once; ``run_method`` runs it on the native kernel
where that loaded (the same answers to rounding) and on numpy otherwise.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import NamedTuple, Protocol

import numpy as np
from numpy.typing import NDArray

from ..chain import Chain
from ..goals import Goals
from ..identity_memo import IdentityMemo
from ..measurements import Measured, goal_errors
from ..native import kernel_calls
from ..settings import SolveSettings
from .ccd import run_ccd
from .dls import run_dls

Array = NDArray[np.float64]
FINISH_STALL_RATIO = 1e-2  # CCD finishing what DLS left: a sweep gaining less is slow ...
FINISH_STALL_SWEEPS = 3  # ... and this many slow sweeps in a row end it
FINISH_SWEEPS = 8  # ... and when restarts follow, at most this many sweeps in all


class MethodRun(NamedTuple):
    """A method's answer: best poses, iterations per row, ``goal_errors`` of those poses, and the
    rows whose goals are unmet (None where the method does not track them)."""

    rotations: Array
    iterations: NDArray[np.int64]
    measured: Measured
    unmet: NDArray[np.intp] | None = None


class Method(Protocol):
    """One rung of the ladder: improves (N, n, 4) poses, never leaves a limit."""

    def run(
        self, chain: Chain, goals: Goals, rotations: Array, settings: SolveSettings, preferred: Array | None
    ) -> MethodRun: ...


_recent_finishing: IdentityMemo[SolveSettings] = IdentityMemo()
# The last (settings, finishing) pair: Live and single solves pass the same settings object
# call after call. One tuple, read and replaced whole, so threads never see half an update.
_last_finishing: tuple[SolveSettings | None, SolveSettings | None] = (None, None)


def finishing(settings: SolveSettings) -> SolveSettings:
    """The settings CCD finishes DLS's misses with (``_finishing``), remembered per settings object."""
    global _last_finishing
    last = _last_finishing
    if last[0] is settings:
        return last[1]
    finish = _recent_finishing.get((settings,), lambda: _finishing(settings))
    _last_finishing = (settings, finish)
    return finish


@functools.lru_cache(maxsize=64)  # settings are frozen and hashable; a replace costs ~10 µs a solve
def _finishing(settings: SolveSettings) -> SolveSettings:
    """The settings CCD finishes DLS's misses with: it stops sooner. A goal it can finish it gains
    on fast, while on a goal out of reach it creeps towards the closest miss by fractions of a
    percent a sweep for all the iterations it has (most of a half-unreachable shot's time on the
    3-bone benchmark chain; stopping after ``FINISH_STALL_SWEEPS`` sweeps that gain under
    ``FINISH_STALL_RATIO`` made that shot 25% faster and met the same goals).

    When restarts follow, it also gets ``FINISH_SWEEPS`` at most: a goal it finishes it finishes
    within a few, while on one it cannot it may gain a few percent a sweep, past the stall test,
    for its whole budget, where restarts would do better. Over 720 cold solves of the sample rigs'
    chains, finishing met 3 goals (2 within 8 sweeps; restarts met the third) and 48 ran 32-64
    sweeps for nothing, ~1.4 ms each on a 5-bone arm: capped, the same goals were met in 14% less
    time. Without restarts (a shot's closest misses) the finishing is all there is, and keeps its
    budget.
    """
    return replace(
        settings,
        max_iterations=min(settings.max_iterations, FINISH_SWEEPS) if settings.restarts else settings.max_iterations,
        stall_ratio=max(settings.stall_ratio, FINISH_STALL_RATIO),
        stall_iterations=min(settings.stall_iterations, FINISH_STALL_SWEEPS),
    )


@dataclass(frozen=True)
class CyclicCoordinateDescent:
    """Blow 2002's quaternion CCD (``ccd.run_ccd``). ``opening``: at most
    ``settings.ccd_iterations_before_dls`` sweeps (CCD's cheap global moves before DLS);
    ``finishing``: under ``finishing(settings)`` (after DLS)."""

    opening: bool = False
    finish: bool = False

    def run(self, chain, goals, rotations, settings, preferred) -> MethodRun:
        sweeps = settings.ccd_iterations_before_dls if self.opening else None
        rotations, iterations = run_ccd(
            chain, goals, rotations, finishing(settings) if self.finish else settings, preferred, sweeps
        )
        return MethodRun(rotations, iterations, goal_errors(chain, goals, rotations))


@dataclass(frozen=True)
class DampedLeastSquares:
    """Damped least squares on the Jacobian (``dls.run_dls``; Wampler 1986, Buss 2004);
    ``kind="transpose"``: the Jacobian-transpose step instead."""

    kind: str = "damped"

    def run(self, chain, goals, rotations, settings, preferred) -> MethodRun:
        answer = run_dls(chain, goals, rotations, settings, method=self.kind, preferred=preferred)
        return MethodRun(answer.rotations, answer.iterations, answer.measured, answer.unmet)


@dataclass(frozen=True)
class FirstThenFinish:
    """``first``, then ``finish`` from its answers: on every row, or (``unmet_only``) on the rows
    ``first`` left unmet, e.g. CCD finishing goals DLS left with a joint pressed on a limit."""

    first: Method
    finish: Method
    unmet_only: bool = False

    def run(self, chain, goals, rotations, settings, preferred) -> MethodRun:
        opened = self.first.run(chain, goals, rotations, settings, preferred)
        if not self.unmet_only:
            finished = self.finish.run(chain, goals, opened.rotations, settings, preferred)
            return finished._replace(iterations=opened.iterations + finished.iterations)
        rows = opened.unmet
        if rows is None:
            raise TypeError(f"{type(self.first).__name__} does not say which rows it left unmet")
        rotations, iterations, measured = opened.rotations, opened.iterations, opened.measured
        if rows.size:
            rows_goals = goals if rows.size == goals.count else goals.take(rows)
            rows_preferred = None if preferred is None else preferred[rows]
            finished = self.finish.run(chain, rows_goals, rotations[rows], settings, rows_preferred)
            rotations[rows] = finished.rotations
            iterations[rows] += finished.iterations
            for all_rows, of_rows in zip(measured, finished.measured, strict=True):
                all_rows[rows] = of_rows
        return MethodRun(rotations, iterations, measured)


LADDER: dict[str, Method] = {
    "ccd": CyclicCoordinateDescent(),
    "dls": DampedLeastSquares(),
    "jacobian_transpose": DampedLeastSquares("transpose"),
    "ccd_dls": FirstThenFinish(CyclicCoordinateDescent(opening=True), DampedLeastSquares()),
    "dls_ccd": FirstThenFinish(DampedLeastSquares(), CyclicCoordinateDescent(finish=True), unmet_only=True),
}


def method_for(settings: SolveSettings) -> Method:
    """The ladder's method for ``settings.method`` (checked by ``SolveSettings``)."""
    return LADDER[settings.method]


def run_method(
    chain: Chain, goals: Goals, rotations: Array, settings: SolveSettings, preferred: Array | None = None
) -> tuple[Array, NDArray[np.int64], Measured]:
    """Run the settings' method on (N, n, 4) poses: best poses, iterations and ``goal_errors`` of
    those poses (measured on the way where the method knows them). On the native kernel where it
    runs this chain; the numpy ladder otherwise, and wherever the kernel could not finish a row."""
    kernel = kernel_calls.kernel_for(chain, settings)
    if kernel is not None:
        answer = kernel_calls.run_method(kernel, chain, goals, rotations, settings, finishing(settings), preferred)
        if answer is not None:
            return answer
    rotations, iterations, measured, _ = method_for(settings).run(chain, goals, rotations, settings, preferred)
    return rotations, iterations, measured
