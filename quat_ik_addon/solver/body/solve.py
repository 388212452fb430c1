"""The body solver's front door: every effector's goals and every pin in one solve.

The solve runs in two stages. First the rotations alone, every bone at its rest length: from
the start pose, and for a solve from rest of several goal levels also from the answer of every
goal at one level (``BodySettings.equal_start``), then restarts for rows left unmet and a
longer refinement of the poses they found, each row keeping the best. Only rows still unmet
go on to the second stage, in which the stretchy bones may stretch, with a last priority level
that asks each back to its rest length in whatever freedom the goals leave; its answer
replaces the first stage's only where it ranks better (``ranking.better_than``). So stretch is
zero wherever the rotations reach, and where they do not it is the least the DLS steps find
that reaches further. (Weighting stretch by its stiffness in one DLS instead would let it take
a share of every step, reachable goals included.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..entry_checks import finite_array
from ..native import body_calls
from .goals import PIN_LEVEL, Goal, Pin, Tasks, lay_out, task_errors
from .iterate import CREEP_FROZEN, FLOOR, Measure, iterate
from .ranking import better_than
from .settings import BodyResult, BodySettings
from .skeleton import Body

Array = NDArray[np.float64]

CREEP = CREEP_FROZEN  # while lower levels move, a level out of reach may rise this much
_NO_STRETCH = np.zeros(0, dtype=np.intp)
# ``_refine`` skips a contender with any level's excess over (1 + this) × its row's best, to save
# time: on the random bodies of ``bench_body_random_blender.py`` that cost no set (0.3 cost one).
CONTENDER_MARGIN = 1.0


def solve_body(
    body: Body,
    goals: Sequence[Goal],
    pins: Sequence[Pin] = (),
    *,
    start_rotations: ArrayLike | None = None,
    settings: BodySettings | None = None,
    cold_start: ArrayLike | None = None,
) -> BodyResult:
    """Solve N rows of goals and pins at once (their targets (3,)/(4,) or (N, 3)/(N, 4), root
    frame). Starts from ``start_rotations`` ((B, 4) or (N, B, 4), brought inside the limits),
    else from ``cold_start`` (as rotations: learned start poses) or rest, where a cold solve of
    several levels also starts from the all-levels-equal answer (``equal_start``). ValueError
    on anything that cannot be solved as given."""
    settings = settings or BodySettings()
    if not isinstance(body, Body):
        raise ValueError(f"solve_body needs a Body, not {body!r}")
    if not isinstance(settings, BodySettings):
        raise ValueError(f"settings must be BodySettings, not {settings!r}")
    tasks = lay_out(body, goals, pins)
    count = tasks.count
    rotations = _start(body, cold_start if start_rotations is None else start_rotations, count, settings)
    stretch = body.clamp_stretch(np.ones((count, body.n_bones)))
    strict = Measure(*settings.tolerances(body.size), _NO_STRETCH)
    rows = _Rows(
        body, tasks, settings, *_stage(body, tasks, rotations, stretch, settings, _NO_STRETCH, settings.max_iterations)
    )
    rows.remember(np.arange(count), rows.rotations, rows.excess)
    if start_rotations is None and settings.equal_start and tasks.goal_levels > 1:
        _from_equal_start(rows, cold_start)
    restarts = _restart(rows)
    if settings.restarts:
        _refine(rows)
    if settings.use_stretch and body.stretchy_bones.size:
        _stretch(rows)
    return _result(body, tasks, rows.rotations, rows.stretch, rows.iterations, restarts, strict, settings)


@dataclass
class _Rows:
    """Every row's pose as the search improves it: rotations, stretch, the iterations spent on
    it, and its levels' excess at that pose (measured strictly: ``_stage``'s)."""

    body: Body
    tasks: Tasks
    settings: BodySettings
    rotations: Array
    stretch: Array
    iterations: NDArray[np.int64]
    excess: Array
    # Poses the search found on the way, which ``_refine`` refines beside each row's best: (the
    # rows they belong to, repeats allowed; their rotations; their levels' excess).
    contenders: list[tuple[NDArray[np.intp], Array, Array]] = field(default_factory=list)

    @property
    def floor(self) -> float:
        return FLOOR * self.body.size**2

    def unmet(self, levels: int | None = None) -> NDArray[np.intp]:
        """The rows with an excess in any level (of the first ``levels``)."""
        return np.nonzero(np.any(self.excess[:, :levels] > self.floor, axis=1))[0]

    def keep_better(
        self, rows: NDArray[np.intp], rotations: Array, excess: Array, stretch: Array | None = None
    ) -> None:
        """Rows ``rows`` take these poses where ``excess`` ranks better than their own."""
        take = better_than(excess, self.excess[rows], self.floor)
        self.rotations[rows[take]] = rotations[take]
        if stretch is not None:
            self.stretch[rows[take]] = stretch[take]
        self.excess[rows[take]] = excess[take]

    def remember(self, rows: NDArray[np.intp], rotations: Array, excess: Array) -> None:
        """Keep these poses of ``rows`` (repeats allowed) and their levels' excess as
        contenders for ``_refine`` (where it runs)."""
        if self.settings.restarts and self.settings.refine_iterations:
            self.contenders.append((rows.copy(), rotations.copy(), excess.copy()))


def _stretch(rows: _Rows) -> None:
    """Rows left unmet solved again with the stretchy bones free to stretch (module docstring)."""
    unmet = rows.unmet()
    if unmet.size == 0:
        return
    body, settings = rows.body, rows.settings
    rotations, stretch, more, excess = _stage(
        body,
        rows.tasks.take(unmet),
        rows.rotations[unmet],
        rows.stretch[unmet],
        settings,
        body.stretchy_bones,
        settings.max_iterations,
    )
    rows.iterations[unmet] += more
    rows.keep_better(unmet, rotations, excess, stretch)


def _from_equal_start(rows: _Rows, cold_start: ArrayLike | None) -> None:
    """Rows solved from rest (or ``cold_start``) again, from the answer of every goal at one
    level: each keeps the better. Met first from rest, a higher level can leave the lower ones
    a worse basin than a pose that already meets all of them where they can be met together: on
    800 rows of random bodies (2-5 tips, 16 bones) with goals reachable together at two levels,
    a solve with restarts left the lower level unmet in 32 rows without this start, 4 with it."""
    body, tasks, settings = rows.body, rows.tasks, rows.settings
    rest = _start(body, cold_start, tasks.count, settings)
    equal, _, equal_iterations, _ = _stage(
        body, tasks.at_one_level(), rest, rows.stretch, settings, _NO_STRETCH, settings.max_iterations
    )
    seeded, _, seeded_iterations, seeded_excess = _stage(
        body, tasks, equal, rows.stretch, settings, _NO_STRETCH, settings.max_iterations
    )
    rows.remember(np.arange(tasks.count), seeded, seeded_excess)
    rows.keep_better(np.arange(tasks.count), seeded, seeded_excess)
    rows.iterations += equal_iterations + seeded_iterations


def measure_body(
    body: Body, goals: Sequence[Goal], pins: Sequence[Pin], rotations: ArrayLike, settings: BodySettings
) -> BodyResult:
    """``solve_body``'s result for ``rotations`` as they are (brought inside the limits, every
    bone at its rest length), without solving: how a start pose meets the goals and pins."""
    tasks = lay_out(body, goals, pins)
    count = tasks.count
    rotations = _start(body, rotations, count, settings)
    stretch = np.ones((count, body.n_bones))
    none = np.zeros(count, dtype=np.int64)
    strict = Measure(*settings.tolerances(body.size), _NO_STRETCH)
    return _result(body, tasks, rotations, stretch, none, none.copy(), strict, settings)


def _start(body: Body, start_rotations: ArrayLike | None, count: int, settings: BodySettings) -> Array:
    if start_rotations is None:
        return _clamped(body, body.rest_pose(count), settings)
    start = np.asarray(start_rotations, dtype=float) if not np.iscomplexobj(start_rotations) else None
    if start is None or start.shape not in ((body.n_bones, 4), (count, body.n_bones, 4)):
        shape = None if start is None else start.shape
        raise ValueError(
            f"start rotations must be real, shaped ({body.n_bones}, 4) or ({count}, {body.n_bones}, 4), not {shape}"
        )
    start = finite_array(np.broadcast_to(start, (count, body.n_bones, 4)), (count, body.n_bones, 4), "start rotations")
    if np.any(np.linalg.norm(start, axis=-1) < 1e-12):
        raise ValueError("start rotations contain a zero quaternion")
    return _clamped(body, start, settings)


def _clamped(body: Body, rotations: Array, settings: BodySettings) -> Array:
    """Every joint's rotation inside its limit: on the kernel where it runs the body's stages."""
    clamped = body_calls.clamp(body, rotations) if body_calls.kernel_for(body, settings) else None
    return body.clamp_rotations(rotations) if clamped is None else clamped


def _stage(
    body: Body,
    tasks: Tasks,
    rotations: Array,
    stretch: Array,
    settings: BodySettings,
    stretchy: NDArray[np.intp],
    max_iterations: int,
    lean: bool = False,
) -> tuple[Array, Array, NDArray[np.int64], Array]:
    """Iterations with a met level free to drift to the working tolerance, then a polish that
    brings every level back within the tolerance. ``lean``: see ``iterate``. Returns the poses,
    stretch, iterations and the levels' excess over the strict tolerances (stretch not counted).
    On the native kernel where it runs this body (``body_calls``), else on numpy."""
    kernel = body_calls.kernel_for(body, settings)
    if kernel is not None and len(rotations):
        answer = body_calls.stage(
            kernel,
            body,
            tasks,
            rotations,
            stretch,
            settings,
            use_stretch=stretchy.size > 0,
            max_iterations=max_iterations,
            lean=lean,
            creep=CREEP,
        )
        if answer is not None:
            rotations, stretch, iterations, excess = answer
            return rotations, stretch, iterations, excess[:, : len(tasks.levels)]
    working = Measure(*settings.working_tolerances(body.size), stretchy)
    rotations, stretch, iterations = iterate(
        body, tasks, rotations, stretch, settings, working, max_iterations=max_iterations, creep=CREEP, lean=lean
    )
    strict = Measure(*settings.tolerances(body.size), stretchy)
    # The polish moves only the levels met to the working tolerance; the others (out of reach,
    # stalled at their closest) hold still, so that their pull does not undo it.
    excess = working.excess(body, tasks, body.forward_kinematics(rotations, stretch))
    frozen = excess[:, : len(tasks.levels)] > FLOOR * body.size**2
    rotations, stretch, more = iterate(
        body,
        tasks,
        rotations,
        stretch,
        settings,
        strict,
        max_iterations=settings.polish_iterations,
        creep=0.0,
        frozen=frozen,
    )
    levels = Measure(strict.tolerance, strict.angle_tolerance, _NO_STRETCH)
    excess = levels.excess(body, tasks, body.forward_kinematics(rotations, stretch))
    return rotations, stretch, iterations + more, excess


def _top_levels(tasks: Tasks) -> int:
    """How many of ``tasks.levels`` come first: the pins' and the highest goal level."""
    return min(len(tasks.levels), 2 if tasks.levels[0] == PIN_LEVEL else 1)


def _restart(rows: _Rows) -> NDArray[np.int64]:
    """Rows left unmet solved again from ``restart_candidates`` random poses inside the limits
    each (Blow 2002's restarts), all batched, for ``restarts`` rounds and then, while their pins
    or highest goal level stay unmet, up to ``top_restarts``; the best candidate by priority
    replaces a row's pose where it ranks better. With ``equal_start``, a candidate of the first
    rounds (those for every level) first descends with every goal at one level, as the solve
    from rest does. Returns the rounds each row used."""
    body, tasks, settings = rows.body, rows.tasks, rows.settings
    rounds = np.zeros(tasks.count, dtype=np.int64)
    candidates = settings.restart_candidates
    rng = None  # made when first needed: most calls restart nothing (it costs ~30 µs)
    held = body.turn_shares == 0.0  # fixed or stiffness 1: a restart keeps them as they are
    # Lower levels out of reach together gain little from further rounds: those are for the top.
    top = _top_levels(tasks)
    equal_first = settings.equal_start and tasks.goal_levels > 1
    for round_ in range(max(settings.restarts, settings.top_restarts) if candidates else 0):
        levels = None if round_ < settings.restarts else top
        unmet = rows.unmet(levels)
        if unmet.size == 0:
            break
        rng = rng or np.random.default_rng(settings.seed)
        repeated = np.repeat(unmet, candidates)
        starts = body.random_poses(rng, repeated.size)
        starts[:, held] = rows.rotations[repeated][:, held]
        row_tasks = tasks.take(repeated)
        stretch = rows.stretch[repeated]
        if equal_first and levels is None:
            # Taken in order from a random pose, the top level pulls the lower ones into whatever
            # basin lies on its way; every goal at once first settles where they balance.
            starts, _, equal_iterations, _ = _stage(
                body,
                row_tasks.at_one_level(),
                starts,
                stretch,
                settings,
                _NO_STRETCH,
                settings.restart_iterations,
                lean=True,
            )
            rows.iterations[unmet] += equal_iterations.reshape(unmet.size, candidates).sum(axis=1)
        trial, _, trial_iterations, trial_excess = _stage(
            body, row_tasks, starts, stretch, settings, _NO_STRETCH, settings.restart_iterations, lean=True
        )
        trial_excess = trial_excess.reshape(unmet.size, candidates, -1)
        pick = np.zeros(unmet.size, dtype=np.intp)
        for c in range(1, candidates):
            ahead = better_than(trial_excess[:, c], trial_excess[np.arange(unmet.size), pick], rows.floor)
            pick[ahead] = c
        chosen = np.arange(unmet.size) * candidates + pick
        if levels is None:  # (the later rounds are for the top levels, which are met or not)
            rows.remember(repeated, trial, trial_excess.reshape(repeated.size, -1))
        rows.keep_better(unmet, trial[chosen], trial_excess[np.arange(unmet.size), pick])
        rows.iterations[unmet] += trial_iterations.reshape(unmet.size, candidates).sum(axis=1)
        rounds[unmet] += 1
    return rounds


def _refine(rows: _Rows) -> None:
    """Rows left unmet iterated on from the pose the search found and from every contender it
    met on the way (``_Rows.remember``), up to ``refine_iterations`` each with a level settling
    only once its last ``stall_iterations`` steps cut its excess by less than
    ``refine_stall_ratio`` of it; the best answer replaces the row's where it ranks better. A
    level out of reach often creeps to its closest: along the curved set of poses that keep the
    levels above met (a step in their null space moves them at second order, so the steps stay
    short) or along joints pressed on their limits. ``stall_ratio``, right for telling
    candidates apart, settles it partway, and so picks among them poorly: on the random bodies
    of ``bench_body_random_blender.py``, refining only the pose ahead left the lower goals farther
    than Blender's IK leaves them in 3 of 73 sets (in 7 of 144 with every goal at one level),
    refining every contender in none (in 1). The best is then refined once more, afresh."""
    settings = rows.settings
    if settings.refine_iterations == 0:
        return
    unmet = rows.unmet()
    if unmet.size == 0:
        return
    owners, starts = [unmet], [rows.rotations[unmet]]
    is_unmet = np.zeros(rows.tasks.count, dtype=bool)
    is_unmet[unmet] = True
    for contender_rows, rotations, excess in rows.contenders:
        # (a contender that is its row's pose already is refined as that)
        fresh = is_unmet[contender_rows] & np.any(rotations != rows.rotations[contender_rows], axis=(1, 2))
        fresh &= np.all(excess <= (1.0 + CONTENDER_MARGIN) * rows.excess[contender_rows] + rows.floor, axis=1)
        owners.append(contender_rows[fresh])
        starts.append(rotations[fresh])
    owner = np.concatenate(owners)
    finer = replace(settings, stall_ratio=settings.refine_stall_ratio)
    refined, _, more, refined_excess = _stage(
        rows.body,
        rows.tasks.take(owner),
        np.concatenate(starts),
        rows.stretch[owner],
        finer,
        _NO_STRETCH,
        settings.refine_iterations,
    )
    np.add.at(rows.iterations, owner, more)
    # Each row's answers compared in turns: its first, its second, … (a row appears once a turn).
    order = np.argsort(owner, kind="stable")
    turn = np.empty(owner.size, dtype=np.intp)
    turn[order] = np.arange(owner.size) - np.searchsorted(owner[order], owner[order])
    for k in range(int(turn.max()) + 1):
        these = np.nonzero(turn == k)[0]
        rows.keep_better(owner[these], refined[these], refined_excess[these])
    # Started afresh from the best (λ at its start, no joint held off its limits), a descent
    # can move on from where that pose's refinement settled: on random bodies built as
    # ``bench_body_random_blender.py`` builds them (another seed), 2 more sets of 229 then end
    # no worse than Blender's IK.
    again, _, more, again_excess = _stage(
        rows.body,
        rows.tasks.take(unmet),
        rows.rotations[unmet],
        rows.stretch[unmet],
        finer,
        _NO_STRETCH,
        settings.refine_iterations,
    )
    rows.keep_better(unmet, again, again_excess)
    rows.iterations[unmet] += more


def _result(
    body: Body,
    tasks: Tasks,
    rotations: Array,
    stretch: Array,
    iterations: NDArray[np.int64],
    restarts: NDArray[np.int64],
    strict: Measure,
    settings: BodySettings,
) -> BodyResult:
    kernel = body_calls.kernel_for(body, settings)
    measured = None if kernel is None else body_calls.task_errors(kernel, body, tasks, rotations, stretch)
    if measured is None:
        measured = task_errors(tasks, body.forward_kinematics(rotations, stretch), body.size)
    position_error, orientation_error = measured
    # A goal's part of weight 0 asks nothing (as ``ranking.level_excess`` counts it).
    met = ((position_error <= strict.tolerance) | (tasks.position_weights == 0.0)) & (
        (orientation_error <= strict.angle_tolerance) | (tasks.orientation_weights == 0.0)
    )
    pins = slice(0, tasks.n_pins)
    goals = slice(tasks.n_pins, None)
    goal_levels = tuple(level for level in tasks.levels if level != PIN_LEVEL)
    level_met = (
        np.stack(
            [
                np.all(met[:, goals][:, tasks.level_of[goals] == tasks.levels.index(level)], axis=1)
                for level in goal_levels
            ],
            axis=1,
        )
        if goal_levels
        else np.ones((tasks.count, 0), dtype=bool)
    )
    return BodyResult(
        rotations=rotations,
        stretch=stretch,
        position_error=position_error[:, goals],
        orientation_error=orientation_error[:, goals],
        pin_position_error=position_error[:, pins],
        pin_rotation_error=orientation_error[:, pins],
        levels=goal_levels,
        level_met=level_met,
        pins_held=np.all(met[:, pins], axis=1),
        iterations=iterations,
        restarts=restarts,
        tolerance=strict.tolerance,
        angle_tolerance=strict.angle_tolerance,
    )
