"""Write solved rotations to the chain's pose bones, each in its own ``rotation_mode``.

Values stay continuous with what the bone holds now (quaternion hemisphere, compatible
Euler, axis-angle side), bones held by locked channels are never written, locked channels
keep their exact values (``locks.held_channels``), and nothing is written when nothing
changed by more than ``CHANGE_TOLERANCE`` (so a live re-solve to the same pose leaves the
data untouched).
"""

from __future__ import annotations

import numpy as np

from . import locks, rotation_modes
from .reader import ChainRig

CHANGE_TOLERANCE = 1e-9


def write_pose(rig: ChainRig, rotations: np.ndarray) -> bool:
    """Write one pose (n, 4) to the armature's pose bones; True if any value changed."""
    pose_bones = rig.armature.pose.bones
    changed = False
    for name, writable, q, values in zip(rig.bone_names, rig.writable, rotations, rotations.tolist(), strict=True):
        if not writable:
            continue
        pose_bone = pose_bones[name]
        if locks.holds_no_quaternion_channel(pose_bone):
            changed |= _write_quaternion(pose_bone, values)
            continue
        held = locks.held_channels(pose_bone)  # the mode, the locks and the current values, read once
        current = np.asarray(held.values)
        values = held.restore(rotation_modes.channel_values(held.mode, q[None, :], current))[0]
        if np.max(np.abs(values - current)) > CHANGE_TOLERANCE:
            setattr(pose_bone, rotation_modes.data_path_and_size(held.mode)[0], values)
            changed = True
    return changed


def _write_quaternion(pose_bone, values: list[float]) -> bool:
    """The common case of ``write_pose`` in plain floats (a Live update writes every chain bone,
    and numpy's calls cost more than the arithmetic on four numbers): ``values`` (w, x, y, z)
    with the sign of the bone's current quaternion (``rotation_modes.continuous_quaternions``),
    written if they changed."""
    w, x, y, z = values
    cw, cx, cy, cz = pose_bone.rotation_quaternion
    if w * cw + x * cx + y * cy + z * cz < 0.0:
        w, x, y, z = -w, -x, -y, -z
    if max(abs(w - cw), abs(x - cx), abs(y - cy), abs(z - cz)) <= CHANGE_TOLERANCE:
        return False
    pose_bone.rotation_quaternion = (w, x, y, z)
    return True


def write_stretch(rig: ChainRig, stretch: np.ndarray) -> bool:
    """Write one pose's Y scales (n,) to the chain's stretchy bones (those whose Quat IK limits
    allow Stretch; the others keep their scale); True if any value changed."""
    pose_bones = rig.armature.pose.bones
    changed = False
    for name, value in zip(rig.bone_names, stretch, strict=True):
        pose_bone = pose_bones[name]
        if not pose_bone.quat_ik.use_stretch or pose_bone.lock_scale[1]:
            continue
        if abs(pose_bone.scale[1] - float(value)) > CHANGE_TOLERANCE:
            pose_bone.scale[1] = float(value)
            changed = True
    return changed
