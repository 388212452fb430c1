"""The body's Jacobian and weighted residuals at a pose, row blocks by priority level.

Columns: three per bone, rotations about the root frame's axes at its head (van den Bergen
2014's angular-velocity form, as ``dls.py``), projected onto the turns the joint allows (a aᵀ
for a hinge about a, zero for a fixed joint, off the axes it presses a limit along) and scaled
by √(1 − stiffness) (weighted least norm, as ``dls._AllowedTurns``); then one per bone that
may stretch: d(point)/ds = G_a·ŷ·y, with y the Y coordinate (bone a's frame) of the next point
on the way from a's head to the effector (van den Bergen 2014's prismatic joint, axis G_a·ŷ).
Rows: three per position, three per orientation or direction, each scaled by √weight (an
orientation also by the body's size, so radians weigh as far as they move a point at its
reach); with stretch in use, a last level asks every stretchy bone back to its rest length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from .goals import Tasks
from .skeleton import Body, BodyPose

Array = NDArray[np.float64]


def _cross_matrices(v: Array) -> Array:
    """(..., 3, 3) [v]× with [v]× u = v × u."""
    matrices = np.zeros((*v.shape, 3))
    matrices[..., 0, 1], matrices[..., 0, 2] = -v[..., 2], v[..., 1]
    matrices[..., 1, 0], matrices[..., 1, 2] = v[..., 2], -v[..., 0]
    matrices[..., 2, 0], matrices[..., 2, 1] = -v[..., 1], v[..., 0]
    return matrices


@dataclass(frozen=True)
class Linearised:
    """J (N, M, D), the weighted residual (N, M) and each level's rows (highest first)."""

    jacobian: Array
    residual: Array
    level_rows: tuple[NDArray[np.intp], ...]


def orientation_residual(tasks: Tasks, t: int, frames: Array) -> tuple[Array, Array]:
    """Rotation vector (N, 3) that would fix task t's orientation or direction, and the (N, 3, 3)
    projector onto the turns that count (all three; across the aim axis for a direction)."""
    count = len(frames)
    if tasks.has_orientation[t]:
        fix = quat.multiply(tasks.orientations[:, t], quat.conjugate(frames))
        return quat.rotation_vector(fix), np.broadcast_to(np.eye(3), (count, 3, 3))
    aim = quat.rotate(frames, tasks.aim_axes[t])
    wanted = tasks.directions[:, t]
    turn = quat.rotation_between(aim, wanted)
    angle = quat.direction_angle(aim, wanted)
    axis = turn[:, 1:] / np.maximum(quat.length(turn[:, 1:]), 1e-300)[:, None]
    # A turn about the aim axis itself changes nothing the goal sees (as ``dls``).
    across = np.eye(3) - aim[:, :, None] * aim[:, None, :]
    return axis * angle[:, None], across


def linearise(
    body: Body,
    tasks: Tasks,
    pose: BodyPose,
    stretchy: NDArray[np.intp],
    pressed: Array | None = None,
) -> Linearised:
    """The Jacobian, residual and level rows at ``pose``. ``stretchy``: the bones whose stretch
    is solved for (empty: lengths held); ``pressed`` (N, B, SLOTS, 3): unit axes in each
    joint's frame it keeps off (``limit_contacts``), zero where none."""
    count, n_bones = pose.heads.shape[:2]
    size = body.size
    points = pose.points(tasks.bones, tasks.points)
    turn_blocks: list[Array] = []  # (N, r, B, 3) each
    stretch_blocks: list[Array] = []  # (N, r, K)
    residuals: list[Array] = []
    row_levels: list[int] = []
    y_axes = quat.rotate_y_axis(pose.rotations[:, stretchy]) if stretchy.size else None
    for t, bone in enumerate(tasks.bones):
        moves = body.carries[:, bone]  # the bones whose turns move this task's bone
        if tasks.has_position[t]:
            scale = np.sqrt(tasks.position_weights[t])
            lever = points[:, t, None, :] - pose.heads  # (N, B, 3)
            block = -_cross_matrices(lever) * (scale * moves)[None, :, None, None]  # u × lever
            turn_blocks.append(block.transpose(0, 2, 1, 3))
            residuals.append(scale * (tasks.positions[:, t] - points[:, t]))
            if stretchy.size:
                # The next point on the way from each stretchy bone's head to this effector.
                towards = body.child_towards[stretchy, bone]
                y = (
                    np.where(
                        stretchy == bone,
                        tasks.points[t, 1],
                        body.rest_offsets[np.maximum(towards, 0), 1],
                    )
                    * moves[stretchy]
                )
                stretch_blocks.append(scale * y_axes.transpose(0, 2, 1) * y[None, None, :])
            row_levels += [tasks.level_of[t]] * 3
        if tasks.has_orientation[t] or tasks.has_direction[t]:
            scale = np.sqrt(tasks.orientation_weights[t]) * size
            error, counted = orientation_residual(tasks, t, pose.rotations[:, bone])
            block = np.broadcast_to(
                counted[:, :, None, :] * (scale * moves)[None, None, :, None], (count, 3, n_bones, 3)
            )
            turn_blocks.append(block)
            residuals.append(scale * error)
            if stretchy.size:
                stretch_blocks.append(np.zeros((count, 3, stretchy.size)))
            row_levels += [tasks.level_of[t]] * 3
    turns = np.concatenate(turn_blocks, axis=1)  # (N, M, B, 3)
    turns = _allowed(body, turns, pose.pre_rotations, pressed)
    columns = [turns.reshape(count, turns.shape[1], 3 * n_bones)]
    if stretchy.size:
        stretch_columns = np.concatenate(stretch_blocks, axis=1) * np.sqrt(body.stretch_shares[stretchy])
        columns.append(stretch_columns)
    jacobian = np.concatenate(columns, axis=2) if len(columns) > 1 else columns[0]
    residual = np.concatenate(residuals, axis=1)
    row_levels_array = np.array(row_levels, dtype=np.intp)
    level_rows = [np.nonzero(row_levels_array == k)[0] for k in range(len(tasks.levels))]
    if stretchy.size:
        # The last level: each stretchy bone back to rest length, L·(1 − s), in what the goals leave.
        lengths = body.lengths[stretchy]
        rest_rows = np.zeros((count, stretchy.size, jacobian.shape[2]))
        rest_rows[:, np.arange(stretchy.size), 3 * n_bones + np.arange(stretchy.size)] = lengths * np.sqrt(
            body.stretch_shares[stretchy]
        )
        level_rows.append(jacobian.shape[1] + np.arange(stretchy.size))
        jacobian = np.concatenate((jacobian, rest_rows), axis=1)
        residual = np.concatenate((residual, lengths * (1.0 - pose.stretch[:, stretchy])), axis=1)
    return Linearised(jacobian, residual, tuple(level_rows))


def _allowed(body: Body, turns: Array, pre: Array, pressed: Array | None) -> Array:
    """Rotation columns (N, M, B, 3) times each joint's projector and √share (a new array)."""
    turns = np.array(turns)
    hinges = body.hinge_bones
    if hinges.size:
        axes = quat.rotate(pre[:, hinges], body.hinge_axes)  # (N, h, 3)
        projectors = axes[..., :, None] * axes[..., None, :]
        turns[:, :, hinges] = np.einsum("nmhi,nhij->nmhj", turns[:, :, hinges], projectors)
    if pressed is not None:
        rows, joints = np.nonzero(np.any(pressed != 0.0, axis=(-2, -1)))
        if rows.size:
            slots = pressed.shape[2]
            inwards = quat.rotate(np.repeat(pre[rows, joints][:, None], slots, axis=1), pressed[rows, joints])
            # A ball joint's two pressed axes are perpendicular (``limit_contacts``): I − Σ a aᵀ.
            off = np.eye(3) - np.einsum("ksi,ksj->kij", inwards, inwards)
            turns[rows, :, joints] = np.einsum("kmi,kij->kmj", turns[rows, :, joints], off)
    turns *= np.sqrt(body.turn_shares)[None, None, :, None]
    return turns
