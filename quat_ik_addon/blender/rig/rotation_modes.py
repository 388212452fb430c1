"""A pose bone's rotation in its own ``rotation_mode``, to and from quaternions (w, x, y, z).

Used by the reader (current rotation), the pose writer (one value) and the baker (a whole
sequence). Sequences stay continuous so keyframe interpolation never takes the long way:
quaternions keep one hemisphere frame to frame, Euler angles follow Blender's own
compatible-Euler rule (``Quaternion.to_euler(order, previous)``, in numpy for whole sequences:
``solver.euler_curves``), axis-angle keeps its axis on the previous side and unwraps its angle.
"""

from __future__ import annotations

import math

import numpy as np
from mathutils import Euler, Quaternion

from ...solver.euler_angles import EULER_ORDERS
from ...solver.euler_curves import euler_curves

ROTATION_MODES = ("QUATERNION", *EULER_ORDERS, "AXIS_ANGLE")


def data_path_and_size(mode: str) -> tuple[str, int]:
    """The pose-bone property holding a rotation in ``mode`` and its number of channels."""
    if mode == "QUATERNION":
        return "rotation_quaternion", 4
    if mode == "AXIS_ANGLE":
        return "rotation_axis_angle", 4
    return "rotation_euler", 3


def current_quaternion(pose_bone) -> Quaternion:
    """The bone's rotation as a unit quaternion, whatever its rotation mode."""
    return quaternion_of(pose_bone.rotation_mode, current_values(pose_bone))


def quaternion_of(mode: str, values) -> Quaternion:
    """The unit quaternion of rotation channel ``values`` in rotation ``mode``."""
    if mode == "QUATERNION":
        q = Quaternion(values)
        return q.normalized() if q.magnitude > 1e-12 else Quaternion()
    if mode == "AXIS_ANGLE":
        angle, *axis = values
        return Quaternion(axis, angle) if any(axis) else Quaternion()
    return Euler(values, mode).to_quaternion()


def current_values(pose_bone) -> tuple[float, ...]:
    path, _size = data_path_and_size(pose_bone.rotation_mode)
    return tuple(getattr(pose_bone, path))


def continuous_quaternions(quaternions: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
    """(F, 4) quaternions with signs flipped so neighbours (and ``previous`` before the first) agree."""
    q = np.array(quaternions, dtype=float)
    reference = np.concatenate(([previous], q[:-1])) if previous is not None else np.concatenate((q[:1], q[:-1]))
    flips = np.where(np.einsum("ij,ij->i", q, reference) < 0.0, -1.0, 1.0)
    # A flip of one frame flips the sign every later frame is compared with.
    return q * np.cumprod(flips)[:, None]


def _axis_angles(quaternions: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    """(F, 4) (angle, x, y, z) with the axis kept on the previous frame's side (angle sign
    flipped to match) and the angle unwrapped by whole turns."""
    q = continuous_quaternions(quaternions)
    if previous is not None and np.linalg.norm(previous[1:]) > 1e-12:
        prev_angle, prev_axis = float(previous[0]), np.asarray(previous[1:], dtype=float)
        prev_axis = prev_axis / np.linalg.norm(prev_axis)
    else:
        prev_angle, prev_axis = 0.0, None
    out = np.empty((len(q), 4))
    for i, (w, *v) in enumerate(q):
        v = np.asarray(v)
        sin_half = float(np.linalg.norm(v))
        angle = 2.0 * math.atan2(sin_half, w)
        if sin_half > 1e-12:
            axis = v / sin_half
        else:  # the identity: any axis will do, keep the neighbour's
            axis = prev_axis if prev_axis is not None else np.array([0.0, 1.0, 0.0])
        if prev_axis is not None and np.dot(axis, prev_axis) < 0.0:
            axis, angle = -axis, -angle
        angle += 2.0 * math.pi * round((prev_angle - angle) / (2.0 * math.pi))
        out[i, 0], out[i, 1:] = angle, axis
        prev_angle, prev_axis = angle, axis
    return out


def channel_values(mode: str, quaternions: np.ndarray, previous=None) -> np.ndarray:
    """(F, k) values of the rotation property for ``mode``, continuous along F and from ``previous``
    (the bone's value before the first frame, in ``mode``; None: no constraint)."""
    quaternions = np.asarray(quaternions, dtype=float).reshape(-1, 4)
    if mode == "QUATERNION":
        return continuous_quaternions(quaternions, None if previous is None else np.asarray(previous, dtype=float))
    if mode == "AXIS_ANGLE":
        return _axis_angles(quaternions, None if previous is None else np.asarray(previous, dtype=float))
    return euler_curves(quaternions, mode, previous)
