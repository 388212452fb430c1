"""What a batch of solves reaches for: positions, and optionally an orientation or a direction.

Position and orientation combine in one objective per joint, after Wang & Chen 1991 (cited by
Blow 2002): each joint maximises Σ w_k b_k·(R a_k) over vector pairs (a_k now, b_k wanted),
the effector-to-target pair weighted by ``position_weight`` and the tip's axes weighted by
``orientation_weight`` × reach² so that an orientation error of one radian counts like a
position error of one reach. We chose the combined objective over the CCDIK page's per-joint
split (last joints aim, the rest reach) because it needs no rig-specific choice of which
joints aim, and it degrades gracefully when the pose cannot satisfy both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat

Array = NDArray[np.float64]

Y_AXIS = np.array([0.0, 1.0, 0.0])
_DOUBLE = np.dtype(np.float64)


# Coordinates beyond this square past float range in the error measures (1e160² overflows).
MAX_COORDINATE = 1e100


def _finite_rows(name: str, values: ArrayLike, width: int, count: int | None) -> Array:
    small = _small_finite_row(values, width, count)
    if small is not None:
        return small
    if np.iscomplexobj(values):
        raise ValueError(f"{name} must be real numbers, not complex")
    values = np.asarray(values, dtype=float)
    if values.ndim == 1:
        values = values[None, :]
    if values.ndim != 2 or values.shape[1] != width:
        raise ValueError(f"{name} must be shaped (N, {width}), not {values.shape}")
    if count is not None and len(values) not in (1, count):
        raise ValueError(f"{name} has {len(values)} rows for {count} targets")
    if count is not None and len(values) == 1 and count > 1:
        values = np.repeat(values, count, axis=0)
    bad = np.nonzero(~np.all(np.isfinite(values), axis=1))[0]
    if bad.size:
        raise ValueError(f"{name} contain NaN or infinity (rows {bad[:10].tolist()})")
    far = np.nonzero(np.any(np.abs(values) > MAX_COORDINATE, axis=1))[0]
    if far.size:
        raise ValueError(f"{name} contain numbers beyond ±{MAX_COORDINATE:g} (rows {far[:10].tolist()})")
    return values


def _small_finite_row(values: ArrayLike, width: int, count: int | None) -> Array | None:
    """One row of ``width`` real, finite numbers within ±MAX_COORDINATE as (1, width), checked
    in plain Python (a Live update's goal: numpy's checks cost more than the solve); None for
    anything else, which the full checks then take."""
    if count not in (None, 1) or not isinstance(values, np.ndarray) or values.dtype != _DOUBLE:
        return None
    if values.shape not in ((width,), (1, width)):
        return None
    numbers = values.ravel().tolist()
    if not (all(map(math.isfinite, numbers)) and max(map(abs, numbers)) <= MAX_COORDINATE):
        return None  # the full checks say what is wrong
    return values.reshape(1, width)


@dataclass(frozen=True, eq=False)
class Goals:
    """N goals in the chain's root frame.

    ``positions`` (N, 3) for the effector. ``orientations`` (N, 4): the wanted posed frame of
    the tip bone (full orientation). ``directions`` (N, 3): where the tip's ``aim_axis`` (a
    unit vector in the tip bone's frame, +Y by default: along the bone) should point
    (direction-only aiming, e.g. a gaze). Give at most one of the two.
    """

    positions: Array
    orientations: Array | None = None
    directions: Array | None = None
    aim_axis: Array = field(default_factory=lambda: Y_AXIS.copy())
    position_weight: float = 1.0
    orientation_weight: float = 1.0

    def __post_init__(self) -> None:
        positions = _finite_rows("targets", self.positions, 3, None)
        object.__setattr__(self, "positions", positions)
        count = len(positions)
        if self.orientations is not None and self.directions is not None:
            raise ValueError("give an orientation target or a direction target, not both")
        if self.orientations is not None:
            orientations = _finite_rows("target orientations", self.orientations, 4, count)
            if np.any(np.linalg.norm(orientations, axis=1) < 1e-12):
                raise ValueError("target orientations contain a zero quaternion")
            object.__setattr__(self, "orientations", quat.normalize(orientations))
        if self.directions is not None:
            directions = _finite_rows("target directions", self.directions, 3, count)
            lengths = np.linalg.norm(directions, axis=1, keepdims=True)
            if np.any(lengths < 1e-12):
                raise ValueError("target directions contain a zero vector")
            object.__setattr__(self, "directions", directions / lengths)
        aim_axis = np.asarray(self.aim_axis, dtype=float).reshape(3)
        x, y, z = aim_axis.tolist()  # three floats: checked with math, not a dozen numpy calls
        length = math.sqrt(x * x + y * y + z * z) if all(map(math.isfinite, (x, y, z))) else math.nan
        if not length > 1e-12:
            raise ValueError(f"the aim axis must be a finite, nonzero vector, not {aim_axis.tolist()}")
        object.__setattr__(self, "aim_axis", aim_axis / length)
        for name in ("position_weight", "orientation_weight"):
            weight = getattr(self, name)
            if not (math.isfinite(weight) and weight >= 0.0):
                raise ValueError(f"{name} must be a finite number >= 0, not {weight}")

    @classmethod
    def of(cls, targets: ArrayLike | Goals) -> Goals:
        """Goals as given, or position-only goals from an (N, 3) array."""
        if isinstance(targets, Goals):
            return targets
        targets = np.asarray(targets)
        # One target (a Live update's): the plain-Python checks of ``_small_finite_row`` are all
        # ``__post_init__`` would do for it; anything else gets the full checks and messages.
        single = _small_finite_row(targets, 3, None)
        if single is None:
            return cls(targets)  # (checked, made float, there)
        return _unchecked(single, None, None, UNIT_Y_AIM.copy(), 1.0, 1.0)

    @property
    def count(self) -> int:
        return len(self.positions)

    @property
    def has_orientation(self) -> bool:
        return self.orientations is not None or self.directions is not None

    def take(self, rows: NDArray[np.intp]) -> Goals:
        """The goals of the given rows (for active sets and restarts).

        Skips validation: the rows of valid goals are valid, and this runs every iteration.
        """
        return _unchecked(
            self.positions[rows],
            None if self.orientations is None else self.orientations[rows],
            None if self.directions is None else self.directions[rows],
            self.aim_axis,
            self.position_weight,
            self.orientation_weight,
        )

    def orientation_error(self, tip_rotations: Array) -> Array:
        """Radians between the tip's posed frame and the wanted one (or its aim and direction)."""
        if self.orientations is not None:
            return quat.angle_between(tip_rotations, self.orientations)
        if self.directions is not None:
            return quat.direction_angle(quat.rotate(tip_rotations, self.aim_axis), self.directions)
        return np.zeros(len(tip_rotations))

    def tip_axis_pairs(self, tip_rotations: Array) -> tuple[Array, Array] | None:
        """(now, wanted) unit axes of the tip frame, shaped (N, k, 3), or None without orientation."""
        if self.orientations is not None:
            axes = np.eye(3)[:2]  # two axes fix a frame; the third adds nothing
            now = quat.rotate(tip_rotations[:, None, :], axes)
            wanted = quat.rotate(self.orientations[:, None, :], axes)
            return now, wanted
        if self.directions is not None:
            return quat.rotate(tip_rotations, self.aim_axis)[:, None, :], self.directions[:, None, :]
        return None


# The default aim axis as ``__post_init__`` leaves it (+Y over its length, 1.0): copied per goals.
UNIT_Y_AIM = Y_AXIS / 1.0


def _unchecked(
    positions: Array,
    orientations: Array | None,
    directions: Array | None,
    aim_axis: Array,
    position_weight: float,
    orientation_weight: float,
) -> Goals:
    """Goals made from values known valid (rows of valid goals, a row ``Goals.of`` checked),
    without ``__post_init__``'s checks."""
    goals = object.__new__(Goals)
    set_field = object.__setattr__
    set_field(goals, "positions", positions)
    set_field(goals, "orientations", orientations)
    set_field(goals, "directions", directions)
    set_field(goals, "aim_axis", aim_axis)
    set_field(goals, "position_weight", position_weight)
    set_field(goals, "orientation_weight", orientation_weight)
    return goals
