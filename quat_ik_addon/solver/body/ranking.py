"""Priority-lexicographic comparison of poses: a higher level decides before any lower one.

Each level is measured by its excess, Σ weight·max(0, error² − tolerance²) over its goals
(positions in lengths, orientations times the body's size): zero exactly when every goal of
the level is met, so met levels tie whatever their leftover error.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .goals import Tasks

Array = NDArray[np.float64]

TIE = 1e-6  # relative: excesses this close are equal when picking the best of several poses


def level_excess(
    tasks: Tasks, position_error: Array, orientation_error: Array, tolerance: float, angle_tolerance: float, size: float
) -> Array:
    """(N, L) each level's excess over the tolerances (see the module docstring)."""
    over = tasks.position_weights * np.maximum(position_error**2 - tolerance**2, 0.0)
    over += tasks.orientation_weights * size**2 * np.maximum(orientation_error**2 - angle_tolerance**2, 0.0)
    excess = np.zeros((len(over), len(tasks.levels)))
    np.add.at(excess.T, tasks.level_of, over.T)
    return excess


def step_accepted(trial: Array, current: Array, best: Array, creep: float | Array, floor: float) -> NDArray[np.bool_]:
    """(N,) whether a step from ``current`` to ``trial`` (N, L excesses) is taken: at the first
    level where it differs, it must improve; a level that does not decide may rise to at most
    ``best``·(1 + creep) (``best``: its least excess along the way, so rises never add up).
    A step along a lower level's task moves a higher one only at second order; ``creep`` lets
    it through where the higher level is out of reach, and the next steps' corrections of the
    higher level pull it back (the Maratos effect and its cure, Nocedal & Wright 2006, §15.5)."""
    undecided = np.ones(len(trial), dtype=bool)
    taken = np.zeros(len(trial), dtype=bool)
    creep = np.broadcast_to(creep, trial.shape)
    for k in range(trial.shape[1]):
        improved = (current[:, k] > floor) & (trial[:, k] < current[:, k] - floor)
        worse = trial[:, k] > best[:, k] * (1.0 + creep[:, k]) + floor
        taken |= undecided & improved
        undecided &= ~improved & ~worse
    return taken


def better_than(a: Array, b: Array, floor: float, tie: float = TIE) -> NDArray[np.bool_]:
    """(N,) whether excesses ``a`` rank before ``b`` (N, L): lexicographic, ties within ``tie``
    (relative)."""
    undecided = np.ones(len(a), dtype=bool)
    better = np.zeros(len(a), dtype=bool)
    for k in range(a.shape[1]):
        slack = tie * np.minimum(a[:, k], b[:, k]) + floor
        lower, higher = a[:, k] < b[:, k] - slack, a[:, k] > b[:, k] + slack
        better |= undecided & lower
        undecided &= ~lower & ~higher
    return better
