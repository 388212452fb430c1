"""Left ↔ right: bone names as Blender flips them, and joint limits mirrored across X = 0.

Names follow Blender's ``bpy.utils.flip_name`` (``BLI_string_flip_side_name`` in
source/blender/blenlib/intern/string_utils.cc), re-implemented here without ``bpy``.

Limits are mirrored from what a pose *does*.  A pose rotation ``Q`` (relative to the rest
frame ``R``, a 3×3 rotation in armature space) deforms the bone, in armature space, by
``R Q Rᵀ`` (parents at rest).  Mirroring that across the armature's X = 0 plane,
``M = diag(−1, 1, 1)``, and reading it in the other bone's rest frame ``R'`` gives::

    Q' = R'ᵀ M R Q Rᵀ M R' = C Q Cᵀ,   C = R'ᵀ M R   (det C = −1)

When the rest frames are exact mirror images, as Blender's *Symmetrize* makes them
(``R' = M R D`` with ``D = diag(−1, 1, 1)``: the mirror flips the bone's local X, keeps Y
and Z), ``C = D`` and ``Q' = D Q D``: the quaternion ``(w, x, y, z)`` becomes
``(w, x, −y, −z)``, exactly what Blender's *Paste Flipped Pose* does.  If only the rolls
differ, ``C = T D`` with ``T`` a turn about the bone's own Y axis, which this module
takes into account.  Rest poses map to rest poses either way.

Everything in a limit then follows from the direction map ``d → C d``:

* the bone direction ``d = Q ŷ`` goes to ``C d`` (``Cᵀ ŷ = ŷ``);
* the twist ``τ`` goes to ``−τ``, because ``C`` reflects (det −1), so a twist range
  ``[a, b]`` becomes ``[−b, −a]``;
* a window's centre and ``x_axis`` go to ``C c`` and ``−C x``; its plane axes become
  ``u' = −C u`` and ``v' = C v`` (for orthogonal ``C``, ``(C a)×(C b) = det C · C(a×b)``),
  so a polygon corner ``[a, b]`` becomes ``[−a, b]``, and an ellipse keeps its half-angles;
* a hinge about axis ``a`` by ``φ``: ``C R(a, φ) Cᵀ = R(det C · C a, φ) = R(−C a, φ)``,
  the same range about ``−C a`` — so a knee about +X stays a knee about +X — except that an
  axis mostly along the bone (``|a_y| > |(a_x, a_z)|``, e.g. a forearm's twist) is written
  as ``C a`` with the range ``[−b, −a]``, keeping its sign along the bone.  Both choices
  depend only on what ``C`` leaves unchanged, so mirroring back restores the same numbers.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from .. import quaternion as quat
from ..rig import spec as spec
from .window_frames import window_plane_axes

__all__ = [
    "MIRROR_X",
    "mirror_limit",
    "mirror_limit_exact",
    "mirror_name",
    "mirror_pose_rotation",
    "mirror_window",
    "mirror_x_rest_matrix",
    "mirroring_matrix",
]

MIRROR_X = np.diag([-1.0, 1.0, 1.0])
# Rest frames whose bones are not mirror images within this angle are refused: a limit
# cannot be carried between bones that point in different directions.
DIRECTION_TOLERANCE_DEG = 0.5
# A roll difference below this (radians) counts as none, keeping exact mirrors exact.
_NO_ROLL = 1e-12

_SEPARATORS = b". -_"
_FLIP_CHAR = {ord("l"): b"r", ord("r"): b"l", ord("L"): b"R", ord("R"): b"L"}


# --------------------------------------------------------------------------- names


def mirror_name(name: str, strip_number: bool = False) -> str:
    """The other side's bone name, by Blender's rules (``bpy.utils.flip_name``).

    In order, on the UTF-8 bytes, after setting aside a ``.NNN`` number ending (dropped with
    ``strip_number``): names shorter than 3 bytes stay as they are; a last character
    ``l r L R`` after a separator (``.``, space, ``-``, ``_``) flips (``hand.L``, ``hand_r``);
    else a first character ``l r L R`` before a separator flips (``L.hand``); else, for names
    longer than 5 bytes, the first ``right`` (any case) flips if it starts or ends the name,
    or failing that the first ``left`` (``LeftArm`` → ``RightArm``, ``handLEFT`` →
    ``handRIGHT``); any other name is returned unchanged.
    """
    raw = name.encode("utf-8")
    if len(raw) < 3:
        return name  # Blender leaves ".L" and the like alone
    number = b""
    if raw[-1:].isdigit():
        dot = raw.rfind(b".")
        if dot >= 0 and raw[dot + 1 : dot + 2].isdigit():
            raw, number = raw[:dot], raw[dot:]
    return (_flip_side(raw) + (b"" if strip_number else number)).decode("utf-8")


def _flip_side(raw: bytes) -> bytes:
    size = len(raw)
    if size > 1 and raw[size - 2] in _SEPARATORS and raw[-1] in _FLIP_CHAR:
        return raw[:-1] + _FLIP_CHAR[raw[-1]]
    if size > 1 and raw[1] in _SEPARATORS and raw[0] in _FLIP_CHAR:
        return _FLIP_CHAR[raw[0]] + raw[1:]
    if size > 5:
        lowered = raw.lower()  # bytes.lower() folds ASCII only, like BLI_strcasestr
        for word, other in ((b"right", b"left"), (b"left", b"right")):
            at = lowered.find(word)
            if at == 0 or (at >= 0 and at == size - len(word)):
                found = raw[at : at + len(word)]
                if found[:1].islower():
                    replacement = other
                elif found[1:2].isupper():
                    replacement = other.upper()
                else:
                    replacement = other.capitalize()
                return raw[:at] + replacement + raw[at + len(word) :]
    return raw


# --------------------------------------------------------------------------- frames and poses


def mirror_x_rest_matrix(rest_matrix3: npt.ArrayLike) -> np.ndarray:
    """The exact mirror image of a bone's rest frame, as Blender's Symmetrize builds it.

    ``M R D``: head and tail reflected across X = 0 (so local Y and Z are reflected), roll
    negated, which turns the reflected local X around to keep the frame right-handed.
    """
    rest = np.asarray(rest_matrix3, dtype=np.float64).reshape(3, 3)
    return MIRROR_X @ rest @ MIRROR_X


def mirroring_matrix(
    source_rest_matrix3: npt.ArrayLike,
    target_rest_matrix3: npt.ArrayLike,
    direction_tolerance_deg: float = DIRECTION_TOLERANCE_DEG,
) -> np.ndarray:
    """``C = R'ᵀ M R`` (a reflection, det −1), snapped to ``T_y(ρ) D`` exactly.

    ``C`` maps the source's local directions to the target's.  The bones must be mirror
    images (``C ŷ = ŷ`` within ``direction_tolerance_deg``), otherwise ``ValueError``; what
    remains is the roll difference ``ρ``, kept exactly, with ``ρ ≈ 0`` giving ``D`` itself.
    """
    source = _rotation3(source_rest_matrix3, "source_rest_matrix3")
    target = _rotation3(target_rest_matrix3, "target_rest_matrix3")
    reflection = target.T @ MIRROR_X @ source
    off_axis = math.degrees(math.acos(float(np.clip(reflection[1, 1], -1.0, 1.0))))
    if off_axis > direction_tolerance_deg:
        raise ValueError(
            f"the bones are not mirror images across X = 0: their directions differ by {off_axis:.3g}° "
            f"from mirrored (tolerance {direction_tolerance_deg:g}°)"
        )
    turn = reflection @ MIRROR_X  # T_y(ρ) = C D: [[cos ρ, 0, sin ρ], [0, 1, 0], [−sin ρ, 0, cos ρ]]
    roll = math.atan2(turn[0, 2] - turn[2, 0], turn[0, 0] + turn[2, 2])
    if abs(roll) <= _NO_ROLL:
        return MIRROR_X.copy()
    cos_roll, sin_roll = math.cos(roll), math.sin(roll)
    return np.array([[cos_roll, 0.0, sin_roll], [0.0, 1.0, 0.0], [-sin_roll, 0.0, cos_roll]]) @ MIRROR_X


def mirror_pose_rotation(
    rotation: npt.ArrayLike, source_rest_matrix3: npt.ArrayLike, target_rest_matrix3: npt.ArrayLike
) -> np.ndarray:
    """The other side's pose rotation(s) ``(..., 4)``: ``Q' = C Q Cᵀ`` (module docstring).

    The deformation ``R Q Rᵀ`` is reflected across X = 0 and read in the target's rest frame.
    For exact mirror frames this is ``(w, x, y, z) → (w, x, −y, −z)``.
    """
    reflection = np.asarray(
        _rotation3(target_rest_matrix3, "target_rest_matrix3").T
        @ MIRROR_X
        @ _rotation3(source_rest_matrix3, "source_rest_matrix3")
    )
    matrices = quat.to_matrix(quat.normalize(rotation))
    return quat.from_matrix(reflection @ matrices @ reflection.T)


# --------------------------------------------------------------------------- limits


def mirror_window(window: spec.ReachWindow, reflection: npt.ArrayLike = MIRROR_X) -> spec.ReachWindow:
    """A reach window's mirror image under the direction map ``d → C d`` (``C`` a reflection).

    Cones: centre ``C c``.  Polygons and elliptic cones: centre ``C c``, plane axes
    ``u' = −C u``, ``v' = C v``, so a corner ``[a, b]`` becomes ``[−a, b]``.  When the
    window uses the default ``x_axis`` and the default for the new centre is ``±C u``, the
    default is kept (with corners ``[−a, b]`` or ``[a, −b]``); otherwise ``x_axis = −C x``
    (or ``−C u``) is written out.  With ``C = D`` every number is mirrored exactly.
    """
    c_matrix = np.asarray(reflection, dtype=np.float64)
    center = c_matrix @ np.asarray(window.center, dtype=np.float64)
    if isinstance(window, spec.ConeWindow):
        return spec.ConeWindow(half_angle_deg=window.half_angle_deg, center=_clean(center))
    _, u, _ = window_plane_axes(window.center, window.x_axis)
    flip_u = True  # corners [a, b] -> [-a, b]
    if window.x_axis is not None:
        x_axis: tuple[float, float, float] | None = _clean(-(c_matrix @ np.asarray(window.x_axis, dtype=np.float64)))
    else:
        _, default_u, _ = window_plane_axes(center)
        mapped_u = c_matrix @ u
        if np.allclose(default_u, -mapped_u, rtol=0.0, atol=1e-12):
            x_axis = None
        elif np.allclose(default_u, mapped_u, rtol=0.0, atol=1e-12):
            x_axis, flip_u = None, False  # u' = C u, v' = −C v: corners [a, b] -> [a, −b]
        else:
            x_axis = _clean(-mapped_u)
    if isinstance(window, spec.EllipticConeWindow):
        return spec.EllipticConeWindow(half_angles_deg=window.half_angles_deg, center=_clean(center), x_axis=x_axis)
    corners = tuple((-a + 0.0, b) if flip_u else (a, -b + 0.0) for a, b in window.vertices_deg)
    return spec.PolygonWindow(vertices_deg=corners, center=_clean(center), x_axis=x_axis)


def mirror_limit(
    limit_spec: spec.JointLimit,
    source_rest_matrix3: npt.ArrayLike,
    target_rest_matrix3: npt.ArrayLike,
    direction_tolerance_deg: float = DIRECTION_TOLERANCE_DEG,
) -> spec.JointLimit:
    """The joint limit for the mirror-image bone, from both bones' armature-space rest rotations.

    ``source_rest_matrix3``/``target_rest_matrix3`` are 3×3 rest rotations in armature space
    (Blender's ``bone.matrix_local.to_3x3()``; a 4×4 ``matrix_local`` is accepted too).  A pose inside the returned limit is exactly
    the mirror (:func:`mirror_pose_rotation`) of a pose inside ``limit_spec``, also when the
    two rolls are not mirror images.  Raises ``ValueError`` when the bones do not point in
    mirrored directions (see :func:`mirroring_matrix`).
    """
    reflection = mirroring_matrix(source_rest_matrix3, target_rest_matrix3, direction_tolerance_deg)
    return _mirror_limit(limit_spec, reflection)


def mirror_limit_exact(limit_spec: spec.JointLimit) -> spec.JointLimit:
    """The limit for a bone whose rest frame is the exact mirror image (as Symmetrize makes it).

    Only signs change: polygon corners ``[a, b] → [−a, b]``, window centres ``(x, y, z) →
    (−x, y, z)``, explicit x axes ``(x, y, z) → (x, −y, −z)``; twist ``[a, b] → [−b, −a]``; a hinge
    axis ``(x, y, z) → (x, −y, −z)`` with the same range, or, for an axis mostly along the
    bone, ``(−x, y, z)`` with the range negated.  Applying it twice gives back the same numbers.
    """
    return _mirror_limit(limit_spec, MIRROR_X)


def _mirror_limit(limit: spec.JointLimit, reflection: np.ndarray) -> spec.JointLimit:
    if isinstance(limit, spec.BallLimit):
        twist = None if limit.twist_deg is None else _negated_range(limit.twist_deg)
        windows = tuple(mirror_window(window, reflection) for window in limit.windows)
        reference = limit.twist_reference
        if reference is not None:  # twist of (C M Cᵀ)·(C q Cᵀ) = C (M q) Cᵀ: the mirrored twist
            reference = _mirrored_rotation(reference, reflection)
        return replace(limit, windows=windows, twist_deg=twist, twist_reference=reference)
    if isinstance(limit, spec.HingeLimit):
        axis = np.asarray(limit.axis, dtype=np.float64)
        mirrored = -(reflection @ axis)
        if abs(axis[1]) <= math.hypot(axis[0], axis[2]):
            return replace(limit, axis=_clean(mirrored))
        # Mostly along the bone: R(−C a, φ) = R(C a, −φ) keeps the axis pointing along the bone
        # the way it did (C leaves the y component alone), with the range negated.
        angle_range = None if limit.range_deg is None else _negated_range(limit.range_deg)
        return replace(limit, axis=_clean(-mirrored), range_deg=angle_range)
    return limit  # free and fixed joints look the same from either side


def _mirrored_rotation(rotation, reflection: np.ndarray) -> tuple[float, float, float, float]:
    """``C R Cᵀ`` as a quaternion; for ``C = D`` exactly ``(w, x, −y, −z)``."""
    w, x, y, z = rotation
    if np.array_equal(reflection, MIRROR_X):
        return (w, x, -y + 0.0, -z + 0.0)
    matrix = reflection @ quat.to_matrix(np.asarray(rotation, dtype=np.float64)) @ reflection.T
    return tuple(float(c) + 0.0 for c in quat.canonical(quat.from_matrix(matrix)))


def _negated_range(angle_range: tuple[float, float]) -> tuple[float, float]:
    low, high = angle_range
    return (-high + 0.0, -low + 0.0)


def _clean(vector: np.ndarray) -> tuple[float, float, float]:
    x, y, z = (float(c) + 0.0 for c in vector)  # + 0.0 turns -0.0 into 0.0
    return (x, y, z)


def _rotation3(matrix: npt.ArrayLike, what: str) -> np.ndarray:
    rotation = np.asarray(matrix, dtype=np.float64)
    if rotation.shape == (4, 4):
        rotation = rotation[:3, :3]
    if rotation.shape != (3, 3) or not np.all(np.isfinite(rotation)):
        raise ValueError(f"{what} must be a finite 3×3 rotation matrix, got shape {rotation.shape}")
    if not np.allclose(rotation.T @ rotation, np.eye(3), atol=1e-4) or np.linalg.det(rotation) < 0.0:
        raise ValueError(f"{what} is not a rotation (orthonormal, det +1)")
    return rotation
