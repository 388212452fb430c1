"""Solving the frames of a shot so the pose follows the motion, many frames at a time.

Following the motion means solving each frame warm from the frame before: a damped
least-squares step is the smallest joint motion that moves the effector as the goal moved,
so a smooth path gives smooth joints, also on a redundant chain whose answers from rest can
sweep fast through its null space (a curled chain reaching past its own axis turns its whole
bend plane within a few frames when solved from rest every frame). Done frame by frame that
is one single-goal solve per frame; here (``sequence_plan`` picks the frames):

1. Segment starts are solved one after another, each warm from the one before (the first
   from the start pose): a coarse follow of the shot.
2. The followed frames of every segment are solved from its start, all segments side by side
   (one batched solve per step).
3. Joins: a segment arrives at the next segment's start in another posture than that start's
   own answer (a redundant chain's posture depends on its history). A small difference is
   spread over the segment: each joint is turned by a growing share of it and the frames are
   solved again warm from there, so the joints move a little more per frame instead of
   jumping. From the first join that cannot be spread (more than ``REFOLLOW_ANGLE``, or
   faster than the segment's own motion) or the first segment that needed a restart on its
   way, the shot is followed on from that arrival: the later starts are solved again from it
   and the later segments followed again, side by side (at most ``MAX_ROUNDS`` times; a join
   left after that is a jump for step 5).
4. The frames between followed ones start from the per-joint slerp of their followed
   neighbours and are solved in one batch; frames that missed their goal try again from
   the nearest frames that met theirs.
5. Where a pose still jumps, the new branch is carried backwards until it meets the old one,
   which removes the jump whenever the new branch reaches back that far.

While a goal stays out of reach the pose tracks its closest miss with a few iterations a
frame, and restarts are tried only every ``RETRY_EVERY`` steps.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat
from .ccd import finish_result, goal_errors, initial_poses
from .chain import Chain
from .goals import Goals
from .sequence_plan import followed_frames, segment_starts
from .settings import SolveResult, SolveSettings
from .solve import pose_distance, solve

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

# Radians: a jump this small is invisible and counts as smooth however still the neighbours
# are (a redundant chain's answers differ by this much without changing branch).
JUMP_SLACK = 1e-3
WARM_ITERATIONS = 30  # a frame warm from its neighbour converges in a few when it can at all
# A goal missed the frame before too: track the closest miss cheaply. The next frame starts
# from this one, so a miss still creeping toward its best is finished over the frames after.
MISS_ITERATIONS = 8
MISS_STALL_RATIO = 1e-2
RETRY_EVERY = 16  # while a goal stays unmet, restarts are tried again every this many steps
REFOLLOW_ANGLE = np.radians(30.0)  # a join further than this is followed again, not spread
JOIN_SHARE = 1.0  # ... and so is one larger than the segment's own joint motion (times this)
MAX_ROUNDS = 3  # times the shot is followed on from a failed join at most
CARRY_FRAMES = 120  # a new branch is carried back this many frames at most


def _blend(a: Array, b: Array, weight: ArrayLike) -> Array:
    """Per-joint slerp from poses ``a`` to ``b`` (..., n, 4) by ``weight`` (...,)."""
    fraction = np.broadcast_to(np.asarray(weight, dtype=float)[..., None], a.shape[:-1])
    return quat.multiply(a, quat.slerp_from_identity(quat.multiply(quat.conjugate(a), b), fraction))


def tracking_a_miss(settings: SolveSettings) -> SolveSettings:
    """Settings for a goal that was missed the frame before too (or the update before, when
    posing live): no restarts, a few iterations, stop on slow gains."""
    return replace(
        settings,
        restarts=0,
        max_iterations=min(settings.max_iterations, MISS_ITERATIONS),
        stall_ratio=max(settings.stall_ratio, MISS_STALL_RATIO),
    )


def jump_positions(rotations: Array, frame_numbers: Rows) -> Rows:
    """Positions j (≥ 1) where the pose jumps from j - 1 to j: it turns more than twice as fast
    (per frame) as on either step beside it."""
    speed = pose_distance(rotations[1:], rotations[:-1]) / np.diff(frame_numbers)
    beside = np.maximum(np.concatenate(([0.0], speed[:-1])), np.concatenate((speed[1:], [0.0])))
    return np.nonzero(speed > 2.0 * beside + JUMP_SLACK)[0] + 1


class _Frames:
    """The shot being solved: poses per frame and the bookkeeping of every solve."""

    def __init__(self, chain: Chain, goals: Goals, settings: SolveSettings):
        self.chain, self.goals, self.settings = chain, goals, settings
        self.rotations = np.zeros((goals.count, chain.n_bones, 4))
        self.iterations = np.zeros(goals.count, dtype=np.int64)
        self.restarts = np.zeros(goals.count, dtype=np.int64)
        self.met = np.zeros(goals.count, dtype=bool)
        # Frames whose pose a restart found (another solution branch): maybe a jump, maybe
        # spread over a few frames where comparing steps would not see it.
        self.restarted = np.zeros(goals.count, dtype=bool)
        self.warm = replace(settings, max_iterations=min(settings.max_iterations, WARM_ITERATIONS))
        self.warm_alone = replace(self.warm, restarts=0)  # carrying a branch: it holds or it ends
        self.warm_alone_full = replace(settings, restarts=0)
        # While a goal stays out of reach restarts are skipped: they cost many solves, cannot
        # help a goal nobody reaches, and would trade the followed pose for a far one.
        self.tracking_miss = tracking_a_miss(self.warm)

    def solve_rows(self, frames: Rows, starts: Array, reference: Array | None, settings: SolveSettings):
        """Frames solved from ``starts`` (restarts prefer poses near ``reference``); returns the
        poses and whether each met its goal (the caller decides whether to keep them)."""
        result = solve(
            self.chain,
            self.goals.take(frames),
            start_rotations=starts,
            reference_rotations=reference,
            settings=settings,
        )
        np.add.at(self.iterations, frames, result.iterations)
        np.add.at(self.restarts, frames, result.restarts)
        self.restarted[frames[(result.restarts > 0) & result.converged]] = True
        return result.rotations, result.converged

    def keep(self, frames: Rows, poses: Array, met: NDArray[np.bool_]) -> None:
        self.rotations[frames], self.met[frames] = poses, met

    def solve_warm(self, frames: Rows, previous: Array, retry: NDArray[np.bool_]):
        """Frames solved warm from ``previous``: with restarts where ``retry``, else tracking."""
        poses = np.empty_like(previous)
        met = np.zeros(len(frames), dtype=bool)
        for rows, settings in ((retry, self.warm), (~retry, self.tracking_miss)):
            if np.any(rows):
                poses[rows], met[rows] = self.solve_rows(frames[rows], previous[rows], previous[rows], settings)
        return poses, met


def _solve_starts(frames: _Frames, start_frames: Rows, start: Array) -> tuple[Array, NDArray[np.bool_]]:
    """Segment starts solved one after another, each warm from the one before (after a start
    that missed its goal, tracking the miss)."""
    poses = np.zeros((len(start_frames), frames.chain.n_bones, 4))
    met = np.zeros(len(start_frames), dtype=bool)
    previous, settings = start, frames.settings
    for i, frame in enumerate(start_frames):
        solved, reached = frames.solve_rows(np.array([frame]), previous[None], previous[None], settings)
        previous, poses[i], met[i] = solved[0], solved[0], reached[0]
        settings = frames.settings if met[i] else frames.tracking_miss
    return poses, met


def _follow(frames: _Frames, followed: Rows, poses: Array, poses_met, begins: Rows, ends: Rows, starts, started_met):
    """Segments side by side, one batched solve per step: segment k follows the followed
    frames after ``begins[k]`` up to ``ends[k]`` from ``starts[k]``.

    The poses strictly inside go into ``poses`` and ``poses_met`` (by followed index);
    returns each segment's arrival at its end (K, n, 4) and whether it met that goal.
    """
    pose = starts.copy()
    unmet_run = np.where(started_met, 0, 1)
    arrived_met = np.zeros(len(begins), dtype=bool)
    lengths = ends - begins
    for step in range(1, int(np.max(lengths, initial=0)) + 1):
        rows = np.nonzero(step <= lengths)[0]
        index = begins[rows] + step
        new_pose, met = frames.solve_warm(followed[index], pose[rows], unmet_run[rows] % RETRY_EVERY == 0)
        pose[rows] = new_pose
        unmet_run[rows] = np.where(met, 0, unmet_run[rows] + 1)
        arriving = step == lengths[rows]
        arrived_met[rows[arriving]] = met[arriving]
        poses[index[~arriving]], poses_met[index[~arriving]] = new_pose[~arriving], met[~arriving]
    return pose, arrived_met


def _spreadable(poses: Array, first: int, last: int, arrival: Array) -> bool:
    """Can the difference between ``arrival`` and the pose at ``last`` be spread over the
    segment from ``first`` (module docstring, step 3)?"""
    difference = pose_distance(arrival, poses[last])
    own_motion = np.sum(pose_distance(poses[first + 1 : last], poses[first : last - 1]))
    own_motion += pose_distance(arrival, poses[last - 1])
    return bool(difference <= min(REFOLLOW_ANGLE, JOIN_SHARE * own_motion))


def _follow_segments(frames: _Frames, followed: Rows, starts: Rows, start_poses: Array, start_met) -> list:
    """Steps 2 and 3's choice: every segment followed, side by side. At the first join that
    cannot be spread, or the first segment that needed a restart on its way (its start, from
    the coarse follow, may sit where following the shot never goes), the shot is followed on
    from the arrival there: the later starts are solved again from it and the later segments
    followed again, side by side.

    Writes the followed frames' poses; returns the joins to spread, (first, last, arrival)
    by followed index.
    """
    poses = np.zeros((len(followed), frames.chain.n_bones, 4))
    poses_met = np.zeros(len(followed), dtype=bool)
    ends = np.append(starts[1:], len(followed) - 1)
    joins, first = [], 0
    for round_left in range(MAX_ROUNDS, -1, -1):
        poses[starts[first:]], poses_met[starts[first:]] = start_poses[first:], start_met[first:]
        frames.restarted[followed[starts[first] :]] = False
        arrivals, arrived_met = _follow(
            frames, followed, poses, poses_met, starts[first:], ends[first:], start_poses[first:], start_met[first:]
        )
        failed = None
        for segment in range(first + 1, len(starts)):
            arrival, met = arrivals[segment - 1 - first], arrived_met[segment - 1 - first]
            if start_met[segment] and not met:
                continue  # the start reaches, the arrival does not: reaching wins (step 5 mends it)
            restarted = np.any(frames.restarted[followed[starts[segment] + 1 : ends[segment] + 1]])
            spreadable = _spreadable(poses, starts[segment - 1], starts[segment], arrival)
            # Follow on only from an arrival that met its goal: across a stretch out of reach
            # the closest misses of two segments may differ, and following the miss on costs
            # a round for a pose that misses anyway.
            if round_left and met and (restarted or not spreadable):
                failed = segment
                break
            if spreadable:  # else (no rounds left) a jump, which step 5 may mend
                joins.append((starts[segment - 1], starts[segment], arrival))
        if failed is None:
            break
        start_poses[failed], start_met[failed] = arrival, met
        later = _solve_starts(frames, followed[starts[failed + 1 :]], arrival)
        start_poses[failed + 1 :], start_met[failed + 1 :] = later
        first = failed
    if len(followed) > 1:
        poses[-1], poses_met[-1] = arrivals[-1], arrived_met[-1]
    frames.keep(followed, poses, poses_met)
    return joins


def _spread_joins(frames: _Frames, followed: Rows, joins: list) -> None:
    """Turn each joint of a segment by a growing share of its join's difference, and solve
    those frames again warm from there."""
    poses, corrected = frames.rotations[followed], []
    for first, last, arrival in joins:
        if pose_distance(arrival, poses[last]) <= JUMP_SLACK or last - first < 2:
            continue
        inside = np.arange(first + 1, last)
        difference = quat.multiply(quat.conjugate(arrival), poses[last])  # per joint, bone frame
        share = np.repeat(((inside - first) / (last - first))[:, None], frames.chain.n_bones, axis=1)
        poses[inside] = quat.multiply(poses[inside], quat.slerp_from_identity(difference, share))
        corrected.append(inside)
    if corrected:
        inside = np.concatenate(corrected)
        steps = followed[inside]
        frames.keep(steps, *frames.solve_warm(steps, poses[inside], frames.met[steps]))


def _fill_between(frames: _Frames, followed: Rows) -> None:
    """The frames between followed ones, in one batch from their neighbours' blend, without
    restarts (a restart would pick a branch of its own). A frame that misses from the blend
    though both neighbours met tries again from the nearer neighbour's pose, and last with
    restarts near the blend."""
    between = np.setdiff1d(np.arange(frames.goals.count), followed)
    if between.size == 0:
        return
    after = np.searchsorted(followed, between)
    left, right = followed[after - 1], followed[after]
    guesses = _blend(frames.rotations[left], frames.rotations[right], (between - left) / (right - left))
    neighbours_met = frames.met[left] & frames.met[right]
    poses, met = np.empty_like(guesses), np.zeros(between.size, dtype=bool)
    for rows, settings in ((neighbours_met, frames.warm_alone), (~neighbours_met, frames.tracking_miss)):
        if np.any(rows):
            poses[rows], met[rows] = frames.solve_rows(between[rows], guesses[rows], None, settings)
    again = np.nonzero(neighbours_met & ~met)[0]
    if again.size:
        nearer = np.where(between[again] - left[again] <= right[again] - between[again], left[again], right[again])
        retried, retried_met = frames.solve_rows(between[again], frames.rotations[nearer], None, frames.warm_alone)
        poses[again[retried_met]], met[again[retried_met]] = retried[retried_met], True
    # Last, restarts near the blend (step 5 mends what they move).
    again = np.nonzero(neighbours_met & ~met)[0]
    if again.size:
        poses[again], met[again] = frames.solve_rows(between[again], poses[again], guesses[again], frames.warm)
    frames.keep(between, poses, met)


def _rescue_misses(frames: _Frames) -> None:
    """Frames that missed a goal within the chain's reach try again from the poses of the
    nearest frames before and after that met theirs (all in one batch): a goal that comes
    into reach on the far side of a miss is met there, where following from the near side
    could not get to it."""
    chain, goals = frames.chain, frames.goals
    in_reach = np.linalg.norm(goals.positions - chain.rest_offsets[0], axis=1) <= chain.reach
    met, missed = np.nonzero(frames.met)[0], np.nonzero(~frames.met & in_reach)[0]
    if met.size == 0 or missed.size == 0:
        return
    after = np.searchsorted(met, missed)
    sources = np.stack((met[np.maximum(after - 1, 0)], met[np.minimum(after, met.size - 1)]), axis=1)
    poses, reached = frames.solve_rows(np.repeat(missed, 2), frames.rotations[sources.ravel()], None, frames.warm_alone)
    poses, reached = poses.reshape(len(missed), 2, *poses.shape[1:]), reached.reshape(-1, 2)
    rescued = np.nonzero(np.any(reached, axis=1))[0]
    first_met = np.argmax(reached, axis=1)
    frames.keep(missed[rescued], poses[rescued, first_met[rescued]], np.ones(rescued.size, dtype=bool))


def _settle_misses(frames: _Frames) -> None:
    """Frames still missing their goal were tracked with a few iterations each; solve them once
    more from where they are, all in one batch with the full iteration budget, so each ends at
    its closest miss (kept where that is closer)."""
    missed = np.nonzero(~frames.met)[0]
    if missed.size == 0:
        return
    goals = frames.goals.take(missed)
    before, _, _ = goal_errors(frames.chain, goals, frames.rotations[missed])
    settled = solve(frames.chain, goals, start_rotations=frames.rotations[missed], settings=frames.warm_alone_full)
    np.add.at(frames.iterations, missed, settled.iterations)
    closer = settled.position_error + frames.chain.reach * settled.orientation_error < before
    frames.keep(missed[closer], settled.rotations[closer], settled.converged[closer])


def _carry_backwards(frames: _Frames, order: Rows, position: int) -> None:
    """The pose jumps into frame ``order[position]`` (a followed branch ended at a joint limit
    and restarts found another): carry the new branch backwards along ``order``, at most
    ``CARRY_FRAMES``, until it meets the old one or reaches the first frame, where no jump is
    left. Nothing changes if the new branch ends going back too.
    """
    rotations = frames.rotations
    later = min(position + 1, len(order) - 1)
    speed = pose_distance(rotations[order[position]], rotations[order[later]]) / max(order[later] - order[position], 1)
    carried, previous = {}, rotations[order[position]]
    for back in range(position - 1, -1, -1):
        frame = int(order[back])
        if order[position] - frame > CARRY_FRAMES:
            return
        poses, met = frames.solve_rows(np.array([frame]), previous[None], None, frames.warm_alone)
        if not met[0]:
            return
        previous = carried[frame] = poses[0]
        gap = order[back + 1] - frame
        if back == 0 or pose_distance(previous, rotations[frame]) <= 2.0 * speed * gap + JUMP_SLACK:
            carried_frames = np.array(list(carried))
            frames.keep(carried_frames, np.array(list(carried.values())), np.ones(len(carried), dtype=bool))
            return


def _repair_jumps(frames: _Frames, order: Rows) -> None:
    """Step 5 along the frames ``order`` (all frames, or the followed ones): at every jump and
    every frame a restart moved to another branch."""
    jumps = jump_positions(frames.rotations[order], order)
    restarted = np.nonzero(frames.restarted[order])[0]
    for position in np.union1d(jumps, restarted[restarted > 0]):
        # An earlier repair may have mended this one already.
        low, high = max(position - 2, 0), min(position + 2, len(order))
        still = position - low in jump_positions(frames.rotations[order[low:high]], order[low:high])
        if still or frames.restarted[order[position]]:
            _carry_backwards(frames, order, int(position))
        frames.restarted[order[position]] = False


def solve_sequence(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
) -> SolveResult:
    """Solve F frames (goals in frame order) so the pose follows the motion.

    ``start_rotations`` ((n, 4), e.g. the pose before the shot, else rest) is where the
    first frame starts from.
    """
    settings = settings or SolveSettings()
    goals = Goals.of(targets)
    start = initial_poses(chain, start_rotations, 1)[0]
    frames = _Frames(chain, goals, settings)
    if goals.count:
        followed = followed_frames(goals, chain.reach)
        starts = segment_starts(goals, followed, chain.reach)
        start_poses, start_met = _solve_starts(frames, followed[starts], start)
        joins = _follow_segments(frames, followed, starts, start_poses, start_met)
        _spread_joins(frames, followed, joins)
        _repair_jumps(frames, followed)
        _fill_between(frames, followed)
        _rescue_misses(frames)
        _settle_misses(frames)
        _repair_jumps(frames, np.arange(goals.count))
    return finish_result(chain, goals, frames.rotations, frames.iterations, settings, frames.restarts)
