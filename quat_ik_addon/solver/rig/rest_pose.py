"""Bone rest orientations from head, tail and roll, exactly as Blender computes them.

Blender builds a bone's rest rotation in ``vec_roll_to_mat3_normalized``
(source/blender/blenkernel/intern/armature.cc): first the shortest-arc rotation taking
+Y onto the bone's unit direction ``n = (x, y, z)`` (axis ``Y x n``), then a rotation by
``roll`` about ``n`` applied on the left.  With ``theta = 1 + y`` the shortest arc is,
row-major (Rodrigues' formula with ``(1 - cos) / sin^2 = 1 / (1 + y)``)::

    [[1 - x^2/theta,   x, -x z/theta  ],
     [-x,              y, -z          ],
     [-x z/theta,      z, 1 - z^2/theta]]

Near ``n = -Y`` Blender guards the division: when ``theta <= 6.1e-3`` it recomputes
``theta = t/2 + t^2/8`` from ``t = x^2 + z^2`` (the series of ``1 - sqrt(1 - t)``), and
when additionally ``t <= (2.5e-4)^2`` it uses the half turn about Z, ``diag(-1, -1, 1)``.
We copy those thresholds so a bone pointing (almost) straight down -Y gets the same
rest frame here as in Blender.

That rotation with the head as translation is the edit bone's matrix (``EditBone.matrix``):
:func:`bone_rest_matrix`.  Blender's ``bone.matrix_local`` (armature space) is the same
for root bones and, up to float rounding, for every other bone, except near -Y: leaving
edit mode (``armature_finalize_restpose``) rebuilds each child through its parent's final
rest frame, so where a bone's direction was snapped onto -Y (within 2.5e-4), that bone
(if it has a parent) or its descendants move by up to that angle.
:func:`armature_rest_matrices` reproduces that pass and so matches ``matrix_local``
everywhere; rig-spec helpers use it.

A chain solver wants each bone's rest frame relative to its parent's:
``parent.matrix_local^-1 @ bone.matrix_local`` (:func:`relative_rest`); Blender poses a
bone as ``pose_armature = parent_pose_armature @ relative_rest @ rotation_quaternion``.

Blender's two-term series leaves rest matrices with ``1 + y <= 6.1e-3`` up to ~5e-5 from
orthonormal; we reproduce that (it is what Blender poses with) and normalise quaternions.

Quaternions are ``(w, x, y, z)`` with ``w >= 0``.  Roll is in RADIANS here (the rig spec
stores ``roll_deg``; convert where you call).  numpy only; no ``bpy``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .. import quaternion

if TYPE_CHECKING:  # pragma: no cover - typing only
    from .spec import RigSpec

__all__ = [
    "ChainRestFrames",
    "armature_rest_matrices",
    "bone_rest_matrices",
    "bone_rest_matrix",
    "bone_rest_matrix3",
    "bone_rest_rotation",
    "bone_rest_rotations",
    "effector_in_tip_frame",
    "matrix_to_quaternion",
    "relative_rest",
    "relative_rest_matrix",
    "spec_rest_frames",
    "spec_rest_matrices",
]

# Blender's thresholds in vec_roll_to_mat3_normalized (armature.cc).
_SAFE_THETA = 6.1e-3  # above this, theta = 1 + y is precise enough to divide by
_CRITICAL_XZ = 2.5e-4  # below this distance from the Y axis, n is taken as exactly -Y
_ZERO_LENGTH = 1e-9


def _directions(heads: npt.ArrayLike, tails: npt.ArrayLike) -> np.ndarray:
    delta = np.asarray(tails, dtype=np.float64) - np.asarray(heads, dtype=np.float64)
    if delta.shape[-1:] != (3,):
        raise ValueError(f"head and tail must be 3-vectors, got shape {delta.shape}")
    length = np.linalg.norm(delta, axis=-1, keepdims=True)
    if np.any(~np.isfinite(length)) or np.any(length <= _ZERO_LENGTH):
        raise ValueError("a bone has zero length (tail == head) or a non-finite head/tail")
    return delta / length


def _rest_matrix3_from_direction(n: np.ndarray, roll: np.ndarray) -> np.ndarray:
    """(..., 3) unit directions and (...) rolls -> (..., 3, 3) rotations (row-major)."""
    x, y, z = n[..., 0], n[..., 1], n[..., 2]
    theta = 1.0 + y
    xz_sq = x * x + z * z
    regular = (theta > _SAFE_THETA) | (xz_sq > _CRITICAL_XZ * _CRITICAL_XZ)
    # Close to -Y, 1 + y has lost its digits: rebuild it from x and z.
    theta = np.where(theta > _SAFE_THETA, theta, 0.5 * xz_sq + 0.125 * xz_sq * xz_sq)
    theta = np.where(regular, theta, 1.0)  # keep the unused branch free of 0/0

    base = np.empty((*n.shape[:-1], 3, 3))
    base[..., 0, 0] = 1.0 - x * x / theta
    base[..., 0, 1] = x
    base[..., 0, 2] = -x * z / theta
    base[..., 1, 0] = -x
    base[..., 1, 1] = y
    base[..., 1, 2] = -z
    base[..., 2, 0] = -x * z / theta
    base[..., 2, 1] = z
    base[..., 2, 2] = 1.0 - z * z / theta
    base = np.where(regular[..., None, None], base, np.diag([-1.0, -1.0, 1.0]))

    # Roll: rotation by `roll` about n (Rodrigues), applied on the left.
    cos, sin = np.cos(roll)[..., None, None], np.sin(roll)[..., None, None]
    cross = np.zeros_like(base)
    cross[..., 0, 1], cross[..., 0, 2] = -z, y
    cross[..., 1, 0], cross[..., 1, 2] = z, -x
    cross[..., 2, 0], cross[..., 2, 1] = -y, x
    outer = n[..., :, None] * n[..., None, :]
    roll_matrix = cos * np.eye(3) + sin * cross + (1.0 - cos) * outer
    return roll_matrix @ base


def bone_rest_matrix3(head: npt.ArrayLike, tail: npt.ArrayLike, roll_rad: npt.ArrayLike) -> np.ndarray:
    """The bone's armature-space rest rotation as a 3x3 matrix; batched over leading axes.

    ``head``/``tail`` shaped ``(..., 3)``, ``roll_rad`` shaped ``(...)``; returns
    ``(..., 3, 3)``.  Blender's ``vec_roll_to_mat3`` (armature.cc).
    """
    n = _directions(head, tail)
    roll = np.broadcast_to(np.asarray(roll_rad, dtype=np.float64), n.shape[:-1])
    return _rest_matrix3_from_direction(n, roll)


def bone_rest_matrices(heads: npt.ArrayLike, tails: npt.ArrayLike, rolls_rad: npt.ArrayLike) -> np.ndarray:
    """Edit-bone matrices of many bones: ``(..., 3)`` heads/tails, ``(...)`` rolls -> ``(..., 4, 4)``."""
    rotation = bone_rest_matrix3(heads, tails, rolls_rad)
    out = np.zeros((*rotation.shape[:-2], 4, 4))
    out[..., :3, :3] = rotation
    out[..., :3, 3] = np.asarray(heads, dtype=np.float64)
    out[..., 3, 3] = 1.0
    return out


def bone_rest_matrix(head: npt.ArrayLike, tail: npt.ArrayLike, roll_rad: float) -> np.ndarray:
    """A bone's armature-space rest matrix (4x4) from edit-mode head/tail/roll.

    This is ``EditBone.matrix``, and ``bone.matrix_local`` for a root bone; for a bone in a
    hierarchy near -Y see :func:`armature_rest_matrices`.
    """
    return bone_rest_matrices(np.reshape(head, 3), np.reshape(tail, 3), float(roll_rad))


def matrix_to_quaternion(matrix: npt.ArrayLike) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` (or the rotation part of ``(..., 4, 4)``) ->
    unit quaternions ``(..., 4)`` as ``(w, x, y, z)`` with ``w >= 0``."""
    return quaternion.from_matrix(np.asarray(matrix, dtype=np.float64)[..., :3, :3])


def bone_rest_rotations(heads: npt.ArrayLike, tails: npt.ArrayLike, rolls_rad: npt.ArrayLike) -> np.ndarray:
    """Armature-space rest rotations ``(..., 4)`` of many bones (batched over leading axes)."""
    return matrix_to_quaternion(bone_rest_matrix3(heads, tails, rolls_rad))


def bone_rest_rotation(head: npt.ArrayLike, tail: npt.ArrayLike, roll_rad: float) -> np.ndarray:
    """One bone's armature-space rest rotation, a ``(4,)`` quaternion ``(w, x, y, z)``."""
    return bone_rest_rotations(np.reshape(head, 3), np.reshape(tail, 3), float(roll_rad))


def relative_rest_matrix(parent_matrix: npt.ArrayLike, child_matrix: npt.ArrayLike) -> np.ndarray:
    """``parent_matrix^-1 @ child_matrix`` for ``(..., 4, 4)`` rest matrices (a true inverse,
    as ``mathutils``' ``inverted()``, so slightly non-orthonormal float32 input agrees too)."""
    parent = np.asarray(parent_matrix, dtype=np.float64)
    child = np.asarray(child_matrix, dtype=np.float64)
    return np.linalg.inv(parent) @ child


def relative_rest(parent_matrix: npt.ArrayLike, child_matrix: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The child's rest frame in its parent's: ``(rotation (..., 4), head_offset (..., 3))``.

    ``head_offset`` is the child's head measured from the parent's HEAD (the origin of
    the parent's rest frame), in the parent's axes; a connected child has
    ``(0, parent_length, 0)``.
    """
    relative = relative_rest_matrix(parent_matrix, child_matrix)
    return matrix_to_quaternion(relative), relative[..., :3, 3].copy()


def armature_rest_matrices(
    heads: npt.ArrayLike,
    tails: npt.ArrayLike,
    rolls_rad: npt.ArrayLike,
    parents: Sequence[int | None],
) -> np.ndarray:
    """Every bone's ``bone.matrix_local`` (armature space), ``(n, 4, 4)``, built the way
    Blender builds it when leaving edit mode.

    ``heads``/``tails`` ``(n, 3)`` and ``rolls_rad`` ``(n,)`` are the edit-bone values in
    armature space; ``parents[i]`` is the index of bone ``i``'s parent or ``None``.

    Blender (``armature_finalize_restpose``, editors/armature/armature_utils.cc) does not
    store the edit matrix: parents first, it expresses each bone's head and tail in its
    parent's final rest frame (relative to the parent's tail), rebuilds the rotation from
    that parent-local direction with zero roll, then picks the roll that best matches the
    edit matrix (``-atan2`` of the mismatch's (0, 2) and (2, 2) entries) and rebuilds:
    ``matrix_local = parent.matrix_local @ [bone_mat | local_head + (0, parent_length, 0)]``.
    This equals :func:`bone_rest_matrix` up to float rounding, except where
    ``vec_roll_to_mat3`` snapped a direction within 2.5e-4 of -Y onto -Y: then the bone's
    own or its descendants' frames move by up to that angle (times the bone length).
    """
    head = np.asarray(heads, dtype=np.float64).reshape(-1, 3)
    tail = np.asarray(tails, dtype=np.float64).reshape(-1, 3)
    count = len(head)
    roll = np.broadcast_to(np.asarray(rolls_rad, dtype=np.float64), (count,))
    parent_of = [-1 if p is None else int(p) for p in parents]
    if len(parent_of) != count:
        raise ValueError(f"got {len(parent_of)} parents for {count} bones")
    depth = _depths(parent_of)
    edit = bone_rest_matrix3(head, tail, roll)
    length = np.linalg.norm(tail - head, axis=-1)
    out = np.zeros((count, 4, 4))
    out[:, 3, 3] = 1.0
    for level in range(int(depth.max()) + 1 if count else 0):
        idx = np.flatnonzero(depth == level)
        if level == 0:
            parent_rot = np.broadcast_to(np.eye(3), (len(idx), 3, 3))
            local_head, local_tail = head[idx], tail[idx]
        else:
            par = np.array([parent_of[i] for i in idx])
            parent_rot = out[par, :3, :3]
            # True inverses, as Blender's invert_m4_m4: near -Y the series for theta leaves
            # rest matrices non-orthonormal by ~1e-6, enough to show over a long offset.
            to_parent = np.linalg.inv(parent_rot)
            local_head = (to_parent @ (head[idx] - tail[par])[..., None])[..., 0]
            local_tail = (to_parent @ (tail[idx] - tail[par])[..., None])[..., 0]
        direction = _directions(local_head, local_tail)
        unrolled = parent_rot @ _rest_matrix3_from_direction(direction, np.zeros(len(idx)))
        mismatch = np.linalg.inv(edit[idx]) @ unrolled
        local_roll = -np.arctan2(mismatch[:, 0, 2], mismatch[:, 2, 2])
        out[idx, :3, :3] = parent_rot @ _rest_matrix3_from_direction(direction, local_roll)
        if level == 0:
            out[idx, :3, 3] = head[idx]
        else:
            offset = local_head + np.outer(length[par], [0.0, 1.0, 0.0])
            out[idx, :3, 3] = out[par, :3, 3] + (parent_rot @ offset[..., None])[..., 0]
    return out


def _depths(parent_of: Sequence[int]) -> np.ndarray:
    count = len(parent_of)
    depth = np.full(count, -1)
    for start in range(count):
        path, on_path = [], set()  # (the set keeps a 20,000-bone lineage linear)
        bone = start
        while bone != -1 and depth[bone] < 0:
            if bone in on_path:
                raise ValueError(f"parent links form a cycle through bone {bone}")
            if not 0 <= bone < count:
                raise ValueError(f"parent index {bone} is out of range")
            path.append(bone)
            on_path.add(bone)
            bone = parent_of[bone]
        base = -1 if bone == -1 else int(depth[bone])
        for offset, member in enumerate(reversed(path), start=1):
            depth[member] = base + offset
    return depth


def spec_rest_matrices(spec: RigSpec, bone_names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """``bone.matrix_local`` (armature space, 4x4) of a rig spec's bones, by name: of every
    bone, or of ``bone_names`` and their ancestors only (each bone's frame is built through its
    parent's, so nothing else is needed; a chain's cost then grows with its lineage, not the rig)."""
    bones = spec.bones if bone_names is None else _with_ancestors(spec, bone_names)
    index = {bone.name: i for i, bone in enumerate(bones)}
    matrices = armature_rest_matrices(
        np.array([b.head for b in bones]),
        np.array([b.tail for b in bones]),
        np.radians([b.roll_deg for b in bones]),
        [None if b.parent is None else index[b.parent] for b in bones],
    )
    return dict(zip(index, matrices, strict=True))


def _with_ancestors(spec: RigSpec, bone_names: Sequence[str]) -> list:
    """The named bones and all their ancestors, each once (found by walking up: the rest of the
    rig is never looked at)."""
    found: dict = {}
    for name in bone_names:
        while name is not None and name not in found:
            found[name] = spec.bone(name)
            name = found[name].parent
    return list(found.values())


@dataclass(frozen=True, eq=False)
class ChainRestFrames:
    """Rest data of a chain's bones, root to tip (``n`` bones).

    * ``rest_rotations_local`` ``(n, 4)``: each bone's rest rotation in its parent's rest
      frame (the root's in ``root_parent_armature``'s frame).
    * ``head_offsets_local`` ``(n, 3)``: each head in the parent's rest frame, measured
      from the parent's head.
    * ``lengths`` ``(n,)``: bone lengths (the tail is at ``(0, length, 0)`` in the bone's frame).
    * ``root_parent_armature`` ``(4, 4)``: the root bone's parent's ``matrix_local``
      (identity if the root has no parent).

    Iterates as that 4-tuple, so ``rot, offsets, lengths, parent = spec_rest_frames(...)``.
    """

    rest_rotations_local: np.ndarray
    head_offsets_local: np.ndarray
    lengths: np.ndarray
    root_parent_armature: np.ndarray

    def __iter__(self) -> Iterator[np.ndarray]:
        return iter((self.rest_rotations_local, self.head_offsets_local, self.lengths, self.root_parent_armature))


def spec_rest_frames(spec: RigSpec, bone_names: Sequence[str]) -> ChainRestFrames:
    """Rest frames of a chain's bones (root to tip, e.g. ``spec.chain_bones("arm")``).

    Each named bone after the first must be the child of the one before it.
    """
    names = list(bone_names)
    if not names:
        raise ValueError("spec_rest_frames needs at least one bone")
    for previous, name in itertools.pairwise(names):
        parent = spec.bone(name).parent
        if parent != previous:
            raise ValueError(f"bone {name!r} follows {previous!r} in the chain but its parent is {parent!r}")
    bones = [spec.bone(name) for name in names]
    all_matrices = spec_rest_matrices(spec, names)
    root_parent = bones[0].parent
    parent_matrix = np.eye(4) if root_parent is None else all_matrices[root_parent]
    matrices = np.array([all_matrices[name] for name in names])
    parents = np.concatenate([parent_matrix[None], matrices[:-1]], axis=0)
    rotations, offsets = relative_rest(parents, matrices)
    lengths = np.array([b.length for b in bones])
    return ChainRestFrames(rotations, offsets, lengths, parent_matrix)


def effector_in_tip_frame(spec: RigSpec, chain_name: str) -> np.ndarray:
    """The chain's effector in the tip bone's rest frame: its tail plus ``effector_offset``."""
    chain = spec.chain(chain_name)
    tip = spec.bone(chain.tip)
    return np.array([0.0, tip.length, 0.0]) + np.asarray(chain.effector_offset, dtype=np.float64)
