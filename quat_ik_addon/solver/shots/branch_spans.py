"""Step 7 of a shot (``sequence``): another branch across a jump the repairs left.

Following the motion keeps to the branch the shot started on; where that branch ends at a
limit the pose jumps onto another, and step 6 removes the jump only where one of those two
branches can be carried across it. A third branch may reach every frame around the jump:
on 40 busy random arm paths (3 ball joints, every goal reachable, made by a continuous pose
path) this took the visible jumps left from 30 to 21, three of the paths from 54-79° pops
to no joint turning more than 0.8° a frame, for 17% more time in all.

For each visible jump left between frames that both meet their goals, the jump's frame is
solved from ``CANDIDATES`` random poses inside the limits (seeded: a shot solves the same
way every time); every answer that meets its goal, and is not one of the two poses beside
the jump, is carried back and on along the followed frames, each step warm from the one
before, to the visible jumps beside it (or the shot's ends): all candidates of all jumps
side by side. A carry fails where it misses a goal or turns more than twice as fast as it
did the step before, or as the pose there does (as step 6's carries). A candidate that
gets to both ends is filled in between (the frames between followed ones start from the
curve through its poses, as step 5, one batch), and the smoothest such stretch replaces the
old one where every frame still meets its goal and the shot has fewer visible jumps.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..solve import pose_distance
from .pose_curves import between_poses
from .pose_jumps import JUMP_SLACK, visible_jumps

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

CANDIDATES = 12  # random starts at each jump's frame
MAX_JUMPS = 8  # jumps a shot searches at most (the largest first)
DISTINCT = np.radians(5.0)  # an answer this close to a pose beside the jump is that branch


def span_jumps(frames, followed: Rows) -> None:
    """Step 7 on ``frames`` (``sequence._Frames``; module docstring)."""
    count = frames.goals.count
    all_jumps, turns = visible_jumps(frames.rotations, np.arange(count))
    reached = frames.met[all_jumps] & frames.met[all_jumps - 1]
    jumps, turns = all_jumps[reached], turns[reached]
    if not jumps.size:
        return
    jumps = np.sort(jumps[np.argsort(-turns)[:MAX_JUMPS]])
    stretches = []  # from the visible jump before (or the first frame) to the frame before the next
    for jump in jumps:
        before, after = all_jumps[all_jumps < jump], all_jumps[all_jumps > jump]
        stretches.append((int(before[-1]) if before.size else 0, int(after[0]) - 1 if after.size else count - 1))
    candidates, owners = _candidates(frames, jumps)
    if not candidates.size:
        return
    spans = _carry_both_ways(frames, followed, jumps, stretches, candidates, owners)
    for jump, (low, high) in zip(jumps, stretches, strict=True):
        found = [span for span in spans if span[0] == jump]
        if not found:
            continue
        _keep_best(frames, low, high, found)


def _candidates(frames, jumps: Rows) -> tuple[Array, Rows]:
    """Poses meeting each jump frame's goal from random starts, other than the two beside it;
    and which jump each belongs to."""
    chain = frames.chain
    rng = np.random.default_rng(frames.settings.seed)
    at = np.repeat(jumps, CANDIDATES)
    # The warm budget, DLS alone: a random start that needs more is one of many.
    poses, met = frames.solve_rows(at, chain.random_poses(rng, len(at)), None, frames.warm_dls)
    beside = np.minimum(pose_distance(poses, frames.rotations[at]), pose_distance(poses, frames.rotations[at - 1]))
    keep = met & (beside > DISTINCT)
    for row in np.nonzero(keep)[0]:  # one answer per branch found
        same = (at == at[row]) & keep & (np.arange(len(at)) > row)
        keep[same] &= pose_distance(poses[same], poses[row]) > DISTINCT
    return poses[keep], at[keep]


def _carry_both_ways(frames, followed, jumps, stretches, candidates, owners) -> list:
    """Each candidate carried back to its stretch's low end and on to its high end along the
    followed frames, all side by side; returns (jump, frames, poses there) of the candidates
    that got to both ends."""
    routes = []  # per candidate, back then on: the frames each carry visits, in order
    for jump in owners:
        low, high = stretches[int(np.searchsorted(jumps, jump))]
        inside = followed[(followed > low) & (followed < high)]
        routes.append(np.unique(np.concatenate((inside[inside < jump], [low, jump - 1])))[::-1])
        routes.append(np.unique(np.concatenate((inside[inside > jump], [high])))[1 if high == jump else 0 :])
    rows_of = np.repeat(np.arange(len(owners)), 2)
    lengths = np.array([len(route) for route in routes])
    walked = [np.empty((len(route), *candidates.shape[1:])) for route in routes]
    alive = np.ones(len(routes), dtype=bool)  # (an empty route has nothing to carry)
    previous = candidates[rows_of].copy()
    previous_frame = owners[rows_of].copy()
    running = np.full(len(routes), np.inf)  # the carry's latest turn per frame (none yet)
    rotations = frames.rotations
    for step in range(int(lengths.max())):
        going = np.nonzero(alive & (step < lengths))[0]
        if not going.size:
            break
        at = np.array([routes[row][step] for row in going])
        poses, met = frames.solve_rows(at, previous[going], None, frames.neighbour)
        gap = np.abs(at - previous_frame[going])
        moved = pose_distance(poses, previous[going]) / gap
        beyond = np.clip(at + np.sign(at - previous_frame[going]), 0, frames.goals.count - 1)
        there = pose_distance(rotations[at], rotations[beyond])
        limit = np.where(np.isinf(running[going]), np.inf, 2.0 * np.maximum(running[going], there) + JUMP_SLACK)
        held = met & (moved <= limit)
        failed = going[~held]
        alive[failed] = False
        alive[failed ^ 1] = False  # a candidate must get to both ends: its other carry stops too
        going, poses, at, moved = going[held], poses[held], at[held], moved[held]
        for row, pose in zip(going, poses, strict=True):
            walked[row][step] = pose
        previous[going], previous_frame[going], running[going] = poses, at, moved
    spans = []
    for index in range(len(candidates)):
        back, on = 2 * index, 2 * index + 1
        if not (alive[back] and alive[on]):
            continue
        route_frames = np.concatenate((routes[back][::-1], [owners[index]], routes[on]))
        poses = np.concatenate((walked[back][::-1], candidates[index][None], walked[on]))
        spans.append((owners[index], route_frames, poses))
    return spans


def _keep_best(frames, low: int, high: int, spans: list) -> None:
    """Fill each span between its followed frames and keep the smoothest that meets every goal
    of the stretch and leaves the shot fewer visible jumps."""
    every = np.arange(frames.goals.count)
    jumps_now = len(visible_jumps(frames.rotations, every)[0])
    best = None
    for _, route_frames, poses in spans:
        stretch = np.arange(low, high + 1)
        between = np.setdiff1d(stretch, route_frames)
        filled = np.empty((len(stretch), *poses.shape[1:]))
        filled[route_frames - low] = poses
        met = np.ones(len(stretch), dtype=bool)
        if between.size:
            guesses = between_poses(poses, route_frames, between, np.ones(len(route_frames), dtype=bool))
            filled[between - low], met[between - low] = frames.solve_rows(
                between, guesses, None, frames.warm_alone, inside_limits=False
            )
        if not np.all(met):
            continue
        trial = frames.rotations.copy()
        trial[stretch] = filled
        if len(visible_jumps(trial, every)[0]) >= jumps_now:
            continue
        roughness = np.max(pose_distance(trial[max(low, 1) : high + 1], trial[max(low, 1) - 1 : high]))
        if best is None or roughness < best[0]:
            best = (roughness, stretch, filled)
    if best is not None:
        frames.keep(best[1], best[2], np.ones(len(best[1]), dtype=bool))
