"""Batched quaternion Cyclic Coordinate Descent (Blow 2002).

Each sweep visits every joint once (tip to base by default) and turns it to best bring the
effector onto the target (and the tip's axes onto the wanted orientation, see goals.py), then
applies the joint's limit. All N goals advance together: the Python loop runs over
iterations and bones, never over targets.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..chain import Chain
from ..goals import Goals
from ..measurements import combined_error, finish_result, goal_errors
from ..settings import SolveResult, SolveSettings
from ..start_poses import initial_poses

Array = NDArray[np.float64]


class _Sweep:
    """One CCD sweep's shared inputs for a batch of rows."""

    def __init__(self, chain: Chain, goals: Goals, preferred: Array | None, pull: Array | None):
        self.chain = chain
        self.goals = goals
        self.preferred = preferred
        self.pull = pull
        orientation_weight = goals.orientation_weight * chain.reach**2
        extra = 0 if not goals.has_orientation else (2 if goals.orientations is not None else 1)
        self.weights = np.array([goals.position_weight] + [orientation_weight] * extra)

    def joint_step(self, i: int, q: Array, pre: Array, head: Array, effector: Array, tip: Array):
        """Turn joint i; returns its new rotation and the moved effector and tip frame."""
        to_local = quat.conjugate(pre)
        now, wanted = (effector - head)[:, None, :], (self.goals.positions - head)[:, None, :]
        axis_pairs = self.goals.tip_axis_pairs(tip)
        if axis_pairs is not None:
            now = np.concatenate((now, axis_pairs[0]), axis=1)
            wanted = np.concatenate((wanted, axis_pairs[1]), axis=1)
        # Every pair seen from the joint, in its pre-rotation frame, by one rotation.
        seen = quat.rotate(to_local[:, None, :], np.concatenate((now, wanted), axis=1))
        now_pairs, wanted_pairs = seen[:, : now.shape[1]], seen[:, now.shape[1] :]
        effector_local = seen[:, 0]
        old = q[:, i]
        limit = self.chain.limits[i]
        new = limit.step_towards(old, now_pairs, wanted_pairs, self.weights)
        if self.pull is not None:
            # Zhong 2000's springiness toward a natural pose, fading as the goal is reached so
            # that it picks the solution branch without stopping convergence.
            toward = quat.multiply(
                new, quat.slerp_from_identity(quat.multiply(quat.conjugate(new), self.preferred[:, i]), self.pull)
            )
            new = limit.clamp(toward)
        # Effector and tip are rigid in bone i's frame: carry them from the old pose to the new.
        carry = quat.multiply(pre, quat.multiply(new, quat.conjugate(old)))
        moved_effector = head + quat.rotate(carry, effector_local)
        return new, moved_effector, quat.multiply(carry, quat.multiply(to_local, tip))


def _sweep_tip_to_base(sweep: _Sweep, q: Array) -> tuple[Array, Array]:
    # Joints below i do not move while joint i turns, so one forward pass serves the sweep.
    pose = sweep.chain.forward_kinematics(q)
    effector, tip = pose.effector, pose.rotations[:, -1]
    for i in reversed(range(sweep.chain.n_bones)):
        q[:, i], effector, tip = sweep.joint_step(i, q, pose.pre_rotations[:, i], pose.heads[:, i], effector, tip)
    return effector, tip


def _sweep_base_to_tip(sweep: _Sweep, q: Array) -> tuple[Array, Array]:
    # Bones above i keep their shape until visited, so effector and tip are fixed in each
    # bone's frame as of the sweep's start; only the prefix of frames is rebuilt as joints turn.
    chain = sweep.chain
    pose = chain.forward_kinematics(q)
    to_bone = quat.conjugate(pose.rotations)
    effector_in_bone = quat.rotate(to_bone, pose.effector[:, None, :] - pose.heads)
    tip_in_bone = quat.multiply(to_bone, pose.rotations[:, -1:])
    frame = np.broadcast_to(quat.IDENTITY, (len(q), 4))
    head = np.zeros((len(q), 3))
    for i in range(chain.n_bones):
        head = head + quat.rotate(frame, chain.rest_offsets[i])
        pre = quat.multiply(frame, chain.rest_rotations[i])
        posed = quat.multiply(pre, q[:, i])
        effector = head + quat.rotate(posed, effector_in_bone[:, i])
        tip = quat.multiply(posed, tip_in_bone[:, i])
        q[:, i], effector, tip = sweep.joint_step(i, q, pre, head, effector, tip)
        frame = quat.multiply(pre, q[:, i])
    return effector, tip


def solve_ccd(
    chain: Chain,
    targets: ArrayLike | Goals,
    *,
    start_rotations: ArrayLike | None = None,
    settings: SolveSettings | None = None,
    preferred_rotations: ArrayLike | None = None,
) -> SolveResult:
    """Solve N goals at once (root frame): an (N, 3) array of positions or a Goals.

    Cold from rest, or warm from ``start_rotations`` ((n, 4) shared or (N, n, 4) per target).
    Unreachable goals get the best pose found toward them and ``converged`` False.
    """
    settings = settings or SolveSettings()
    goals = Goals.of(targets)
    rotations = initial_poses(chain, start_rotations, goals.count)
    preferred = None if preferred_rotations is None else initial_poses(chain, preferred_rotations, goals.count)
    rotations, iterations = run_ccd(chain, goals, rotations, settings, preferred)
    return finish_result(chain, goals, rotations, iterations, settings)


def run_ccd(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    settings: SolveSettings,
    preferred: Array | None = None,
    max_iterations: int | None = None,
) -> tuple[Array, Array]:
    """CCD sweeps on (N, n, 4) poses until each goal converges or stalls; keeps each row's best.

    Returns the best poses and the sweeps each row took.
    """
    max_iterations = settings.max_iterations if max_iterations is None else max_iterations
    sweep_once = _sweep_tip_to_base if settings.order == "tip_to_base" else _sweep_base_to_tip
    tolerance = settings.absolute_tolerance(chain.reach)
    position_error, orientation_error, _ = goal_errors(chain, goals, rotations)
    error = combined_error(chain, position_error, orientation_error)
    best_rotations, best_error = rotations.copy(), error.copy()
    iterations = np.zeros(goals.count, dtype=np.int64)
    stalled_sweeps = np.zeros(goals.count, dtype=np.int64)
    active = ~settings.reached(position_error, orientation_error, tolerance, chain.reach)
    use_pull = preferred is not None and settings.rest_pull > 0.0

    for _ in range(max_iterations):
        rows = np.nonzero(active)[0]
        if rows.size == 0:
            break
        row_goals = goals if rows.size == goals.count else goals.take(rows)
        pull = settings.rest_pull * np.minimum(1.0, error[rows] / chain.reach) if use_pull else None
        sweep = _Sweep(chain, row_goals, None if preferred is None else preferred[rows], pull)
        q = rotations[rows]
        effector, tip = sweep_once(sweep, q)
        rotations[rows] = q
        iterations[rows] += 1
        row_position_error = quat.length(effector - row_goals.positions)
        row_orientation_error = row_goals.orientation_error(tip)
        new_error = combined_error(chain, row_position_error, row_orientation_error)
        improved = new_error < best_error[rows]
        best_rotations[rows[improved]] = q[improved]
        best_error[rows[improved]] = new_error[improved]
        slow = error[rows] - new_error < settings.stall_ratio * error[rows]
        stalled_sweeps[rows] = np.where(slow, stalled_sweeps[rows] + 1, 0)
        error[rows] = new_error
        reached = settings.reached(row_position_error, row_orientation_error, tolerance, chain.reach)
        active[rows] = ~reached & (stalled_sweeps[rows] < settings.stall_iterations)
    return best_rotations, iterations
