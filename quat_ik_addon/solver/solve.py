"""The solver's front door: pick start poses, run CCD, DLS or both, restart what is stuck."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat
from . import time_budget
from .chain import Chain
from .free_twist import carry_tip_twist_within_range, tip_twist_is_unseen
from .goals import Goals
from .measurements import combined_error, finish_result, goal_errors, normalised
from .methods.ladder import finishing, run_method
from .native import abi, kernel_calls
from .settings import SolveResult, SolveSettings
from .start_poses import initial_poses

Array = NDArray[np.float64]
# |q|² this close to 1 is unit: dividing by its norm would move only the last bits (each
# product of unit quaternions drifts by ~1e-16; this many keep drift far below any tolerance).
UNIT_SLACK = 1e-13


def pose_distance(a: Array, b: Array) -> Array:
    """Largest joint angle (radians) between two batches of poses (..., n, 4) (on the native
    kernel, where loaded, for batches of one shape: a shot asks for dozens)."""
    distance = kernel_calls.pose_distance(a, b)
    return np.max(quat.angle_between(a, b), axis=-1) if distance is None else distance


def _shaken(chain: Chain, poses: Array, temperature: Array, rng: np.random.Generator) -> Array:
    """Poses (M, n, 4) turned by random rotations of about ``temperature`` radians, clamped."""
    axes = rng.normal(size=(*poses.shape[:-1], 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    angles = temperature[:, None] * np.abs(rng.normal(size=poses.shape[:-1]))
    return chain.clamp_to_limits(quat.multiply(quat.from_axis_angle(axes, angles), poses))


# Values closer than this (times the reach) are ties, and ties go to the first candidate. Where
# a goal lies out of reach of a chain free to turn about the line to it, candidates settle all
# round that line at the same closest miss: picking the smallest miss there picked by the last
# bit of the sums, which in Blender 3.4 depends on where numpy's arrays lie in memory (its Per
# Frame poses moved up to 320° when frames were played again).
TIE = 1e-9


def _first_least(values: Array, slack: float) -> NDArray[np.intp]:
    """Per row, the first column within ``slack`` of the row's least value (inf: never)."""
    least = np.min(values, axis=1, keepdims=True)
    return np.argmax(values <= least + slack, axis=1)


# A restart candidate either converges quickly or is one of the dead ends it is escaping: on a
# goal it meets DLS gains far more than a few tenths of a percent an iteration, while from a dead
# end it creeps towards a closest miss by less. So a candidate stops after this many iterations
# in a row that gain less than this share of its error. Looser (1% over 3) cut the Blender
# benchmark's 3-bone shot further but left more frames missed on bench/busy_paths.py's limited
# 5-bone chain; at these values busy_paths meets what it met without the test.
RESTART_STALL_RATIO = 0.003
RESTART_STALL_ITERATIONS = 4


def _restart_budget(settings: SolveSettings) -> SolveSettings:
    """The settings a round's candidates are solved with: ``restart_iterations`` at most, and
    the candidates' stall test (never looser than the settings' own)."""
    return replace(
        settings,
        max_iterations=min(settings.max_iterations, settings.restart_iterations),
        stall_ratio=max(settings.stall_ratio, RESTART_STALL_RATIO),
        stall_iterations=min(settings.stall_iterations, RESTART_STALL_ITERATIONS),
    )


def _restart(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    iterations: Array,
    settings: SolveSettings,
    reference: Array | None,
    preferred: Array | None,
    measured: tuple[Array, Array, Array] | None = None,
    switch_gain: float | None = None,
    give_up: NDArray[np.bool_] | None = None,
) -> Array:
    """Re-solve unmet goals from random poses, ``restart_candidates`` at a time, all batched.

    A candidate that meets the goal replaces the current pose; among several, the one
    nearest the reference pose (continuity) or else with the smallest error. When none meets
    it, the closest miss replaces the current pose without a reference, and with one only
    when it comes closer by ``switch_gain`` (None: never). Goals beyond the chain's reach are
    not restarted, and goals marked in ``give_up`` get no further rounds once a round leaves
    them as they were. Returns the restart rounds each goal used.
    ``measured``: ``goal_errors`` of ``rotations`` as they come in, when known.
    """
    rng = None  # made when first needed: most calls restart nothing
    tolerance = settings.absolute_tolerance(chain.reach)
    restarts = np.zeros(goals.count, dtype=np.int64)
    candidates = settings.restart_candidates
    searching = np.ones(goals.count, dtype=bool)  # goals still given rounds (``give_up``)
    for _ in range(settings.restarts if candidates else 0):
        if time_budget.spent():
            break  # the poses so far stand (``time_budget``)
        position_error, orientation_error, _ = measured or goal_errors(chain, goals, rotations)
        met = settings.reached(position_error, orientation_error, tolerance, chain.reach)
        if met.all():  # the usual answer, found without the numpy work below
            break
        # Beyond the chain's reach no start helps: those goals keep their best pose.
        in_reach = np.linalg.norm(goals.positions - chain.rest_offsets[0], axis=1) <= chain.reach + tolerance
        unmet = np.nonzero(~met & in_reach & searching)[0]
        if unmet.size == 0:
            break
        rng = rng or np.random.default_rng(settings.seed)
        starts = _candidate_starts(chain, rotations, unmet, candidates, reference, rng)
        # The next round's errors: the candidates taken were measured as they were solved.
        errors = (position_error.copy(), orientation_error.copy())
        take = _round(
            chain, goals, rotations, errors, iterations, unmet, starts, settings, reference, preferred, switch_gain
        )
        if give_up is not None:
            searching[unmet[give_up[unmet] & ~take]] = False
        restarts[unmet] += 1
        measured = (*errors, None)
    return restarts


def _candidate_starts(
    chain: Chain, rotations: Array, unmet: NDArray[np.intp], candidates: int, reference: Array | None, rng
) -> Array:
    """A round's random starts inside the limits, ``candidates`` for each unmet row, a row's together."""
    rows = np.repeat(unmet, candidates)
    starts = chain.random_poses(rng, rows.size)
    if reference is not None:
        # Annealing near the reference first: half the candidates are the reference shaken
        # by growing amounts, so a solution near it is found when there is one.
        near = np.tile(np.arange(candidates) < (candidates + 1) // 2, unmet.size)
        temperature = np.tile(0.05 * 2.0 ** np.arange(candidates), unmet.size)[near]
        starts[near] = _shaken(chain, reference[rows[near]], temperature, rng)
    if chain.step_shares is not None:
        held = chain.step_shares == 0.0  # stiffness 1: the joint stays as it is
        starts[:, held] = rotations[rows][:, held]
    return starts


def _round(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    errors: tuple[Array, Array],
    iterations: Array,
    unmet: NDArray[np.intp],
    starts: Array,
    settings: SolveSettings,
    reference: Array | None,
    preferred: Array | None,
    switch_gain: float | None,
) -> NDArray[np.bool_]:
    """One round: every candidate solved from its start (``starts``, a row's together), and per
    unmet row the best taken (``_restart``'s rules), into ``rotations``, ``errors`` (position,
    orientation) and ``iterations`` in place. Returns which rows took a candidate. On the native
    kernel, one crossing (``qik_restart_round``)."""
    budget = _restart_budget(settings)
    if reference is None:
        rule = abi.TAKE_CLOSER
    else:
        rule = abi.TAKE_MET if switch_gain is None else abi.TAKE_GAIN
    kernel = kernel_calls.kernel_for(chain, budget)
    if kernel is not None:
        taken = kernel_calls.restart_round(
            kernel,
            chain,
            goals,
            budget,
            finishing(budget),
            rotations,
            errors,
            iterations,
            unmet,
            starts,
            reference,
            preferred,
            rule,
            0.0 if switch_gain is None else switch_gain,
            TIE * chain.reach,
        )
        if taken is not None:
            return taken
    return _round_in_numpy(
        chain, goals, rotations, errors, iterations, unmet, starts, budget, reference, preferred, rule, switch_gain
    )


def _round_in_numpy(
    chain, goals, rotations, errors, iterations, unmet, starts, budget, reference, preferred, rule, switch_gain
) -> NDArray[np.bool_]:
    """``_round`` in numpy: the reference ``qik_restart_round`` answers alike."""
    candidates = len(starts) // unmet.size
    rows = np.repeat(unmet, candidates)
    trial, trial_iterations, (trial_position, trial_orientation, _) = run_method(
        chain, goals.take(rows), starts, budget, None if preferred is None else preferred[rows]
    )
    tolerance = budget.absolute_tolerance(chain.reach)
    trial_met = budget.reached(trial_position, trial_orientation, tolerance, chain.reach)
    # Rank: goals met first, then nearest the reference pose, else smallest error.
    if reference is not None:
        closeness = pose_distance(trial, reference[rows])
    else:
        closeness = combined_error(chain, trial_position, trial_orientation)
    rank = np.where(trial_met, closeness, np.inf).reshape(unmet.size, candidates)
    fallback = combined_error(chain, trial_position, trial_orientation).reshape(unmet.size, candidates)
    any_met = np.any(trial_met.reshape(unmet.size, candidates), axis=1)
    pick = np.where(any_met, _first_least(rank, TIE * chain.reach), _first_least(fallback, TIE * chain.reach))
    chosen = np.arange(unmet.size) * candidates + pick
    position_error, orientation_error = errors
    current = combined_error(chain, position_error[unmet], orientation_error[unmet])
    picked = fallback[np.arange(unmet.size), pick]
    if rule == abi.TAKE_CLOSER:
        take = any_met | (picked < current - TIE * chain.reach)
    elif rule == abi.TAKE_GAIN:
        # With a reference (the previous frame), a goal no candidate meets keeps its pose rather
        # than jumping to another branch for a slightly smaller miss.
        take = any_met | (picked < current - switch_gain)
    else:
        take = any_met
    rotations[unmet[take]] = trial[chosen[take]]
    iterations[unmet] += trial_iterations.reshape(unmet.size, candidates).sum(axis=1)
    position_error[unmet[take]] = trial_position[chosen[take]]
    orientation_error[unmet[take]] = trial_orientation[chosen[take]]
    return take


def solve(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    reference_rotations: ArrayLike | None = None,
    preferred_rotations: ArrayLike | None = None,
    learned_starts=None,
    settings: SolveSettings | None = None,
) -> SolveResult:
    """Solve N goals (root frame): (N, 3) positions or a Goals with orientation or direction.

    Starts from ``start_rotations`` ((n, 4) or (N, n, 4)) when given, else from the learned
    start pose nearest each target when ``learned_starts`` is given, else from rest.
    ``reference_rotations`` (e.g. the previous frame) makes restarts prefer nearby solutions.
    A tip whose twist is unseen by the goals keeps the start's twist as far as its range allows
    (``free_twist``).
    """
    settings = settings or SolveSettings()
    with time_budget.spending(settings.time_limit) as budget:
        result = _solve(
            chain,
            Goals.of(targets),
            start_rotations,
            reference_rotations,
            preferred_rotations,
            learned_starts,
            settings,
        )
    return replace(result, out_of_time=True) if budget.ran_out else result


def _solve(chain, goals, start_rotations, reference_rotations, preferred_rotations, learned_starts, settings):
    """``solve`` inside its time budget."""
    if start_rotations is None and learned_starts is not None:
        start_rotations = learned_starts.starts_for(goals.positions)
    preferred = None if preferred_rotations is None else initial_poses(chain, preferred_rotations, goals.count)
    reference = (
        None if reference_rotations is None else initial_poses(chain, reference_rotations, goals.count, clamp=False)
    )
    # A tip twist the goals do not see turns only as far as its swing did, within its range (a
    # preferred pose keeps its own pull): without, it lands wherever the solve's path left it,
    # which the last bit of a sum could change (Blender 3.4: 4-34° on a replayed Per Frame frame).
    carry = (preferred is None or settings.rest_pull == 0.0) and tip_twist_is_unseen(chain, goals)
    kernel = kernel_calls.kernel_for(chain, settings)
    if kernel is not None:  # everything short of the restarts in one crossing
        starts = initial_poses(chain, start_rotations, goals.count, clamp=False)
        solved = kernel_calls.solve(kernel, chain, goals, starts, settings, finishing(settings), preferred, carry)
        if solved is not None:
            rotations, poses, iterations, measured, met = solved
            if not (settings.restarts and settings.restart_candidates):  # no rounds: the kernel's answers stand
                return finish_result(chain, goals, poses, iterations, settings, None, measured, met)
            restarts = _restart(chain, goals, poses, iterations, settings, reference, preferred, measured)
            if not restarts.any():
                return finish_result(chain, goals, poses, iterations, settings, restarts, measured, met)
            if carry:  # the poses restarts replaced
                poses = carry_tip_twist_within_range(chain, poses, rotations)
            return finish_result(chain, goals, poses, iterations, settings, restarts)
    rotations = initial_poses(chain, start_rotations, goals.count)
    result = solve_from(chain, goals, rotations, reference=reference, preferred=preferred, settings=settings)
    if carry:
        result = replace(result, rotations=carry_tip_twist_within_range(chain, result.rotations, rotations))
    return result


def solve_from(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    *,
    settings: SolveSettings,
    reference: Array | None = None,
    preferred: Array | None = None,
) -> SolveResult:
    """:func:`solve` from (N, n, 4) start poses known to be inside the limits (answers of
    earlier solves, as a shot's frames start from): nothing checked, clamped or broadcast.
    ``reference`` and ``preferred``: (N, n, 4) or None."""
    rotations, iterations, measured = run_method(chain, goals, np.array(rotations), settings, preferred)
    return _restarted_result(chain, goals, rotations, iterations, settings, reference, preferred, measured)


def _restarted_result(
    chain, goals, rotations, iterations, settings, reference, preferred, measured=None, switch_gain=None, give_up=None
) -> SolveResult:
    # Poses unit to rounding are only given w ≥ 0 (q and −q rotate alike, to the bit): the
    # errors measured on the way stay exact. Others are normalised and measured again.
    squared_norm = np.einsum("...i,...i->...", rotations, rotations)
    if measured is not None and np.all(np.abs(squared_norm - 1.0) <= UNIT_SLACK):
        rotations = quat.canonical(rotations)
    else:
        rotations = normalised(rotations)
        measured = goal_errors(chain, goals, rotations)
    restarts = _restart(
        chain, goals, rotations, iterations, settings, reference, preferred, measured, switch_gain, give_up
    )
    # Where restarts replaced poses, measure again; else the measure above is the result's.
    return finish_result(chain, goals, rotations, iterations, settings, restarts, None if restarts.any() else measured)


def restart(
    chain: Chain,
    goals: Goals,
    rotations: ArrayLike,
    *,
    settings: SolveSettings,
    switch_gain: float | None = None,
    give_up: NDArray[np.bool_] | None = None,
) -> tuple[SolveResult, NDArray[np.bool_]]:
    """Only the restarts of :func:`solve`, for poses solved already (N, n, 4): their unmet
    goals are tried from random poses, preferring answers near the given poses, and a closest
    miss replaces a pose when it comes closer by ``switch_gain``. Goals marked in ``give_up``
    (N,) get no further rounds once a round replaces nothing. Also returns which poses were
    replaced."""
    rotations = initial_poses(chain, rotations, goals.count)
    iterations = np.zeros(goals.count, dtype=np.int64)
    result = _restarted_result(
        chain, goals, rotations, iterations, settings, rotations, None, None, switch_gain, give_up
    )
    replaced = np.any(np.abs(result.rotations - normalised(rotations)) > 0.0, axis=(1, 2))
    return result, replaced
