"""Write solved rotations to the chain's pose bones, each in its own ``rotation_mode``.

Values stay continuous with what the bone holds now (quaternion hemisphere, compatible
Euler, axis-angle side), bones held by locked channels are never written, locked channels
keep their exact values (``locks.HeldChannels``), and nothing is written when nothing
changed by more than ``CHANGE_TOLERANCE`` (so a live re-solve to the same pose leaves the
data untouched).
"""

from __future__ import annotations

import numpy as np

from . import locks, rotation_modes
from .rig_reader import ChainRig

CHANGE_TOLERANCE = 1e-9


def bone_values(pose_bone, quaternion: np.ndarray) -> tuple[float, ...]:
    """Values of the bone's rotation property for ``quaternion``, continuous with its current value."""
    mode = pose_bone.rotation_mode
    previous = rotation_modes.current_values(pose_bone)
    values = rotation_modes.channel_values(mode, quaternion[None, :], previous)
    return tuple(float(v) for v in locks.HeldChannels.of(pose_bone).restore(values)[0])


def write_pose(rig: ChainRig, rotations: np.ndarray) -> bool:
    """Write one pose (n, 4) to the armature's pose bones; True if any value changed."""
    pose_bones = rig.armature.pose.bones
    changed = False
    for name, writable, q in zip(rig.bone_names, rig.writable, rotations, strict=True):
        if not writable:
            continue
        pose_bone = pose_bones[name]
        path, _size = rotation_modes.data_path_and_size(pose_bone.rotation_mode)
        current = np.array(getattr(pose_bone, path))
        values = np.array(bone_values(pose_bone, q))
        if np.max(np.abs(values - current)) > CHANGE_TOLERANCE:
            setattr(pose_bone, path, values)
            changed = True
    return changed
