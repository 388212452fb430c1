"""The bones' own pose that a chain's Influence blends with, when it solves at the current frame.

Influence below 1 writes a blend of the solved pose and the bones' own pose into the same
rotation properties the own pose is read from. A bone whose animation sets it again each frame
gives its own pose afresh; a bone posed by hand would give back the blend written last, and the
chain would creep toward the solved pose update after update. So each bone's written value is
remembered with the own pose it came from: a bone still holding what was written is blended
from that own pose again; anything else (a key, a hand edit) is its new own pose. The memory is
the session's (``session.own_poses``): after reopening a file the first solve takes the pose it
finds as the own pose. A renamed or duplicated armature or bone finds its memory by the value
it still holds. A bake reads its frames with the chain's solving switched off, but a
bone no key moves still holds what Live or Per Frame wrote last: it asks here too.
"""

from __future__ import annotations

import numpy as np

from .. import compat
from ..runtime.state import session
from .reader import ChainRig
from .rotation_modes import current_quaternion

# A bone whose quaternion is within this (per component) of what was written still holds it: the
# same float32 values read back, unit to within rounding (an angle test would need their norm).
SAME_COMPONENTS = 1e-6


def _key(rig: ChainRig, name: str) -> tuple:
    return (compat.session_key(rig.armature), name)


def _holds(read: np.ndarray, written: np.ndarray) -> np.ndarray:
    """Whether rotations ``read`` (..., 4) are still ``written`` (either sign)."""
    return (
        np.minimum(np.max(np.abs(read - written), axis=-1), np.max(np.abs(read + written), axis=-1)) <= SAME_COMPONENTS
    )


def _remembered(rig: ChainRig, name: str, read: np.ndarray):
    """The (own pose, written) pair for a bone reading ``read`` (..., 4): under its key, or, for a
    bone renamed, or duplicated with its armature, the one whose written value it still holds."""
    remembered = session.own_poses.get(_key(rig, name))
    if remembered is not None:
        return remembered
    first = read.reshape(-1, 4)[0]
    return next((pair for pair in session.own_poses.values() if _holds(first, pair[1])), None)


def remembers(rig: ChainRig) -> bool:
    """Whether any of the chain's bones has a remembered own pose."""
    return any(_key(rig, name) in session.own_poses for name in rig.bone_names)


def own_rotations(rig: ChainRig, rotations: np.ndarray) -> np.ndarray:
    """The bones' own pose (..., n, 4) given the rotations read (..., n, 4): one frame, or a
    bake's frames (a bone no key moves reads what was written last on every frame)."""
    own = np.array(rotations, dtype=float)
    for i, name in enumerate(rig.bone_names):
        read = own[..., i, :]
        remembered = _remembered(rig, name, read)
        if remembered is not None:
            was_own, written = remembered
            own[..., i, :] = np.where(_holds(read, written)[..., None], was_own, read)
    return own


def remember(rig: ChainRig, own: np.ndarray) -> None:
    """After writing: each writable bone's value now and the own pose it was blended from."""
    pose_bones = rig.armature.pose.bones
    for i, (name, writable) in enumerate(zip(rig.bone_names, rig.writable, strict=True)):
        if writable:
            written = np.array(tuple(current_quaternion(pose_bones[name])))
            session.own_poses[_key(rig, name)] = (np.array(own[i]), written)
