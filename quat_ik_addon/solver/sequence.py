"""Solving the frames of a shot so the result follows the motion.

Each frame starts from the previous frame's answer (warm start), and its restarts prefer the
solution nearest that answer, so the chain stays on one solution branch instead of popping
between branches as a solver that starts from rest every frame does.

Frames are cut into blocks solved side by side: every block's first frame is solved first,
then all blocks step forward one frame at a time together, so one batched call serves many
frames. A seam between blocks is accepted when its jump is no larger than twice the motion
on either side of it; a block whose seam jumps is solved again, warm from the end of the
block before it, until every seam is smooth (in the worst case this is frame by frame).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .ccd import finish_result, initial_poses
from .chain import Chain
from .goals import Goals
from .settings import SolveResult, SolveSettings
from .solve import pose_distance, solve

Array = NDArray[np.float64]

SEAM_SLACK = 1e-6  # radians: jumps this small count as smooth however still the neighbours are


def _solve_blocks(
    chain: Chain,
    goals: Goals,
    blocks: list[int],
    block_length: int,
    first_poses: Array,
    rotations: Array,
    iterations: Array,
    restarts: Array,
    settings: SolveSettings,
    preferred: Array | None,
) -> None:
    """Solve the listed blocks in lock step, each warm from the given pose for its first frame."""
    starts = np.array(blocks) * block_length
    previous = first_poses
    for offset in range(block_length):
        frames = starts + offset
        inside = frames < goals.count
        if not np.any(inside):
            break
        frames = frames[inside]
        previous = previous[inside]
        result = solve(
            chain,
            goals.take(frames),
            start_rotations=previous,
            reference_rotations=previous,
            preferred_rotations=preferred,
            settings=settings,
        )
        rotations[frames] = result.rotations
        iterations[frames] += result.iterations
        restarts[frames] += result.restarts
        starts = starts[inside]
        previous = result.rotations


def solve_sequence(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
    block_length: int | None = None,
    preferred_rotations: ArrayLike | None = None,
) -> SolveResult:
    """Solve F frames (goals in frame order) with continuity; the first frame starts from
    ``start_rotations`` ((n, 4), e.g. the pose before the shot) or rest.

    ``settings.rest_pull`` draws redundant chains toward ``preferred_rotations`` ((n, 4), rest
    by default) in the null space of the goals, which keeps them from drifting into dead ends.
    """
    settings = settings or SolveSettings()
    goals = Goals.of(targets)
    frames = goals.count
    block_length = block_length or max(4, int(np.ceil(np.sqrt(frames))))
    block_count = int(np.ceil(frames / block_length))
    first = initial_poses(chain, start_rotations, 1)[0]
    preferred = initial_poses(chain, preferred_rotations, 1)[0] if settings.rest_pull > 0.0 else None
    rotations = np.zeros((frames, chain.n_bones, 4))
    iterations = np.zeros(frames, dtype=np.int64)
    restarts = np.zeros(frames, dtype=np.int64)

    # Every block's first frame from the shot's start pose: a common, unbiased guess.
    _solve_blocks(
        chain,
        goals,
        list(range(block_count)),
        block_length,
        np.repeat(first[None], block_count, axis=0),
        rotations,
        iterations,
        restarts,
        settings,
        preferred,
    )
    checked_from = 1
    while checked_from < block_count:
        rough = _rough_seams(rotations, block_length, block_count, checked_from)
        if not rough:
            break
        # Redo the first rough block from its predecessor's end, and every later rough block
        # alongside it (their predecessors may still change, so seams after are rechecked).
        _solve_blocks(
            chain,
            goals,
            rough,
            block_length,
            rotations[np.array(rough) * block_length - 1],
            rotations,
            iterations,
            restarts,
            replace(settings, seed=settings.seed + rough[0]),
            preferred,
        )
        checked_from = rough[0] + 1
    _repair_jumps_backwards(chain, goals, rotations, iterations, settings, preferred)
    return finish_result(chain, goals, rotations, iterations, settings, restarts)


def _is_jump(rotations: Array, frame: int) -> bool:
    """Does the pose jump into ``frame`` by more than twice the motion on either side?"""
    jump = pose_distance(rotations[frame - 1], rotations[frame])
    before = pose_distance(rotations[frame - 2], rotations[frame - 1]) if frame >= 2 else 0.0
    after = pose_distance(rotations[frame], rotations[frame + 1]) if frame + 1 < len(rotations) else 0.0
    return bool(jump > 2.0 * max(before, after) + SEAM_SLACK)


def _repair_jumps_backwards(
    chain: Chain, goals: Goals, rotations: Array, iterations: Array, settings: SolveSettings, preferred: Array | None
) -> None:
    """Where the branch the frames were following ends (a joint limit cuts it off) the pose
    must jump to another branch. Carry the new branch backwards, frame by frame, until it
    meets the old one or reaches the first frame: the jump disappears whenever the new branch
    reaches back that far, which it does when the motion itself was continuous.
    """
    frame = 1
    while frame < goals.count:
        if not _is_jump(rotations, frame):
            frame += 1
            continue
        carried = {}
        previous = rotations[frame]
        motion = pose_distance(rotations[frame], rotations[min(frame + 1, goals.count - 1)])
        for earlier in range(frame - 1, -1, -1):
            result = solve(
                chain,
                goals.take(np.array([earlier])),
                start_rotations=previous,
                reference_rotations=previous,
                preferred_rotations=preferred,
                settings=settings,
            )
            iterations[earlier] += result.iterations[0]
            if not result.converged[0]:
                carried = {}  # the new branch ends going back too: keep the jump
                break
            carried[earlier] = result.rotations[0]
            met_old = pose_distance(result.rotations[0], rotations[earlier]) <= 2.0 * motion + SEAM_SLACK
            previous = result.rotations[0]
            if met_old:
                break
        for earlier, pose in carried.items():
            rotations[earlier] = pose
        frame += 1


def _rough_seams(rotations: Array, block_length: int, block_count: int, first_block: int) -> list[int]:
    """Blocks from ``first_block`` on whose first frame jumps more than twice the motion beside it."""
    rough = []
    frames = len(rotations)
    for block in range(first_block, block_count):
        seam = block * block_length
        jump = pose_distance(rotations[seam - 1], rotations[seam])
        before = pose_distance(rotations[seam - 2], rotations[seam - 1]) if seam >= 2 else 0.0
        after = pose_distance(rotations[seam], rotations[seam + 1]) if seam + 1 < frames else 0.0
        if jump > 2.0 * max(before, after) + SEAM_SLACK:
            rough.append(block)
    return rough
