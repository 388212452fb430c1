"""Solving the frames of a shot so the pose follows the motion, many frames at a time.

Following the motion means solving each frame warm from the frame before: a damped
least-squares step is the smallest joint motion that moves the effector as the goal moved,
so a smooth path gives smooth joints, also on a redundant chain whose answers from rest can
sweep fast through its null space (a curled chain reaching past its own axis turns its whole
bend plane within a few frames when solved from rest every frame). Done frame by frame that
is one single-goal solve per frame; here (``sequence_plan`` picks the frames):

1. Segment pivots are solved one after another, each warm from the one before (the first,
   the shot's first frame, from the start pose): a coarse follow of the shot.
2. Every segment is followed from its pivot both ways, backwards to the frame where the
   segment before ends and forwards to where the next begins, all halves side by side (one
   batched solve per step). Steps 1 and 2 solve to ``COARSE_TOLERANCE`` only, one DLS
   iteration a step where the full tolerance took two; step 3 finishes them in one batch.
3. Joins: where two segments meet, the forward half arrives in another posture than the
   next segment's backward half (a redundant chain's posture depends on its history). A
   small difference is spread from one pivot to the next: each joint is turned by a share
   of it growing with the frame's place between them (and the frames are solved again warm
   from there below), so the joints move a little more per frame instead of jumping. From
   the first join that cannot be spread (more than ``REFOLLOW_ANGLE``, or faster than the
   two halves' own motion) the shot is followed on from that arrival: the next segment
   starts there, forwards only, the later pivots are solved again from it and the later
   segments followed again, side by side (at most ``MAX_ROUNDS`` times; a join left after
   that is a jump for step 6). Then every followed frame is finished to the full
   tolerance, all in one batch.
4. Following never restarts: where it misses a goal, it tracks the closest miss with a few
   iterations a frame. Then each stretch of missed followed frames is probed with restarts,
   all in one batch (its first frame, where a branch may have ended at a limit, every
   ``PROBE_EVERY``-th and its last). A probe that meets its goal, or misses it by clearly
   less, found another branch: it is walked out to the frames beside it, a frame a step,
   all walkers side by side, while the steps keep meeting (or missing by less).
5. The frames between followed ones start from a per-joint cubic through the four followed
   frames around them (``pose_curves``) and are solved in one batch; misses next to frames
   that met are walked into from those; frames still missing settle at their closest miss
   with a full budget.
6. Where the pose still jumps between frames that both met their goals, the new branch is
   carried backwards until it meets the old one (all such carries side by side), which
   removes the jump whenever the new branch reaches back that far; else the old branch is
   carried on. A carry ends where it misses a goal or turns much faster than its branch
   did (a branch's dead end, where DLS falls onto another: landing on the old branch that
   way is no meeting). Two branches of a redundant chain may run side by side and never
   meet: then the jump is blended over the carried frames, the pose leaving the old branch
   for the new one a little more each frame, every frame solved warm again. Visible jumps
   left are carried once more without a frame limit, to the visible jumps beside them.
7. Visible jumps still left: a third branch, found from random poses at the jump's frame,
   may reach every frame around it (``branch_spans``).
8. A tip whose twist is free and unseen by the goals turns, frame to frame, only as its
   direction does (``free_twist``): restarts leave it any twist at all.

Carrying a branch from a neighbouring frame gets ``NEIGHBOUR_ITERATIONS``: a goal one frame
on is met in a few iterations or the branch has ended, and finding that out must be cheap.

On the native kernel each frame-by-frame loop (following, walking out, filling the frames
between followed ones, the jump repair with its carries and blends) is one call over the whole
shot (``native/shot_calls``, ``kernel/shot.c``, ``kernel/repair.c``): crossing once per step, the
Python around the crossings cost more than the solves. The numpy loops here stay the reference
and the fallback.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from .. import time_budget
from ..chain import Chain
from ..free_twist import carry_tip_twist_along, tip_twist_is_unseen, within_tip_twist_range
from ..goals import Goals
from ..interrupt import checkpoint
from ..measurements import combined_error, finish_result, goal_errors, normalised
from ..methods.ladder import finishing
from ..native import shot_calls
from ..settings import SolveResult, SolveSettings
from ..solve import pose_distance, restart, solve, solve_from
from ..start_poses import initial_poses
from .branch_spans import span_jumps
from .plan import Segments, followed_frames, segments
from .pose_curves import between_poses, spread_difference
from .pose_jumps import JUMP_SLACK, VISIBLE_JUMP, jump_positions

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

WARM_ITERATIONS = 20  # a followed frame, warm from the one before, converges in a few when it can at all
NEIGHBOUR_ITERATIONS = 10  # ... and a frame warm from the frame next to it in fewer still
# A goal missed the frame before too: track the closest miss cheaply. The next frame starts
# from this one, so a miss still creeping toward its best is finished over the frames after.
MISS_ITERATIONS = 8
MISS_STALL_RATIO = 1e-2
PROBE_EVERY = 3  # followed frames between restart probes along a stretch of missed goals
# A stretch with this many probes or more is searched densely by them: each of its probes
# stops restarting after a round that found nothing (no goal met, no miss clearly closer).
LONG_STRETCH_PROBES = 4
# A miss is traded for another branch's only when that comes closer by this (times the reach):
# a branch change is a visible jump, worth it for a clearly closer miss, not for a hair.
SWITCH_GAIN = 0.002
REFOLLOW_ANGLE = np.radians(30.0)  # a join further than this is followed again, not spread
JOIN_SHARE = 1.0  # ... and so is one larger than the segment's own joint motion (times this)
MAX_ROUNDS = 6  # times the shot is followed on from a failed join at most
# Steps 1-2 follow to this (times the reach; radians for orientation) and ``_polish`` finishes
# in one batch: on the right branch and near the goal is all the next step needs.
COARSE_TOLERANCE = 0.02
COARSE_TURN = np.radians(1.0)
CARRY_FRAMES = 30  # a new branch is carried back this many frames at most (further, it rarely joins)
BLEND_ROUNDS = 3  # rounds of step 6 while a blend waits for an overlapping one
# Rows solved in one batch at most: a batch's working arrays (Jacobians, poses, clamps) take
# ~10× its poses, which for every frame of a long shot at once (30 bones × 100,000 frames)
# came near 1 GB; pieces this size cost no measurable time.
CHUNK_ROWS = 8192


def tracking_a_miss(settings: SolveSettings) -> SolveSettings:
    """Settings for a goal that was missed the frame before too (or the update before, when
    posing live): no restarts, a few iterations, stop on slow gains."""
    return replace(
        settings,
        # DLS alone: CCD's sweeps finish goals DLS leaves at a limit, but a miss stays a miss.
        method="dls" if settings.method in ("dls_ccd", "ccd_dls") else settings.method,
        restarts=0,
        max_iterations=min(settings.max_iterations, MISS_ITERATIONS),
        stall_ratio=max(settings.stall_ratio, MISS_STALL_RATIO),
    )


class _ShotSettings(NamedTuple):
    """The settings a shot's steps solve with (``_Frames``), derived from the shot's own."""

    warm_alone: SolveSettings
    warm_alone_full: SolveSettings
    neighbour: SolveSettings
    warm_dls: SolveSettings
    tracking_miss: SolveSettings
    coarse: SolveSettings
    coarse_full: SolveSettings
    coarse_tracking: SolveSettings


@functools.lru_cache(maxsize=64)  # a replace() checks every field: ~20 µs each, eight a shot
def _shot_settings(settings: SolveSettings, reach: float) -> _ShotSettings:
    """``_Frames``' settings for a shot solved with ``settings`` by a chain of this reach."""
    # Following a branch: it holds or it ends (restarts are ``_probe_misses``' job).
    warm_alone = replace(settings, max_iterations=min(settings.max_iterations, WARM_ITERATIONS), restarts=0)
    warm_alone_full = replace(settings, restarts=0)
    # From a neighbouring frame on the same branch a goal is met in a few iterations or not
    # at all (a branch's dead end): carrying a branch gives up early, and without CCD's
    # finishing sweeps, which there only creep towards a miss (same goals met on the
    # 3-bone benchmark chain, 10% faster).
    neighbour = replace(
        warm_alone,
        max_iterations=min(settings.max_iterations, NEIGHBOUR_ITERATIONS),
        method="dls" if settings.method == "dls_ccd" else settings.method,
    )
    # A random start (``branch_spans``' candidates): the warm budget, without CCD's sweeps.
    warm_dls = replace(neighbour, max_iterations=warm_alone.max_iterations)
    # While a goal stays out of reach restarts are skipped: they cost many solves, cannot
    # help a goal nobody reaches, and would trade the followed pose for a far one.
    tracking_miss = tracking_a_miss(warm_alone)
    tolerance = settings.absolute_tolerance(reach)
    loose = dict(
        tolerance=max(tolerance, COARSE_TOLERANCE * reach),
        orientation_tolerance=max(settings.angle_tolerance(tolerance, reach), COARSE_TURN),
    )
    coarse = replace(warm_alone, **loose)
    coarse_full = replace(warm_alone_full, **loose)
    coarse_tracking = replace(tracking_miss, **loose)
    return _ShotSettings(
        warm_alone, warm_alone_full, neighbour, warm_dls, tracking_miss, coarse, coarse_full, coarse_tracking
    )


class _Frames:
    """The shot being solved: poses per frame and the bookkeeping of every solve."""

    def __init__(self, chain: Chain, goals: Goals, settings: SolveSettings):
        self.chain, self.goals, self.settings = chain, goals, settings
        self.rotations = np.zeros((goals.count, chain.n_bones, 4))
        self.iterations = np.zeros(goals.count, dtype=np.int64)
        self.restarts = np.zeros(goals.count, dtype=np.int64)
        self.met = np.zeros(goals.count, dtype=bool)
        self.solved = np.zeros(goals.count, dtype=bool)  # has a pose (frames between followed ones get theirs last)
        # Each frame's latest answer and its errors: the result measures again only frames
        # whose pose is no longer that answer (most keep it).
        self.answers = np.full_like(self.rotations, np.nan)
        self.answer_errors = (np.zeros(goals.count), np.zeros(goals.count), np.zeros((goals.count, 3)))
        (
            self.warm_alone,
            self.warm_alone_full,
            self.neighbour,
            self.warm_dls,
            self.tracking_miss,
            self.coarse,
            self.coarse_full,
            self.coarse_tracking,
        ) = _shot_settings(settings, chain.reach)

    def solve_rows(
        self, frames: Rows, starts: Array, reference: Array | None, settings: SolveSettings, inside_limits: bool = True
    ):
        """Frames solved from ``starts`` (restarts prefer poses near ``reference``); returns the
        poses and whether each met its goal (the caller decides whether to keep them).
        ``inside_limits``: the starts are earlier answers, nothing to clamp."""
        if len(frames) > CHUNK_ROWS:  # a long shot's batches, a piece at a time (module docstring)
            pieces = [
                self.solve_rows(
                    frames[at : at + CHUNK_ROWS],
                    starts[at : at + CHUNK_ROWS],
                    None if reference is None else reference[at : at + CHUNK_ROWS],
                    settings,
                    inside_limits,
                )
                for at in range(0, len(frames), CHUNK_ROWS)
            ]
            return np.concatenate([poses for poses, _ in pieces]), np.concatenate([met for _, met in pieces])
        goals = self.goals.take(frames)
        if inside_limits:
            result = solve_from(self.chain, goals, starts, reference=reference, settings=settings)
        else:
            result = solve(self.chain, goals, start_rotations=starts, reference_rotations=reference, settings=settings)
        np.add.at(self.iterations, frames, result.iterations)
        np.add.at(self.restarts, frames, result.restarts)
        self.answers[frames] = result.rotations
        measured = (result.position_error, result.orientation_error, result.effector)
        for known, of_rows in zip(self.answer_errors, measured, strict=True):
            known[frames] = of_rows
        return result.rotations, result.converged

    def result(self) -> SolveResult:
        """The shot's poses, measured (again only where a frame's pose is not its last answer)."""
        measured = tuple(known.copy() for known in self.answer_errors)
        stale = np.nonzero(np.any(self.rotations != self.answers, axis=(1, 2)))[0]
        if stale.size:
            self.rotations[stale] = normalised(self.rotations[stale])
            fresh_errors = goal_errors(self.chain, self.goals.take(stale), self.rotations[stale])
            for known, fresh in zip(measured, fresh_errors, strict=True):
                known[stale] = fresh
        return finish_result(
            self.chain, self.goals, self.rotations, self.iterations, self.settings, self.restarts, measured
        )

    def miss(self, frames: Rows, poses: Array) -> Array:
        """How far poses miss their frames' goals (``combined_error``)."""
        position_error, orientation_error, _ = goal_errors(self.chain, self.goals.take(frames), poses)
        return combined_error(self.chain, position_error, orientation_error)

    def keep(self, frames: Rows, poses: Array, met: NDArray[np.bool_]) -> None:
        self.rotations[frames], self.met[frames], self.solved[frames] = poses, met, True

    def solve_warm(
        self,
        frames: Rows,
        previous: Array,
        met_before: NDArray[np.bool_],
        settings_met: SolveSettings | None = None,
        coarse: bool = False,
    ):
        """Frames solved warm from ``previous``, without restarts (``_probe_misses`` tries
        those for the whole shot at once): where ``met_before`` is False the goal was missed
        the step before too, and the miss is tracked with a few iterations; else with
        ``settings_met`` (default: the warm budget). ``coarse``: to ``COARSE_TOLERANCE``."""
        poses = np.empty_like(previous)
        met = np.zeros(len(frames), dtype=bool)
        settings_met = settings_met or (self.coarse if coarse else self.warm_alone)
        tracking = self.coarse_tracking if coarse else self.tracking_miss
        for rows, settings in ((met_before, settings_met), (~met_before, tracking)):
            if np.any(rows):
                poses[rows], met[rows] = self.solve_rows(frames[rows], previous[rows], previous[rows], settings)
        return poses, met


def _solve_starts(frames: _Frames, start_frames: Rows, start: Array) -> tuple[Array, NDArray[np.bool_]]:
    """Segment pivots solved one after another, each warm from the one before (after one that
    missed its goal, tracking the miss). The first, from wherever the shot starts, gets the
    whole iteration budget; from a pivot a segment away, a goal is met within the warm budget
    or lies out of reach, where more iterations only creep towards the closest miss (which
    following the segment and ``_settle_misses`` finish): on the 3-bone benchmark chain, whose
    pivots miss half the time, missed pivots crept on for 36-64 DLS iterations (~25 ms each)."""
    poses = np.zeros((len(start_frames), frames.chain.n_bones, 4))
    met = np.zeros(len(start_frames), dtype=bool)
    previous, settings = start, frames.coarse_full
    for i, frame in enumerate(start_frames):
        solved, reached = frames.solve_rows(np.array([frame]), previous[None], None, settings)
        previous, poses[i], met[i] = solved[0], solved[0], reached[0]
        settings = frames.coarse if met[i] else frames.coarse_tracking
    return poses, met


def _follow(frames: _Frames, followed: Rows, poses: Array, poses_met, begins: Rows, ends: Rows, starts, started_met):
    """Pieces side by side, one batched solve per step: piece k follows the followed frames
    from ``begins[k]`` to ``ends[k]`` (either way) from ``starts[k]``.

    The poses strictly between go into ``poses`` and ``poses_met`` (by followed index);
    returns each piece's arrival at its end (K, n, 4) and whether it met that goal. On the
    native kernel, one crossing (``shot_calls.follow``).
    """
    met_settings, tracking = frames.coarse, frames.coarse_tracking
    native = shot_calls.follow(
        frames,
        met_settings,
        finishing(met_settings),
        tracking,
        finishing(tracking),
        followed,
        begins,
        ends,
        starts,
        started_met,
        poses,
        poses_met,
    )
    if native is not None:
        return native
    pose = starts.copy()
    met_before = np.asarray(started_met, dtype=bool).copy()
    arrived_met = met_before.copy()  # a piece without steps arrives where it starts
    direction, lengths = np.sign(ends - begins), np.abs(ends - begins)
    for step in range(1, int(np.max(lengths, initial=0)) + 1):
        rows = np.nonzero(step <= lengths)[0]
        index = begins[rows] + step * direction[rows]
        new_pose, met = frames.solve_warm(followed[index], pose[rows], met_before[rows], coarse=True)
        pose[rows], met_before[rows] = new_pose, met
        arriving = step == lengths[rows]
        arrived_met[rows[arriving]] = met[arriving]
        poses[index[~arriving]], poses_met[index[~arriving]] = new_pose[~arriving], met[~arriving]
    return pose, arrived_met


def _spreadable(poses: Array, first: int, meeting: int, last: int, arrival: Array) -> bool:
    """Can the difference between ``arrival`` (the forward half's, at ``meeting``) and the pose
    there be spread over the segment from ``first`` to ``last`` (module docstring, step 3)?"""
    difference = pose_distance(arrival, poses[meeting])
    own_motion = np.sum(pose_distance(poses[first + 1 : meeting], poses[first : meeting - 1]))
    own_motion += pose_distance(arrival, poses[meeting - 1])
    own_motion += np.sum(pose_distance(poses[meeting + 1 : last + 1], poses[meeting:last]))
    return bool(difference <= min(REFOLLOW_ANGLE, JOIN_SHARE * own_motion))


def _follow_segments(frames: _Frames, followed: Rows, plan: Segments, start_poses: Array, start_met) -> list:
    """Steps 2 and 3's choice: every segment followed both ways from its pivot, all halves
    side by side; where two segments meet, the backward half's arrival is kept and the
    forward half's is a join. At the first join that cannot be spread, or the first segment
    that needed a restart on its way (its start, from the coarse follow, may sit where
    following the shot never goes), the shot is followed on from the arrival there: the
    next segment starts at that frame, forwards only, the later starts are solved again from
    it and the later segments followed again, side by side.

    Writes the followed frames' poses; returns the joins to spread, (first pivot, meeting,
    next pivot, forward arrival) by followed index.
    """
    pivots, lows, highs = (np.array(rows) for rows in plan)  # copies: a failed join moves a pivot
    poses = np.zeros((len(followed), frames.chain.n_bones, 4))
    poses_met = np.zeros(len(followed), dtype=bool)
    joins, first = [], 0
    for round_left in range(MAX_ROUNDS, -1, -1):
        later = np.arange(first, len(pivots))
        poses[pivots[later]], poses_met[pivots[later]] = start_poses[later], start_met[later]
        back = later[lows[later] < pivots[later]]
        arrivals, arrived_met = _follow(
            frames,
            followed,
            poses,
            poses_met,
            np.concatenate((pivots[later], pivots[back])),
            np.concatenate((highs[later], lows[back])),
            np.concatenate((start_poses[later], start_poses[back])),
            np.concatenate((start_met[later], start_met[back])),
        )
        poses[lows[back]], poses_met[lows[back]] = arrivals[len(later) :], arrived_met[len(later) :]
        failed = None
        for segment in later[:-1]:
            arrival, met, meeting = arrivals[segment - first], arrived_met[segment - first], highs[segment]
            if poses_met[meeting] and not met:
                continue  # the other half reaches, the arrival does not: reaching wins (step 5 mends it)
            span = (pivots[segment], meeting, pivots[segment + 1])
            spreadable = _spreadable(poses, *span, arrival)
            # Follow on only from an arrival that met its goal: across a stretch out of reach
            # the closest misses of two segments may differ, and following the miss on costs
            # a round for a pose that misses anyway.
            if round_left and met and not spreadable:
                failed = segment
                break
            if spreadable:  # else (no rounds left) a jump, which step 5 may mend
                joins.append((*span, arrival))
        if failed is None:
            break
        first = failed + 1
        pivots[first] = lows[first] = highs[failed]
        start_poses[first], start_met[first] = arrival, met
        start_poses[first + 1 :], start_met[first + 1 :] = _solve_starts(frames, followed[pivots[first + 1 :]], arrival)
    poses[highs[-1]], poses_met[highs[-1]] = arrivals[len(later) - 1], arrived_met[len(later) - 1]
    frames.keep(followed, poses, poses_met)
    return joins


def _spread_joins(frames: _Frames, followed: Rows, joins: list) -> None:
    """Spread each join's difference over its segments, from one pivot to the next
    (``spread_difference``; ``_polish`` solves those frames again warm from there)."""
    poses, corrected = frames.rotations[followed], []
    for first, meeting, last, arrival in joins:
        if pose_distance(arrival, poses[meeting]) <= JUMP_SLACK or last - first < 2:
            continue
        corrected.append(spread_difference(poses, first, meeting, last, arrival))
    if corrected:
        inside = np.concatenate(corrected)
        frames.rotations[followed[inside]] = frames.chain.clamp_to_limits(poses[inside])


def _polish(frames: _Frames, followed: Rows) -> None:
    """The followed frames were solved to ``COARSE_TOLERANCE`` (and the joins spread since):
    finish them, all in one batch."""
    frames.keep(followed, *frames.solve_warm(followed, frames.rotations[followed], frames.met[followed]))


def _fill_between(frames: _Frames, followed: Rows) -> None:
    """The frames between followed ones, in one batch from their neighbours' blend, without
    restarts (a restart would pick a branch of its own). A frame that misses from the blend
    though both neighbours met tries again from the nearer neighbour's pose (and is walked
    into from the frame beside it by ``_rescue_misses``). After the guesses, on the native
    kernel, one crossing (``shot_calls.fill_between``)."""
    between = np.setdiff1d(np.arange(frames.goals.count), followed)
    if between.size == 0:
        return
    after = np.searchsorted(followed, between)
    left, right = followed[after - 1], followed[after]
    # A curve through followed frames is a good guess only along one branch, met throughout.
    smooth = frames.met[followed].copy()
    jumps = jump_positions(frames.rotations[followed], followed)
    smooth[jumps], smooth[jumps - 1] = False, False
    guesses = between_poses(frames.rotations[followed], followed, between, smooth)
    settings, tracking = frames.warm_alone, frames.tracking_miss
    if shot_calls.fill_between(
        frames,
        settings,
        finishing(settings),
        tracking,
        finishing(tracking),
        followed,
        between,
        guesses,
        tip_twist_is_unseen(frames.chain, frames.goals),
        SWITCH_GAIN * frames.chain.reach,
    ):
        return
    neighbours_met = frames.met[left] & frames.met[right]
    poses, met = np.empty_like(guesses), np.zeros(between.size, dtype=bool)
    for rows, settings in ((neighbours_met, frames.warm_alone), (~neighbours_met, frames.tracking_miss)):
        if np.any(rows):
            poses[rows], met[rows] = frames.solve_rows(
                between[rows], guesses[rows], None, settings, inside_limits=False
            )
    nearer = np.where(between - left <= right - between, left, right)
    again = np.nonzero(neighbours_met & ~met)[0]
    if again.size:
        retried, retried_met = frames.solve_rows(
            between[again], frames.rotations[nearer[again]], None, frames.warm_alone
        )
        poses[again[retried_met]], met[again[retried_met]] = retried[retried_met], True
    # Between two misses, a frame missing by clearly more than both (its blend fell between two
    # branches' closest misses, where neither is close) tries again from the nearer neighbour.
    tracked = np.nonzero(~neighbours_met)[0]
    if tracked.size:
        own = frames.miss(between[tracked], poses[tracked])
        beside = np.maximum(
            frames.miss(left[tracked], frames.rotations[left[tracked]]),
            frames.miss(right[tracked], frames.rotations[right[tracked]]),
        )
        outlying = own > beside + SWITCH_GAIN * frames.chain.reach
        if np.any(outlying):
            rows, own = tracked[outlying], own[outlying]
            retried, retried_met = frames.solve_rows(
                between[rows], frames.rotations[nearer[rows]], None, frames.tracking_miss
            )
            closer = retried_met | (frames.miss(between[rows], retried) < own)
            poses[rows[closer]], met[rows[closer]] = retried[closer], retried_met[closer]
    frames.keep(between, poses, met)


def _runs(flags: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """(first, last) positions of each run of consecutive True values."""
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1, strict=True))


def _walk_out(
    frames: _Frames, order: Rows, seeds: Rows, directions: Rows | None = None, until: Rows | None = None
) -> None:
    """Carry the poses at ``seeds`` (positions in ``order``) into the missed frames beside
    them, a frame a step (both directions, or ``directions``: −1 or +1 per seed), all side by
    side, for as long as each step meets its goal or misses it by clearly less
    (``SWITCH_GAIN``) than the pose the frame had; and no further than ``until`` (a position
    per seed), when given. On the native kernel, one crossing (``shot_calls.walk_out``)."""
    if directions is None:
        seeds, directions = np.concatenate((seeds, seeds)), np.repeat([-1, 1], len(seeds))
    position, direction = seeds, directions
    last = np.where(direction > 0, len(order) - 1, 0) if until is None else until
    met_settings, tracking = frames.neighbour, frames.tracking_miss
    margin = SWITCH_GAIN * frames.chain.reach
    if shot_calls.walk_out(
        frames,
        met_settings,
        finishing(met_settings),
        tracking,
        finishing(tracking),
        order,
        seeds,
        directions,
        last,
        margin,
    ):
        return
    pose, met_before = frames.rotations[order[position]], frames.met[order[position]]
    while position.size:
        ahead = position + direction
        go = (position != last) & ~frames.met[order[np.clip(ahead, 0, len(order) - 1)]]
        ahead, direction, pose, met_before, last = ahead[go], direction[go], pose[go], met_before[go], last[go]
        if ahead.size == 0:
            return
        steps = order[ahead]
        before = np.where(frames.solved[steps], frames.miss(steps, frames.rotations[steps]), np.inf)
        poses, met = frames.solve_warm(steps, pose, met_before, frames.neighbour)
        missed_by = frames.miss(steps, poses)
        better = (met | (missed_by < before - margin)) & _best_per_frame(steps, met, missed_by)
        frames.keep(steps[better], poses[better], met[better])
        position, direction, pose, met_before, last = (
            ahead[better],
            direction[better],
            poses[better],
            met[better],
            last[better],
        )


def _best_per_frame(steps: Rows, met: NDArray[np.bool_], missed_by: Array) -> NDArray[np.bool_]:
    """One walker a frame: where two walkers stepped onto the same frame from both sides, the
    one that met its goal (else the one that missed by less) walks on. (Keeping whichever came
    first left a miss where a branch ends one frame past the other: the walker from the
    ending branch took the frame, and the pose jumped 100° next to it.)"""
    ranked = np.lexsort((missed_by, ~met, steps))
    first = np.ones(len(steps), dtype=bool)
    first[ranked[1:]] = steps[ranked[1:]] != steps[ranked[:-1]]
    return first


def _bridge_misses(frames: _Frames, followed: Rows) -> None:
    """From each followed frame that met its goal towards a followed neighbour that missed,
    frame by frame: a followed step can be too long where a limit turns the way, while single
    frames still get through. Bridged followed frames are walked out along the followed ones."""
    met = frames.met[followed]
    forward = np.nonzero(met[:-1] & ~met[1:])[0]
    backward = np.nonzero(met[1:] & ~met[:-1])[0] + 1
    if forward.size + backward.size == 0:
        return
    seeds = np.concatenate((forward, backward))
    directions = np.repeat([1, -1], (forward.size, backward.size))
    _walk_out(frames, np.arange(frames.goals.count), followed[seeds], directions, followed[seeds + directions])
    bridged = seeds + directions
    bridged = bridged[frames.met[followed[bridged]]]
    if bridged.size:
        _walk_out(frames, followed, bridged)


def _probe_misses(frames: _Frames, order: Rows) -> None:
    """Restarts for the stretches of ``order`` whose goals were missed, all in one batch: the
    first frame of each stretch (where a followed branch may have ended at a limit), every
    ``PROBE_EVERY``-th after it and its last. Where a probe meets its goal, another branch
    reaches there; where it misses by clearly less, another branch comes closer: either is
    walked out to the frames beside it."""
    probes, give_up = [], []
    for first, last in _runs(~frames.met[order]):
        stretch = [*range(first, last, PROBE_EVERY), last]
        probes += stretch
        give_up += [len(stretch) >= LONG_STRETCH_PROBES] * len(stretch)
    if not probes:
        return
    positions = np.array(probes, dtype=np.intp)
    probed = order[positions]
    result, found = restart(
        frames.chain,
        frames.goals.take(probed),
        frames.rotations[probed],
        settings=frames.settings,
        switch_gain=SWITCH_GAIN * frames.chain.reach,
        give_up=np.array(give_up, dtype=bool),
    )
    np.add.at(frames.iterations, probed, result.iterations)
    np.add.at(frames.restarts, probed, result.restarts)
    frames.keep(probed[found], result.rotations[found], result.converged[found])
    _walk_out(frames, order, positions[found])


def _rescue_misses(frames: _Frames) -> None:
    """Frames that missed their goals next to frames that met theirs are solved again from
    those (``_walk_out``): a goal that comes into reach on the far side of a miss is met
    there, where following from the near side could not get to it."""
    missed = ~frames.met
    beside_miss = np.zeros_like(missed)
    beside_miss[:-1] |= missed[1:]
    beside_miss[1:] |= missed[:-1]
    seeds = np.nonzero(frames.met & beside_miss)[0]
    if seeds.size:
        _walk_out(frames, np.arange(frames.goals.count), seeds)


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


class _RanOut(NamedTuple):
    """A carry that met every goal for ``CARRY_FRAMES`` without meeting the old branch."""

    jump: int  # position in ``order`` of the frame after the jump
    origin: int  # position carried from (beside the jump)
    frames: Rows  # the carried frames, nearest first
    poses: Array
    beyond: int  # the frame past the far end


def _carry(
    frames: _Frames,
    order: Rows,
    origins: Rows,
    direction: int | Rows,
    bounds: Rows | None = None,
    rivals: Rows | None = None,
) -> tuple[NDArray[np.bool_], list[_RanOut]]:
    """Carry the pose at each position ``origins`` along ``order`` in ``direction`` (−1 or +1,
    or one per carry), all side by side, at most ``CARRY_FRAMES`` (or, given ``bounds``, to
    each carry's bound, a position in ``order`` it may not pass), until it meets the pose
    already there (within twice the carried branch's own speed) or reaches the end of the shot:
    then the carried frames are kept and no jump is left. A carry that misses a goal on the
    way, or jumps, changes nothing. ``rivals``: per carry, another carry (or −1) that stops once
    this one is kept, and is not kept after it. Returns which carries were kept, and those that
    ran out (for ``_blend_jumps``)."""
    direction = np.broadcast_to(direction, origins.shape)
    rotations = frames.rotations
    behind = np.clip(origins - direction, 0, len(order) - 1)  # the carried branch's own last step
    speed = pose_distance(rotations[order[origins]], rotations[order[behind]]) / np.maximum(
        np.abs(order[origins] - order[behind]), 1
    )
    position, previous = origins + direction, rotations[order[origins]].copy()
    carried: list[list] = [[] for _ in origins]
    kept = np.zeros(len(origins), dtype=bool)
    ran_out = []

    def within_reach(carriers: Rows) -> Rows:
        inside = (position[carriers] >= 0) & (position[carriers] < len(order))
        carriers = carriers[inside]
        if bounds is None:
            near = np.abs(order[position[carriers]] - order[origins[carriers]]) <= CARRY_FRAMES
        else:
            near = direction[carriers] * (bounds[carriers] - position[carriers]) >= 0
        for carrier in carriers[~near]:
            origin = int(origins[carrier])
            ran_out.append(
                _RanOut(
                    jump=origin if direction[carrier] < 0 else origin + 1,
                    origin=origin,
                    frames=np.array([frame for frame, _ in carried[carrier]]),
                    poses=np.array([pose for _, pose in carried[carrier]]),
                    beyond=int(order[position[carrier]]),
                )
            )
        return carriers[near]

    going = within_reach(np.arange(len(origins)))
    running = speed.copy()  # the carried branch's latest speed
    while going.size:
        steps = order[position[going]]
        poses, met = frames.solve_rows(steps, previous[going], None, frames.neighbour)
        # A step that turns much faster than the branch did, and than the pose there does on
        # its far side, has left the branch (DLS fell onto another where this one ends): the
        # carry failed, as when it misses the goal.
        gap = np.abs(steps - order[position[going] - direction[going]])
        beyond = order[np.clip(position[going] + direction[going], 0, len(order) - 1)]
        there = pose_distance(rotations[steps], rotations[beyond]) / np.maximum(np.abs(beyond - steps), 1)
        moved = pose_distance(poses, previous[going])
        held = met & (moved <= 2.0 * np.maximum(running[going], there) * gap + JUMP_SLACK)
        going, poses, steps, gap, moved = going[held], poses[held], steps[held], gap[held], moved[held]
        previous[going], running[going] = poses, moved / gap
        for carrier, frame, pose in zip(going, steps, poses, strict=True):
            carried[carrier].append((frame, pose))
        at_end = (position[going] == 0) | (position[going] == len(order) - 1)
        joined = at_end | (pose_distance(poses, rotations[steps]) <= 2.0 * speed[going] * gap + JUMP_SLACK)
        for carrier in going[joined]:
            if rivals is not None and rivals[carrier] >= 0 and kept[rivals[carrier]]:
                continue
            done = np.array([frame for frame, _ in carried[carrier]])
            frames.keep(done, np.array([pose for _, pose in carried[carrier]]), np.ones(len(done), dtype=bool))
            kept[carrier] = True
        going = going[~joined]
        if rivals is not None:  # a carry whose rival was kept stops
            going = going[~((rivals[going] >= 0) & kept[rivals[going]])]
        position[going] += direction[going]
        going = within_reach(going)
    return kept, ran_out


def _blend_jumps(frames: _Frames, order: Rows, carries: list[_RanOut]) -> set[int]:
    """Where a carried branch runs beside the old one without meeting it (a redundant chain
    has many, each continuous), the jump is spread over the carried frames instead: a walker
    starts past the carry's far end on the old branch and steps towards the jump, each frame
    warm from the one before turned a share of the way to the carried pose there (all the
    way at the jump), so it leaves the old branch for the new one gradually. All walkers side
    by side. Kept per carry when every step meets its goal and the pose turns no faster than
    twice the carried branch's own speed plus the jump's share per frame. A window
    overlapping one kept before waits: returns the jumps (positions) that wait.

    (Not for a switch between branches on missed goals: the postures between two closest
    misses miss by far more than either, checked on the bench rigs, so there the jump stays.)
    """
    if not carries:
        return set()
    rotations = frames.rotations
    lengths = np.array([len(carry.frames) for carry in carries])
    window = np.concatenate([carry.frames for carry in carries])
    carried_poses = np.concatenate([carry.poses for carry in carries])
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    walker = rotations[[carry.beyond for carry in carries]].copy()
    walked, walked_met = _blend_walk(frames, lengths, offsets, window, carried_poses, walker)
    changed = np.zeros(len(rotations), dtype=bool)  # windows kept so far: one blend per frame
    waiting = set()
    for carry, start, end in zip(carries, offsets[:-1], offsets[1:], strict=True):
        beside = order[carry.origin]
        if np.any(changed[[beside, *carry.frames, carry.beyond]]):
            waiting.add(carry.jump)
            continue
        if not np.all(walked_met[start:end]):
            continue
        path_frames = np.concatenate(([beside], carry.frames, [carry.beyond]))
        path = np.concatenate((rotations[[beside]], walked[start:end], rotations[[carry.beyond]]))
        gaps = np.abs(np.diff(path_frames))
        speed = pose_distance(path[1:], path[:-1]) / gaps
        own = np.concatenate((rotations[[beside]], carry.poses))
        allowed = np.max(pose_distance(own[1:], own[:-1]) / gaps[:-1])
        allowed += pose_distance(rotations[beside], rotations[carry.frames[0]]) / np.sum(gaps)
        if np.max(speed) <= 2.0 * allowed + JUMP_SLACK:
            frames.keep(carry.frames, walked[start:end], walked_met[start:end])
            changed[carry.frames] = True
    return waiting


def _blend_walk(
    frames: _Frames, lengths: Rows, offsets: Rows, window: Rows, carried_poses: Array, walker: Array
) -> tuple[Array, NDArray[np.bool_]]:
    """``_blend_jumps``' walkers, all side by side a step at a time: walker k walks its rows from
    the last to the first."""
    walked, walked_met = np.empty_like(carried_poses), np.ones(len(window), dtype=bool)
    for step in range(int(np.max(lengths))):
        going = np.nonzero(step < lengths)[0]
        left = lengths[going] - 1 - step  # frames between this one and the jump
        rows = offsets[going] + left  # walking from the far end towards the jump
        towards = quat.multiply(quat.conjugate(walker[going]), carried_poses[rows])
        start = quat.multiply(walker[going], quat.slerp_from_identity(towards, 1.0 / (left[:, None] + 1.0)))
        start = frames.chain.clamp_to_limits(start)
        walker[going], walked_met[rows] = frames.solve_rows(window[rows], start, None, frames.neighbour)
        walked[rows] = walker[going]
    return walked, walked_met


def _repair_jumps(frames: _Frames, order: Rows) -> None:
    """Step 6 along the frames ``order`` (all frames, or the followed ones): at every jump
    between frames that both met their goals (a miss on either side is where the goal leaves
    or enters reach, and ``_walk_out`` has carried the branch that reaches there), the new
    branch is carried backwards; where it ends on the way, the old branch is carried on
    instead (a probe may have found a branch of its own where the old one still reaches).
    A carry that runs beside the old branch without meeting it is blended in
    (``_blend_jumps``; again where a blend waited for one beside it, at most
    ``BLEND_ROUNDS`` times). On the native kernel, one crossing (``shot_calls.repair_jumps``)."""
    settings = frames.neighbour
    if shot_calls.repair_jumps(
        frames, settings, finishing(settings), order, CARRY_FRAMES, BLEND_ROUNDS, JUMP_SLACK, VISIBLE_JUMP
    ):
        return
    tried: set[int] = set()  # jumps (positions) whose carries and blends failed: not tried again
    for _ in range(BLEND_ROUNDS):
        jumps = jump_positions(frames.rotations[order], order)
        jumps = jumps[frames.met[order[jumps]] & frames.met[order[jumps - 1]]]
        jumps = np.array([jump for jump in jumps if jump not in tried], dtype=np.intp)
        if not jumps.size:
            return
        kept, carries_back = _carry(frames, order, jumps, -1)
        failed = jumps[~kept]
        kept, carries_on = _carry(frames, order, failed - 1, +1)
        failed = set(failed[~kept].tolist())
        waiting = _blend_jumps(frames, order, [carry for carry in carries_back if carry.jump in failed])
        left = failed.intersection(jump_positions(frames.rotations[order], order).tolist()) - waiting
        waiting |= _blend_jumps(frames, order, [carry for carry in carries_on if carry.jump in left])
        if not waiting:
            break
        tried |= failed - waiting
    _carry_through(frames, order)


def _carry_through(frames: _Frames, order: Rows) -> None:
    """Visible jumps still left between frames that both met their goals, carried without a
    frame limit: the new branch back, else the old one on, each no further than the next
    visible jump (so no two carries overlap), kept where it meets the pose there or reaches the
    shot's end. A branch that ends one frame past another can span the rest of the shot: a
    random arm path left a 101° jump whose old branch met every goal for the 165 frames to the
    end, where a 30-frame carry ran out beside the new branch and the blend across failed."""
    rotations = frames.rotations[order]
    jumps = jump_positions(rotations, order)
    visible = pose_distance(rotations[jumps], rotations[jumps - 1]) >= VISIBLE_JUMP
    jumps = jumps[visible & frames.met[order[jumps]] & frames.met[order[jumps - 1]]]
    if not jumps.size:
        return
    # Both side by side, each up to the visible jump beside it (its near side); the first kept
    # stops the other (the new branch back wins a tie): keeping both would only swap the sides.
    # The first frame stays: it was solved from where the shot starts (a loop's second lap
    # starts where the first ended, so that it wraps; carried over, it wrapped with a 98° pop).
    lows = np.concatenate(([1], jumps[:-1]))
    highs = np.concatenate((jumps[1:] - 1, [len(order) - 1]))
    count = len(jumps)
    rivals = np.concatenate((np.arange(count, 2 * count), np.arange(count)))
    directions = np.repeat([-1, 1], count)
    _carry(frames, order, np.concatenate((jumps, jumps - 1)), directions, np.concatenate((lows, highs)), rivals)


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
    with time_budget.spending(settings.time_limit) as budget:
        if goals.count:
            _solve_shot(frames, goals, chain, start)
    checkpoint(1.0)
    result = frames.result()
    if tip_twist_is_unseen(chain, goals):
        result = replace(result, rotations=_tip_twist_carried(chain, result.rotations, start, settings))
    return replace(result, out_of_time=True) if budget.ran_out else result


def _tip_twist_carried(chain: Chain, rotations: Array, start: Array, settings: SolveSettings) -> Array:
    """Step 8 (module docstring), in one crossing on the native kernel."""
    carried = shot_calls.carry_tip_twist_along(chain, rotations, start, settings)
    return within_tip_twist_range(chain, carry_tip_twist_along(rotations, start)) if carried is None else carried


def _solve_shot(frames: _Frames, goals: Goals, chain: Chain, start: Array) -> None:
    """``solve_sequence``'s steps. Following the frames and filling those between makes every
    frame's pose; the steps after improve them, and once the time budget is spent they are
    left out (``time_budget``)."""
    followed = followed_frames(goals, chain.reach)
    plan = segments(goals, followed, chain.reach)
    start_poses, start_met = _solve_starts(frames, followed[plan.pivots], start)
    checkpoint(0.15)  # (rough shares of a shot's time, for a progress bar)
    joins = _follow_segments(frames, followed, plan, start_poses, start_met)
    checkpoint(0.35)
    _spread_joins(frames, followed, joins)
    _polish(frames, followed)
    checkpoint(0.4)
    improve = (
        (0.45, lambda: _bridge_misses(frames, followed)),
        (0.55, lambda: _probe_misses(frames, followed)),
        (0.65, lambda: _repair_jumps(frames, followed)),
    )
    for share, step in improve:
        if not time_budget.spent():
            step()
        checkpoint(share)
    _fill_between(frames, followed)
    checkpoint(0.75)
    improve = (
        (None, lambda: _rescue_misses(frames)),
        (0.85, lambda: _settle_misses(frames)),
        (0.95, lambda: _repair_jumps(frames, np.arange(goals.count))),
        (None, lambda: span_jumps(frames, followed)),
    )
    for share, step in improve:
        if not time_budget.spent():
            step()
        if share is not None:
            checkpoint(share)
