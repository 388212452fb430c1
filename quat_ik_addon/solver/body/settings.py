"""How a body solve runs, and what it returns: small frozen dataclasses."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..entry_checks import whole_number
from ..settings import KERNELS, SolveSettings


@dataclass(frozen=True)
class BodySettings:
    """``tolerance`` (the rig's units; when None, ``relative_tolerance`` × the body's size) is the
    distance counted as reached (angles: that distance over the size, unless
    ``orientation_tolerance`` radians is given). While the lower
    levels move, a met level may drift to ``working_tolerance`` × size; ``polish_iterations``
    then bring it back within the tolerance. ``damping`` is λ's start, × size (a polish's: 1% of
    it); a level settles (is held as close as it gets) once its last ``stall_iterations`` steps
    together cut its excess by less than ``stall_ratio`` of it. Rows left unmet are solved again from
    ``restart_candidates`` random poses inside the limits, ``restarts`` rounds of
    ``restart_iterations``; rows whose pins or highest goal level are still unmet, up to
    ``top_restarts`` rounds in all. With ``restarts``, rows still unmet are then refined, from
    their pose and from the poses the search found on the way (the first answer, the equal
    start's, the candidates of the first ``restarts`` rounds): up to ``refine_iterations`` more
    each, a level settling once its last ``stall_iterations`` steps cut its excess by less than
    ``refine_stall_ratio`` of it, the best kept (``solve._refine``). ``use_stretch``:
    stretchy bones may stretch where the goals need it. ``equal_start``: goals at several levels
    are also sought all at one level first: a solve from rest also starts from that answer,
    each row keeping the better (``solve._from_equal_start``), and each candidate of the first
    ``restarts`` rounds descends so before its levels are taken in order. ``kernel``: "auto"
    runs the stages on the native kernel where it loaded and knows every limit of the body (the
    same answers to rounding), "numpy" always on the numpy reference."""

    max_iterations: int = 100
    polish_iterations: int = 30
    tolerance: float | None = None
    relative_tolerance: float = 1e-6
    orientation_tolerance: float | None = None
    working_tolerance: float = 1e-3
    damping: float = 0.05
    stall_iterations: int = 6
    stall_ratio: float = 1e-2
    restarts: int = 1
    top_restarts: int = 3
    restart_candidates: int = 6
    restart_iterations: int = 40
    refine_iterations: int = 200
    refine_stall_ratio: float = 1e-5
    seed: int = 0
    use_stretch: bool = True
    equal_start: bool = True
    kernel: str = "auto"

    def __post_init__(self) -> None:
        for name in (
            "max_iterations",
            "polish_iterations",
            "stall_iterations",
            "restarts",
            "top_restarts",
            "restart_candidates",
            "restart_iterations",
            "refine_iterations",
            "seed",
        ):
            whole_number(getattr(self, name), name)
        for name in ("relative_tolerance", "working_tolerance", "damping"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0.0):
                raise ValueError(f"{name} must be a finite number > 0, not {value!r}")
        if self.tolerance is not None and not (
            isinstance(self.tolerance, numbers.Real) and np.isfinite(self.tolerance) and self.tolerance >= 0.0
        ):
            raise ValueError(f"tolerance must be a finite number >= 0, not {self.tolerance!r}")
        if self.orientation_tolerance is not None and not (
            np.isfinite(self.orientation_tolerance) and self.orientation_tolerance > 0.0
        ):
            raise ValueError(f"orientation_tolerance must be a finite number > 0, not {self.orientation_tolerance!r}")
        for name in ("stall_ratio", "refine_stall_ratio"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and 0.0 <= value < 1.0):
                raise ValueError(f"{name} must be within [0, 1), not {value!r}")
        for name in ("use_stretch", "equal_start"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, not {self.kernel!r}")

    def tolerances(self, size: float) -> tuple[float, float]:
        """(distance, angle) counted as met for a body of ``size``."""
        distance = self.distance_tolerance(size)
        angle = distance / size if self.orientation_tolerance is None else self.orientation_tolerance
        return distance, angle

    def distance_tolerance(self, size: float) -> float:
        """The distance counted as met; a tolerance of 0 is taken as rounding at the body's size."""
        if self.tolerance is None:
            return self.relative_tolerance * size
        return max(float(self.tolerance), 1e-9 * size)

    def working_tolerances(self, size: float) -> tuple[float, float]:
        """(distance, angle) a met level may drift to while lower levels move."""
        distance, angle = self.tolerances(size)
        return max(distance, self.working_tolerance * size), max(angle, self.working_tolerance)


@dataclass(frozen=True)
class BodyResult:
    """Per row (N goal sets) outcome of a body solve, measured by forward kinematics of exactly
    the returned rotations and stretch. Goal arrays follow the order the goals were given in,
    pin arrays the order of the pins; ``levels`` are the goals' distinct levels, highest first."""

    rotations: NDArray[np.float64]  # (N, B, 4) pose rotations, wxyz
    stretch: NDArray[np.float64]  # (N, B) Y scales, 1 = rest length
    position_error: NDArray[np.float64]  # (N, G), 0 where a goal has no position
    orientation_error: NDArray[np.float64]  # (N, G) radians, 0 where none
    pin_position_error: NDArray[np.float64]  # (N, P)
    pin_rotation_error: NDArray[np.float64]  # (N, P) radians
    levels: tuple[int, ...]
    level_met: NDArray[np.bool_]  # (N, len(levels))
    pins_held: NDArray[np.bool_]  # (N,) every pin within tolerance
    iterations: NDArray[np.int64]  # (N,)
    restarts: NDArray[np.int64]  # (N,) restart rounds used
    tolerance: float
    angle_tolerance: float

    @property
    def all_met(self) -> NDArray[np.bool_]:
        """(N,) every pin held and every goal met."""
        return self.pins_held & np.all(self.level_met, axis=1)


# A body's share of a chain's restart rounds: each body round tries ``restart_candidates`` poses
# over the whole body, so a few rounds search as far as a chain's many.
BODY_TOP_RESTARTS_MAX = 3


def body_settings_from(settings: SolveSettings, *, warm: bool = False) -> BodySettings:
    """The body settings every front end solves a body with, from the chain settings it was given
    (the panel's first chain of the body, the command line's flags, ``DEFAULT_SETTINGS``): the same
    iterations, tolerance and switch of kernel; the chain's restarts become the rounds for pins and
    top goals left unmet (at most ``BODY_TOP_RESTARTS_MAX``) and one round for lower goals, which a
    warm solve (Live) skips: it costs ~230 iterations, and a random pose it found would make the
    body jump while dragged."""
    restarts = int(settings.restarts)
    return BodySettings(
        max_iterations=max(int(settings.max_iterations), 1),
        tolerance=settings.tolerance,
        relative_tolerance=settings.relative_tolerance,
        restarts=1 if restarts > 0 and not warm else 0,
        top_restarts=min(restarts, BODY_TOP_RESTARTS_MAX),
        kernel=settings.kernel,
    )
