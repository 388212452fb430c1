"""Easing a solved shot's jumps over a few frames, for an animator who prefers smooth motion
to reaching the target at every frame.

``solve_sequence`` keeps the goals and leaves a jump where no pose that follows the motion
meets them on both sides (its docstring, step 6). Easing trades the other way: around each
visible jump the pose leaves the old branch for the new one a little more each frame (the
spread of ``pose_curves.spread_difference``, the jump's turn split evenly over the window's
steps). Solving those frames again one by one would fall back onto one branch; instead the
window is relaxed as a whole (``_relax``): every pose steps towards its own goal and the poses
are spaced evenly along the way again, so the pose still crosses over evenly but through
postures closer to the goals (on most random 3-bone shots whose goals stay in reach,
through postures that meet them all). Where the relaxed window would miss more at its worst than the
plain spread, or turn much faster, the spread stays. The tip may miss on the way; the result measures it honestly.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from ..chain import Chain
from ..goals import Goals
from ..measurements import combined_error, goal_errors, normalised
from ..settings import SolveResult, SolveSettings
from ..solve import pose_distance, solve_from
from .pose_curves import spread_difference
from .pose_jumps import VISIBLE_JUMP, visible_jumps

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

RELAX_STEPS = 100  # string steps for an eased window (all windows side by side, ~1 ms each)
RELAX_STEP = SolveSettings(method="dls", max_iterations=1, restarts=0, tolerance=0.0)
TURN_SLACK = 1.25  # a relaxed window that pops may turn this much faster a step than the plain spread


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


def _relax(chain: Chain, goals: Goals, rotations: Array, windows: list[Rows]) -> None:
    """Bend each eased window's poses towards their goals while the window still leaves one
    branch for the other evenly, in place: the string method (E, Ren & Vanden-Eijnden 2002),
    the window's poses a string from the pose before it to the pose after it, each step a DLS
    step of every pose towards its own goal (all windows in one batch), then the poses spaced
    evenly along the string again (by the joints' rotation vectors from the pose before), so
    none falls back onto either branch."""
    if not windows:
        return
    inner = np.concatenate(windows)
    inner_goals = goals.take(inner)
    spread = rotations[inner].copy()
    for _ in range(RELAX_STEPS):
        rotations[inner] = solve_from(chain, inner_goals, rotations[inner], settings=RELAX_STEP).rotations
        for window in windows:
            nodes = np.arange(window[0] - 1, window[-1] + 2)
            before = quat.conjugate(rotations[nodes[0]])
            chart = quat.rotation_vector(quat.multiply(before, rotations[nodes])).reshape(len(nodes), -1)
            along = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(chart, axis=0), axis=1))))
            if along[-1] <= 0.0:
                continue
            even = np.linspace(0.0, along[-1], len(nodes))[1:-1]
            spaced = np.stack([np.interp(even, along, column) for column in chart.T], axis=1)
            turned = quat.multiply(rotations[nodes[0]], quat.from_rotation_vector(spaced.reshape(len(window), -1, 3)))
            rotations[window] = chain.clamp_to_limits(turned)
    offsets = np.cumsum([len(window) for window in windows])[:-1]
    for window, plain in zip(windows, np.split(spread, offsets), strict=True):
        if not _relaxed_is_better(chain, goals, rotations, window, plain):
            rotations[window] = plain


def _relaxed_is_better(chain: Chain, goals: Goals, rotations: Array, window: Rows, plain: Array) -> bool:
    """Does the relaxed window (in ``rotations``) miss less at its worst than the ``plain``
    spread, without a step that pops (``VISIBLE_JUMP``) and turns faster than ``TURN_SLACK``
    times the spread's largest? A string may bend through postures closer to the goals on
    average and farther at one frame, or take a longer way round."""
    window_goals = goals.take(window)
    beside = rotations[[window[0] - 1, window[-1] + 1]]

    def worst(poses: Array) -> tuple[float, float]:
        position_error, orientation_error, _ = goal_errors(chain, window_goals, poses)
        path = np.concatenate((beside[:1], poses, beside[1:]))
        turn = pose_distance(path[1:], path[:-1])
        return float(np.max(combined_error(chain, position_error, orientation_error))), float(np.max(turn))

    (plain_miss, plain_turn), (relaxed_miss, relaxed_turn) = worst(plain), worst(rotations[window])
    smooth = relaxed_turn < VISIBLE_JUMP or relaxed_turn <= TURN_SLACK * plain_turn
    return relaxed_miss < plain_miss and smooth


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
    rotations[changed] = chain.clamp_to_limits(rotations[changed])
    _relax(chain, goals, rotations, [window for window in eased if window[0] > 0 and window[-1] < len(rotations) - 1])
    rotations[changed] = normalised(rotations[changed])
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
        converged=settings.reached(position_error, orientation_error, solved.tolerance, chain.reach),
    )
