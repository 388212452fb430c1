"""The one solve pipeline: a request in, a ``SolveResult`` out, for every front end.

The panel's Solve Now, Live, Per Frame, the bake and both command lines all build a
``SolveRequest`` (goals in the chain's root frame, where to start, poles, whether the frames are
a shot in time) and call ``solve_request`` with ``SolveOptions`` (how to solve). The pipeline
composes what a good answer needs around the methods: the start policy (the pose given, learned
starts, or the middle of the limits), turning the chain toward goal and pole as Blender's IK does,
following a shot frame to frame (or round a cycle), facing poles, easing visible jumps.
``defaults.DEFAULT_SETTINGS`` are the defaults all front ends share.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from .chain import Chain
from .defaults import DEFAULT_SETTINGS
from .goals import Goals
from .learned_starts import LearnedStarts
from .pole import blender_start, solve_facing_poles
from .settings import SolveResult, SolveSettings
from .shots.cycles import repeats_first, solve_cycle, visible_wrap_jump
from .shots.jump_easing import ease_jumps
from .shots.pose_jumps import visible_jumps
from .shots.sequence import solve_sequence, tracking_a_miss
from .solve import solve
from .start_poses import cold_start

Array = NDArray[np.float64]

POLE_FACINGS = ("bend", "root_x")  # what faces the pole: ``pole.face_pole``


@dataclass(frozen=True)
class SolveOptions:
    """How to solve one chain."""

    settings: SolveSettings = DEFAULT_SETTINGS
    learned_starts: LearnedStarts | None = None  # start poses learned for the chain (Blow 2002)
    pole_angle: float = 0.0  # radians: turns the bend about the root-goal line, when the request has poles
    pole_facing: str = "bend"  # "bend": the bend faces the pole; "root_x": the root's X axis does (Blender's IK)
    ease_jumps: int = 0  # a shot's visible jumps are eased over this many frames (below 2: kept)
    cyclic: bool = False  # a shot loops: its last frame leads into its first (``cycles``)
    # How much the goals' orientations (or directions) count against their positions (the panel's
    # Orientation Weight; 0: positions only); None: the weight the goals carry.
    orientation_weight: float | None = None

    def __post_init__(self) -> None:
        if self.pole_facing not in POLE_FACINGS:
            raise ValueError(f"pole_facing must be one of {POLE_FACINGS}, not {self.pole_facing!r}")
        if not np.isfinite(self.pole_angle):
            raise ValueError(f"pole_angle must be a finite number of radians, not {self.pole_angle}")
        if self.orientation_weight is not None and not (0.0 <= self.orientation_weight < np.inf):
            raise ValueError(f"orientation_weight must be a finite number >= 0, not {self.orientation_weight}")

    def goals_for(self, goals: Goals) -> Goals:
        """``goals`` with these options' orientation weight (positions only at weight 0)."""
        if self.orientation_weight is None or not goals.has_orientation:
            return goals
        if self.orientation_weight <= 0.0:
            return Goals(goals.positions, position_weight=goals.position_weight)
        return replace(goals, orientation_weight=self.orientation_weight)


@dataclass(frozen=True)
class SolveRequest:
    """What to solve: F goals in the chain's root frame, independent targets or (``shot``) the
    frames of a motion, in order."""

    goals: Goals
    start: Array | None = None  # None: the start policy; (n, 4) shared or (F, n, 4) per frame: the pose to start from
    poles: Array | None = None  # (F, 3) points the chain bends toward (root frame)
    pole_angles: Array | None = None  # (F,) radians, when animated (else the options' pole_angle)
    shot: bool = False  # frames follow each other in time: keep the pose continuous

    @classmethod
    def of(cls, positions, orientations=None, **fields) -> SolveRequest:
        """A request for positions (F, 3), with wanted tip orientations (F, 4) when given (they count
        by ``SolveOptions.orientation_weight``)."""
        goals = Goals.of(positions) if orientations is None else Goals(positions, orientations=orientations)
        return cls(goals, **fields)


def solve_request(chain: Chain, request: SolveRequest, options: SolveOptions | None = None) -> SolveResult:
    """Solve every goal of ``request``; ValueError for bad input (the solver's message)."""
    options = options or SolveOptions()
    goals = options.goals_for(request.goals)
    result = _run(chain, goals, request, options)
    angles = options.pole_angle if request.pole_angles is None else request.pole_angles
    if request.poles is not None:
        result = solve_facing_poles(chain, goals, result, request.poles, options.settings, angles, options.pole_facing)
    if request.shot and options.ease_jumps >= 2:  # last: a pole's turn may make a jump too
        result = ease_jumps(chain, goals, result, np.arange(goals.count), options.ease_jumps, options.settings)
    if request.shot and options.cyclic:
        result = replace(result, wrap_jump=visible_wrap_jump(result.rotations, repeats_first(chain, goals)))
    return result


def _turned_toward_pole(chain: Chain, start: Array, goals: Goals, request: SolveRequest, options: SolveOptions):
    """Start poses (one per goal) turned toward the goal and the pole as Blender's IK turns a chain
    before solving, for a pole faced as Blender's (``pole.blender_start``); else as given."""
    if request.poles is None or options.pole_facing != "root_x":
        return start
    angle = options.pole_angle if request.pole_angles is None else request.pole_angles
    angle = np.broadcast_to(np.asarray(angle, dtype=float), (len(request.poles),))[: goals.count]
    start = np.broadcast_to(start, (goals.count, chain.n_bones, 4)).copy()
    return blender_start(chain, start, goals.positions, request.poles[: goals.count], angle)


def _run(chain: Chain, goals: Goals, request: SolveRequest, options: SolveOptions) -> SolveResult:
    start = request.start
    if request.shot:
        if start is not None and np.ndim(start) == 3:
            start = start[0]  # a shot starts from one pose
        if start is None:
            # From where a frame solved on its own starts: a bake starts on the branch the Per Frame
            # preview showed (a one-frame bake keys Per Frame's pose on 39 of 40 random rigs).
            start = cold_start(chain)
        if request.poles is not None and options.pole_facing == "root_x":
            # Its first frame bends as a single frame solved on its own would (below).
            start = _turned_toward_pole(chain, start, goals.take(np.array([0])), request, options)[0]
        solve_shot = solve_cycle if options.cyclic else solve_sequence
        return solve_shot(chain, goals, start_rotations=start, settings=options.settings)
    if start is None and options.learned_starts is None:
        start = cold_start(chain)
    if start is not None:
        # As Blender's IK: turned toward the goal and the pole first, which decides the bend.
        start = _turned_toward_pole(chain, start, goals, request, options)
    return solve(
        chain,
        goals,
        start_rotations=start,
        # Restarts prefer answers near the pose the chain had (Live starts from it).
        reference_rotations=request.start,
        learned_starts=options.learned_starts if request.start is None else None,
        settings=options.settings,
    )


# Options are frozen and hashable: Live asks for these on every update, and building options or
# settings checks every field.


@functools.lru_cache(maxsize=64)
def tracking(options: SolveOptions) -> SolveOptions:
    """A few iterations and no restarts: for a goal missed the update before, or still moving."""
    return replace(options, settings=tracking_a_miss(options.settings))


@functools.lru_cache(maxsize=64)
def without_restarts(options: SolveOptions) -> SolveOptions:
    """``options`` whose solves run their full iterations but no round of restarts: for a goal
    missed the update before while the inputs keep moving (the rest finishes it in full)."""
    settings = options.settings
    return options if settings.restarts == 0 else replace(options, settings=replace(settings, restarts=0))


@functools.lru_cache(maxsize=64)
def within(options: SolveOptions, seconds: float) -> SolveOptions:
    """``options`` whose solves spend at most ``seconds`` on restarts (``SolveSettings.time_limit``;
    a tighter limit of their own stands)."""
    settings = options.settings
    if settings.time_limit is not None and settings.time_limit <= seconds:
        return options
    return replace(options, settings=replace(settings, time_limit=seconds))


def shot_jumps(result: SolveResult, frame_numbers: Array) -> tuple[Array, Array]:
    """Where a solved shot's pose jumps from one solution branch to another: the frames (of
    ``frame_numbers``) where the new pose appears, and each jump's largest joint turn (radians)."""
    frame_numbers = np.asarray(frame_numbers)
    positions, turns = visible_jumps(result.rotations, frame_numbers)
    return frame_numbers[positions], turns
