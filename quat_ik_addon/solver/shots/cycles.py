"""Shots that loop, such as a walk cycle: the last frame leads into the first.

Following the motion (``solve_sequence``), a redundant chain's posture drifts: a 10-bone chain
that follows a closed path once comes back turned ~15° from where it started from rest, and
~6° per lap after that, so a baked cycle would pop where it wraps. ``solve_cycle``:

1. follows the loop twice, the second lap starting from where the first ended (the posture
   the loop settles into rather than the start pose's);
2. solves the first frame warm from the second lap's last pose: where the motion arrives when
   it wraps;
3. spreads the difference between that arrival and the lap's first pose over the lap, each
   frame's joints turned by a share growing with its place in the loop
   (``pose_curves.spread_difference``), and solves every frame again warm from there.

Where step 3 would lose a goal the lap met (the difference is a change of solution branch, not
a drift), the lap stays as it was and the wrap is a jump (``wrap_turn`` measures it).

A cycle keyed with its first pose repeated at the end (the last frame's goal is the first's, as
Blender's Cycles modifier expects) is solved without that last frame, which then takes the
first frame's pose.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..chain import Chain
from ..goals import Goals
from ..measurements import finish_result
from ..settings import SolveResult, SolveSettings
from ..solve import pose_distance, solve_from
from .pose_curves import spread_difference
from .pose_jumps import JUMP_SLACK, VISIBLE_JUMP
from .sequence import solve_sequence

Array = NDArray[np.float64]

# Goals this close (times the chain's reach; radians for orientations and directions) are the
# same goal: the last frame repeats the first.
SAME_GOAL = 1e-6


def repeats_first(chain: Chain, goals: Goals) -> bool:
    """Whether the last frame's goal is the first frame's (a cycle keyed with its first pose
    repeated at the end)."""
    if goals.count < 3:
        return False
    first, last = goals.take(np.array([0])), goals.take(np.array([goals.count - 1]))
    same = np.linalg.norm(first.positions - last.positions) <= SAME_GOAL * chain.reach
    if goals.orientations is not None:
        same &= bool(quat.angle_between(first.orientations, last.orientations)[0] <= SAME_GOAL)
    if goals.directions is not None:
        same &= bool(quat.direction_angle(first.directions, last.directions)[0] <= SAME_GOAL)
    return bool(same)


def solve_cycle(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
) -> SolveResult:
    """Solve F frames of a loop (goals in frame order; the last frame leads into the first) so
    the pose follows the motion and loops too (module docstring). ``start_rotations`` ((n, 4))
    is where the first lap starts from (default: rest)."""
    settings = settings or SolveSettings()
    goals = Goals.of(targets)
    if repeats_first(chain, goals):
        loop = _solve_loop(chain, goals.take(np.arange(goals.count - 1)), start_rotations, settings)
        return _with_first_repeated(chain, goals, loop, settings)
    return _solve_loop(chain, goals, start_rotations, settings)


def wrap_turn(rotations: Array, repeats_first_frame: bool) -> float:
    """The largest joint turn (radians) where a solved loop wraps: from its last pose into its
    first (from the one before last when the last repeats the first)."""
    last = len(rotations) - (2 if repeats_first_frame else 1)
    return float(pose_distance(rotations[last], rotations[0])) if last > 0 else 0.0


def _solve_loop(chain: Chain, goals: Goals, start_rotations, settings: SolveSettings) -> SolveResult:
    first_lap = solve_sequence(chain, goals, start_rotations=start_rotations, settings=settings)
    count = goals.count
    if count < 3:
        return first_lap
    lap = solve_sequence(chain, goals, start_rotations=first_lap.rotations[-1], settings=settings)
    warm = replace(settings, restarts=0)  # stay on the lap's branch: a restart would pick its own
    arrival = solve_from(chain, goals.take(np.array([0])), lap.rotations[-1:], settings=warm).rotations[0]
    poses = np.concatenate((lap.rotations, lap.rotations[:1]))  # the first frame again, after the last
    spread_difference(poses, 0, count, count + 1, arrival)
    inner = np.arange(1, count)
    turned = chain.clamp_to_limits(poses[inner])
    again = solve_from(chain, goals.take(inner), turned, reference=turned, settings=warm)
    if np.any(lap.converged[inner] & ~again.converged):
        return lap  # a branch change, not a drift: the wrap stays a jump
    rotations = lap.rotations.copy()
    rotations[inner] = again.rotations
    iterations = lap.iterations.copy()
    iterations[inner] += again.iterations
    return finish_result(chain, goals, rotations, iterations, settings, lap.restarts)


def _with_first_repeated(chain: Chain, goals: Goals, loop: SolveResult, settings: SolveSettings) -> SolveResult:
    """The loop's result with its first frame's pose again as the last frame's."""
    rotations = np.concatenate((loop.rotations, loop.rotations[:1]))
    iterations = np.append(loop.iterations, 0)
    return finish_result(chain, goals, rotations, iterations, settings, np.append(loop.restarts, 0))


def visible_wrap_jump(rotations: Array, repeats_first_frame: bool) -> float:
    """``wrap_turn`` where a viewer sees a pop (at least ``VISIBLE_JUMP``, and more than twice
    the steps beside it, as ``pose_jumps`` counts jumps), else 0."""
    turn = wrap_turn(rotations, repeats_first_frame)
    last = len(rotations) - (2 if repeats_first_frame else 1)
    if last < 2 or turn < VISIBLE_JUMP:
        return 0.0
    beside = max(
        float(pose_distance(rotations[1], rotations[0])), float(pose_distance(rotations[last], rotations[last - 1]))
    )
    return turn if turn > 2.0 * beside + JUMP_SLACK else 0.0
