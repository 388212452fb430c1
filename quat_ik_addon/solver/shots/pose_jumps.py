"""Where a solved shot's pose jumps: a step that turns a joint more than twice as fast as the
steps beside it (per frame), and of those the ones a viewer sees as a pop.

``solve_sequence`` finds the jumps it can still repair with ``jump_positions``; a bake names
the ones it keeps (``visible_jumps``) and can ease them (``jump_easing``).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..solve import pose_distance

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

# Radians: a jump this small is invisible and counts as smooth however still the neighbours
# are (a redundant chain's answers differ by this much without changing branch).
JUMP_SLACK = 1e-3
# A jump a shot keeps is worth telling the animator about from this turn of one joint on: a
# pop in playback (smaller ones read as fast motion).
VISIBLE_JUMP = np.radians(10.0)


def jump_positions(rotations: Array, frame_numbers: Rows) -> Rows:
    """Positions j (≥ 1) where the pose jumps from j - 1 to j: it turns more than twice as fast
    (per frame) as on either step beside it."""
    return _faster_than_beside(pose_distance(rotations[1:], rotations[:-1]) / np.diff(frame_numbers))


def _faster_than_beside(speed: Array) -> Rows:
    """``jump_positions`` from each step's turn per frame."""
    beside = np.maximum(np.concatenate(([0.0], speed[:-1])), np.concatenate((speed[1:], [0.0])))
    return np.nonzero(speed > 2.0 * beside + JUMP_SLACK)[0] + 1


def visible_jumps(rotations: Array, frame_numbers: Rows) -> tuple[Rows, Array]:
    """The jumps a solved shot kept (``jump_positions``) of at least ``VISIBLE_JUMP``: their
    positions j (the pose jumps from j − 1 to j) and the largest joint turn of each (radians).
    Left where no pose that follows the motion meets the goals on both sides (``sequence``'s
    step 6), or where a missed goal comes clearly closer on another branch."""
    if len(rotations) < 3:  # a step with no step beside it is no faster than anything
        return np.zeros(0, dtype=np.intp), np.zeros(0)
    # Turns as 2·acos|p·q| (the smallest |p·q| is the largest turn): a fifth of
    # ``pose_distance``'s time over a whole shot, and its lost digits near zero (~1e-8 rad)
    # are far below ``JUMP_SLACK``.
    dots = np.abs(np.einsum("...nc,...nc->...n", rotations[1:], rotations[:-1]))
    turns = 2.0 * np.arccos(np.minimum(np.min(dots, axis=-1), 1.0))
    jumps = _faster_than_beside(turns / np.diff(frame_numbers))
    visible = turns[jumps - 1] >= VISIBLE_JUMP
    return jumps[visible], turns[jumps[visible] - 1]
