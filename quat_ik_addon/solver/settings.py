"""Solver settings and results: small frozen dataclasses, no string-keyed dicts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .entry_checks import whole_number

SWEEP_ORDERS = ("tip_to_base", "base_to_tip")
METHODS = ("ccd", "dls", "ccd_dls", "dls_ccd", "jacobian_transpose")
# "auto": the native kernel where it loaded (solver/native), else numpy; "numpy": never the kernel.
KERNELS = ("auto", "numpy")


@dataclass(frozen=True)
class SolveSettings:
    """How a solve runs.

    ``tolerance`` is the effector-to-target distance (root-frame units) counted as reached;
    when None it is ``relative_tolerance`` times the chain's reach. A target stalls, and stops
    iterating, after ``stall_iterations`` sweeps in a row that each shrink its error by less
    than ``stall_ratio`` of itself.

    ``method``: "ccd" (Blow's quaternion CCD), "dls" (damped least squares on the Jacobian),
    "ccd_dls" (CCD's cheap global moves, then DLS's fast final convergence), "dls_ccd", or
    "jacobian_transpose". ``damping`` is DLS's starting λ as a fraction of the chain's reach.
    ``restarts`` rounds re-solve the goals still unmet from ``restart_candidates`` random poses
    inside the limits each (simulated annealing's simplest form, Blow 2002), all batched, each
    allowed ``restart_iterations`` (CCD needs more sweeps than DLS needs iterations).
    ``rest_pull`` (0-1) draws each CCD step toward the preferred pose, fading as goals are met.
    ``time_limit`` (seconds, None: none) bounds what a solve spends improving an answer it has
    (restart rounds, a shot's searches; ``time_budget``): past it the best poses so far are kept.
    ``kernel``: "auto" runs the methods on the native kernel where it loaded and supports the
    chain (the same answers to rounding), "numpy" always on the numpy reference.
    """

    max_iterations: int = 100
    tolerance: float | None = None
    relative_tolerance: float = 1e-6
    # Radians; None: the turn that moves a point at the chain's reach by the position tolerance
    # (a hand's rotation is then met as closely as its position).
    orientation_tolerance: float | None = None
    order: str = "tip_to_base"
    stall_iterations: int = 8
    stall_ratio: float = 1e-4
    rest_pull: float = 0.0
    method: str = "dls_ccd"
    ccd_iterations_before_dls: int = 12
    damping: float = 0.05
    restarts: int = 0
    restart_candidates: int = 8
    restart_iterations: int = 40
    seed: int = 0
    time_limit: float | None = None
    kernel: str = "auto"

    def __post_init__(self) -> None:
        if self.order not in SWEEP_ORDERS:
            raise ValueError(f"order must be one of {SWEEP_ORDERS}, not {self.order!r}")
        for name in (
            "max_iterations",
            "restarts",
            "restart_candidates",
            "restart_iterations",
            "ccd_iterations_before_dls",
            "stall_iterations",
            "seed",
        ):
            whole_number(getattr(self, name), name)
        if self.tolerance is not None and not (self.tolerance >= 0.0 and np.isfinite(self.tolerance)):
            raise ValueError(f"tolerance must be a finite number >= 0, not {self.tolerance}")
        for name in ("relative_tolerance", "orientation_tolerance"):
            value = getattr(self, name)
            if value is not None and not (value >= 0.0 and np.isfinite(value)):
                raise ValueError(f"{name} must be a finite number >= 0, not {value}")
        if self.time_limit is not None and not (self.time_limit >= 0.0 and np.isfinite(self.time_limit)):
            raise ValueError(f"time_limit must be a finite number of seconds >= 0, not {self.time_limit}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, not {self.kernel!r}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, not {self.method!r}")
        if not (0.0 <= self.stall_ratio < 1.0):
            raise ValueError(f"stall_ratio must be within [0, 1), not {self.stall_ratio}")
        if not (self.damping > 0.0 and np.isfinite(self.damping)):
            raise ValueError(f"damping must be a finite number > 0, not {self.damping}")
        if not 0.0 <= self.rest_pull <= 1.0:
            raise ValueError(f"rest_pull must be within [0, 1], not {self.rest_pull}")

    def absolute_tolerance(self, reach: float) -> float:
        return self.tolerance if self.tolerance is not None else self.relative_tolerance * reach

    def angle_tolerance(self, tolerance: float, reach: float) -> float:
        """The orientation tolerance (radians) that goes with position ``tolerance``."""
        if self.orientation_tolerance is not None:
            return self.orientation_tolerance
        return tolerance / max(reach, 1e-12)

    def reached(
        self, position_error: NDArray, orientation_error: NDArray, tolerance: float, reach: float
    ) -> NDArray[np.bool_]:
        """Goals met: position within ``tolerance`` and orientation within ``angle_tolerance``."""
        angle_tolerance = self.angle_tolerance(tolerance, reach)
        if isinstance(tolerance, float) and _one_double(position_error) and _one_double(orientation_error):
            # One goal (a Live update's): the same comparisons in Python, three numpy calls fewer.
            return np.array([position_error.item() <= tolerance and orientation_error.item() <= angle_tolerance])
        return (position_error <= tolerance) & (orientation_error <= angle_tolerance)


_DOUBLE = np.dtype(np.float64)


def _one_double(values: object) -> bool:
    """An array of one float64 (narrower floats compare at their own precision in numpy)."""
    return type(values) is np.ndarray and values.shape == (1,) and values.dtype == _DOUBLE


@dataclass(frozen=True)
class SolveResult:
    """Per-target outcome of a batched solve (N targets, n bones).

    ``rotations`` (N, n, 4) are pose rotations for ``pose_bone.rotation_quaternion``; the
    errors are measured by forward kinematics of exactly those rotations.
    """

    rotations: NDArray[np.float64]
    effector: NDArray[np.float64]
    position_error: NDArray[np.float64]
    orientation_error: NDArray[np.float64]  # radians; zero without an orientation goal
    iterations: NDArray[np.int64]
    restarts: NDArray[np.int64]
    converged: NDArray[np.bool_]
    tolerance: float
    out_of_time: bool = False  # the time limit ran out: restarts or a shot's searches were cut short
    wrap_jump: float = 0.0  # a looping shot's jump where it wraps, radians (0: it wraps smoothly)

    @property
    def success_rate(self) -> float:
        return float(np.mean(self.converged)) if self.converged.size else 1.0
