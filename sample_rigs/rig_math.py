"""numpy-only geometry for the sample rigs: moving joint limits onto a rig's own rest pose,
Blender-IK versions of our limits, and target paths. No ``bpy`` here (tests run it bare).

Retargeting a limit (``retarget_limit``)
----------------------------------------
The preset library writes every limit in the *anatomical* frame (a limb hanging in the
anatomical position, local +Z to the front; see ``preset_convention()``). A rig drawn in
another rest pose (Rigify's A-pose arms) or with other bone rolls (Rigify's legs have local +Z
pointing backward) needs the limit turned to match. With frames in armature space and the
parent at rest:

* ``R``: the rig bone's rest rotation; ``C``: the bone's anatomical frame at the joint's
  anatomical zero; ``M = Cᵀ R`` takes rig-local directions to anatomical ones;
* ``A = R K``: the bone's anatomical axes at the rig's rest (its Y along the bone, its Z where
  anatomy puts it: the front, the palm, the instep), so ``K`` is a turn about the bone; when
  a rig's roll says nothing anatomical, ``K`` defaults to "the rig's rest twist, swung onto
  the anatomical direction by the shortest arc, is no twist";
* a rig pose rotation ``q`` is the anatomical pose ``M q K``, so ``q = Mᵀ q_anat K⁻¹``.

Swing maps exactly: window centres and plane axes turn by ``Mᵀ`` and polygon corners keep their
numbers. A hinge keeps its range about the axis ``Mᵀ a``, shifted by the rig's rest bend about
it (exact when that bend lies in the hinge's plane; the residual is returned). Twist does not
map to a fixed range: in rig terms it is the anatomical twist plus an offset that depends on
the swing direction (Codman's paradox: a loop of swings twists the bone). We shift the range
by the offset's mean over the first (main) window and return its largest deviation from that
mean, over that window and over the others, as the error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver import rig_spec as spec
from quat_ik_addon.solver.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow
from quat_ik_addon.solver.spec_chain import solver_window
from quat_ik_addon.solver.window_frames import window_plane_axes

Y = np.array([0.0, 1.0, 0.0])


# --------------------------------------------------------------------------- window geometry


def window_rim(window, samples: int = 240) -> np.ndarray:
    """(K, 3) unit directions along a solver reach window's rim, in order."""
    if isinstance(window, ConeWindow):
        c = window.center
        u = quat.any_perpendicular(c)
        v = np.cross(c, u)
        phi = np.linspace(0.0, 2.0 * np.pi, samples, endpoint=False)[:, None]
        ring = np.cos(phi) * u + np.sin(phi) * v
        return np.cos(window.half_angle) * c + np.sin(window.half_angle) * ring
    if isinstance(window, EllipticConeWindow):
        return window.rim(np.linspace(0.0, 2.0 * np.pi, samples, endpoint=False))
    if isinstance(window, PolygonWindow):
        corners = window.corner_directions
        per_edge = max(2, samples // len(corners))
        t = np.linspace(0.0, 1.0, per_edge, endpoint=False)[:, None]
        edges = [(1.0 - t) * a + t * b for a, b in zip(corners, np.roll(corners, -1, axis=0), strict=True)]
        points = np.concatenate(edges)  # chords of the plane polygon = arcs of the cone's rim
        return points / np.linalg.norm(points, axis=1, keepdims=True)
    raise TypeError(f"unknown window {window!r}")


def window_samples(window, samples: int = 240, rings: int = 4) -> np.ndarray:
    """Directions spread over a window: its reference direction and rings toward its rim."""
    rim = window_rim(window, samples)
    reference = window.reference
    out = [reference[None]]
    for k in range(1, rings + 1):
        points = reference + (k / rings) * (rim - reference)
        out.append(points / np.linalg.norm(points, axis=1, keepdims=True))
    return np.concatenate(out)


# --------------------------------------------------------------------------- retargeting


@dataclass(frozen=True)
class Retargeted:
    limit: spec.JointLimit
    twist_error_deg: float  # largest deviation of the swing-dependent twist offset over the first window
    hinge_residual_deg: float  # how far the rig's rest bend lies off the hinge (0 if exact)
    twist_error_other_windows_deg: float = 0.0  # the same over the other windows


def _clean(vector) -> tuple[float, float, float]:
    return tuple(float(round(c, 12)) + 0.0 for c in vector)


def _rotation3(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    return m[:3, :3] if m.shape == (4, 4) else m


def rest_change(rig_rest, anatomical, axes=None) -> tuple[np.ndarray, np.ndarray]:
    """``(M, k⁻¹)`` for a bone (module docstring): ``rig_rest`` its rest rotation, ``anatomical``
    its anatomical zero frame, ``axes`` its anatomical axes at the rig's rest (or None), all
    3×3 or 4×4 in armature space. ``k⁻¹`` is a quaternion."""
    rest = _rotation3(rig_rest)
    change = _rotation3(anatomical).T @ rest
    if axes is None:  # shortest swing onto the anatomical direction: K = (M q*)⁻¹
        return change, quat.multiply(quat.from_matrix(change), quat.rotation_from_y(change.T @ Y))
    return change, quat.from_matrix(_rotation3(axes).T @ rest)


def retarget_limit(limit: spec.JointLimit, change: np.ndarray, k_inverse: np.ndarray) -> Retargeted:
    """The rig-frame version of an anatomical ``limit``: rig poses ``Mᵀ q_anat K⁻¹``."""
    if isinstance(limit, (spec.FreeLimit, spec.FixedLimit)):
        return Retargeted(limit, 0.0, 0.0)
    back = change.T  # anatomical -> rig directions
    m_inverse = quat.conjugate(quat.from_matrix(change))
    if isinstance(limit, spec.HingeLimit):
        axis = back @ (np.asarray(limit.axis, dtype=float) / np.linalg.norm(limit.axis))
        rest_bend = quat.multiply(m_inverse, k_inverse)  # rig poses are R(axis, θ) · rest_bend
        offset = float(quat.twist_about(rest_bend, axis))
        residual = float(quat.angle_between(rest_bend, quat.from_axis_angle(axis, offset)))
        shifted = None
        if limit.range_deg is not None:
            low, high = (a + math.degrees(offset) for a in limit.range_deg)
            shifted = (max(-180.0, round(low, 6)), min(180.0, round(high, 6)))
        return Retargeted(replace(limit, axis=_clean(axis), range_deg=shifted), 0.0, math.degrees(residual))
    windows, offsets = [], []
    for window in limit.windows:
        center = back @ np.asarray(window.center, dtype=float)
        if isinstance(window, spec.ConeWindow):
            moved = replace(window, center=_clean(center))
        else:
            _, u, _ = window_plane_axes(window.center, window.x_axis)
            moved = replace(window, center=_clean(center), x_axis=_clean(back @ u))
        windows.append(moved)
        swings = quat.rotation_from_y(window_samples(solver_window(window)))  # no anatomical twist
        offsets.append(quat.swing_twist_y(quat.multiply(quat.multiply(m_inverse, swings), k_inverse))[1])
    if not windows:  # free swing: the offset at the anatomical rest direction
        offsets.append(np.atleast_1d(quat.swing_twist_y(quat.multiply(m_inverse, k_inverse))[1]))
    # The first window holds the joint's main range: centre the twist range on its offsets.
    middle = float(np.arctan2(np.mean(np.sin(offsets[0])), np.mean(np.cos(offsets[0]))))
    errors = [math.degrees(float(np.max(np.abs(quat.wrap_angle(o - middle))))) for o in offsets]
    twist = limit.twist_deg
    if twist is not None:
        low, high = (a + math.degrees(middle) for a in twist)
        twist = (max(-180.0, round(low, 6)), min(180.0, round(high, 6)))
    others = max(errors[1:], default=0.0)
    return Retargeted(replace(limit, windows=tuple(windows), twist_deg=twist), errors[0], 0.0, others)


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


def frame(y_axis, z_hint) -> np.ndarray:
    """3×3 rotation whose columns are X, Y, Z with Y along ``y_axis`` and Z toward ``z_hint``."""
    y = np.asarray(y_axis, dtype=float) / np.linalg.norm(y_axis)
    z = np.asarray(z_hint, dtype=float) - np.dot(z_hint, y) * y
    z /= np.linalg.norm(z)
    return np.column_stack((np.cross(y, z), y, z))


def roll_for_z(head, tail, z_hint) -> float:
    """Blender's edit-bone roll (degrees) that turns the bone's local +Z toward ``z_hint``."""
    from quat_ik_addon.solver.rest_pose import bone_rest_matrix3

    unrolled = bone_rest_matrix3(head, tail, 0.0)
    y, z0 = unrolled[:, 1], unrolled[:, 2]
    wanted = frame(y, z_hint)[:, 2]
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
        rest = _rotation3(rest)
        if isinstance(zero, tuple) and zero[0] == "after_parent":
            zero = parent_axes @ np.asarray(zero[1], dtype=float)
        axes = None if hint is None else frame(rest[:, 1], hint)
        change, k_inverse = rest_change(rest, zero, axes)
        out.append(retarget_limit(limit, change, k_inverse))
        parent_axes = rest @ quat.to_matrix(quat.conjugate(k_inverse))
    return out


def rotation_x(degrees: float) -> np.ndarray:
    return quat.to_matrix(quat.from_axis_angle(np.array([1.0, 0.0, 0.0]), math.radians(degrees)))


def rotation_y(degrees: float) -> np.ndarray:
    return quat.to_matrix(quat.from_y_angle(math.radians(degrees)))
