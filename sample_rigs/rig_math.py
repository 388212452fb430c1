"""numpy-only geometry for the sample rigs: anatomical limits moved onto a rig's own rest pose
(the maths is in ``quat_ik_addon.solver.limits.retarget``), Blender-IK versions of our limits, and
target paths. No ``bpy`` here (tests run it bare).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.limits.reach_windows import ConeWindow
from quat_ik_addon.solver.limits.retarget import Retargeted, axes_frame, rest_change, retarget_limit
from quat_ik_addon.solver.limits.window_shapes import window_rim
from quat_ik_addon.solver.rig import spec as spec
from quat_ik_addon.solver.rig.spec_chain import solver_window

# --------------------------------------------------------------------------- Blender's own IK


@dataclass(frozen=True)
class BlenderIKLimits:
    """What a pose bone's Inverse Kinematics panel can say: locked axes and per-axis ranges
    (radians, each containing 0, as Blender requires)."""

    locked: tuple[str, ...] = ()
    ranges: tuple[tuple[str, float, float], ...] = ()  # (axis, min, max)


def _range_with_zero(low: float, high: float) -> tuple[float, float]:
    return min(0.0, low), max(0.0, high)


def blender_ik_limits(limit: spec.JointLimit) -> BlenderIKLimits:
    """The closest limits Blender's IK constraint can express for one of ours.

    Fixed: every axis locked. Hinge about a bone axis: the other two locked, its range on its
    own axis (widened to contain 0). Ball: twist range on Y; the swing on X and Z as the
    extents of the windows' swing quaternions, since Blender's IK clamps the swing
    quaternion's (x, z) parts to a four-quadrant ellipse with semi-axes sin(limit / 2)
    (``intern/iksolver/intern/IK_QSegment.cpp``, ``IK_QSphericalSegment``): each axis limit
    then matches the window's reach along that axis, and diagonal corners are approximated.
    """
    if isinstance(limit, spec.FixedLimit):
        return BlenderIKLimits(locked=("x", "y", "z"))
    if isinstance(limit, spec.FreeLimit):
        return BlenderIKLimits()
    if isinstance(limit, spec.HingeLimit):
        axis = np.asarray(limit.axis, dtype=float) / np.linalg.norm(limit.axis)
        main = int(np.argmax(np.abs(axis)))
        name = "xyz"[main]
        locked = tuple(a for a in "xyz" if a != name)
        if limit.range_deg is None:
            return BlenderIKLimits(locked=locked)
        low, high = (math.radians(a) * math.copysign(1.0, axis[main]) for a in limit.range_deg)
        return BlenderIKLimits(locked=locked, ranges=((name, *_range_with_zero(min(low, high), max(low, high))),))
    ranges = []
    windows = [solver_window(w) for w in limit.windows]
    if windows and not any(isinstance(w, ConeWindow) and w.half_angle >= math.pi - 1e-9 for w in windows):
        swings = quat.rotation_from_y(np.concatenate([window_rim(w, 720) for w in windows]))
        for axis, component in (("x", 1), ("z", 3)):
            values = np.clip(swings[:, component], -1.0, 1.0)
            high = 2.0 * math.asin(max(0.0, float(np.max(values))))
            low = -2.0 * math.asin(max(0.0, float(-np.min(values))))
            ranges.append((axis, low, high))
    if limit.twist_deg is not None:
        ranges.append(("y", *_range_with_zero(*(math.radians(a) for a in limit.twist_deg))))
    return BlenderIKLimits(ranges=tuple(ranges))


# --------------------------------------------------------------------------- target paths


def smoothstep(t: np.ndarray) -> np.ndarray:
    return t * t * (3.0 - 2.0 * t)


def key_pose_path(key_poses: np.ndarray, key_frames: np.ndarray, frames: np.ndarray) -> np.ndarray:
    """(F, n, 4) pose rotations slerped joint by joint between key poses (n, 4), eased."""
    key_poses = quat.canonical(np.asarray(key_poses, dtype=float))
    out = np.empty((len(frames), key_poses.shape[1], 4))
    for f, frame in enumerate(frames):
        k = int(np.clip(np.searchsorted(key_frames, frame, side="right") - 1, 0, len(key_frames) - 2))
        t = smoothstep(np.clip((frame - key_frames[k]) / (key_frames[k + 1] - key_frames[k]), 0.0, 1.0))
        a, b = key_poses[k], key_poses[k + 1]
        b = np.where((np.sum(a * b, axis=-1) < 0.0)[:, None], -b, b)  # shorter way round
        delta = quat.multiply(b, quat.conjugate(a))
        out[f] = quat.multiply(quat.slerp_from_identity(delta, t), a)
    return quat.normalize(out)


def swing_twist_pose(toward_x_deg: float, toward_z_deg: float, twist_deg: float = 0.0) -> np.ndarray:
    """A ball joint's pose rotation from a swing vector (angles toward local +X and +Z, as
    goniometry measures combined motions) followed by a twist about the bone."""
    rotation_vector = np.radians([toward_z_deg, 0.0, -toward_x_deg])  # about +X swings +Y to +Z
    angle = float(np.linalg.norm(rotation_vector))
    swing = quat.IDENTITY if angle < 1e-12 else quat.from_axis_angle(rotation_vector / angle, angle)
    return quat.multiply(swing, quat.from_y_angle(math.radians(twist_deg)))


def roll_for_z(head, tail, z_hint) -> float:
    """Blender's edit-bone roll (degrees) that turns the bone's local +Z toward ``z_hint``."""
    from quat_ik_addon.solver.rig.rest_pose import bone_rest_matrix3

    unrolled = bone_rest_matrix3(head, tail, 0.0)
    y, z0 = unrolled[:, 1], unrolled[:, 2]
    wanted = axes_frame(y, z_hint)[:, 2]
    return round(math.degrees(math.atan2(np.dot(y, np.cross(z0, wanted)), np.dot(z0, wanted))), 9)


def anatomical_chain_limits(
    rest_matrices: Sequence[np.ndarray],
    zero_frames: Sequence,
    limits: Sequence[spec.JointLimit],
    z_hints: Sequence | None = None,
) -> list[Retargeted]:
    """Anatomical limits of a chain's bones, moved onto the rig's rest frames.

    ``rest_matrices``: each bone's rig rest rotation (armature space, root first).
    ``zero_frames``: each bone's anatomical zero: a 3×3 armature-space frame (the parent is at
    its anatomical rest), or ``("after_parent", J)``: the parent's anatomical axes (as the
    parent sits in the rig's rest pose) times the joint's zero rotation ``J``.
    ``z_hints``: per bone, where its anatomical +Z points at the rig's rest (armature space),
    or None for the shortest-swing default (module docstring).
    """
    out, parent_axes = [], None
    hints = z_hints if z_hints is not None else [None] * len(limits)
    for rest, zero, limit, hint in zip(rest_matrices, zero_frames, limits, hints, strict=True):
        rest = np.asarray(rest, dtype=float)[:3, :3]
        if isinstance(zero, tuple) and zero[0] == "after_parent":
            zero = parent_axes @ np.asarray(zero[1], dtype=float)
        axes = None if hint is None else axes_frame(rest[:, 1], hint)
        change, k_inverse = rest_change(rest, zero, axes)
        out.append(retarget_limit(limit, change, k_inverse, exact_twist=False))  # Blender IK needs plain ranges
        parent_axes = rest @ quat.to_matrix(quat.conjugate(k_inverse))
    return out


def rotation_x(degrees: float) -> np.ndarray:
    return quat.to_matrix(quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), math.radians(degrees)))


def rotation_y(degrees: float) -> np.ndarray:
    return quat.to_matrix(quat.from_y_angle(math.radians(degrees)))
