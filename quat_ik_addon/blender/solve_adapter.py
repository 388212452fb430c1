"""The ONE place the Blender layer calls the solver.

The solver grows features in parallel (orientation goals, restarts, learned start poses,
DLS, frame-to-frame sequences); this module finds out which exist (:func:`capabilities`),
turns a chain's settings into solver settings, and runs a batch of frames. The panel asks
:func:`capabilities` before drawing a setting, so the UI shows only what really works.
No ``bpy`` here: settings are read by attribute.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from functools import cache

import numpy as np

from ..solver import ccd
from ..solver.chain import Chain
from ..solver.settings import SolveSettings

# Our method names (properties.METHODS) -> the solver's.
_METHODS = {"CCD": "ccd", "DLS": "dls", "COMBINED": "ccd_dls"}


@dataclass(frozen=True)
class SolverOptions:
    """Everything about HOW to solve one chain, from its settings."""

    settings: SolveSettings
    orientation_weight: float = 0.0
    learned_starts: object = None  # the solver's LearnedStarts, when the chain has some


@dataclass(frozen=True)
class SolveRequest:
    """WHAT to solve: F frames of goals in the chain's root frame."""

    positions: np.ndarray  # (F, 3)
    orientations: np.ndarray | None = None  # (F, 4) wanted posed frame of the tip bone, wxyz
    start: np.ndarray | None = None  # None (rest), (n, 4) shared or (F, n, 4) per frame
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


def _module(name: str):
    try:
        return importlib.import_module(f"{__package__.rpartition('.')[0]}.solver.{name}")
    except ImportError:
        return None


def _settings_fields() -> set[str]:
    return {f.name for f in dataclasses.fields(SolveSettings)}


@cache
def capabilities() -> frozenset[str]:
    """Solver features available now: a subset of {"orientation", "restarts", "learned_start",
    "method", "sequence"}."""
    found = set()
    fields = _settings_fields()
    if _module("goals") is not None:
        found.add("orientation")
    if "restarts" in fields:
        found.add("restarts")
    if "method" in fields:
        found.add("method")
    if _module("learned_starts") is not None and _module("solve") is not None:
        found.add("learned_start")
    sequence = _module("sequence")
    if sequence is not None and hasattr(sequence, "solve_sequence"):
        found.add("sequence")
    return frozenset(found)


def options_for(chain_settings, learned_starts=None) -> SolverOptions:
    """Solver options from a QuatIKChain (or anything with its attribute names)."""
    fields = _settings_fields()
    caps = capabilities()
    values = {
        "max_iterations": int(chain_settings.iterations),
        "tolerance": float(chain_settings.tolerance) if chain_settings.tolerance > 0.0 else None,
        "order": chain_settings.sweep_order.lower(),
    }
    if "restarts" in caps:
        values["restarts"] = int(chain_settings.restarts)
    if "method" in caps:
        values["method"] = _METHODS.get(chain_settings.method, "ccd")
    orientation_weight = 0.0
    if "orientation" in caps and chain_settings.orientation_mode != "NONE":
        orientation_weight = float(chain_settings.orientation_weight)
    use_learned = "learned_start" in caps and chain_settings.use_learned_start
    return SolverOptions(
        settings=SolveSettings(**{k: v for k, v in values.items() if k in fields}),
        orientation_weight=orientation_weight,
        learned_starts=learned_starts if use_learned else None,
    )


def _goals(request: SolveRequest, options: SolverOptions):
    if request.orientations is None or options.orientation_weight <= 0.0 or "orientation" not in capabilities():
        return request.positions
    from ..solver.goals import Goals

    return Goals(request.positions, orientations=request.orientations, orientation_weight=options.orientation_weight)


# Radians: differences this small between solves are tolerance noise, not pops.
POP_SLACK = 2e-3


def _pose_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    from ..solver import quaternion as quat

    return np.max(quat.angle_between(a, b), axis=-1)


def pops(cold: np.ndarray, warm: np.ndarray) -> np.ndarray:
    """Frames f where the batch (cold) answer jumps from frame f-1 much further than an answer
    warm-started at frame f-1's does: there the cold solve switched solution branch.

    ``cold`` (F, n, 4); ``warm`` (F-1, n, 4), frame f+1 solved from ``cold[f]``.
    """
    cold_jump = _pose_distance(cold[1:], cold[:-1])
    warm_jump = _pose_distance(warm, cold[:-1])
    return np.nonzero(cold_jump > 2.0 * warm_jump + POP_SLACK)[0] + 1


def _run(chain: Chain, request: SolveRequest, options: SolverOptions):
    goals = _goals(request, options)
    if request.sequence and "sequence" in capabilities():
        start = request.start
        if start is not None and np.ndim(start) == 3:
            start = start[0]  # a sequence starts from one pose
        # All frames in one batch first, then each frame again warm from the batch answer of
        # the frame before (a second batch). Where the two agree the batch answer is what a
        # frame-by-frame warm start would give, so the slower sequence solve is not needed.
        batch = _run(chain, SolveRequest(request.positions, request.orientations, start), options)
        count = len(request.positions)
        if count < 2:
            return batch
        cold = np.asarray(batch.rotations)
        orientations = None if request.orientations is None else request.orientations[1:]
        warm = _run(chain, SolveRequest(request.positions[1:], orientations, cold[:-1]), options)
        if not len(pops(cold, np.asarray(warm.rotations))):
            return batch
        return _module("sequence").solve_sequence(chain, goals, start_rotations=start, settings=options.settings)
    front_door = _module("solve")
    if front_door is not None and hasattr(front_door, "solve"):
        extra = {}
        if options.learned_starts is not None and request.start is None:
            extra["learned_starts"] = options.learned_starts
        if request.start is not None:
            extra["reference_rotations"] = request.start  # restarts prefer poses near the current one
        return front_door.solve(chain, goals, start_rotations=request.start, settings=options.settings, **extra)
    return ccd.solve_ccd(chain, goals, start_rotations=request.start, settings=options.settings)


def solve(chain: Chain, request: SolveRequest, options: SolverOptions) -> SolveOutcome:
    """Solve every frame of ``request``; ValueError from the solver passes through."""
    result = _run(chain, request, options)
    count = len(request.positions)
    return SolveOutcome(
        rotations=np.asarray(result.rotations),
        position_error=np.asarray(result.position_error),
        orientation_error=np.asarray(getattr(result, "orientation_error", np.zeros(count))),
        iterations=np.asarray(result.iterations),
        restarts=np.asarray(getattr(result, "restarts", np.zeros(count, dtype=np.int64))),
        converged=np.asarray(result.converged),
        tolerance=float(result.tolerance),
    )


def learn_start_poses(chain: Chain, chain_settings):
    """Learned start poses for ``chain`` (Blow 2002's preprocess), or None if unsupported."""
    module = _module("learned_starts")
    if module is None:
        return None
    return module.learn_start_poses(chain, settings=options_for(chain_settings).settings)


def learned_starts_from_arrays(arrays: dict):
    module = _module("learned_starts")
    return None if module is None else module.LearnedStarts.from_arrays(arrays)
