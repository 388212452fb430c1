"""Which frames of a shot are followed one after another, and where segments start.

Pure bookkeeping on the goals, no solving (``sequence`` does that):

* Followed frames: the first and the last frame, and from each followed frame the furthest
  one (at most ``MAX_STRIDE`` on) whose goal has moved at most ``FOLLOW_STEP`` of the chain's
  reach (``FOLLOW_TURN`` in orientation or direction) since. A warm solve over such a step
  still lands on the nearby solution in a few iterations.
* Segments: a start (its pivot) solved one after another with the other starts, and
  followed from there both ways, backwards to the frame where the segment before ends and
  forwards to where the next begins; the first segment starts at the first frame and is
  followed forwards only. Pivots and ends are spaced evenly by goal travel along the
  followed frames (pivots at least ``SEGMENT_TRAVEL`` reaches apart), and no more of them
  than balance the two sequential costs: the starts are solved one after another (each
  about ``START_COST`` follow steps' work), every segment's halves side by side, so K
  segments over M followed frames cost about (K − 1)·START_COST + M / (2K − 1) steps,
  least at 2K − 1 = √(2M / START_COST). A shot of at most ``ONE_PIECE_STEPS`` followed
  frames is one segment.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from ..goals import Goals

Rows = NDArray[np.intp]

FOLLOW_STEP = 0.08  # goal motion between followed frames, as a fraction of the chain's reach
FOLLOW_TURN = np.radians(10.0)  # orientation or direction turn between followed frames
MAX_STRIDE = 8  # frames from one followed frame to the next, at most
SEGMENT_TRAVEL = 0.5  # goal travel from one pivot to the next, in chain reaches, at least
ONE_PIECE_STEPS = 12  # a shot with at most this many followed frames is one segment
# A start's solve, in follow steps: one row from a start a segment away (three coarse DLS
# iterations) against one batched step of all segments (one iteration), measured.
START_COST = 1.0
# Followed frames from one pivot to the next, at most: the posture a redundant chain follows
# into drifts from what a start solved a segment away finds, and over longer segments the
# joins grow too large to spread (up to 38° at 56 steps on a 10-bone chain, 11° at 40).
MAX_PIVOT_STEPS = 40


def _strides(goals: Goals, reach: float) -> NDArray[np.intp]:
    """Per frame i, how many frames on the next followed frame is: up to the frame before the
    first one (at most ``MAX_STRIDE`` on) whose goal has moved more than a follow step from
    frame i's; one frame at least."""
    count = goals.count
    ahead = np.arange(count)[:, None] + np.arange(1, MAX_STRIDE + 1)  # (F, MAX_STRIDE)
    inside = ahead < count
    ahead = np.minimum(ahead, count - 1)
    here = np.arange(count)[:, None]
    close = np.linalg.norm(goals.positions[ahead] - goals.positions[here], axis=-1) <= FOLLOW_STEP * reach
    if goals.orientations is not None:
        close &= quat.angle_between(goals.orientations[ahead], goals.orientations[here]) <= FOLLOW_TURN
    if goals.directions is not None:
        close &= quat.direction_angle(goals.directions[ahead], goals.directions[here]) <= FOLLOW_TURN
    close &= inside
    # The first frame too far (or past the end) ends the stride: count the close ones before it.
    return np.maximum(np.argmin(np.concatenate((close, np.zeros((count, 1), dtype=bool)), axis=1), axis=1), 1)


def followed_frames(goals: Goals, reach: float) -> NDArray[np.intp]:
    """The frames solved one after another, increasing, from 0 to the last."""
    last = goals.count - 1
    strides = _strides(goals, reach).tolist()
    followed = [0]
    while followed[-1] < last:
        followed.append(min(followed[-1] + strides[followed[-1]], last))
    return np.array(followed, dtype=np.intp)


class Segments(NamedTuple):
    """Indices into the followed frames, one entry per segment: it is followed from its
    ``pivot`` back to ``low`` and on to ``high``. Segment k's high is segment k + 1's low: the
    frame where the two meet (the first segment's low is its pivot, 0; the last's high is the
    last followed frame)."""

    pivots: Rows
    lows: Rows
    highs: Rows


def segments(goals: Goals, followed: Rows, reach: float) -> Segments:
    """Cut the followed frames into segments (module docstring)."""
    last = len(followed) - 1
    one = Segments(np.zeros(1, dtype=np.intp), np.zeros(1, dtype=np.intp), np.full(1, last, dtype=np.intp))
    if last < ONE_PIECE_STEPS:
        return one
    steps = np.linalg.norm(np.diff(goals.positions[followed], axis=0), axis=1)
    travel = np.concatenate(([0.0], np.cumsum(steps)))
    balanced = round(float(np.sqrt(2.0 * len(followed) / START_COST) + 1.0) / 2.0)
    balanced = max(balanced, int(np.ceil((len(followed) / (0.5 * MAX_PIVOT_STEPS) + 1.0) / 2.0)))
    by_travel = int((travel[-1] / (SEGMENT_TRAVEL * reach) + 1.0) / 2.0)
    for count in range(min(balanced, by_travel), 1, -1):
        # Marks at every half segment of travel: ends at odd marks, pivots at even ones.
        marks = np.searchsorted(travel, travel[-1] * np.arange(1, 2 * count - 1) / (2 * count - 1))
        if np.all(np.diff(marks) > 0) and 0 < marks[0] and marks[-1] < last:
            pivots = np.concatenate(([0], marks[1::2]))
            ends = marks[0::2]
            return Segments(pivots, np.concatenate(([0], ends)), np.append(ends, last))
    return one
