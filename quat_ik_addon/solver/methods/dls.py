"""Batched damped least squares on the chain's Jacobian (van den Bergen 2014), under the
same joint limits as CCD.

Every joint contributes three columns, rotations about the root frame's axes at its head,
multiplied by a projector onto the rotations it allows (identity for ball and free joints,
a aᵀ for a hinge about a, zero for a fixed joint), so one vectorised expression builds the
Jacobian for all joints. A step solves (J Jᵀ + λ²I) y = e and turns the joints by Jᵀ y;
λ adapts per target Levenberg–Marquardt style (halve on success, grow on failure), which
gives DLS its fast final convergence. Each step is clamped to the limits (projection).
``method="transpose"`` takes Jᵀe steps with Buss's optimal length instead.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from ..chain import Chain, ChainPose
from ..goals import Goals
from ..limits.contacts import SLOTS
from ..measurements import combined_error, goal_errors_of
from ..settings import SolveSettings

Array = NDArray[np.float64]

MAX_JOINT_STEP = 0.5  # radians: a damped step never turns one joint further than this
NEGLIGIBLE = 1e-9  # relative: a column or a multiplier this small is rounding, not a direction
NORMALISED_ONLY = 1e-10  # a clamp that moved no component of a unit quaternion further did not act


# (lever @ _TURN_MOVES)[3i + l] = (−[lever]×)[i, l]: how a turn about root-frame axis l at a head
# moves the effector along axis i (u × lever = −[lever]× u). One ±1 per entry: exact.
_TURN_MOVES = np.array(
    [
        [0, 0, 0, 0, 0, 1, 0, -1, 0],  # lever x
        [0, 0, -1, 0, 0, 0, 1, 0, 0],  # lever y
        [0, 1, 0, -1, 0, 0, 0, 0, 0],  # lever z
    ],
    dtype=float,
)


def _orientation_residual(goals: Goals, tip: Array) -> tuple[Array, Array] | None:
    """Rotation vector (N, 3) that would fix the tip's orientation, and the rows that count."""
    if goals.orientations is not None:
        fix = quat.multiply(goals.orientations, quat.conjugate(tip))
        return quat.rotation_vector(fix), np.broadcast_to(np.eye(3), (len(tip), 3, 3))
    if goals.directions is not None:
        aim = quat.rotate(tip, goals.aim_axis)
        turn = quat.rotation_between(aim, goals.directions)
        angle = quat.direction_angle(aim, goals.directions)
        axis = turn[:, 1:] / np.maximum(quat.length(turn[:, 1:]), 1e-300)[:, None]
        # Turning about the aim axis itself changes nothing that counts: project it out.
        across = np.eye(3) - aim[:, :, None] * aim[:, None, :]
        return axis * angle[:, None], across
    return None


class _AllowedTurns:
    """Projectors onto each joint's allowed rotations at a pose, in the root frame: identity for
    ball and free joints, a aᵀ for a hinge about a, zero for a fixed joint. Applied by joint
    kind, so ball and free joints cost nothing.

    A stiff joint's columns are also scaled by √(1 − stiffness), and so is its share of the
    step (``run_dls``): weighted least norm, min ‖J Δθ − e‖² + λ²‖W⁻¹Δθ‖² with W = diag(√(1 − s)),
    gives Δθ = W·(J W)ᵀ y, so each joint turns (1 − s) of what it would, the others make up
    for it, and stiffness 1 never moves (as a CCD step scaled by 1 − s; Zhong 2000)."""

    def __init__(self, chain: Chain, pre: Array):
        self.hinges = chain.hinge_bones
        self.fixed = chain.fixed_bones
        self.reach = chain.reach
        shares = chain.step_shares
        self.weights = None if shares is None else np.sqrt(shares)
        self.pre = pre
        if self.hinges.size:
            axes = quat.rotate(pre[:, self.hinges], chain.hinge_axes)
            self.hinge_projectors = axes[..., :, None] * axes[..., None, :]
        self.pressed = None
        self.held: tuple[NDArray[np.intp], NDArray[np.intp], Array, Array, Array] | None = None

    def keep_pressed(self, pressed: Array, blocks: Array) -> None:
        """Joints pressed against their limits (``pressed`` (N, n, SLOTS, 3): unit axes, in the
        joint's frame, about which a limit turned a part of a joint back, zero where none did;
        ``limit_contacts``) stay off those axes: so the other joints make up for them instead
        of the step being clamped away (the active set of gradient projection, Rosen 1960).
        ``let_go`` says which to let go of after the step. Blocks (N, n, m, 3), before
        projection."""
        rows, joints = np.nonzero(np.any(pressed != 0.0, axis=(-2, -1)))
        if rows.size == 0:
            return
        axes = pressed[rows, joints]
        inwards = quat.rotate(np.repeat(self.pre[rows, joints][:, None], SLOTS, axis=1), axes)
        self._project_off(rows, joints, inwards)
        # How a turn inwards about each axis would move the goals' rows: (k, m, SLOTS).
        self.held = (rows, joints, axes, inwards, np.einsum("kmi,ksi->kms", blocks[rows, joints], inwards))

    def _project_off(self, rows: NDArray[np.intp], joints: NDArray[np.intp], inwards: Array) -> None:
        # A ball joint's two axes are perpendicular (``limit_contacts``): I − Σ a aᵀ projects off both.
        self.pressed = (rows, joints, np.eye(3) - np.einsum("ksi,ksj->kij", inwards, inwards))

    def let_go(self, jacobian: Array, left: Array) -> tuple[NDArray[np.intp], NDArray[np.intp], Array, bool]:
        """Let go of the held axes where turning inwards about them would reduce the residual
        the linear model leaves after the step (``left`` (N, m)): their Lagrange multipliers'
        sign (Nocedal & Wright 2006, §16.5, active-set methods). Their columns go back into
        ``jacobian`` (N, m, 3n, in place) so the step can be solved again at once; returns the
        (row, joint) pairs with the axes still held, and whether any was let go of. Testing the
        residual before the step instead (the steepest descent's sign) let go of joints the DLS
        step still pushed outwards, and held others it pulled inwards."""
        rows, joints, axes, inwards, columns = self.held
        # Clearly positive only: an axis that moves nothing the goals see (a bone's twist under
        # a position goal on its axis) has a column of rounding noise, and so a multiplier
        # whose sign numpy's last bits decide.
        size = np.linalg.norm(columns, axis=1)
        multiplier = np.einsum("kms,km->ks", columns, left[rows])
        helps = (size > NEGLIGIBLE * self.reach) & (
            multiplier > NEGLIGIBLE * size * np.linalg.norm(left[rows], axis=-1)[:, None]
        )
        if not helps.any():
            return rows, joints, axes, False
        pairs, slots = np.nonzero(helps)
        back = columns[pairs, :, slots][:, :, None] * inwards[pairs, slots][:, None, :]  # (K, m, 3)
        if self.weights is not None:
            back *= self.weights[joints[pairs]][:, None, None]
        count, m = jacobian.shape[:2]
        np.add.at(jacobian.reshape(count, m, -1, 3), (rows[pairs], slice(None), joints[pairs]), back)
        kept = ~helps[..., None]
        self._project_off(rows, joints, np.where(kept, inwards, 0.0))
        self.held = (rows, joints, np.where(kept, axes, 0.0), np.where(kept, inwards, 0.0), columns)
        return rows, joints, self.held[2], True

    def of_blocks(self, blocks: Array) -> Array:
        """Each joint's (r, 3) block times its projector: blocks (N, n, r, 3), changed in place."""
        if self.hinges.size:
            blocks[:, self.hinges] = np.einsum("nkij,nkjl->nkil", blocks[:, self.hinges], self.hinge_projectors)
        if self.fixed.size:
            blocks[:, self.fixed] = 0.0
        if self.pressed is not None:
            rows, joints, projectors = self.pressed
            blocks[rows, joints] = blocks[rows, joints] @ projectors
        if self.weights is not None:
            blocks *= self.weights[:, None, None]
        return blocks

    def of_vectors(self, vectors: Array) -> Array:
        """Each joint's rotation vector projected: vectors (N, n, 3), changed in place."""
        if self.hinges.size:
            vectors[:, self.hinges] = np.einsum("nkij,nkj->nki", self.hinge_projectors, vectors[:, self.hinges])
        if self.fixed.size:
            vectors[:, self.fixed] = 0.0
        if self.pressed is not None:
            rows, joints, projectors = self.pressed
            vectors[rows, joints] = np.einsum("kij,kj->ki", projectors, vectors[rows, joints])
        if self.weights is not None:
            vectors *= self.weights[:, None]
        return vectors


def _as_rows(blocks: Array) -> Array:
    """Per-joint blocks (N, n, r, 3) laid out as Jacobian rows (N, r, 3n)."""
    count, n, r = blocks.shape[:3]
    return blocks.transpose(0, 2, 1, 3).reshape(count, r, 3 * n)


class _Problem:
    """Per-row data of one DLS step."""

    def __init__(self, chain: Chain, goals: Goals):
        self.chain = chain
        self.goals = goals
        self.position_scale = np.sqrt(goals.position_weight)
        self.orientation_scale = np.sqrt(goals.orientation_weight) * chain.reach

    def linearise(self, pose: ChainPose, pressed: Array | None = None) -> tuple[Array, Array, _AllowedTurns]:
        """Jacobian (N, m, 3n), weighted residual (N, m) and the allowed turns at a posed chain
        (``pressed``: see ``_AllowedTurns.keep_pressed``)."""
        count, n = pose.heads.shape[:2]
        allowed = _AllowedTurns(self.chain, pose.pre_rotations)
        lever = pose.effector[:, None, :] - pose.heads
        blocks = [self.position_scale * (lever.reshape(-1, 3) @ _TURN_MOVES).reshape(count, n, 3, 3)]
        residual = [self.position_scale * (self.goals.positions - pose.effector)]
        orientation = _orientation_residual(self.goals, pose.rotations[:, -1])
        if orientation is not None:
            error_vector, counted = orientation
            blocks.append(self.orientation_scale * np.broadcast_to(counted[:, None], (count, n, 3, 3)))
            residual.append(self.orientation_scale * error_vector)
        blocks = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=2)
        residual = residual[0] if len(residual) == 1 else np.concatenate(residual, axis=1)
        if pressed is not None:
            allowed.keep_pressed(pressed, blocks)
        return _as_rows(allowed.of_blocks(blocks)), residual, allowed


def _toward_preferred(rotations: Array, preferred: Array, pre: Array) -> Array:
    """Root-frame rotation vectors (N, n, 3) turning each joint from its pose to the preferred one."""
    return quat.rotate(pre, quat.rotation_vector(quat.multiply(preferred, quat.conjugate(rotations))))


def _apply(chain: Chain, rotations: Array, pre: Array, turn: Array) -> tuple[Array, Array]:
    """Turn each joint by its root-frame rotation vector (N, n, 3), then clamp to its limit;
    returns the clamped and the turned rotations (``_press`` compares them)."""
    turned = quat.multiply(quat.from_rotation_vector(quat.rotate(quat.conjugate(pre), turn)), rotations)
    return chain.clamp_to_limits(turned), turned


def _press(chain: Chain, pressed: Array, rows: NDArray[np.intp], clamped: Array, turned: Array) -> None:
    """Add to ``pressed`` (N, n, SLOTS, 3) the rows' contacts: per joint, the unit axes (joint
    frame) about which its limits turned it back from ``turned`` to ``clamped`` (``limit_contacts``);
    an axis a limit did not turn back about stays as it was."""
    # Most steps stay inside every limit, and there a clamp only normalises, which moves the
    # last bits: a change this small turns back by under the 1e-9 rad that counts.
    acted_rows, acted_joints = np.nonzero(np.any(np.abs(clamped - turned) > NORMALISED_ONLY, axis=-1))
    if acted_rows.size:
        axes = chain.limit_contacts.axes(turned, clamped, acted_rows, acted_joints)
        at = rows[acted_rows], acted_joints
        pressed[at] = np.where(np.any(axes != 0.0, axis=-1, keepdims=True), axes, pressed[at])


def _moved(jacobian: Array, step: Array) -> Array:
    """How a step (N, 3n) moves the goals' rows by the linear model: (N, m)."""
    return np.einsum("nmc,nc->nm", jacobian, step)


def _linear_step(
    jacobian: Array,
    residual: Array,
    damping: Array,
    method: str,
    allowed: _AllowedTurns,
    pull: Array | None,
    reach: float,
) -> Array:
    """The step (N, 3n) in the Jacobian's coordinates: damped least squares, (J Jᵀ + λ²I) y = e
    and Jᵀy, plus ``pull`` (N, n, 3) in its null space; or a Jᵀe step of Buss's optimal length."""
    if method == "transpose":
        step = np.einsum("nmc,nm->nc", jacobian, residual)
        moved = _moved(jacobian, step)
        length = np.einsum("nm,nm->n", residual, moved) / np.maximum(np.einsum("nm,nm->n", moved, moved), 1e-300)
        return step * length[:, None]
    normal = np.einsum("nic,njc->nij", jacobian, jacobian)
    normal += (damping**2)[:, None, None] * np.eye(normal.shape[-1])
    step = np.einsum("nmc,nm->nc", jacobian, np.linalg.solve(normal, residual[..., None])[..., 0])
    if pull is not None:
        toward = allowed.of_vectors(pull.copy()).reshape(step.shape)
        # Project with (almost) no damping: a damped projector leaks the pull into what the
        # goals see and stalls convergence.
        exact = normal - (damping**2 - (1e-5 * reach) ** 2)[:, None, None] * np.eye(normal.shape[-1])
        seen = _moved(jacobian, toward)
        step += toward - np.einsum("nmc,nm->nc", jacobian, np.linalg.solve(exact, seen[..., None])[..., 0])
    return step


class DlsRun(NamedTuple):
    """What ``run_dls`` returns: the best poses, and what it knows of them."""

    rotations: Array  # (N, n, 4)
    iterations: NDArray[np.int64]  # (N,)
    measured: tuple[Array, Array, Array]  # position error, orientation error and effector of the poses
    unmet: NDArray[np.intp]  # rows whose goals are not met


def run_dls(
    chain: Chain,
    goals: Goals,
    rotations: Array,
    settings: SolveSettings,
    max_iterations: int | None = None,
    method: str = "damped",
    preferred: Array | None = None,
) -> DlsRun:
    """DLS iterations on (N, n, 4) poses: the best poses, iterations per row, and the errors
    of the poses measured on the way (saving the caller a forward-kinematics pass).

    With ``preferred`` poses and ``settings.rest_pull`` > 0, each step also turns the joints
    toward the preferred pose inside the Jacobian's null space, (I − J⁺J)·z (the classic
    secondary task of redundant IK), which moves nothing the goals can see: a redundant chain
    keeps its posture instead of drifting along the solution set into a joint limit.
    """
    max_iterations = settings.max_iterations if max_iterations is None else max_iterations
    tolerance = settings.absolute_tolerance(chain.reach)
    rotations = rotations.copy()
    # Forward kinematics of each row's current pose, kept from the step that made it: the
    # Jacobian is built from the same numbers that judged the step.
    pose = chain.forward_kinematics(rotations)
    position_error, orientation_error = goal_errors_of(pose, goals)
    error = combined_error(chain, position_error, orientation_error)
    damping = np.full(goals.count, settings.damping * chain.reach)
    iterations = np.zeros(goals.count, dtype=np.int64)
    failures = np.zeros(goals.count, dtype=np.int64)
    active = ~settings.reached(position_error, orientation_error, tolerance, chain.reach)
    met = ~active
    n = chain.n_bones
    pressed = np.zeros((goals.count, n, SLOTS, 3))

    for _ in range(max_iterations):
        rows = np.nonzero(active)[0]
        if rows.size == 0:
            break
        row_goals = goals if rows.size == goals.count else goals.take(rows)
        problem = _Problem(chain, row_goals)
        row_pose = pose if rows.size == goals.count else pose.take(rows)
        pre = row_pose.pre_rotations
        jacobian, residual, allowed = problem.linearise(row_pose, pressed[rows])
        pull = None
        if preferred is not None and settings.rest_pull > 0.0 and method != "transpose":
            pull = settings.rest_pull * _toward_preferred(rotations[rows], preferred[rows], pre)
        step = _linear_step(jacobian, residual, damping[rows], method, allowed, pull, chain.reach)
        if allowed.held is not None:
            held_rows, held_joints, held_axes, let_go = allowed.let_go(jacobian, residual - _moved(jacobian, step))
            pressed[rows[held_rows], held_joints] = held_axes
            if let_go:  # the step again, with those joints free to turn inwards
                step = _linear_step(jacobian, residual, damping[rows], method, allowed, pull, chain.reach)
        step = step.reshape(len(rows), n, 3)
        if allowed.weights is not None:
            step *= allowed.weights[:, None]  # from weighted coordinates back to joint turns
        largest = np.max(quat.length(step), axis=-1)
        step *= np.minimum(1.0, MAX_JOINT_STEP / np.maximum(largest, 1e-300))[:, None, None]
        trial, turned = _apply(chain, rotations[rows], pre, step)
        trial_pose = chain.forward_kinematics(trial)
        trial_position, trial_orientation = goal_errors_of(trial_pose, row_goals)
        trial_error = combined_error(chain, trial_position, trial_orientation)
        better = trial_error < error[rows]
        accepted = rows[better]
        rotations[accepted] = trial[better]
        pose.put(accepted, trial_pose.take(np.nonzero(better)[0]))
        iterations[rows] += 1
        # Levenberg–Marquardt: trust the linear model more after a success, less after a miss.
        damping[rows] = np.where(better, damping[rows] * 0.5, damping[rows] * 4.0)
        # The floor keeps J Jᵀ + λ²I invertible where rows vanish (a direction goal ignores twist
        # about the aim axis); it is far below what slows convergence at 1e-6 × reach.
        damping[rows] = np.clip(damping[rows], 1e-6 * chain.reach, 1e3 * chain.reach)
        # A step that fails, or gains less than stall_ratio of the error, counts towards a
        # stall: an unreachable goal stops after a few such steps instead of creeping on.
        gain = error[rows] - trial_error
        slow = ~better | (gain < settings.stall_ratio * error[rows])
        failures[rows] = np.where(slow, failures[rows] + 1, 0)
        error[accepted] = trial_error[better]
        reached = settings.reached(trial_position, trial_orientation, tolerance, chain.reach) & better
        stalled = failures[rows] >= settings.stall_iterations
        active[rows] = ~reached & ~stalled
        met[rows] = reached
        # Joints their limit turned back press on it: later steps keep off those axes until
        # turning inwards would help (``let_go``). A joint kept off its limit is not turned
        # back again, yet still presses: it stays pressed (releasing it made steps alternate
        # between pushing into the limit and sliding along it). A failed step releases them
        # all (the goal may need a joint off its limit in a way the linear model does not see;
        # keeping them pressed through a failure, or adding the failed step's contacts, missed
        # 2-3 times more goals from poses near ones that meet them). Only rows that step on
        # need their contacts.
        pressed[rows[~better]] = 0.0
        going_on = better & active[rows]
        if going_on.any():
            _press(chain, pressed, rows[going_on], trial[going_on], turned[going_on])
    return DlsRun(rotations, iterations, (*goal_errors_of(pose, goals), pose.effector), np.nonzero(~met)[0])
