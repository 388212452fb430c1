"""Solve chains at the current frame and write the pose: shared by Solve Now and the handlers.

``solve_current_frame`` reads every chain from the evaluated scene, solves them in priority
order (``solving.chain_jobs``), writes the solved rotations (``pose_writer``) and records each
chain's status on the chain for the panel. Problems never raise: they come back per chain.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import numpy as np

from ...solver.request import SolveOptions, tracking, within, without_restarts
from ...solver.solver_path import describe as describe_solver_path
from ...solver.solver_path import solves_natively
from .. import compat
from ..chains import learned_store
from ..errors import ChainError
from ..rig import own_pose, pose_writer, reader
from ..runtime.state import session
from . import body_jobs, chain_jobs, chain_options, jobs


@dataclass(frozen=True)
class ChainReport:
    """What happened to one chain: ``error`` set when it could not be solved (pose untouched)."""

    chain: object  # the QuatIKChain property group
    solution: jobs.ChainSolution | None
    error: str | None
    changed: bool = False  # the pose was written with new values
    light: bool = False  # solved lightly while moving, or cut short by its time limit: finish at rest


def rig_and_options(ob, chain) -> tuple[reader.ChainRig, SolveOptions]:
    """The chain's rig and solver options (with its learned start poses when it uses them)."""
    rig = reader.read_chain_rig(ob, chain)
    learned = None
    if chain.use_learned_start:
        learned, why_not = learned_store.load(chain, rig)
        if why_not and learned_store.BODY_KEY in chain and learned_store.KEY not in chain:
            why_not = None  # the body's, kept on its first chain, are checked when the body is solved
        if why_not:
            rig = dataclasses.replace(rig, warnings=(*rig.warnings, why_not))
    return rig, chain_options.options_for(chain, learned)


class Effort(enum.Enum):
    """How hard a chain solved warm from its current pose works (``read_job``)."""

    FULL = "full"  # the chain's own settings (Solve Now; Live posing in the background; at rest)
    # While its inputs keep moving (Live posing in the UI): on the native kernel the chain's own
    # settings too, restarts and all, starting none after ``MOVING_TIME_LIMIT``; a chain whose
    # full solves take longer than ``HEAVY_WHILE_MOVING`` (a long chain at a goal it cannot
    # reach: 140 ms for the 30-bone sample rig) solves as on numpy, and one whose update
    # before, moving too, missed runs its full iterations but no restarts
    # (``session.missed_while_moving``). On numpy a few
    # iterations and no restarts, as a baked sequence tracks a miss: there a round of restarts
    # costs up to ~100 ms and a miss's full iterations ~35 ms, a visible stutter while the
    # target is dragged. The handlers finish what was solved lightly, or ran out of time, with
    # FULL once the inputs rest (``ChainReport.light``).
    MOVING = "moving"


# A Live chain solved in full while its inputs move starts no round of restarts after this
# many seconds (a round started runs to its end: ~3 ms each on the 3-bone benchmark chain,
# whose full solve at a goal its limits cannot reach takes 6-7 ms with its 2 rounds)...
MOVING_TIME_LIMIT = 0.010
# ... and solves lightly while moving once a full solve of it has taken longer than this
# (restarts included; the longest since the chain or its settings last changed).
HEAVY_WHILE_MOVING = 0.010
# Last Solve's line for a solve its chain's Time Limit cut short.
OUT_OF_TIME = "stopped at the Time Limit: the best pose found so far is kept"


def _full_solve_key(ob, chain) -> tuple:
    return (compat.session_key(ob), chain.name)


def _measured_as(rig: reader.ChainRig, options: SolveOptions) -> tuple:
    """What a chain's full-solve time holds for: its solver chain, settings and solver path (a
    full solve on numpy takes 10-30 times as long as on the kernel)."""
    return (rig.chain.fingerprint, options.settings, solves_natively(rig.chain, options.settings))


def solves_lightly(ob, chain, rig: reader.ChainRig, options: SolveOptions, effort: Effort) -> bool:
    """Whether a warm solve of ``chain`` (``rig``, ``options``) with ``effort`` takes a few
    iterations and no restarts: while its inputs move, unless the native kernel solves it and
    its full solves have stayed within ``HEAVY_WHILE_MOVING`` (``Effort``)."""
    if effort is not Effort.MOVING:
        return False
    if not solves_natively(rig.chain, options.settings):
        return True
    measured = session.full_solve_seconds.get(_full_solve_key(ob, chain))
    return measured is not None and measured[0] == _measured_as(rig, options) and measured[1] > HEAVY_WHILE_MOVING


@dataclass(frozen=True)
class _Read:
    job: jobs.ChainJob
    light: bool  # solved lightly (``solves_lightly``)
    measured_as: tuple | None  # a warm full solve: what its time holds for (``_measured_as``)


def _read(ob, chain, depsgraph, *, warm_start: bool, sequence: bool, effort: Effort) -> _Read:
    rig, options = rig_and_options(ob, chain)
    light, measured_as = False, None
    if warm_start:
        light = solves_lightly(ob, chain, rig, options, effort)
        if light:
            options = tracking(options)
        elif effort is Effort.MOVING and _full_solve_key(ob, chain) in session.missed_while_moving:
            # Its update before, while the inputs moved too, missed: most likely a goal out of
            # reach being dragged on, where a round of restarts (random starts in narrow
            # windows) finds nothing new. Solved without them; the rest finishes it in full.
            options, light = without_restarts(options), True
        else:
            measured_as = _measured_as(rig, options)
            if effort is Effort.MOVING:
                options = within(options, MOVING_TIME_LIMIT)
    if chain.time_limit > 0.0:  # the chain's own limit (a tighter one above stands)
        options = within(options, float(chain.time_limit))
    inputs = reader.read_frame_inputs(rig, depsgraph)
    own = None
    if inputs.influence < 1.0 or own_pose.remembers(rig):
        own = own_pose.own_rotations(rig, inputs.rotations)[None]
    job = jobs.ChainJob(
        rig=rig,
        options=options,
        inputs=jobs.StackedInputs.stack([inputs]),
        warm_start=warm_start,
        sequence=sequence,
        own_rotations=own,
        frames=np.array([depsgraph.scene.frame_current + depsgraph.scene.frame_subframe]),
        priority=chain.priority,
        weight=chain.weight,
        body_learned_starts=learned_store.load_body(chain) if chain.use_learned_start else None,
    )
    return _Read(job, light, measured_as)


def read_job(
    ob, chain, depsgraph, *, warm_start: bool, sequence: bool = False, effort: Effort = Effort.FULL
) -> jobs.ChainJob:
    """A chain's job for the current frame; ChainError if it cannot be read."""
    return _read(ob, chain, depsgraph, warm_start=warm_start, sequence=sequence, effort=effort).job


def _remember_full_solve(ob, chain, measured_as: tuple, seconds: float) -> None:
    """Keep the longest full solve of the chain since it or its settings changed."""
    key = _full_solve_key(ob, chain)
    before = session.full_solve_seconds.get(key)
    if before is not None and before[0] == measured_as:
        seconds = max(seconds, before[1])
    session.full_solve_seconds[key] = (measured_as, seconds)


def _remember_miss_while_moving(ob, chain, effort: Effort, outcome) -> None:
    """Note whether a warm solve while the inputs moved missed (``session.missed_while_moving``);
    any other solve of the chain forgets it."""
    key = _full_solve_key(ob, chain)
    if effort is Effort.MOVING and not np.all(outcome.converged):
        session.missed_while_moving.add(key)
    else:
        session.missed_while_moving.discard(key)


def solve_current_frame(
    ob, chains, depsgraph, *, warm_start, write: bool = True, record: bool = True, effort: Effort = Effort.FULL
) -> list[ChainReport]:
    """Solve ``chains`` (priority order) of armature ``ob`` at the current frame.

    ``warm_start`` is a bool or a function of the chain: start from the current pose (live
    posing) rather than from a fixed start (deterministic, as per-frame mode and baking do); such a
    chain solves with ``effort``. With ``record`` each chain's status is stored on it (call
    ``record_status`` later otherwise).
    """
    reports: dict[int, ChainReport] = {}
    reads: list[_Read] = []
    job_chains = []
    for index, chain in enumerate(chains):
        warm = warm_start(chain) if callable(warm_start) else warm_start
        try:
            reads.append(_read(ob, chain, depsgraph, warm_start=warm, sequence=False, effort=effort))
            job_chains.append((index, chain))
        except ChainError as error:
            reports[index] = ChainReport(chain, None, f"Chain '{reader.chain_label(chain)}': {error}")
    solutions = chain_jobs.solve_chains([read.job for read in reads])
    for (index, chain), read, solution in zip(job_chains, reads, solutions, strict=True):
        changed, light = False, read.light
        if solution.error is None:
            if write:
                changed = pose_writer.write_pose(solution.rig, solution.outcome.rotations[0])
                if solution.stretch is not None:
                    changed |= pose_writer.write_stretch(solution.rig, solution.stretch[0])
                if read.job.own_rotations is not None:
                    own_pose.remember(solution.rig, read.job.own_rotations[0])
            if read.job.warm_start:
                _remember_miss_while_moving(ob, chain, effort, solution.outcome)
            if read.measured_as is not None:
                _remember_full_solve(ob, chain, read.measured_as, solution.seconds)
                # Cut short while moving: finished at rest, as a light solve is.
                light = light or (effort is Effort.MOVING and solution.outcome.out_of_time)
        reports[index] = ChainReport(chain, solution, solution.error, changed, light)
    ordered = [reports[i] for i in range(len(chains))]
    if record:
        for report in ordered:
            record_status(report.chain, report)
        record_pin_status(ob, [report.solution for report in ordered])
    return ordered


def record_pin_status(ob, solutions, outcomes=None) -> None:
    """Store on the armature's pins how the solutions (a body's chains carry its pins'
    outcomes) held them; ``outcomes``: pin index → ``body_jobs.PinOutcome`` gathered already
    (a bake's blocks). A pin no solved chain holds says so."""
    solved = [solution for solution in solutions if solution is not None and solution.error is None]
    if outcomes is None:
        outcomes = body_jobs.merged_pin_outcomes(o for solution in solved for o in solution.pin_outcomes)
    bones = set().union(*(solution.rig.bone_names for solution in solved)) if solved else set()
    for index, pin in enumerate(ob.quat_ik.pins):
        outcome = outcomes.get(index)
        if outcome is None:
            held_by_none = pin.enabled and pin.bone and pin.bone not in bones and solved
            message = f"no chain that was solved holds '{pin.bone}'" if held_by_none else ""
            _set_if_changed(pin, "status_message", message)
            _set_if_changed(pin, "status_solved", False)
            continue
        _set_if_changed(pin, "status_solved", True)
        _set_if_changed(pin, "status_held", bool(outcome.held))
        _set_if_changed(pin, "status_error", float(outcome.error))
        message = "" if outcome.held else "the goals and limits pulled it away"
        _set_if_changed(pin, "status_message", message)


def _set_if_changed(chain, name: str, value) -> None:
    current = getattr(chain, name)
    if isinstance(value, float):
        if abs(current - value) <= 1e-12 * max(1.0, abs(value)):
            return
    elif current == value:
        return
    setattr(chain, name, value)


def record_status(chain, report: ChainReport, jump_frames=(), largest_jump: float = 0.0) -> None:
    """Store the solve's outcome on the chain (only values that changed, so no needless updates).
    ``jump_frames``, ``largest_jump`` (radians): a bake's pose jumps; other solves have none."""
    _set_if_changed(chain, "status_jump_frames", ",".join(str(int(frame)) for frame in jump_frames))
    _set_if_changed(chain, "status_largest_jump", float(largest_jump))
    if report.error is not None:
        _set_if_changed(chain, "status_message", report.error)
        _set_if_changed(chain, "status_converged", False)
        _set_if_changed(chain, "status_solved", False)  # the figures are an older solve's
        return
    outcome = report.solution.outcome
    warnings = report.solution.rig.warnings
    _set_if_changed(chain, "status_solved", True)
    _set_if_changed(chain, "status_converged", bool(np.all(outcome.converged)))
    _set_if_changed(chain, "status_error", float(np.max(outcome.position_error)))
    _set_if_changed(chain, "status_iterations", int(np.max(outcome.iterations)))
    _set_if_changed(chain, "status_restarts", int(np.max(outcome.restarts)))
    _set_if_changed(chain, "status_solver", describe_solver_path(report.solution.rig.chain))
    if outcome.out_of_time and not report.light:
        warnings = (*warnings, OUT_OF_TIME)
    message = "; ".join(warnings)
    _set_if_changed(chain, "status_message", message[:1].upper() + message[1:])
