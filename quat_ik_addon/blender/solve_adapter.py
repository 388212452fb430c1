"""The ONE place the Blender layer calls the solver.

Turns a chain's settings into solver settings and runs a batch of frames: independent
frames (Live, Per Frame) through ``solve``, the frames of a bake through ``solve_sequence``
so the pose follows the motion. No ``bpy`` here: settings are read by attribute.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

import numpy as np

from ..solver.chain import Chain
from ..solver.cycles import repeats_first, solve_cycle, visible_wrap_jump
from ..solver.goals import Goals
from ..solver.jump_easing import ease_jumps
from ..solver.learned_starts import LearnedStarts
from ..solver.learned_starts import learn_start_poses as learn_starts
from ..solver.native.kernel_calls import kernel_for
from ..solver.pole import blender_start, solve_facing_poles
from ..solver.pose_jumps import visible_jumps as sequence_jumps
from ..solver.sequence import solve_sequence
from ..solver.sequence import tracking_a_miss as tracking_settings
from ..solver.settings import SolveResult, SolveSettings
from ..solver.solve import solve as solve_goals
from ..solver.solver_path import describe as describe_solver_path

# Our method names (properties.METHODS) -> the solver's.
_METHODS = {"CCD": "ccd", "DLS": "dls", "COMBINED": "dls_ccd"}


@dataclass(frozen=True)
class SolverOptions:
    """Everything about HOW to solve one chain, from its settings."""

    settings: SolveSettings
    orientation_weight: float = 0.0
    learned_starts: object = None  # the solver's LearnedStarts, when the chain has some
    pole_angle: float = 0.0  # radians, when the request has poles
    pole_facing: str = "bend"  # what faces the pole (``pole.face_pole``)
    ease_jumps: int = 0  # a shot's visible jumps are eased over this many poses (the bake's keys; below 2: kept)
    cyclic: bool = False  # a shot loops: its last frame leads into its first (``cycles``)


@dataclass(frozen=True)
class SolveRequest:
    """WHAT to solve: F frames of goals in the chain's root frame."""

    positions: np.ndarray  # (F, 3)
    orientations: np.ndarray | None = None  # (F, 4) wanted posed frame of the tip bone, wxyz
    start: np.ndarray | None = None  # None (rest), (n, 4) shared or (F, n, 4) per frame
    poles: np.ndarray | None = None  # (F, 3) points the chain bends toward (root frame)
    pole_angles: np.ndarray | None = None  # (F,) radians, when animated (else the options' pole_angle)
    sequence: bool = False  # frames follow each other in time: keep the pose continuous


@dataclass(frozen=True)
class SolveOutcome:
    """Per-frame result; rotations are pose rotations (``rotation_quaternion``), wxyz."""

    rotations: np.ndarray  # (F, n, 4)
    position_error: np.ndarray  # (F,)
    orientation_error: np.ndarray  # (F,) radians
    iterations: np.ndarray  # (F,)
    restarts: np.ndarray  # (F,)
    converged: np.ndarray  # (F,) bool
    tolerance: float
    wrap_jump: float = 0.0  # a looping shot's jump where it wraps, radians (0: it wraps smoothly)
    out_of_time: bool = False  # the settings' time limit cut restarts (or a shot's searches) short


def options_for(chain_settings, learned_starts=None) -> SolverOptions:
    """Solver options from a QuatIKChain (or anything with its attribute names)."""
    settings = _solve_settings(
        int(chain_settings.iterations),
        float(chain_settings.tolerance) if chain_settings.tolerance > 0.0 else None,
        chain_settings.sweep_order.lower(),
        int(chain_settings.restarts),
        _METHODS.get(chain_settings.method, "dls_ccd"),
    )
    orientation_weight = 0.0
    if chain_settings.orientation_mode != "NONE":
        orientation_weight = float(chain_settings.orientation_weight)
    return SolverOptions(
        settings=settings,
        orientation_weight=orientation_weight,
        learned_starts=learned_starts if chain_settings.use_learned_start else None,
        pole_angle=float(chain_settings.pole_angle),
        pole_facing=str(getattr(chain_settings, "pole_facing", "BEND")).lower(),
    )


@functools.lru_cache(maxsize=256)  # (Live and Per Frame read every chain's settings on every update)
def _solve_settings(
    max_iterations: int, tolerance: float | None, order: str, restarts: int, method: str
) -> SolveSettings:
    return SolveSettings(
        max_iterations=max_iterations, tolerance=tolerance, order=order, restarts=restarts, method=method
    )


def tracking_a_miss(options: SolverOptions) -> SolverOptions:
    """A few iterations and no restarts: for a goal missed the update before, or still moving."""
    return replace(options, settings=_tracking(options.settings))


@functools.lru_cache(maxsize=64)  # settings are frozen and hashable; building them checks every field
def _tracking(settings: SolveSettings) -> SolveSettings:
    return tracking_settings(settings)


def within(options: SolverOptions, seconds: float) -> SolverOptions:
    """``options`` whose solves spend at most ``seconds`` on restarts (``SolveSettings.time_limit``;
    a tighter limit of their own stands)."""
    return replace(options, settings=_within(options.settings, seconds))


@functools.lru_cache(maxsize=64)
def _within(settings: SolveSettings, seconds: float) -> SolveSettings:
    if settings.time_limit is not None and settings.time_limit <= seconds:
        return settings
    return replace(settings, time_limit=seconds)


def solves_natively(chain: Chain, options: SolverOptions) -> bool:
    """Whether solves of ``chain`` with ``options`` run on the native kernel (it loaded, passed
    its self-check, knows every limit of the chain, and the settings do not ask for numpy)."""
    return kernel_for(chain, options.settings) is not None


def _goals(request: SolveRequest, options: SolverOptions) -> Goals:
    if request.orientations is None or options.orientation_weight <= 0.0:
        return Goals.of(request.positions)
    return Goals(request.positions, orientations=request.orientations, orientation_weight=options.orientation_weight)


def cold_start(chain: Chain) -> np.ndarray:
    """Where a single-frame solve without a start pose (Per Frame, Solve Now from the neutral pose) starts:
    the middle of every joint's limits (the rest pose for free joints). A rig's rest pose often sits at a limit's end (a straight knee or
    elbow, a hinge whose range starts there), where a solve stalls and needs restarts; from the
    middle, cold solves of the sample rigs' legs restart 0-2% of the time instead of 23-47%
    and take 3-5 ms instead of 21-35 (Blow 2002: the start pose decides what CCD finds)."""
    return chain.centre_pose()


def _blender_start(chain: Chain, start: np.ndarray, goals: Goals, request: SolveRequest, options: SolverOptions):
    """Start poses (one per goal) turned toward the goal and the pole as Blender's IK turns a
    chain before solving, for a pole faced as Blender's (``pole.blender_start``); else as given."""
    if request.poles is None or options.pole_facing != "root_x":
        return start
    angle = options.pole_angle if request.pole_angles is None else request.pole_angles
    angle = np.broadcast_to(np.asarray(angle, dtype=float), (len(request.poles),))[: goals.count]
    start = np.broadcast_to(start, (goals.count, chain.n_bones, 4)).copy()
    return blender_start(chain, start, goals.positions, request.poles[: goals.count], angle)


def _run(chain: Chain, goals: Goals, request: SolveRequest, options: SolverOptions) -> SolveResult:
    start = request.start
    if request.sequence:
        if start is not None and np.ndim(start) == 3:
            start = start[0]  # a shot starts from one pose
        solve_shot = solve_cycle if options.cyclic else solve_sequence
        if start is None:
            # From where a frame solved on its own starts (Per Frame, Solve Now): a bake starts on
            # the branch the preview showed (a one-frame bake keys Per Frame's pose on 39 of 40
            # random rigs; the demo's and the benchmarks' shots are as good as from rest, which
            # started elsewhere).
            start = cold_start(chain)
        if request.poles is not None and options.pole_facing == "root_x":
            # Its first frame bends as a single frame solved on its own would (below).
            first = goals.take(np.array([0]))
            start = _blender_start(chain, start, first, request, options)[0]
        return solve_shot(chain, goals, start_rotations=start, settings=options.settings)
    if start is None and options.learned_starts is None:
        start = cold_start(chain)
    if start is not None:
        # As Blender's IK: turned toward the goal and the pole first, which decides the bend.
        start = _blender_start(chain, start, goals, request, options)
    return solve_goals(
        chain,
        goals,
        start_rotations=start,
        # Restarts prefer answers near the pose the chain had (Live mode starts from it).
        reference_rotations=request.start,
        learned_starts=options.learned_starts if request.start is None else None,
        settings=options.settings,
    )


def solve(chain: Chain, request: SolveRequest, options: SolverOptions) -> SolveOutcome:
    """Solve every frame of ``request``; ValueError from the solver passes through."""
    goals = _goals(request, options)
    result = _run(chain, goals, request, options)
    if request.poles is not None:
        result = solve_facing_poles(
            chain,
            goals,
            result,
            request.poles,
            options.settings,
            options.pole_angle if request.pole_angles is None else request.pole_angles,
            options.pole_facing,
        )
    if request.sequence and options.ease_jumps >= 2:  # last: a pole's turn may make a jump too
        frame_numbers = np.arange(goals.count)
        result = ease_jumps(chain, goals, result, frame_numbers, options.ease_jumps, options.settings)
    wrap = 0.0
    if request.sequence and options.cyclic:
        wrap = visible_wrap_jump(result.rotations, repeats_first(chain, goals))
    return SolveOutcome(
        rotations=np.asarray(result.rotations),
        position_error=np.asarray(result.position_error),
        orientation_error=np.asarray(result.orientation_error),
        iterations=np.asarray(result.iterations),
        restarts=np.asarray(result.restarts),
        converged=np.asarray(result.converged),
        tolerance=float(result.tolerance),
        wrap_jump=wrap,
        out_of_time=bool(getattr(result, "out_of_time", False)),
    )


def solver_path(chain: Chain) -> str:
    """``native kernel`` or ``numpy (why)``: the path solves of ``chain`` take, for the panel."""
    return describe_solver_path(chain)


def visible_jumps(outcome: SolveOutcome, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where a baked shot's pose jumps from one solution branch to another: the frames (of
    ``frames``, the shot's frame numbers) where the new pose appears, and each jump's largest
    joint turn in radians."""
    frames = np.asarray(frames)
    positions, turns = sequence_jumps(outcome.rotations, frames)
    return frames[positions], turns


def learn_start_poses(chain: Chain, chain_settings) -> LearnedStarts:
    """Learned start poses for ``chain`` under the chain's own solver settings (Blow 2002)."""
    return learn_starts(chain, settings=options_for(chain_settings).settings)


def learned_starts_from_arrays(arrays: dict) -> LearnedStarts:
    return LearnedStarts.from_arrays(arrays)
