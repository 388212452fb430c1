"""Solver settings and results: small frozen dataclasses, no string-keyed dicts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

SWEEP_ORDERS = ("tip_to_base", "base_to_tip")


@dataclass(frozen=True)
class SolveSettings:
    """How a solve runs.

    ``tolerance`` is the effector-to-target distance (root-frame units) counted as reached;
    when None it is ``relative_tolerance`` times the chain's reach. A target stalls, and stops
    iterating, after ``stall_iterations`` sweeps in a row that each shrink its error by less
    than ``stall_ratio`` of itself.
    """

    max_iterations: int = 100
    tolerance: float | None = None
    relative_tolerance: float = 1e-6
    order: str = "tip_to_base"
    stall_iterations: int = 8
    stall_ratio: float = 1e-4

    def __post_init__(self) -> None:
        if self.order not in SWEEP_ORDERS:
            raise ValueError(f"order must be one of {SWEEP_ORDERS}, not {self.order!r}")
        if self.max_iterations < 0:
            raise ValueError(f"max_iterations must be >= 0, not {self.max_iterations}")
        if self.tolerance is not None and not (self.tolerance >= 0.0 and np.isfinite(self.tolerance)):
            raise ValueError(f"tolerance must be a finite number >= 0, not {self.tolerance}")
        if not (self.relative_tolerance >= 0.0 and np.isfinite(self.relative_tolerance)):
            raise ValueError(f"relative_tolerance must be a finite number >= 0, not {self.relative_tolerance}")

    def absolute_tolerance(self, reach: float) -> float:
        return self.tolerance if self.tolerance is not None else self.relative_tolerance * reach


@dataclass(frozen=True)
class SolveResult:
    """Per-target outcome of a batched solve (N targets, n bones).

    ``rotations`` (N, n, 4) are pose rotations for ``pose_bone.rotation_quaternion``; the
    errors are measured by forward kinematics of exactly those rotations.
    """

    rotations: NDArray[np.float64]
    effector: NDArray[np.float64]
    position_error: NDArray[np.float64]
    iterations: NDArray[np.int64]
    converged: NDArray[np.bool_]
    tolerance: float

    @property
    def success_rate(self) -> float:
        return float(np.mean(self.converged)) if self.converged.size else 1.0
