"""Locked rotation channels (``pose_bone.lock_rotation``) as joint limits, the way Blender's
own transform tools read them (checked against Blender 3.4's rotate tool, tests/window); the
wrappers are numpy, in ``solver/limits/channel_locks.py``:

* Every channel locked (X, Y, Z; with ``lock_rotations_4d`` in quaternion or axis-angle mode
  also W): the bone keeps its current rotation. The reader folds that rotation into the
  bone's rest frame and gives it a fixed joint; the writer never touches it.
* Some Euler channels locked: :class:`LockedEulerJoint` wraps the bone's limit and puts the
  locked angles back after every step, so the solved rotation has exactly those values.
* Some quaternion or axis-angle channels locked, not 4D: Blender locks the rotation's XYZ
  Euler angles instead (its transform tools convert, lock and convert back), so the same
  :class:`LockedEulerJoint` in order XYZ applies.
* Some channels locked in 4D (``lock_rotations_4d``): the locked raw values stay, the others
  change, and the rotation is the normalised whole. :class:`LockedComponentsJoint` keeps the
  solved rotation where raw values with those locked entries exist; :class:`HeldChannels`
  writes them (the locked entries exactly, the rest scaled to match).
"""

from __future__ import annotations

import numpy as np

from ...solver.euler_angles import EULER_ORDERS, smallest_euler
from ...solver.limits.channel_locks import HeldChannels, LockedComponentsJoint, LockedEulerJoint
from .rotation_modes import current_quaternion, current_values


def _is_4d(pose_bone) -> bool:
    return pose_bone.rotation_mode in ("QUATERNION", "AXIS_ANGLE") and pose_bone.lock_rotations_4d


def holds_no_quaternion_channel(pose_bone) -> bool:
    """A quaternion-mode bone whose written rotation keeps no raw channel (``HeldChannels``:
    only 4D locks hold raw entries; other locks hold Euler angles, which the solve keeps)."""
    return pose_bone.rotation_mode == "QUATERNION" and not (
        pose_bone.lock_rotations_4d and (pose_bone.lock_rotation_w or any(pose_bone.lock_rotation))
    )


def _all_locked(pose_bone) -> bool:
    if not all(pose_bone.lock_rotation):
        return False
    # Locked 4D, x, y and z fix only the axis (a raw quaternion or axis-angle still turns
    # about it with W free); otherwise they fix the Euler angles, so the rotation.
    return bool(pose_bone.lock_rotation_w) if _is_4d(pose_bone) else True


def held_rotation(pose_bone):
    """The bone's current rotation (mathutils Quaternion) if every channel is locked, else None."""
    if not _all_locked(pose_bone):
        return None
    return current_quaternion(pose_bone)


def apply_partial_locks(pose_bone, limit):
    """``limit`` wrapped to respect the bone's partly locked rotation channels (module docstring)."""
    mode, locked = pose_bone.rotation_mode, tuple(bool(v) for v in pose_bone.lock_rotation)
    if _is_4d(pose_bone):
        locked_4d = (bool(pose_bone.lock_rotation_w), *locked)
        if not any(locked_4d):
            return limit
        if mode == "QUATERNION":
            return LockedComponentsJoint(limit, locked_4d, tuple(float(v) for v in pose_bone.rotation_quaternion))
        angle, *axis = (float(v) for v in pose_bone.rotation_axis_angle)
        return LockedComponentsJoint(limit, locked_4d, (0.0, *axis), angle if locked_4d[0] else None)
    if not any(locked):
        return limit
    if mode in EULER_ORDERS:
        return LockedEulerJoint(limit, mode, locked, tuple(float(v) for v in pose_bone.rotation_euler))
    values = smallest_euler(np.array(tuple(current_quaternion(pose_bone))), "XYZ")
    return LockedEulerJoint(limit, "XYZ", locked, tuple(float(v) for v in values), smallest=True)


def frozen_channels(pose_bone) -> tuple[float, ...]:
    """What a solve takes as given from the bone's locked rotation channels (``held_rotation``,
    ``apply_partial_locks``): the whole rotation if every channel is locked, else the locked
    channels' values (Euler angles of the rotation where quaternion locks are not 4D)."""
    if _all_locked(pose_bone):
        return tuple(current_values(pose_bone))
    mode, locked = pose_bone.rotation_mode, tuple(bool(v) for v in pose_bone.lock_rotation)
    if _is_4d(pose_bone):
        locked = (bool(pose_bone.lock_rotation_w), *locked)
        values = tuple(pose_bone.rotation_quaternion if mode == "QUATERNION" else pose_bone.rotation_axis_angle)
    elif mode in EULER_ORDERS:
        values = tuple(pose_bone.rotation_euler)
    elif any(locked):
        values = tuple(smallest_euler(np.array(tuple(current_quaternion(pose_bone))), "XYZ"))
    else:
        return ()
    return tuple(float(value) for value, held in zip(values, locked, strict=True) if held)


def held_channels(pose_bone) -> HeldChannels:
    """Which channels of the bone's rotation keep their values when it is written (``HeldChannels``)."""
    mode, locked = pose_bone.rotation_mode, tuple(bool(v) for v in pose_bone.lock_rotation)
    if _is_4d(pose_bone):
        locked = (bool(pose_bone.lock_rotation_w), *locked)
    elif mode not in EULER_ORDERS:
        locked = (False,) * 4
    return HeldChannels(mode, locked, current_values(pose_bone))
