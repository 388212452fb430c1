"""What every method and the pipeline measure the same way: goal errors by forward kinematics,
one number to rank poses by, and a result finished to unit quaternions with w >= 0."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from . import quaternion as quat
from .chain import Chain, ChainPose
from .goals import Goals
from .native import kernel_calls
from .settings import SolveResult, SolveSettings

Array = NDArray[np.float64]
Measured = tuple[Array, Array, Array]  # position error, orientation error (radians), effector


def goal_errors_of(pose: ChainPose, goals: Goals) -> tuple[Array, Array]:
    """Position error and orientation error (radians) of posed chains."""
    return quat.length(pose.effector - goals.positions), goals.orientation_error(pose.rotations[:, -1])


def goal_errors(chain: Chain, goals: Goals, rotations: Array) -> tuple[Array, Array, Array]:
    """Position error, orientation error (radians) and effector of poses, by forward kinematics
    (on the native kernel where it runs the chain: one crossing for a dozen numpy calls)."""
    measured = kernel_calls.measure(chain, goals, rotations)
    if measured is not None:
        return measured
    pose = chain.forward_kinematics(rotations)
    position_error, orientation_error = goal_errors_of(pose, goals)
    return position_error, orientation_error, pose.effector


def combined_error(chain: Chain, position_error: Array, orientation_error: Array) -> Array:
    """One number to rank and watch progress by: distance plus reach × angle."""
    return position_error + chain.reach * orientation_error


def normalised(rotations: Array) -> Array:
    """Unit quaternions with w ≥ 0, as every result reports them."""
    return quat.canonical(quat.normalize(rotations))


def finish_result(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    iterations: Array,
    settings: SolveSettings,
    restarts: Array | None = None,
    measured: tuple[Array, Array, Array] | None = None,
    met: NDArray[np.bool_] | None = None,
) -> SolveResult:
    """Normalise, re-measure by forward kinematics and package a result.

    ``measured`` (``goal_errors`` of exactly these rotations, already normalised by
    :func:`normalised`) saves measuring again; ``met`` (``settings.reached`` of those errors,
    as the kernel answers it) saves comparing them again.
    """
    if measured is None:
        rotations = normalised(rotations)
        measured, met = goal_errors(chain, goals, rotations), None
    tolerance = settings.absolute_tolerance(chain.reach)
    position_error, orientation_error, effector = measured
    if met is None:
        met = settings.reached(position_error, orientation_error, tolerance, chain.reach)
    return SolveResult(
        rotations=rotations,
        effector=effector,
        position_error=position_error,
        orientation_error=orientation_error,
        iterations=iterations,
        restarts=np.zeros(goals.count, dtype=np.int64) if restarts is None else restarts,
        converged=met,
        tolerance=tolerance,
    )
