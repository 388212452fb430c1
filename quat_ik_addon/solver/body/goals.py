"""What a body reaches for: effectors, their goals at priority levels, and pinned bones.

A goal asks an effector (a point on a bone) for a position, an orientation (wxyz, the bone's
posed frame in the root frame) and/or a direction (where the bone's ``aim_axis`` points),
each weighted, at a priority ``level`` (0 is the highest). A pin holds a bone's head and/or
frame where it is given, above every level. All targets are in the body's root frame, one row
per goal set: (3,) or (N, 3) positions, (4,) or (N, 4) orientations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..bounded_memo import BoundedMemo
from ..entry_checks import finite_array, whole_number
from ..identity_memo import IdentityMemo
from .skeleton import Body

Array = NDArray[np.float64]

PIN_LEVEL = -1  # pins come before every goal's level


@dataclass(frozen=True)
class Effector:
    """A point on ``bone``: its tail plus ``offset`` (in the bone's frame)."""

    bone: str
    offset: Array = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        object.__setattr__(self, "offset", finite_array(self.offset, (3,), "effector offset"))

    @classmethod
    def of_chain(cls, chain) -> Effector:
        """The effector of a ``Chain``: its tip's tail plus its effector offset."""
        return cls(chain.bone_names[-1], chain.effector_offset)


_DEFAULT_AIM = (0.0, 1.0, 0.0)  # a goal's aim axis unless given: the bone's own Y
_Y_AXIS = np.array(_DEFAULT_AIM)
_Y_AXIS.setflags(write=False)


@dataclass(frozen=True)
class Goal:
    """Where an effector should be: any of ``position``, ``orientation`` or ``direction``
    (orientation and direction exclude each other), at priority ``level`` (0 highest)."""

    effector: Effector | str
    position: ArrayLike | None = None
    orientation: ArrayLike | None = None
    direction: ArrayLike | None = None
    aim_axis: ArrayLike = _DEFAULT_AIM
    position_weight: float = 1.0
    orientation_weight: float = 1.0
    level: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.effector, str):
            object.__setattr__(self, "effector", Effector(self.effector))
        if not isinstance(self.effector, Effector):
            raise ValueError(f"a goal's effector must be an Effector or a bone name, not {self.effector!r}")
        if self.position is None and self.orientation is None and self.direction is None:
            raise ValueError(
                f"the goal of {self.effector.bone!r} asks for nothing: give a position, orientation or direction"
            )
        if self.orientation is not None and self.direction is not None:
            raise ValueError(f"the goal of {self.effector.bone!r}: give an orientation or a direction, not both")
        whole_number(self.level, "a goal's level")
        for name in ("position_weight", "orientation_weight"):
            weight = getattr(self, name)
            if (
                isinstance(weight, bool)
                or not isinstance(weight, int | float | np.number)
                or not (math.isfinite(weight) and weight >= 0.0)
            ):
                raise ValueError(f"{name} must be a finite number >= 0, not {weight!r}")
        if self.aim_axis is _DEFAULT_AIM:  # (unit already: most goals, made anew on every Live update)
            object.__setattr__(self, "aim_axis", _Y_AXIS)
            return
        aim = finite_array(self.aim_axis, (3,), "aim axis")
        if not np.linalg.norm(aim) > 1e-12:
            raise ValueError(f"the aim axis must be nonzero, not {aim.tolist()}")
        object.__setattr__(self, "aim_axis", aim / np.linalg.norm(aim))


@dataclass(frozen=True)
class Pin:
    """``bone`` held above every goal: its head at ``position`` and/or its posed frame at
    ``rotation`` (wxyz), root frame."""

    bone: str
    position: ArrayLike | None = None
    rotation: ArrayLike | None = None

    def __post_init__(self) -> None:
        if self.position is None and self.rotation is None:
            raise ValueError(f"the pin of {self.bone!r} holds nothing: give a position, a rotation or both")


@dataclass(frozen=True)
class Tasks:
    """Goals and pins checked and laid out as arrays for N rows, pins first, then goals in the
    order given. ``level_of`` maps each to its place in ``levels`` (pins: ``PIN_LEVEL``)."""

    bones: NDArray[np.intp]  # (T,) the bone each task's point lies on
    points: Array  # (T, 3) the point in its bone's frame from the head, unstretched
    positions: Array  # (N, T, 3), NaN where a task has no position
    orientations: Array  # (N, T, 4), NaN where none
    directions: Array  # (N, T, 3), NaN where none
    aim_axes: Array  # (T, 3)
    position_weights: Array  # (T,), 0 where a task has no position
    orientation_weights: Array  # (T,), 0 where none
    levels: tuple[int, ...]  # the distinct levels, highest priority first (PIN_LEVEL if pins)
    level_of: NDArray[np.intp]  # (T,) index into ``levels``
    n_pins: int

    @property
    def count(self) -> int:
        return len(self.positions)

    @property
    def has_position(self) -> NDArray[np.bool_]:
        return ~np.isnan(self.positions[0, :, 0])

    @property
    def has_orientation(self) -> NDArray[np.bool_]:
        return ~np.isnan(self.orientations[0, :, 0])

    @property
    def has_direction(self) -> NDArray[np.bool_]:
        return ~np.isnan(self.directions[0, :, 0])

    def take(self, rows: NDArray[np.intp]) -> Tasks:
        """The tasks of the given rows (nothing checked again)."""
        taken = object.__new__(Tasks)
        for name, value in self.__dict__.items():
            per_row = name in ("positions", "orientations", "directions")
            object.__setattr__(taken, name, value[rows] if per_row else value)
        return taken

    @property
    def goal_levels(self) -> int:
        """How many distinct goal levels (pins not counted)."""
        return len(self.levels) - (1 if self.n_pins else 0)

    def at_one_level(self) -> Tasks:
        """The same tasks with every goal at the highest goal level, the pins still above them
        (nothing checked again)."""
        first = 1 if self.n_pins else 0  # where the goal levels begin in ``levels``
        if self.goal_levels <= 1:
            return self
        merged = object.__new__(Tasks)
        for name, value in self.__dict__.items():
            object.__setattr__(merged, name, value)
        object.__setattr__(merged, "levels", self.levels[: first + 1])
        object.__setattr__(merged, "level_of", np.minimum(self.level_of, first))
        return merged


def _rows(value: ArrayLike, size: int, what: str) -> Array:
    """(rows, size) targets from one (size,) target or (rows, size) of them."""
    try:
        shape = np.shape(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers, not {value!r}") from None
    if len(shape) == 1:
        return finite_array(value, (1, size), what)
    if len(shape) != 2 or shape[1] != size:
        raise ValueError(f"{what} must have shape ({size},) or (N, {size}), not {shape}")
    return finite_array(value, shape, what)


_laid_out: IdentityMemo[Tasks] = IdentityMemo(8)  # by the identities of body, goals and pins


def lay_out(body: Body, goals: Sequence[Goal], pins: Sequence[Pin] = ()) -> Tasks:
    """Goals and pins as ``Tasks`` (ValueError naming what is wrong). The same goal and pin
    objects laid out again (a solve and the measure of its start) give the kept ``Tasks``."""
    goals, pins = tuple(goals), tuple(pins)

    def make() -> Tasks:
        tasks = _laid_out_now(body, goals, pins)
        for value in vars(tasks).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)  # shared by the calls that lay the same tasks out again
        return tasks

    return _laid_out.get((body, *goals, *pins), make, extra=len(goals))


def _laid_out_now(body: Body, goals: tuple, pins: tuple) -> Tasks:
    if not goals and not pins:
        raise ValueError("give at least one goal or pin")
    for goal in goals:
        if not isinstance(goal, Goal):
            raise ValueError(f"goals must be Goal objects, not {goal!r}")
    for pin in pins:
        if not isinstance(pin, Pin):
            raise ValueError(f"pins must be Pin objects, not {pin!r}")
    count = len(goals) + len(pins)
    wanted: list[tuple[Array | None, Array | None, Array | None]] = []
    for pin in pins:
        position = None if pin.position is None else _rows(pin.position, 3, f"pin position of {pin.bone!r}")
        rotation = None if pin.rotation is None else _rows(pin.rotation, 4, f"pin rotation of {pin.bone!r}")
        wanted.append((position, rotation, None))
    for goal in goals:
        what = f"goal of {goal.effector.bone!r}"
        position = None if goal.position is None else _rows(goal.position, 3, f"{what}: position")
        orientation = None if goal.orientation is None else _rows(goal.orientation, 4, f"{what}: orientation")
        direction = None if goal.direction is None else _rows(goal.direction, 3, f"{what}: direction")
        wanted.append((position, orientation, direction))
    layout = _layout(body, goals, pins, wanted)
    sizes = {len(a) for triple in wanted for a in triple if a is not None and len(a) != 1}
    if len(sizes) > 1:
        raise ValueError(f"goals and pins give different numbers of rows: {sorted(sizes)}")
    rows = sizes.pop() if sizes else 1
    positions = np.full((rows, count, 3), np.nan)
    orientations = np.full((rows, count, 4), np.nan)
    directions = np.full((rows, count, 3), np.nan)
    for t, (position, orientation, direction) in enumerate(wanted):
        if position is not None:
            if np.abs(position).max() > 1e50:
                raise ValueError("target positions must lie within ±1e50")
            positions[:, t] = position
        if orientation is not None:
            size = np.linalg.norm(orientation, axis=-1)
            if np.any(size < 1e-12):
                raise ValueError(f"task {t}: a target orientation is the zero quaternion")
            orientations[:, t] = quat.normalize(orientation)
        if direction is not None:
            size = np.linalg.norm(direction, axis=-1, keepdims=True)
            if np.any(size < 1e-12):
                raise ValueError(f"task {t}: a target direction is the zero vector")
            directions[:, t] = direction / size
    return Tasks(positions=positions, orientations=orientations, directions=directions, **layout)


_layouts: BoundedMemo[dict] = BoundedMemo(64)  # ``_layout``'s answers, by what they depend on


def _layout(body: Body, goals: tuple, pins: tuple, wanted: list) -> dict:
    """What ``Tasks`` holds besides the targets: the tasks' bones, points, aim axes, weights and
    levels (read-only). The same for every goal set of the same goals (Live lays out new goal
    objects on every update), so kept by what it depends on: the same arrays for the same
    tasks, which the kernel's packing keeps too (``native.body_calls``)."""
    key = (
        id(body),
        body,
        tuple(
            (goal.effector.bone, goal.effector.offset.tobytes(), goal.aim_axis.tobytes(), goal.position_weight,
             goal.orientation_weight, goal.level)
            for goal in goals
        ),
        tuple(pin.bone for pin in pins),
        tuple(tuple(part is None for part in triple) for triple in wanted),
    )  # fmt: skip
    return _layouts.get(key, lambda: _layout_now(body, goals, pins, wanted))


def _layout_now(body: Body, goals: tuple, pins: tuple, wanted: list) -> dict:
    bones, points, aims, position_weights, orientation_weights, raw_levels = [], [], [], [], [], []
    for pin, (position, rotation, _none) in zip(pins, wanted[: len(pins)], strict=True):
        bones.append(body.index(pin.bone))
        points.append(np.zeros(3))
        aims.append(np.array([0.0, 1.0, 0.0]))
        position_weights.append(0.0 if position is None else 1.0)
        orientation_weights.append(0.0 if rotation is None else 1.0)
        raw_levels.append(PIN_LEVEL)
    for goal, (position, orientation, direction) in zip(goals, wanted[len(pins) :], strict=True):
        bone = body.index(goal.effector.bone)
        bones.append(bone)
        points.append(np.array([0.0, body.lengths[bone], 0.0]) + goal.effector.offset)
        aims.append(goal.aim_axis)
        position_weights.append(0.0 if position is None else float(goal.position_weight))
        orientation_weights.append(0.0 if orientation is None and direction is None else float(goal.orientation_weight))
        raw_levels.append(int(goal.level))
    levels = tuple(sorted(set(raw_levels)))
    found = {
        "bones": np.array(bones, dtype=np.intp),
        "points": np.array(points),
        "aim_axes": np.array(aims),
        "position_weights": np.array(position_weights),
        "orientation_weights": np.array(orientation_weights),
        "levels": levels,
        "level_of": np.array([levels.index(level) for level in raw_levels], dtype=np.intp),
        "n_pins": len(pins),
    }
    for value in found.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return found


def task_errors(tasks: Tasks, pose, size: float) -> tuple[Array, Array]:
    """(N, T) position errors and orientation errors (radians) of every task at a ``BodyPose``;
    zero for what a task does not ask."""
    points = pose.points(tasks.bones, tasks.points)
    position_error = np.where(tasks.has_position, np.linalg.norm(np.nan_to_num(tasks.positions) - points, axis=-1), 0.0)
    frames = pose.rotations[:, tasks.bones]
    orientation_error = np.zeros(position_error.shape)
    full = tasks.has_orientation
    if full.any():
        orientation_error[:, full] = quat.angle_between(frames[:, full], tasks.orientations[:, full])
    aimed = tasks.has_direction
    if aimed.any():
        aims = quat.rotate(frames[:, aimed], tasks.aim_axes[aimed])
        orientation_error[:, aimed] = quat.direction_angle(aims, tasks.directions[:, aimed])
    return position_error, orientation_error
