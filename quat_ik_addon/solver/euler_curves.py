"""Euler angle curves for a whole baked sequence at once, continuous from frame to frame.

Every rotation has two Euler triples in a given order: (a, b, c) with the middle angle within
±90° and (a + π, π − b, c + π) (a half turn about the first and last axes is one about the
middle axis). Keys must not jump between them, nor by whole turns, or interpolation takes the
long way round. Blender's ``Quaternion.to_euler(order, previous)`` picks, frame by frame, the
triple nearest the previous one after unwrapping each angle by whole turns; this does the
same for all frames in a few numpy calls: the triples in one batch, the choice of triple per
frame by a two-state pass over booleans, the whole turns by ``numpy.unwrap``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from . import quaternion as quat
from .euler_angles import both_triples


def _distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum over the three angles of each one's difference, unwrapped by whole turns."""
    return np.sum(np.abs(quat.wrap_angle(a - b)), axis=-1)


def _two_state_pass(start: bool, if_false: np.ndarray, if_true: np.ndarray) -> np.ndarray:
    """States s_0 = ``start``, s_t = ``if_true[t-1]`` if s_{t-1} else ``if_false[t-1]``, without a
    Python loop: a step where both agree sets the state, one where they differ keeps it
    (if_true) or flips it (if_false), so each state is the last setting's value flipped by
    the number of flips since."""
    sets = np.concatenate(([True], if_false == if_true))
    value = np.concatenate(([start], if_false))
    flips = np.concatenate(([0], np.cumsum(if_false & ~if_true)))
    last_set = np.maximum.accumulate(np.where(sets, np.arange(len(sets)), 0))
    return value[last_set] ^ ((flips - flips[last_set]) % 2 == 1)


def euler_curves(quaternions: ArrayLike, order: str, previous: ArrayLike | None = None) -> np.ndarray:
    """(F, 3) Euler angles (by axis X, Y, Z) for (F, 4) quaternions in Blender's ``order``,
    continuous along F and from ``previous`` (the value before the first frame; None: the
    first frame takes the triple with the smaller angles, as ``to_euler`` without one)."""
    first, other = both_triples(np.asarray(quaternions, dtype=float).reshape(-1, 4), order)
    count = len(first)
    if count == 0:
        return np.zeros((0, 3))
    if previous is None:
        start_other = np.sum(np.abs(other[0])) < np.sum(np.abs(first[0]))
    else:
        previous = np.asarray(previous, dtype=float)
        start_other = _distance(other[0], previous) < _distance(first[0], previous)
    # Which triple each frame takes, given the one the frame before took.
    other_after_first = _distance(other[1:], first[:-1]) < _distance(first[1:], first[:-1])
    other_after_other = _distance(other[1:], other[:-1]) < _distance(first[1:], other[:-1])
    takes_other = _two_state_pass(bool(start_other), other_after_first, other_after_other)
    chosen = np.where(takes_other[:, None], other, first)
    if previous is None:
        return np.unwrap(chosen, axis=0)
    return np.unwrap(np.concatenate((previous[None], chosen)), axis=0)[1:]
