"""Solving the frames of a shot so the result follows the motion.

All frames are first solved together in one batch, each from the shot's start pose. Where
that answer is continuous it is already what following the motion gives; where it pops (a
frame jumps further than twice the motion beside it, because that frame's solve landed on
another solution branch) the frames from the pop on are solved again one by one, each warm
from the frame before with restarts that prefer the nearest solution, until they rejoin the
batch answer. Where the branch being followed ends at a joint limit, the new branch is
carried backwards until it meets the old one or reaches the first frame.

The batch pass makes a continuous shot cost one batched solve; a shot whose batch answer
pops costs a single-frame solve per frame from the first pop until the answers agree again.
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

# Radians: a jump this small is invisible and counts as smooth however still the neighbours
# are (a redundant chain's batch answers differ by this much without changing branch).
JUMP_SLACK = 1e-3
WARM_ITERATIONS = 30


class _Frames:
    """The shot being solved: poses per frame and the bookkeeping a single-frame solve adds."""

    def __init__(self, chain: Chain, goals: Goals, settings: SolveSettings, preferred: Array | None):
        self.chain, self.goals, self.settings, self.preferred = chain, goals, settings, preferred
        self.rotations = np.zeros((goals.count, chain.n_bones, 4))
        self.iterations = np.zeros(goals.count, dtype=np.int64)
        self.restarts = np.zeros(goals.count, dtype=np.int64)
        # A frame warm from its neighbour converges in a few iterations when it can at all.
        self.warm = replace(settings, max_iterations=min(settings.max_iterations, WARM_ITERATIONS))
        self.warm_without_restarts = replace(self.warm, restarts=0)
        self.previous_met = True

    def solve_from(self, frame: int, previous: Array) -> tuple[Array, bool]:
        """Frame ``frame`` solved warm from ``previous``; returns the pose and whether it met its goal.

        While the goals stay out of reach (the frame before was not met either) restarts are
        skipped: they cost many solves, cannot help a goal nobody reaches, and would trade
        the followed pose for a far one.
        """
        result = solve(
            self.chain,
            self.goals.take(np.array([frame])),
            start_rotations=previous,
            reference_rotations=previous,
            preferred_rotations=self.preferred,
            settings=self.warm if self.previous_met else self.warm_without_restarts,
        )
        self.iterations[frame] += result.iterations[0]
        self.restarts[frame] += result.restarts[0]
        self.previous_met = bool(result.converged[0])
        return result.rotations[0], self.previous_met

    def motion(self, frame: int) -> float:
        """The larger per-frame motion just before and just after ``frame``'s step."""
        rotations, count = self.rotations, len(self.rotations)
        before = pose_distance(rotations[frame - 2], rotations[frame - 1]) if frame >= 2 else 0.0
        after = pose_distance(rotations[frame], rotations[frame + 1]) if frame + 1 < count else 0.0
        return float(max(before, after))

    def pops(self, frame: int) -> bool:
        """Does the pose jump into ``frame`` by more than twice the motion beside it?"""
        jump = pose_distance(self.rotations[frame - 1], self.rotations[frame])
        return bool(jump > 2.0 * self.motion(frame) + JUMP_SLACK)


def _follow_forward(frames: _Frames, frame: int) -> int:
    """Re-solve from a pop at ``frame`` warm, frame by frame, until rejoining the batch answer.

    Returns the first frame not re-solved.
    """
    previous = frames.rotations[frame - 1]
    step = pose_distance(frames.rotations[frame - 2], previous) if frame >= 2 else 0.0
    while frame < len(frames.rotations):
        pose, _ = frames.solve_from(frame, previous)
        # Hand back to the batch answer once stepping onto it is no bigger than a step of
        # the motion itself: the hand-over cannot make a jump.
        rejoined = pose_distance(pose, frames.rotations[frame]) <= 2.0 * step + JUMP_SLACK
        step = pose_distance(previous, pose)
        frames.rotations[frame] = pose
        previous = pose
        frame += 1
        if rejoined:
            break
    return frame


def _carry_backwards(frames: _Frames, frame: int) -> None:
    """Where the followed branch ends (a joint limit cuts it off) the pose must jump to
    another branch. Carry the new branch backwards until it meets the old one or reaches the
    first frame: the jump disappears whenever the new branch reaches back that far.
    """
    carried = {}
    previous = frames.rotations[frame]
    motion = pose_distance(previous, frames.rotations[min(frame + 1, len(frames.rotations) - 1)])
    for earlier in range(frame - 1, -1, -1):
        pose, met = frames.solve_from(earlier, previous)
        if not met:
            return  # the new branch ends going back too: keep the jump
        carried[earlier] = pose
        previous = pose
        if pose_distance(pose, frames.rotations[earlier]) <= 2.0 * motion + JUMP_SLACK:
            break
    for earlier, pose in carried.items():
        frames.rotations[earlier] = pose


def solve_sequence(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
    preferred_rotations: ArrayLike | None = None,
) -> SolveResult:
    """Solve F frames (goals in frame order) so the pose follows the motion.

    ``start_rotations`` ((n, 4), e.g. the pose before the shot, else rest) starts every frame
    of the batch pass. ``settings.rest_pull`` draws redundant chains toward
    ``preferred_rotations`` ((n, 4), rest by default) in the null space of the goals.
    """
    settings = settings or SolveSettings()
    goals = Goals.of(targets)
    start = initial_poses(chain, start_rotations, 1)[0]
    preferred = initial_poses(chain, preferred_rotations, 1)[0] if settings.rest_pull > 0.0 else None
    frames = _Frames(chain, goals, settings, preferred)

    batch = solve(chain, goals, start_rotations=start, preferred_rotations=preferred, settings=settings)
    frames.rotations[:] = batch.rotations
    frames.iterations += batch.iterations
    frames.restarts += batch.restarts

    if goals.count > 1:
        # Each frame again, warm from the batch answer of the frame before (a second batch):
        # where the batch answer moves much further than this warm step, it changed branch.
        # This catches a branch change spread over several frames too, which comparing a
        # frame's jump with its neighbours' would not.
        warm = solve(
            chain,
            goals.take(np.arange(1, goals.count)),
            start_rotations=batch.rotations[:-1],
            reference_rotations=batch.rotations[:-1],
            preferred_rotations=preferred,
            settings=settings,
        )
        batch_step = pose_distance(batch.rotations[1:], batch.rotations[:-1])
        warm_step = pose_distance(warm.rotations, batch.rotations[:-1])
        changed_branch = np.nonzero(batch_step > 2.0 * warm_step + JUMP_SLACK)[0] + 1
        frame = 1
        for pop in changed_branch:
            if pop >= frame:
                frame = _follow_forward(frames, int(pop))
    for frame in range(1, goals.count):
        if frames.pops(frame):
            _carry_backwards(frames, frame)
    return finish_result(chain, goals, frames.rotations, frames.iterations, settings, frames.restarts)
