"""The body pipeline: a request in, a ``BodyResult`` out, for every front end that solves a body.

Live, Per Frame, the bake and both command lines build a ``BodyRequest`` (goals and pins with
targets for one row or F rows, where to start, whether the rows are the frames of a shot) and
call ``solve_body_request`` with ``BodyOptions`` (how to solve), as chains go through
``solver.request``. Around ``solve_body`` the pipeline adds:

* rows where a goal or pin is switched off (its targets NaN on that row: a pin held for a frame
  range, a chain with Influence 0 on some frames): the rows are grouped by which tasks are
  active and each group is one batched ``solve_body``;
* a time budget (``time_budget``): once spent, restart rounds and a shot's repairs stop, and
  every row keeps the answer it has;
* continuity for shots: a frame whose answer turns some joint much more than its goals moved
  from the frame before (a change of solution branch) is solved again warm from that frame's
  answer, and the warm answer is kept where it ranks no worse (``ranking.better_than``); a
  shot's frames get their restarts only after that, as random poses land on random branches.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import interrupt
from .. import quaternion as quat
from ..bounded_memo import BoundedMemo
from ..defaults import DEFAULT_SETTINGS
from ..solve import pose_distance
from ..time_budget import spending, spent
from .goals import Goal, Pin, Tasks, lay_out
from .iterate import FLOOR
from .learned_starts import BodyLearnedStarts
from .poles import BodyPole, PoleRows, check_pole_bones, facing_off, turned_to_poles
from .ranking import better_than, level_excess
from .settings import BodyResult, BodySettings, body_settings_from
from .skeleton import Body
from .solve import measure_body, solve_body

Array = NDArray[np.float64]
Rows = NDArray[np.intp]

# What every body front end solves with unless told: the chains' defaults (the panel's, the
# command line's flags) made body settings, as the panel makes its chains' settings.
DEFAULT_BODY_SETTINGS = body_settings_from(DEFAULT_SETTINGS)
# A shot's frame is a branch flip candidate where a joint turns more than JUMP_RATIO × what its
# goals' motion needs (the smooth-shot criterion: at most twice a witness's motion), and never
# below JUMP_FLOOR radians (a redundant body's answers drift that much without a flip).
JUMP_RATIO = 2.0
# A warm answer replaces its start only where it cuts some level's excess by more than this
# share: less is a drift along the goals' freedom that nobody sees, and giving the start back
# there makes a warm solve of its own answer a fixed point (Live settles after its write).
VISIBLE_GAIN = 1e-3
# Requests of this many rows and more report their progress (``interrupt.checkpoint``), solving
# their rows in PROGRESS_STEPS batches.
PROGRESS_ROWS = 20
PROGRESS_STEPS = 10
JUMP_FLOOR = np.radians(1.0)
# A pole's turn is kept where it faces the poles better by this much (radians, summed over the
# poles): less is not seen, and a warm solve of an answer then keeps it (``face_poles``).
POLE_GAIN = np.radians(0.5)
POLE_ROUNDS = 24
# A warm solve (Live) takes fewer rounds: while the target is dragged the rest is left to the
# updates after, so a pole its limits keep away does not hold up every update.
WARM_POLE_ROUNDS = 4
# A step this many times faster than the steps beside it is a flip candidate too (a goal's turn
# shared by several joints in a row needs less of each than the goal turns). Below
# ``pose_jumps``' 2: a candidate costs one warm solve, a missed flip a visible jump.
BESIDE_RATIO = 1.5
# A branch carried to the next frame meets its goals within a few iterations, or has ended there
# (as ``shots.sequence`` carries a chain's branches): finding that out must be cheap.
CARRY_ITERATIONS = 10
FOLLOW_SWEEPS = 3

_GOAL_PARTS = ("position", "orientation", "direction")
_PIN_PARTS = ("position", "rotation")
_SIZES = {"position": 3, "orientation": 4, "direction": 3, "rotation": 4}


@dataclass(frozen=True, eq=False)
class BodyRequest:
    """What to solve: ``goals`` and ``pins`` whose targets are one row or F rows (root frame),
    the ``poles`` the bends of chains face (``poles.BodyPole``), where to start (``start``: (B, 4) for every row or (F, B, 4), None: rest) and whether the F
    rows are consecutive frames of one ``shot``. A goal or pin whose targets are all NaN on a row
    is switched off there."""

    goals: Sequence[Goal] = ()
    pins: Sequence[Pin] = ()
    start: ArrayLike | None = None
    shot: bool = False
    poles: Sequence[BodyPole] = ()
    frames: int = field(init=False)  # F, the rows solved
    # (F, P + G): whether each pin, then each goal, is active on each row (solve_body's task order)
    active: NDArray[np.bool_] = field(init=False, repr=False, compare=False)
    # per task, per part: the (F, size) targets (NaN where switched off), or None
    _targets: tuple[tuple[Array | None, ...], ...] = field(init=False, repr=False, compare=False)
    _pole_rows: tuple[PoleRows, ...] = field(init=False, repr=False, compare=False)
    _cut: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        goals, pins = tuple(self.goals), tuple(self.pins)
        if not goals and not pins:
            raise ValueError("give at least one goal or pin")
        for kind, tasks, cls in (("goals", goals, Goal), ("pins", pins, Pin)):
            wrong = [task for task in tasks if not isinstance(task, cls)]
            if wrong:
                raise ValueError(f"{kind} must be {cls.__name__} objects, not {wrong[0]!r}")
        if not isinstance(self.shot, bool):
            raise ValueError(f"shot must be True or False, not {self.shot!r}")
        poles = tuple(self.poles)
        wrong = [pole for pole in poles if not isinstance(pole, BodyPole)]
        if wrong:
            raise ValueError(f"poles must be BodyPole objects, not {wrong[0]!r}")
        pole_rows = [_target_rows(pole.position, 3, f"the pole of {pole.bones[0]!r}: position")[0] for pole in poles]
        tasks = [(f"the pin of {p.bone!r}", [(n, getattr(p, n)) for n in _PIN_PARTS]) for p in pins]
        tasks += [
            (f"goal {g} ({goal.effector.bone!r})", [(n, getattr(goal, n)) for n in _GOAL_PARTS])
            for g, goal in enumerate(goals)
        ]
        # per task, per part: (targets, rows switched off) or None
        parts = [
            [None if value is None else _target_rows(value, _SIZES[name], f"{what}: {name}") for name, value in task]
            for what, task in tasks
        ]
        start = None if self.start is None else _start_rows(self.start)
        counts = {len(a) for task in parts for a, _off in filter(None, task) if len(a) != 1}
        counts |= {len(rows) for rows in pole_rows if len(rows) != 1}
        counts |= {len(pole.angle) for pole in poles if pole.angle.ndim == 1 and len(pole.angle) != 1}
        if start is not None and start.ndim == 3:
            counts.add(len(start))
        if len(counts) > 1:
            raise ValueError(f"goals, pins, poles and start give different numbers of rows: {sorted(counts)}")
        frames = counts.pop() if counts else 1
        targets, active = [], []
        for (what, _), task in zip(tasks, parts, strict=True):
            off = [_on_rows(o, frames) for _a, o in filter(None, task)]
            if any((o != off[0]).any() for o in off[1:]):
                row = int(np.nonzero(np.any([o != off[0] for o in off], axis=0))[0][0])
                raise ValueError(f"{what}: row {row} switches some targets off (NaN) but not all")
            targets.append(tuple(None if part is None else _on_rows(part[0], frames) for part in task))
            active.append(~off[0])
        object.__setattr__(self, "goals", goals)
        object.__setattr__(self, "pins", pins)
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "frames", frames)
        object.__setattr__(self, "active", np.stack(active, axis=1))
        object.__setattr__(self, "_targets", tuple(targets))
        object.__setattr__(self, "poles", poles)
        object.__setattr__(
            self,
            "_pole_rows",
            tuple(
                (pole, np.broadcast_to(rows, (frames, 3)), np.broadcast_to(pole.angle, (frames,)))
                for pole, rows in zip(poles, pole_rows, strict=True)
            ),
        )
        object.__setattr__(self, "_cut", {})  # ``_tasks_on``'s answers

    @cached_property
    def levels(self) -> tuple[int, ...]:
        """The goals' distinct levels, highest priority first (``BodyResult.levels``)."""
        return tuple(sorted({int(goal.level) for goal in self.goals}))

    def _tasks_on(self, pattern: NDArray[np.bool_], rows: Rows) -> tuple[list[Goal], list[Pin]]:
        """The goals and pins active in ``pattern`` (P + G), their targets cut to ``rows`` (made
        once per pattern and rows: a warm answer and the measure of its start share them)."""
        key = (pattern.tobytes(), np.asarray(rows).tobytes())
        found = self._cut.get(key)
        if found is None:
            found = self._cut[key] = self._tasks_cut(pattern, rows)
        return found

    def _tasks_cut(self, pattern: NDArray[np.bool_], rows: Rows) -> tuple[list[Goal], list[Pin]]:
        if pattern.all() and len(rows) == self.frames and np.array_equal(rows, np.arange(self.frames)):
            return list(self.goals), list(self.pins)  # every task on every row: as given (Live)
        count = len(self.pins)
        cut = [tuple(None if a is None else a[rows] for a in task) for task in self._targets]
        pins = [
            replace(pin, **dict(zip(_PIN_PARTS, cut[p], strict=True))) for p, pin in enumerate(self.pins) if pattern[p]
        ]
        goals = [
            replace(goal, **dict(zip(_GOAL_PARTS, cut[count + g], strict=True)))
            for g, goal in enumerate(self.goals)
            if pattern[count + g]
        ]
        return goals, pins

    def _needed_turns(self, size: float) -> Array:
        """(F − 1,) the least a joint must turn from each frame to the next for the active goals
        and pins to move as their targets do: a step of d at reach ``size`` turns d / size, a
        turning target its own angle."""
        needed = np.zeros(max(self.frames - 1, 0))
        for task in self._targets:
            for array in task:
                if array is None:
                    continue
                if array.shape[1] == 4:
                    step = quat.angle_between(array[:-1], array[1:])
                elif array is task[0]:  # a position
                    step = np.linalg.norm(array[1:] - array[:-1], axis=1) / size
                else:  # a direction
                    step = quat.direction_angle(array[:-1], array[1:])
                needed = np.fmax(needed, step)  # NaN (switched off on either frame) counts for nothing
        return needed


def _real_numbers(value: ArrayLike, what: str) -> Array:
    """``value`` as a new float array, NaN kept (``entry_checks.finite_array`` refuses it)."""
    if np.iscomplexobj(value):
        raise ValueError(f"{what} must be real numbers, not complex")
    try:
        return np.array(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{what} must be numbers: {error}") from None


def _target_rows(value: ArrayLike, size: int, what: str) -> tuple[Array, NDArray[np.bool_]]:
    """(R, size) targets from one target (size,) or R rows of them: finite, or NaN for a whole
    row (switched off there), a turn not the zero quaternion, a direction not the zero vector;
    and (R,) which rows are switched off."""
    array = _real_numbers(value, what)
    if array.ndim == 1:
        array = array[None]
    if array.ndim != 2 or array.shape[1] != size or len(array) == 0:
        raise ValueError(f"{what} must have shape ({size},) or (rows, {size}), not {np.shape(value)}")
    if np.isfinite(array).all():  # every row on (the usual case): no row to tell apart
        off, on = np.zeros(len(array), dtype=bool), array
    else:
        off = np.isnan(array).all(axis=1)
        bad = ~off & ~np.isfinite(array).all(axis=1)
        if bad.any():
            row = int(np.nonzero(bad)[0][0])
            raise ValueError(
                f"{what}: row {row} must be finite numbers (or all NaN to switch it off), not {array[row].tolist()}"
            )
        on = array[~off]
    if on.size and np.abs(on).max() > 1e50:
        raise ValueError(f"{what} must lie within ±1e50")
    if size == 4 or what.endswith("direction"):
        zero = ~off & (np.linalg.norm(array, axis=1) < 1e-12)
        if zero.any():
            kind = "quaternion" if size == 4 else "vector"
            raise ValueError(f"{what}: row {int(np.nonzero(zero)[0][0])} is the zero {kind}")
    return array, off


def _on_rows(array: NDArray, frames: int) -> NDArray:
    """``array`` ((R, ...) with R = 1 or ``frames``) on ``frames`` rows (one row: a view)."""
    return array if len(array) == frames else np.broadcast_to(array, (frames, *array.shape[1:]))


def _start_rows(start: ArrayLike) -> Array:
    """Start rotations as a finite array (B, 4) or (F, B, 4); the body checks B."""
    array = _real_numbers(start, "start rotations")
    if array.ndim not in (2, 3) or array.shape[-1] != 4:
        raise ValueError(f"start rotations must have shape (bones, 4) or (rows, bones, 4), not {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("start rotations must be finite")
    if np.any(np.linalg.norm(array, axis=-1) < 1e-12):
        raise ValueError("start rotations contain a zero quaternion")
    return array


@dataclass(frozen=True)
class BodyOptions:
    """How to solve a body. ``time_limit``: seconds the solve may spend improving answers it
    has (restart rounds, a shot's repairs); None, as for a bake or a command line: no limit (Live
    and Per Frame pass ``defaults.INTERACTIVE_TIME_LIMIT``). ``continuity``: a shot's branch
    flips are solved again warm from the frame before. ``learned_starts``: rows solved cold
    (the request gives no start) start from these instead of rest (``body.learned_starts``)."""

    settings: BodySettings = DEFAULT_BODY_SETTINGS
    time_limit: float | None = None
    continuity: bool = True
    learned_starts: BodyLearnedStarts | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.settings, BodySettings):
            raise ValueError(f"settings must be BodySettings, not {self.settings!r}")
        if self.time_limit is not None and (
            isinstance(self.time_limit, bool)
            or not isinstance(self.time_limit, int | float | np.number)
            or not (np.isfinite(self.time_limit) and self.time_limit >= 0.0)
        ):
            raise ValueError(f"time_limit must be a finite number of seconds >= 0 (or None), not {self.time_limit!r}")
        if not isinstance(self.continuity, bool):
            raise ValueError(f"continuity must be True or False, not {self.continuity!r}")
        if self.learned_starts is not None and not isinstance(self.learned_starts, BodyLearnedStarts):
            raise ValueError(f"learned_starts must be BodyLearnedStarts, not {self.learned_starts!r}")


@dataclass(frozen=True)
class BodyRequestResult(BodyResult):
    """``solve_body``'s result for every row of a request, in order (switched-off goals and pins
    count as met with zero error), and whether the time limit ran out."""

    out_of_time: bool = False


def solve_body_request(body: Body, request: BodyRequest, options: BodyOptions | None = None) -> BodyRequestResult:
    """Solve every row of ``request``; ValueError (one line) for anything that cannot be solved
    as given."""
    options = BodyOptions() if options is None else options
    if not isinstance(body, Body):
        raise ValueError(f"solve_body_request needs a Body, not {body!r}")
    if not isinstance(request, BodyRequest):
        raise ValueError(f"request must be a BodyRequest, not {request!r}")
    if not isinstance(options, BodyOptions):
        raise ValueError(f"options must be BodyOptions, not {options!r}")
    for task in (*request.pins, *request.goals):
        body.index(task.bone if isinstance(task, Pin) else task.effector.bone)
    for pole in request.poles:
        check_pole_bones(body, pole)
    start = _start_for(body, request)
    answer = _Answer(
        body, request, options.settings, np.arange(request.frames), cold_start=_cold_start(body, request, options)
    )
    # Restarts from random poses land on random branches: a shot's frames are first solved
    # without them (from one start, neighbouring frames land on one branch), and the rows left
    # unmet get them after, as a time-limited solve does round by round.
    staged = options.time_limit is not None or request.shot
    # Long requests (a bake's) report how far they got to ``interrupt``, which may stop them.
    reported = request.frames >= PROGRESS_ROWS
    with spending(options.time_limit) as budget:
        answer.solve(
            start, restarts=not staged, progress=(lambda done: interrupt.checkpoint(0.8 * done)) if reported else None
        )
        pole_rounds = POLE_ROUNDS if start is None else WARM_POLE_ROUNDS
        answer.face_poles(pole_rounds)
        follow = request.shot and options.continuity and request.frames > 1
        if follow:
            answer.follow_flips()
        if reported:
            interrupt.checkpoint(0.9)
        if staged:
            answer.restart()
            answer.face_poles(pole_rounds)  # (a restart lands on any branch)
        # Each sweep starts where the one before left its branches: a jump it could not carry
        # away may now be carried (FOLLOW_SWEEPS in all, while a sweep keeps anything).
        for _ in range(FOLLOW_SWEEPS - 1 if follow else 0):
            if not answer.follow_flips():
                break
    if start is not None and answer._unmet(top_only=False).any():  # (a met answer is a fixed point already)
        answer.keep_start_unless_bettered(start)
    return answer.result(out_of_time=budget.ran_out)


def _start_for(body: Body, request: BodyRequest) -> Array | None:
    """(F, B, 4) start rotations, or None for rest."""
    if request.start is None:
        return None
    if request.start.shape[-2] != body.n_bones:
        raise ValueError(
            f"start rotations must have shape ({body.n_bones}, 4) or ({request.frames}, {body.n_bones}, 4), "
            f"not {request.start.shape}"
        )
    return np.broadcast_to(request.start, (request.frames, body.n_bones, 4))


def _cold_start(body: Body, request: BodyRequest, options: BodyOptions) -> Array | None:
    """(F, B, 4) learned start poses for a request solved cold, or None (rest)."""
    learned = options.learned_starts
    if learned is None or request.start is not None:
        return None
    if not learned.fits(body):
        raise ValueError("the learned start poses were learned for another body: learn them again")
    return learned.starts_for(request.goals, request.frames)


@functools.lru_cache(maxsize=64)  # settings are frozen; Live asks on every update, and building checks every field
def _without_restarts(settings: BodySettings) -> BodySettings:
    return replace(settings, restarts=0, top_restarts=0)


class _Answer:
    """The answer for some of a request's rows as it is solved, in the request's layout (every
    goal and pin, switched off or not), and the solves that improve it."""

    def __init__(
        self,
        body: Body,
        request: BodyRequest,
        settings: BodySettings,
        rows: Rows,
        weights: Tasks | None = None,
        cold_start: Array | None = None,
    ) -> None:
        self.body, self.request, self.settings, self.rows = body, request, settings, rows
        self.cold_start = cold_start  # (rows, B, 4): where a solve from no start starts, else rest
        count, n_goals, n_pins = len(rows), len(request.goals), len(request.pins)
        self.rotations = np.repeat(_rest_inside(body), count, axis=0)
        self.stretch = np.ones((count, body.n_bones))
        self.position_error = np.zeros((count, n_goals))
        self.orientation_error = np.zeros((count, n_goals))
        self.pin_position_error = np.zeros((count, n_pins))
        self.pin_rotation_error = np.zeros((count, n_pins))
        self.level_met = np.ones((count, len(request.levels)), dtype=bool)
        self.pins_held = np.ones(count, dtype=bool)
        self.iterations = np.zeros(count, dtype=np.int64)
        self.restarts = np.zeros(count, dtype=np.int64)
        self.tolerance, self.angle_tolerance = settings.tolerances(body.size)
        # Every task's weights and level, for ranking answers in this layout: targets are not
        # needed, so each goal and pin is laid out with stand-in targets of the parts it has.
        self.weights = _weights_of(body, request) if weights is None else weights

    def solve(self, start: Array | None, *, restarts: bool, progress=None, measure_only: bool = False) -> None:
        """Solve every row from ``start`` (one pose per row) or rest, one batched solve per
        pattern of active tasks. ``progress(share of rows done)``: called between batches, which
        are then cut to at most a tenth of the rows each (a long bake shows how far it got, and
        Esc stops it between them)."""
        settings = self.settings if restarts else _without_restarts(self.settings)
        if self.request.shot:
            # Every frame of a shot from one start, so neighbouring frames land on one branch: the
            # equal start is a second start each frame picks on its own (on rigify_body's bake an
            # out-of-reach hand flipped 11° in a frame where the animation needs 4.6°).
            settings = replace(settings, equal_start=False)
        total = len(self.rows)
        most = total if progress is None else max(1, -(-total // PROGRESS_STEPS))
        done = 0
        for pattern, group in _patterns(self.request.active[self.rows]):
            for members in np.array_split(group, -(-len(group) // most)) if len(group) > most else (group,):
                group_start = None if start is None else start[members]
                if not pattern.any():  # nothing to reach on these rows: they stay where they start
                    if group_start is not None:
                        self.rotations[members] = self.body.clamp_rotations(group_start)
                else:
                    goals, pins = self.request._tasks_on(pattern, self.rows[members])
                    if measure_only:  # (how the start meets the tasks, unsolved)
                        part = measure_body(self.body, goals, pins, group_start, settings)
                    else:
                        cold = None if self.cold_start is None else self.cold_start[members]
                        part = solve_body(
                            self.body, goals, pins, start_rotations=group_start, settings=settings, cold_start=cold
                        )
                    self._put(members, pattern, part)
                done += len(members)
                if progress is not None:
                    progress(done / total)

    def restart(self) -> None:
        """``solve_body``'s restart rounds, one round at a time while the budget lasts: rows left
        unmet (from round ``settings.restarts`` on, only rows whose pins or highest goal level
        are unmet) solved again from random poses, each keeping what ranks no worse."""
        settings = self.settings
        for round_ in range(max(settings.restarts, settings.top_restarts) if settings.restart_candidates else 0):
            rows = np.nonzero(self._unmet(top_only=round_ >= settings.restarts))[0]
            if rows.size == 0 or spent():
                return
            one_round = replace(
                settings,
                restarts=int(round_ < settings.restarts),
                top_restarts=int(round_ >= settings.restarts),
                seed=settings.seed + round_,  # each round other random poses
                # A shot keeps a restart's answer where it ranks better and the sweeps carry it only
                # where it stays no worse: candidates that first seek every goal at one level, and
                # the long refinement of a miss, find other branches' better minima of out-of-reach
                # goals more often than that (on rigify_body's bake, 90° pops between neighbouring
                # frames with the first, 12.9° where the animation needs 4.6° with the second).
                equal_start=settings.equal_start and not self.request.shot,
                refine_iterations=0 if self.request.shot else settings.refine_iterations,
            )
            self._try(rows, self.rotations[rows], one_round)

    def face_poles(self, rounds: int) -> None:
        """Rows whose bends do not face their poles, turned to face them (``poles.turned_to_poles``)
        and solved again from there without restarts, keeping each answer that ranks no worse and
        faces its poles better by POLE_GAIN at least (as ``pole.solve_facing_poles`` for a chain).
        Where the limits hold a turn back, the solve after it moves the other joints a little
        and the next turn goes further: up to ``rounds`` rounds (a cold solve's POLE_ROUNDS leave
        no visible gain, so a warm solve of its answer keeps it)."""
        if not self.request.poles:
            return
        poles = [
            tuple(rows[self.rows] if k else rows for k, rows in enumerate(pole)) for pole in self.request._pole_rows
        ]
        off = facing_off(self.body, self.rotations, poles)
        rows = np.nonzero(off > POLE_GAIN)[0]
        settings = _without_restarts(self.settings)
        for _round in range(rounds):
            if rows.size == 0 or spent():
                return
            these = [(pole, positions[rows], angles[rows]) for pole, positions, angles in poles]
            before = off[rows]
            after = np.empty(len(rows))

            def faces_better(trial: Array, these=these, before=before, after=after) -> NDArray[np.bool_]:
                after[:] = facing_off(self.body, trial, these)
                return after < before - POLE_GAIN

            kept = self._try(rows, turned_to_poles(self.body, self.rotations[rows], these), settings, faces_better)
            off[rows[kept]] = after[kept]
            rows = rows[kept]

    def keep_start_unless_bettered(self, start: Array) -> None:
        """Rows whose answer ranks no better than their start pose keep the start: a warm solve
        from a pose as good as it gets (Live, after its own write) gives that pose back, not a
        drift along the goals' freedom, so solving it again changes nothing."""
        still = _Answer(self.body, self.request, self.settings, self.rows, self.weights)
        still.solve(start, restarts=False, measure_only=True)
        keep = ~better_than(self._excess(), still._excess(), FLOOR * self.body.size**2, tie=VISIBLE_GAIN)
        for name in _PER_ROW:
            getattr(self, name)[keep] = getattr(still, name)[keep]

    def follow_flips(self) -> bool:
        """A shot's frames in order: where the pose jumps from frame f − 1 to f (a joint turns
        more than JUMP_RATIO × what the goals' motion needs, or BESIDE_RATIO × the steps beside:
        a change of branch), frame f is solved again warm from f − 1 and kept where that ranks no
        worse and turns less, so the branch is carried on. Where it cannot be (the branch ends,
        or misses a goal the frame met), the new branch is carried back the same way, frame k
        warm from k + 1, while the pose jumps. Returns whether any carry was kept."""
        frames = self.request.frames
        allowance = JUMP_RATIO * self.request._needed_turns(self.body.size)

        def step(f: int) -> float:  # the largest joint turn from frame f − 1 to f (0 past the ends)
            return float(pose_distance(self.rotations[f], self.rotations[f - 1])) if 1 <= f < frames else 0.0

        def jumps(f: int) -> bool:
            turn = step(f)
            return turn > JUMP_FLOOR and (
                turn > allowance[f - 1] or turn > BESIDE_RATIO * max(step(f - 1), step(f + 1))
            )

        def carried(row: int, source: int) -> bool:
            turn = pose_distance(self.rotations[row], self.rotations[source])
            start = self.rotations[[source]]
            return bool(
                self._try(np.array([row]), start, settings, lambda trial: pose_distance(trial[0], start[0]) < turn)[0]
            )

        settings = replace(
            _without_restarts(self.settings), max_iterations=min(self.settings.max_iterations, CARRY_ITERATIONS)
        )
        moved = False
        for f in range(1, frames):
            if spent():
                break
            if not jumps(f):
                continue
            if carried(f, f - 1):
                moved = True
                continue
            # Carried back, the new branch may end too: the jump then moves to where it ends,
            # and the carry is kept only if that jump is smaller.
            jump = step(f)
            kept = {name: getattr(self, name)[:f].copy() for name in _PER_ROW}
            k = f - 1
            while k >= 0 and jumps(k + 1) and not spent() and carried(k, k + 1):
                k -= 1
            if k >= 0 and step(k + 1) >= jump:
                for name, values in kept.items():
                    getattr(self, name)[:f] = values
            else:
                moved = moved or k < f - 1
        return moved

    def _try(self, rows: Rows, starts: Array, settings: BodySettings, wanted=None) -> NDArray[np.bool_]:
        """Solve ``rows`` again from ``starts`` and keep each answer that ranks no worse than the
        row's own (and that ``wanted(its rotations)`` takes); returns which were kept."""
        trial = _Answer(self.body, self.request, settings, self.rows[rows], self.weights)
        trial.solve(starts, restarts=True)
        keep = ~better_than(self._excess(rows), trial._excess(), FLOOR * self.body.size**2)
        if wanted is not None:
            keep &= wanted(trial.rotations)
        for name in _PER_ROW:
            getattr(self, name)[rows[keep]] = getattr(trial, name)[keep]
        self.iterations[rows] += trial.iterations
        self.restarts[rows] += trial.restarts
        return keep

    def _put(self, rows: Rows, pattern: NDArray[np.bool_], part: BodyResult) -> None:
        n_pins = len(self.request.pins)
        pins, goals = np.nonzero(pattern[:n_pins])[0], np.nonzero(pattern[n_pins:])[0]
        levels = [self.request.levels.index(level) for level in part.levels]
        # Every row and every task in one part (as Live solves): whole arrays, no index grids.
        whole = len(rows) == len(self.rows) and pattern.all() and len(levels) == len(self.request.levels)

        def cells(columns):
            return (slice(None), slice(None)) if whole else np.ix_(rows, columns)

        self.rotations[rows] = part.rotations
        self.stretch[rows] = part.stretch
        self.position_error[cells(goals)] = part.position_error
        self.orientation_error[cells(goals)] = part.orientation_error
        self.pin_position_error[cells(pins)] = part.pin_position_error
        self.pin_rotation_error[cells(pins)] = part.pin_rotation_error
        self.level_met[cells(levels)] = part.level_met
        self.pins_held[rows] = part.pins_held
        self.iterations[rows] += part.iterations
        self.restarts[rows] += part.restarts

    def _excess(self, rows: Rows | slice = slice(None)) -> Array:
        """(rows, L) each level's excess (``ranking.level_excess``), pins' level first."""
        position = np.concatenate((self.pin_position_error[rows], self.position_error[rows]), axis=1)
        orientation = np.concatenate((self.pin_rotation_error[rows], self.orientation_error[rows]), axis=1)
        return level_excess(self.weights, position, orientation, self.tolerance, self.angle_tolerance, self.body.size)

    def _unmet(self, *, top_only: bool) -> NDArray[np.bool_]:
        """(F,) rows with a pin or goal unmet; ``top_only``: a pin or a goal of the highest
        level active on the row."""
        if not top_only:
            return ~self.pins_held | ~np.all(self.level_met, axis=1)
        n_pins = len(self.request.pins)
        goal_levels = np.array([self.request.levels.index(int(goal.level)) for goal in self.request.goals])
        unmet = ~self.pins_held
        if goal_levels.size:
            active = self.request.active[:, n_pins:]
            top = np.min(np.where(active, goal_levels, len(self.request.levels)), axis=1)
            has_goal = top < len(self.request.levels)
            unmet[has_goal] |= ~self.level_met[has_goal, top[has_goal]]
        return unmet

    def result(self, *, out_of_time: bool) -> BodyRequestResult:
        values = {name: getattr(self, name) for name in _RESULT_FIELDS}
        return BodyRequestResult(levels=self.request.levels, out_of_time=out_of_time, **values)


# What an answer hands to its result (``BodyResult``'s fields but the levels, the request's).
_RESULT_FIELDS = tuple(f.name for f in fields(BodyResult) if f.name != "levels")


# What a kept trial replaces in a row (iterations and restarts add up instead).
_PER_ROW = (
    "rotations",
    "stretch",
    "position_error",
    "orientation_error",
    "pin_position_error",
    "pin_rotation_error",
    "level_met",
    "pins_held",
)


def _patterns(active: NDArray[np.bool_]) -> list[tuple[NDArray[np.bool_], Rows]]:
    """The distinct rows of ``active`` (rows, T), each with the positions of the rows that
    have it."""
    if active.all():  # (the usual case, and Live's: one pattern)
        return [(active[0], np.arange(len(active)))]
    patterns, which = np.unique(active, axis=0, return_inverse=True)
    which = np.ravel(which)
    return [(pattern, np.nonzero(which == k)[0]) for k, pattern in enumerate(patterns)]


@functools.lru_cache(maxsize=64)  # a Body hashes by identity; Live solves the same one on every update
def _rest_inside(body: Body) -> Array:
    """(1, B, 4) the rest pose brought inside the limits (read-only)."""
    rest = body.clamp_rotations(body.rest_pose(1))
    rest.setflags(write=False)
    return rest


_weights: BoundedMemo[Tasks] = BoundedMemo(256)  # the layouts ``_weights_of`` made, by what they depend on


def _weights_of(body: Body, request: BodyRequest) -> Tasks:
    """Every task's weights and level, for ranking answers in the request's layout: targets are
    not needed, so each goal and pin is laid out with stand-in targets of the parts it has.
    Kept by what that depends on (Live lays out the same tasks on every update)."""
    key = (
        id(body),
        body,
        tuple(
            (goal.effector.bone, goal.effector.offset.tobytes(), goal.aim_axis.tobytes(), goal.position_weight,
             goal.orientation_weight, goal.level, *(getattr(goal, name) is None for name in _GOAL_PARTS))
            for goal in request.goals
        ),
        tuple((pin.bone, *(getattr(pin, name) is None for name in _PIN_PARTS)) for pin in request.pins),
    )  # fmt: skip
    return _weights.get(
        key,
        lambda: lay_out(body, [_stand_in(goal) for goal in request.goals], [_stand_in(pin) for pin in request.pins]),
    )


def _stand_in(task: Goal | Pin) -> Goal | Pin:
    """The task with one placeholder target for each part it has (weights and level kept)."""
    placeholders = {
        "position": np.zeros(3),
        "orientation": quat.IDENTITY,
        "rotation": quat.IDENTITY,
        "direction": np.array([0.0, 1.0, 0.0]),
    }
    names = _PIN_PARTS if isinstance(task, Pin) else _GOAL_PARTS
    return replace(task, **{name: placeholders[name] for name in names if getattr(task, name) is not None})
