"""Pole targets: which way a chain bends, as Blender's IK pole target decides it.

A chain whose goal is only a position can swing freely about the line from its root to the
goal without moving the effector. A pole picks that swing: the chain is turned about the
line until its bend (the mean of its joints' heads, seen across the line) points at the
pole, plus ``pole_angle``; the turn is about a line through the root's head, so it is a
change of the root joint alone and leaves the effector where it was. The turned pose is then
solved again from there (joint limits may hold the root back), which keeps the goal.

Facing "root_x" is Blender's IK (``intern/iksolver``, IK_QJacobianSolver::ConstrainPoleVector):
the root bone's X axis turned toward its Z axis by the pole angle, X·cos a + Z·sin a, faces the
pole, so a pole angle set for Blender's IK constraint means the same here. Blender also turns
the chain that way before it solves (``blender_start``: the effector toward the goal, that
axis toward the pole), which decides the bend its solve finds from there; a solve started the
same way bends as Blender's does.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from . import quaternion as quat
from .chain import Chain, ChainPose
from .goals import Goals
from .settings import SolveResult, SolveSettings
from .solve import solve

Array = NDArray[np.float64]

# Across the root-goal line, a bend or a pole nearer than this share of the reach gives no
# direction to turn to (a straight chain, or a pole on the line): those poses stay.
UNDEFINED_BELOW = 1e-6
POLE_FACINGS = ("bend", "root_x")
# A pose solved again after turning to its pole must face it better than this (radians), or
# the pose as first solved stays (``solve_facing_poles``).
FACING_SLACK = 1e-6


def _across(vectors: Array, axis: Array) -> Array:
    """The parts of (N, 3) vectors perpendicular to unit axes (N, 3)."""
    return vectors - axis * np.einsum("ij,ij->i", vectors, axis)[:, None]


def _blender_up(pose: ChainPose, pole_angle: float | Array) -> Array:
    """The root bone's X axis turned toward its Z axis by the pole angle (N, 3): what Blender's
    IK turns to the pole (X·cos a + Z·sin a, IK_QJacobianSolver::ConstrainPoleVector)."""
    angle = np.broadcast_to(np.asarray(pole_angle, dtype=float), (len(pose.rotations),))
    local = np.stack((np.cos(angle), np.zeros_like(angle), np.sin(angle)), axis=-1)
    return quat.rotate(pose.rotations[:, 0], local)


def _facing(
    chain: Chain, rotations: Array, goals: Array, facing: str, pole_angle: float | Array = 0.0
) -> tuple[ChainPose, Array, Array, Array]:
    """Per pose: the posed chain, the unit root-to-goal axis (N, 3), the line's length (N,) and
    what faces the pole (``face_pole``), seen across that line (N, 3); for "root_x" that takes
    the pole angle in already (``_blender_up``)."""
    if facing not in POLE_FACINGS:
        raise ValueError(f"facing must be one of {POLE_FACINGS}, not {facing!r}")
    pose = chain.forward_kinematics(rotations)
    root = pose.heads[:, 0]
    line = goals - root
    length = quat.length(line)
    axis = line / np.maximum(length, 1e-300)[:, None]
    if facing == "root_x":
        bend = _across(_blender_up(pose, pole_angle) * chain.reach, axis)
    else:
        bend = _across(np.mean(pose.heads[:, 1:] - root[:, None], axis=1) if chain.n_bones > 1 else line, axis)
    return pose, axis, length, bend


def _turn_root(pose: ChainPose, rotations: Array, turn: Array) -> Array:
    """Poses whose root joint is turned by ``turn`` (N, 4), a rotation in the root frame about
    the root's head: the root's posed frame is P·q with P its frame before its own rotation,
    and T·P·q = P·(P⁻¹·T·P·q)."""
    before_root = pose.pre_rotations[:, 0]
    turned = rotations.copy()
    turned[:, 0] = quat.multiply(
        quat.conjugate(before_root), quat.multiply(turn, quat.multiply(before_root, rotations[:, 0]))
    )
    return turned


def pole_positions(
    chain: Chain,
    rotations: Array,
    goals: Array,
    distance: float | Array = 1.0,
    pole_angle: float = 0.0,
    facing: str = "bend",
    straight_below: float = UNDEFINED_BELOW,
) -> Array:
    """Where a pole leaves poses (N, n, 4) as they are under ``face_pole``: off the middle of each
    root-to-goal line (goals (N, 3), root frame), ``distance`` reaches away, toward what faces
    the pole turned back by ``pole_angle``. NaN rows where a pose gives no direction: a goal
    on the root, or a chain whose bend is under ``straight_below`` reaches (straight)."""
    pose, axis, length, bend = _facing(chain, rotations, goals, facing, pole_angle)
    root = pose.heads[:, 0]
    scale = straight_below * chain.reach
    defined = (length > scale) & (quat.length(bend) > scale)
    back = 0.0 if facing == "root_x" else -pole_angle  # Blender's up vector holds the angle already
    toward = quat.rotate(quat.from_axis_angle(axis, np.full(len(axis), back)), bend)
    toward /= np.maximum(quat.length(toward), 1e-300)[:, None]
    positions = root + 0.5 * (goals - root) + toward * (np.asarray(distance, dtype=float) * chain.reach)[..., None]
    return np.where(defined[:, None], positions, np.nan)


def face_pole(
    chain: Chain, rotations: Array, goals: Array, poles: Array, pole_angle: float = 0.0, facing: str = "bend"
) -> Array:
    """Poses (N, n, 4) turned about their root-to-goal lines so their bends face the poles.

    ``goals`` and ``poles`` are (N, 3) positions in the root frame; ``pole_angle`` (radians)
    turns the bend further, right-handed about the root-to-goal line. ``facing`` says what faces
    the pole: "bend", the mean of the joints' heads, or "root_x", the root bone's X axis turned
    toward its Z axis by the pole angle, as Blender's IK has it (module docstring).
    """
    pose, axis, angle = _turn_to_face(chain, rotations, goals, poles, pole_angle, facing)
    return _turn_root(pose, rotations, quat.from_axis_angle(axis, angle))


def _turn_to_face(
    chain: Chain, rotations: Array, goals: Array, poles: Array, pole_angle: float | Array, facing: str
) -> tuple[ChainPose, Array, Array]:
    """The posed chains, their unit root-to-goal axes (N, 3) and the signed turn about them
    (N,) that would make them face their poles (0 where that is undefined: ``face_pole``)."""
    pose, axis, length, bend = _facing(chain, rotations, goals, facing, pole_angle)
    root = pose.heads[:, 0]
    wanted = _across(poles - root, axis)
    scale = UNDEFINED_BELOW * chain.reach
    defined = (length > scale) & (quat.length(bend) > scale) & (quat.length(wanted) > scale)
    # Signed angle from the bend to the wanted direction, about the axis (atan2 form).
    angle = np.arctan2(np.einsum("ij,ij->i", axis, np.cross(bend, wanted)), np.einsum("ij,ij->i", bend, wanted))
    angle = np.where(defined, angle + (0.0 if facing == "root_x" else pole_angle), 0.0)
    return pose, axis, quat.wrap_angle(angle)


def _unit_rows(vectors: Array) -> Array:
    """(N, 3) vectors scaled to unit length (zero ones stay zero)."""
    return vectors / np.maximum(quat.length(vectors), 1e-300)[:, None]


def _look_at(direction: Array, up: Array) -> Array:
    """Rows (N, 3, 3) of a frame looking along unit ``direction`` with ``up`` across it (gluLookAt's)."""
    side = _unit_rows(np.cross(direction, up))
    return np.stack((side, np.cross(side, direction), -direction), axis=-2)


def blender_start(chain: Chain, rotations: Array, goals: Array, poles: Array, pole_angle: float | Array) -> Array:
    """Start poses (N, n, 4) turned at the root as Blender's IK turns a chain before it solves:
    the effector's direction from the root onto the goal's, Blender's up vector (``_blender_up``)
    toward the pole, one rotation taking the first frame onto the second (IK_QJacobianSolver::
    ConstrainPoleVector), then clamped into the limits. Poses where either frame is undefined
    (the effector, goal or pole on the root's line) stay."""
    pose = chain.forward_kinematics(rotations)
    root = pose.heads[:, 0]
    reach, line = pose.effector - root, goals - root
    up, toward_pole = _blender_up(pose, pole_angle), poles - root
    scale = UNDEFINED_BELOW * chain.reach
    defined = (
        (quat.length(reach) > scale)
        & (quat.length(line) > scale)
        & (quat.length(_across(up, _unit_rows(reach))) > UNDEFINED_BELOW)
        & (quat.length(_across(toward_pole, _unit_rows(line))) > scale)
    )
    if not np.any(defined):
        return rotations
    now, wanted = _look_at(_unit_rows(reach), up), _look_at(_unit_rows(line), toward_pole)
    turn = quat.from_matrix(np.swapaxes(wanted, -1, -2) @ now)
    turn[~defined] = np.array([1.0, 0.0, 0.0, 0.0])
    return chain.clamp_to_limits(_turn_root(pose, rotations, turn))


def solve_facing_poles(
    chain: Chain,
    goals: Goals,
    solved: SolveResult,
    poles: Array,
    settings: SolveSettings,
    pole_angle: float = 0.0,
    facing: str = "bend",
) -> SolveResult:
    """Solved poses turned to face their poles, then solved again from there (no restarts:
    the answer should stay near the turned pose). Where that misses a goal the solved pose
    met, or ends facing its pole less than the solved pose did (joint limits would not let the
    chain bend that way, and clamping it into them swung it past), the solved pose stays: else
    a chain its limits keep off its pole would swing between two poses, one each side, on
    every Live update (130° at a time on the reference arm)."""
    turned = face_pole(chain, solved.rotations, goals.positions, poles, pole_angle, facing)
    faced = solve(
        chain, goals, start_rotations=turned, reference_rotations=turned, settings=replace(settings, restarts=0)
    )
    off_before = np.abs(_turn_to_face(chain, solved.rotations, goals.positions, poles, pole_angle, facing)[2])
    off_after = np.abs(_turn_to_face(chain, faced.rotations, goals.positions, poles, pole_angle, facing)[2])
    keep = solved.converged & (~faced.converged | (off_after > off_before + FACING_SLACK))
    if not np.any(keep):
        return replace(faced, iterations=faced.iterations + solved.iterations, restarts=solved.restarts)

    def pick(from_solved: Array, from_faced: Array) -> Array:
        return np.where(keep.reshape(-1, *([1] * (np.ndim(from_faced) - 1))), from_solved, from_faced)

    return SolveResult(
        rotations=pick(solved.rotations, faced.rotations),
        effector=pick(solved.effector, faced.effector),
        position_error=pick(solved.position_error, faced.position_error),
        orientation_error=pick(solved.orientation_error, faced.orientation_error),
        iterations=faced.iterations + solved.iterations,
        restarts=solved.restarts,
        converged=pick(solved.converged, faced.converged),
        tolerance=faced.tolerance,
    )
