"""Solve chains at the current frame and write the pose: shared by Solve Now and the handlers.

``solve_current_frame`` reads every chain from the evaluated scene, solves them in priority
order (``chain_solve``), writes the solved rotations (``pose_writer``) and records each
chain's status on the chain for the panel. Problems never raise: they come back per chain.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass

import numpy as np

from . import chain_solve, learned_store, own_pose, pose_writer, rig_reader, solve_adapter
from .errors import ChainError


@dataclass(frozen=True)
class ChainReport:
    """What happened to one chain: ``error`` set when it could not be solved (pose untouched)."""

    chain: object  # the QuatIKChain property group
    solution: chain_solve.ChainSolution | None
    error: str | None
    changed: bool = False  # the pose was written with new values


def rig_and_options(ob, chain) -> tuple[rig_reader.ChainRig, solve_adapter.SolverOptions]:
    """The chain's rig and solver options (with its learned start poses when it uses them)."""
    rig = rig_reader.read_chain_rig(ob, chain)
    learned = None
    if chain.use_learned_start:
        learned, why_not = learned_store.load(chain, rig)
        if why_not:
            rig = dataclasses.replace(rig, warnings=(*rig.warnings, why_not))
    return rig, solve_adapter.options_for(chain, learned)


class Effort(enum.Enum):
    """How hard a chain solved warm from its current pose works (``read_job``)."""

    FULL = "full"  # the chain's own settings (Solve Now; Live posing in the background; at rest)
    # While its inputs keep moving (Live posing in the UI): a few iterations and no restarts,
    # as a baked sequence tracks a miss. A round of restarts costs up to ~100 ms on the 3-bone
    # benchmark chain and a miss's full iterations ~35 ms, a visible stutter while the target
    # is dragged; the handlers finish the chain with FULL once its inputs rest.
    MOVING = "moving"


def read_job(
    ob, chain, depsgraph, *, warm_start: bool, sequence: bool = False, effort: Effort = Effort.FULL
) -> chain_solve.ChainJob:
    """A chain's job for the current frame; ChainError if it cannot be read."""
    rig, options = rig_and_options(ob, chain)
    if warm_start and effort is Effort.MOVING:
        options = solve_adapter.tracking_a_miss(options)
    inputs = rig_reader.read_frame_inputs(rig, depsgraph)
    own = None
    if inputs.influence < 1.0 or own_pose.remembers(rig):
        own = own_pose.own_rotations(rig, inputs.rotations)[None]
    return chain_solve.ChainJob(
        rig=rig,
        options=options,
        inputs=chain_solve.StackedInputs.stack([inputs]),
        warm_start=warm_start,
        sequence=sequence,
        own_rotations=own,
    )


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
    jobs: list[chain_solve.ChainJob] = []
    job_chains = []
    for index, chain in enumerate(chains):
        warm = warm_start(chain) if callable(warm_start) else warm_start
        try:
            jobs.append(read_job(ob, chain, depsgraph, warm_start=warm, effort=effort))
            job_chains.append((index, chain))
        except ChainError as error:
            reports[index] = ChainReport(chain, None, f"Chain '{rig_reader.chain_label(chain)}': {error}")
    for (index, chain), job, solution in zip(job_chains, jobs, chain_solve.solve_chains(jobs), strict=True):
        changed = False
        if solution.error is None and write:
            changed = pose_writer.write_pose(solution.rig, solution.outcome.rotations[0])
            if job.own_rotations is not None:
                own_pose.remember(solution.rig, job.own_rotations[0])
        reports[index] = ChainReport(chain, solution, solution.error, changed)
    ordered = [reports[i] for i in range(len(chains))]
    if record:
        for report in ordered:
            record_status(report.chain, report)
    return ordered


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
    _set_if_changed(chain, "status_solver", solve_adapter.solver_path(report.solution.rig.chain))
    message = "; ".join(warnings)
    _set_if_changed(chain, "status_message", message[:1].upper() + message[1:])
