"""Which frames of a shot are followed one after another, and where segments start.

Pure bookkeeping on the goals, no solving (``sequence`` does that):

* Followed frames: the first and the last frame, and from each followed frame the furthest
  one (at most ``MAX_STRIDE`` on) whose goal has moved at most ``FOLLOW_STEP`` of the chain's
  reach (``FOLLOW_TURN`` in orientation or direction) since. A warm solve over such a step
  still lands on the nearby solution in a few iterations.
* Segment starts (a shot of at most ``ONE_PIECE_STEPS`` followed frames is one segment):
  evenly by goal travel along the followed frames, at least
  ``SEGMENT_TRAVEL`` reaches apart, and no more than balance the two sequential costs: the
  starts are solved one after another (each about ``START_COST`` follow steps' work), the
  segments' steps side by side, so K starts for M followed frames cost about
  K·START_COST + M/K steps, least at K = √(M / START_COST). A start needs at least half a
  segment's travel after it (a short last segment would take up its join too fast).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import quaternion as quat
from .goals import Goals

FOLLOW_STEP = 0.08  # goal motion between followed frames, as a fraction of the chain's reach
FOLLOW_TURN = np.radians(10.0)  # orientation or direction turn between followed frames
MAX_STRIDE = 8  # frames from one followed frame to the next, at most
SEGMENT_TRAVEL = 1.0  # goal travel from one segment start to the next, in chain reaches, at least
ONE_PIECE_STEPS = 80  # a shot with at most this many followed frames is one segment
START_COST = 1.0  # a segment start's solve, in warm follow steps (one single solve vs one batched step)


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


def segment_starts(goals: Goals, followed: NDArray[np.intp], reach: float) -> NDArray[np.intp]:
    """Indices into ``followed`` where segments start: 0 first.

    A short shot is followed in one piece: segments would save little time there and each
    join is one more place where a redundant chain's history can differ.
    """
    if len(followed) <= ONE_PIECE_STEPS:
        return np.zeros(1, dtype=np.intp)
    steps = np.linalg.norm(np.diff(goals.positions[followed], axis=0), axis=1)
    travel = np.concatenate(([0.0], np.cumsum(steps)))
    balanced = max(1.0, np.sqrt(len(followed) / START_COST))
    segment = max(SEGMENT_TRAVEL * reach, travel[-1] / balanced)
    starts = [0]
    for index in range(1, len(followed)):
        if travel[index] - travel[starts[-1]] >= segment and travel[-1] - travel[index] >= 0.5 * segment:
            starts.append(index)
    return np.array(starts, dtype=np.intp)
