"""Moving a joint limit written for one rest frame onto another: an anatomical preset onto a
rig drawn in a T- or A-pose, or with other bone rolls.

The presets are written in the *anatomical* frame of a bone (its limb in the anatomical
position, local +Y along the bone, +Z to the front; see ``presets.preset_convention()``).
Let ``q_anat`` be a pose in that frame and ``q`` the rig's pose rotation of the same bone
(relative to its rig rest, parents in the same posture). Both describe one motion when

    q = Mᵀ · q_anat · K⁻¹,

with ``Mᵀ`` the rig pose that puts the bone in the anatomical position (its anatomical zero)
turned so that anatomy's axes line up, and ``K⁻¹`` undoing that turn about the bone. Two
ways to find them:

* :func:`rest_change` from frames in armature space: ``R`` the rig bone's rest rotation,
  ``C`` its anatomical zero frame, ``A = R K`` anatomy's axes on the bone at the rig's rest
  (its Y along the bone, its Z where anatomy puts it: the front, the palm, the instep), so
  ``M = Cᵀ R``; without ``A``, ``K`` is "the rig's rest twist, swung onto the anatomical
  direction by the shortest arc, is no twist";
* :func:`pose_change` from a posed rig: ``P`` the bone's pose rotation in the anatomical
  position and ``T`` the turn about the bone that points its posed +Z where anatomy's +Z
  points; then ``Mᵀ = P T`` and ``K = T`` (times ``T_y(−α)`` on ``Mᵀ`` for a limit whose own
  zero is a turn α away from the anatomical position, as the forearm twist's is).

Swing maps exactly: window centres and plane axes turn by ``Mᵀ`` and polygon corners keep
their numbers. A hinge keeps its range about the axis ``Mᵀ a``, shifted by the rig's bend
about it at the anatomical zero (exact when that bend lies in the hinge's plane; the residual
is returned). Twist measured from the rig's rest is the anatomical twist plus an offset that
depends on the swing direction (Codman's paradox: a loop of swings twists the bone), so no
shifted range holds it. Exactly, the limit keeps its twist range and measures it on ``M·q``
(``BallLimit.twist_reference``): ``q_anat = M·q·K`` with ``K`` a turn about the bone by κ,
whose twist is that of ``M·q`` plus κ, so the range moves by −κ. Where only a plain range will
do (Blender's IK limits, the sample rigs' comparison), ``exact_twist=False`` shifts the range
by the offset's mean over the first (main) window and returns its largest deviation from that
mean, over that window and over the others, as the error.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from .. import quaternion as quat
from ..rig import spec as spec
from ..rig.spec_chain import solver_window
from .window_frames import window_plane_axes
from .window_shapes import window_samples

__all__ = [
    "Retargeted",
    "axes_frame",
    "fit_to_posture",
    "front_twist",
    "pose_change",
    "rest_change",
    "retarget_limit",
]

_Y = np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class Retargeted:
    """A limit moved onto another rest frame, and how exact the move is (degrees)."""

    limit: spec.JointLimit
    twist_error_deg: float  # largest deviation of the swing-dependent twist offset over the first window
    hinge_residual_deg: float  # how far the rig's bend at the anatomical zero lies off the hinge (0 if exact)
    twist_error_other_windows_deg: float = 0.0  # the same over the other windows


def axes_frame(y_axis: npt.ArrayLike, z_hint: npt.ArrayLike) -> np.ndarray:
    """3×3 rotation whose columns are X, Y, Z with Y along ``y_axis`` and Z toward ``z_hint``."""
    y = np.asarray(y_axis, dtype=float) / np.linalg.norm(y_axis)
    z = np.asarray(z_hint, dtype=float) - np.dot(z_hint, y) * y
    z /= np.linalg.norm(z)
    return np.column_stack((np.cross(y, z), y, z))


def rest_change(rig_rest, anatomical, axes=None) -> tuple[np.ndarray, np.ndarray]:
    """``(M, K⁻¹)`` for a bone from armature-space frames (module docstring): ``rig_rest`` its
    rest rotation, ``anatomical`` its anatomical zero frame, ``axes`` anatomy's axes on it at
    the rig's rest (or None), each 3×3 or 4×4. ``K⁻¹`` is a quaternion."""
    rest = _rotation3(rig_rest)
    change = _rotation3(anatomical).T @ rest
    if axes is None:  # shortest swing onto the anatomical direction: K = (M q*)⁻¹
        return change, quat.multiply(quat.from_matrix(change), quat.rotation_from_y(change.T @ _Y))
    return change, quat.from_matrix(_rotation3(axes).T @ rest)


def front_twist(posed_frame: npt.ArrayLike, front: npt.ArrayLike) -> float:
    """The turn about a bone (radians, right-handed about its +Y) that points its +Z toward
    ``front``: ``posed_frame`` is the bone's 3×3 frame (columns X, Y, Z) in the space
    ``front`` is given in. 0 when ``front`` runs along the bone (no way to tell)."""
    frame = _rotation3(posed_frame)
    y, z = frame[:, 1], frame[:, 2]
    wanted = np.asarray(front, dtype=float) - np.dot(front, y) * y
    if np.linalg.norm(wanted) < 1e-6 * max(np.linalg.norm(front), 1e-300):
        return 0.0
    return math.atan2(float(np.dot(y, np.cross(z, wanted))), float(np.dot(z, wanted)))


def pose_change(
    anatomical_pose: npt.ArrayLike, twist: float, limit_twist: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """``(M, K⁻¹)`` for a bone posed in the anatomical position (module docstring): its pose
    rotation there, and the ``twist`` (radians, :func:`front_twist`) about it that lines its
    +Z up with anatomy's. ``limit_twist`` is where the limit's own frame stands there, turned
    about the bone from its zero (a forearm twist measured from thumb-forward stands at −90°
    with the palm forward): the anatomical position is then ``q_anat = T_y(limit_twist)``."""
    turn = quat.from_y_angle(twist)
    zero = quat.multiply(
        quat.normalize(np.asarray(anatomical_pose, dtype=float)), quat.from_y_angle(twist - limit_twist)
    )
    return quat.to_matrix(quat.conjugate(zero)), quat.conjugate(turn)  # Mᵀ = P·T·T_y(−limit_twist)


def retarget_limit(
    limit: spec.JointLimit, change: np.ndarray, k_inverse: np.ndarray, *, exact_twist: bool = True
) -> Retargeted:
    """The rig-frame version of an anatomical ``limit``: rig poses ``Mᵀ q_anat K⁻¹``; the twist
    range measured through a twist reference (exact), or shifted (``exact_twist=False``)."""
    if isinstance(limit, (spec.FreeLimit, spec.FixedLimit)):
        return Retargeted(limit, 0.0, 0.0)
    back = change.T  # anatomical -> rig directions
    m_inverse = quat.conjugate(quat.from_matrix(change))
    if isinstance(limit, spec.HingeLimit):
        axis = back @ (np.asarray(limit.axis, dtype=float) / np.linalg.norm(limit.axis))
        rest_bend = quat.multiply(m_inverse, k_inverse)  # rig poses are R(axis, θ) · rest_bend
        offset = float(quat.twist_about(rest_bend, axis))
        residual = float(quat.angle_between(rest_bend, quat.from_axis_angle(axis, offset)))
        shifted = None if limit.range_deg is None else _shifted(limit.range_deg, offset)
        return Retargeted(replace(limit, axis=_clean(axis), range_deg=shifted), 0.0, math.degrees(residual))
    windows, offsets = [], []
    if exact_twist and limit.twist_deg is not None:
        for window in limit.windows:
            windows.append(_turned_window(window, back))
        reference = quat.from_matrix(change)  # twist(M q K) = twist(M q) + κ
        if limit.twist_reference is not None:
            reference = quat.multiply(np.asarray(limit.twist_reference, dtype=float), reference)
        kappa = -float(quat.swing_twist_y(k_inverse)[1])
        rounded = tuple(float(round(c, 12)) + 0.0 for c in quat.canonical(reference))
        moved = replace(
            limit, windows=tuple(windows), twist_deg=_shifted(limit.twist_deg, -kappa), twist_reference=rounded
        )
        return Retargeted(moved, 0.0, 0.0)
    for window in limit.windows:
        windows.append(_turned_window(window, back))
        swings = quat.rotation_from_y(window_samples(solver_window(window)))  # no anatomical twist
        offsets.append(quat.swing_twist_y(quat.multiply(quat.multiply(m_inverse, swings), k_inverse))[1])
    if not windows:  # free swing: the offset at the anatomical rest direction
        offsets.append(np.atleast_1d(quat.swing_twist_y(quat.multiply(m_inverse, k_inverse))[1]))
    # The first window holds the joint's main range: centre the twist range on its offsets.
    middle = float(np.arctan2(np.mean(np.sin(offsets[0])), np.mean(np.cos(offsets[0]))))
    errors = [math.degrees(float(np.max(np.abs(quat.wrap_angle(o - middle))))) for o in offsets]
    twist = None if limit.twist_deg is None else _shifted(limit.twist_deg, middle)
    others = max(errors[1:], default=0.0)
    return Retargeted(replace(limit, windows=tuple(windows), twist_deg=twist), errors[0], 0.0, others)


def _turned_window(window: spec.ReachWindow, back: np.ndarray) -> spec.ReachWindow:
    """The window with its centre and plane axes turned by ``back`` (its corners unchanged)."""
    center = back @ np.asarray(window.center, dtype=float)
    if isinstance(window, spec.ConeWindow):
        return replace(window, center=_clean(center))
    _, u, _ = window_plane_axes(window.center, window.x_axis)
    return replace(window, center=_clean(center), x_axis=_clean(back @ u))


def _shifted(angle_range: tuple[float, float], offset: float) -> tuple[float, float]:
    """A range in degrees moved by ``offset`` radians, kept within [−360, 360] (it may run past 180)."""
    low, high = (round(a + math.degrees(offset), 6) for a in angle_range)
    if high > 360.0:
        low, high = low - 360.0, high - 360.0
    elif low < -360.0:
        low, high = low + 360.0, high + 360.0
    return (low, high)


def _clean(vector) -> tuple[float, float, float]:
    return tuple(float(round(c, 12)) + 0.0 for c in vector)


def _rotation3(matrix) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    return m[:3, :3] if m.shape == (4, 4) else m


def fit_to_posture(
    limit: spec.JointLimit, posed_frame, pose_rotation, wanted_z, limit_twist: float = 0.0
) -> Retargeted:
    """``limit``, for a bone whose +Z points toward ``wanted_z`` in some posture (standing at
    ``limit_twist`` in its own terms, :func:`pose_change`), moved onto a rig bone held in that
    posture: ``posed_frame`` is the bone's 3×3 frame there and ``pose_rotation`` its pose
    rotation (identity when its rest is that posture), ``wanted_z`` in ``posed_frame``'s space."""
    twist = front_twist(posed_frame, wanted_z)
    return retarget_limit(limit, *pose_change(pose_rotation, twist, limit_twist))
