"""Locked rotation channels (``pose_bone.lock_rotation``) as joint limits.

* Every channel locked (X, Y, Z; for axis-angle with ``lock_rotations_4d`` also W, its
  angle): the bone keeps its current rotation. The reader folds that rotation
  into the bone's rest frame and gives it a fixed joint; the writer never touches it.
* Some Euler channels locked: :class:`LockedEulerJoint` wraps the bone's limit and puts the
  locked angles back after every step, so the solved rotation has exactly those values.
* Some quaternion or axis-angle channels locked: not applied. A locked quaternion component
  is not a rotation constraint anyone can picture (Blender's own transform tools reinterpret
  it), so the chain reports a warning instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..solver import quaternion as quat

EULER_ORDERS = ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX")
_AXES = "XYZ"


def _axis_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    half = 0.5 * angle
    q = np.zeros((*np.shape(angle), 4))
    q[..., 0] = np.cos(half)
    q[..., 1 + axis] = np.sin(half)
    return q


def euler_to_quaternion(euler: np.ndarray, order: str) -> np.ndarray:
    """(…, 3) Euler angles (by axis X, Y, Z) in Blender's ``order`` to (…, 4) quaternions.

    Blender's order "XYZ" applies X first: R = Rz·Ry·Rx (mathutils.Euler.to_matrix).
    """
    euler = np.asarray(euler, dtype=float)
    i, j, k = (_AXES.index(c) for c in order)
    q = _axis_rotation(i, euler[..., i])
    q = quat.multiply(_axis_rotation(j, euler[..., j]), q)
    return quat.multiply(_axis_rotation(k, euler[..., k]), q)


def quaternion_to_euler(q: np.ndarray, order: str) -> np.ndarray:
    """(…, 4) quaternions to (…, 3) Euler angles (by axis) for R = R_k(c)·R_j(b)·R_i(a).

    Shoemake's Tait-Bryan extraction (Graphics Gems IV, "Euler angle conversion"), with the
    sign of the permutation (i, j, k) deciding the signs.
    """
    m = quat.to_matrix(q)
    i, j, k = (_AXES.index(c) for c in order)
    sign = 1.0 if (i, j, k) in ((0, 1, 2), (1, 2, 0), (2, 0, 1)) else -1.0
    out = np.empty((*np.shape(q)[:-1], 3))
    out[..., j] = np.arcsin(np.clip(-sign * m[..., k, i], -1.0, 1.0))
    out[..., i] = np.arctan2(sign * m[..., k, j], m[..., k, k])
    out[..., k] = np.arctan2(sign * m[..., j, i], m[..., i, i])
    return out


@dataclass(frozen=True, eq=False)
class LockedEulerJoint:
    """A joint limit whose Euler channels in ``locked`` keep ``values`` (radians, by axis).

    Wraps the bone's own limit: each step and clamp applies it, then restores the locked
    angles (the restore wins, so a locked value outside the inner limit stays locked).
    """

    inner: object
    order: str
    locked: tuple[bool, bool, bool]
    values: tuple[float, float, float]

    def _lock(self, q: np.ndarray) -> np.ndarray:
        euler = quaternion_to_euler(q, self.order)
        for axis in range(3):
            if self.locked[axis]:
                euler[..., axis] = self.values[axis]
        return euler_to_quaternion(euler, self.order)

    def clamp(self, q: np.ndarray) -> np.ndarray:
        return self._lock(self.inner.clamp(q))

    def violation(self, q: np.ndarray) -> np.ndarray:
        return self.inner.violation(q) + quat.angle_between(q, self._lock(q))

    def step_towards(self, q: np.ndarray, *step_args) -> np.ndarray:
        # Whatever the solver's step protocol passes (vector pairs, weights) goes to the inner limit.
        return self._lock(self.inner.step_towards(q, *step_args))

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Random poses for restarts: the inner limit's, with the locked angles restored."""
        return self._lock(self.inner.sample(rng, count))


def _all_locked(pose_bone) -> bool:
    if not all(pose_bone.lock_rotation):
        return False
    # A unit quaternion with x, y, z fixed cannot turn, W locked or not; an axis-angle with a
    # fixed axis still turns about it unless its angle (W, in 4D locking) is locked too.
    if pose_bone.rotation_mode == "AXIS_ANGLE" and pose_bone.lock_rotations_4d:
        return bool(pose_bone.lock_rotation_w)
    return True


def held_rotation(pose_bone):
    """The bone's current rotation (mathutils Quaternion) if every channel is locked, else None."""
    if not _all_locked(pose_bone):
        return None
    from .rotation_modes import current_quaternion

    return current_quaternion(pose_bone)


def apply_partial_locks(pose_bone, limit) -> tuple[object, str | None]:
    """``limit`` wrapped to respect partly locked Euler channels; a warning where locks are ignored."""
    locked = tuple(bool(v) for v in pose_bone.lock_rotation)
    lock_w = pose_bone.rotation_mode not in EULER_ORDERS and pose_bone.lock_rotations_4d and pose_bone.lock_rotation_w
    if not any(locked) and not lock_w:
        return limit, None
    if pose_bone.rotation_mode in EULER_ORDERS:
        values = tuple(float(v) for v in pose_bone.rotation_euler)
        return LockedEulerJoint(limit, pose_bone.rotation_mode, locked, values), None
    return limit, (
        f"partly locked rotation on '{pose_bone.name}' ({pose_bone.rotation_mode.lower().replace('_', '-')} mode) "
        "is not applied: use an Euler rotation mode, lock every channel, or set a joint limit"
    )
