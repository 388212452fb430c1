"""Easing a solved shot's jumps over a few frames, for an animator who prefers smooth motion
to reaching the target at every frame.

``solve_sequence`` keeps the goals and leaves a jump where no pose that follows the motion
meets them on both sides (its docstring, step 6). Easing trades the other way: around each
visible jump the pose leaves the old branch for the new one a little more each frame (the
spread of ``pose_curves.spread_difference``, the jump's turn split evenly over the window's
steps), and those frames are not solved again, since any solve would fall back onto one
branch: the tip misses its goal on the way, by as much as the postures between the two
branches miss it. The result measures that honestly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from .ccd import goal_errors, normalised
from .chain import Chain
from .goals import Goals
from .pose_curves import spread_difference
from .pose_jumps import visible_jumps
from .settings import SolveResult, SolveSettings

Rows = NDArray[np.intp]


def _windows(jumps: Rows, count: int, frames: int) -> list[tuple[int, int]]:
    """Per jump j (the pose jumps from j − 1 to j), the positions [start, end) it is eased
    over: ``frames`` of them, half before the jump, cut at the shot's ends and half way to the
    next jump, so windows never overlap."""
    halfway = (jumps[1:] + jumps[:-1] + 1) // 2  # the later jump's window starts here at the earliest
    lowest = np.concatenate(([0], halfway))
    highest = np.concatenate((halfway, [count]))
    starts = np.maximum(jumps - frames // 2, lowest)
    ends = np.minimum(starts + frames, highest)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def ease_jumps(
    chain: Chain, goals: Goals, solved: SolveResult, frame_numbers: NDArray, frames: int, settings: SolveSettings
) -> SolveResult:
    """``solved`` (a shot, goals in frame order, at ``frame_numbers``) with every visible jump
    (``visible_jumps``) eased over ``frames`` poses around it; fewer than 2: no easing. The
    eased poses stay inside the joint limits and their errors are measured again."""
    jumps, _ = visible_jumps(solved.rotations, frame_numbers)
    if frames < 2 or jumps.size == 0:
        return solved
    rotations = solved.rotations.copy()
    eased = []
    for (start, end), jump in zip(_windows(jumps, len(rotations), frames), jumps, strict=True):
        if start < jump < end:  # the jump itself is a step inside the window
            eased.append(spread_difference(rotations, start - 1, jump, end, solved.rotations[jump - 1]))
    if not eased:
        return solved
    changed = np.concatenate(eased)
    rotations[changed] = normalised(chain.clamp_to_limits(rotations[changed]))
    position_error, orientation_error, effector = (
        array.copy() for array in (solved.position_error, solved.orientation_error, solved.effector)
    )
    position_error[changed], orientation_error[changed], effector[changed] = goal_errors(
        chain, goals.take(changed), rotations[changed]
    )
    return replace(
        solved,
        rotations=rotations,
        effector=effector,
        position_error=position_error,
        orientation_error=orientation_error,
        converged=settings.reached(position_error, orientation_error, solved.tolerance),
    )
