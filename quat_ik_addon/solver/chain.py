"""A chain of bones from root to tip, and its batched forward kinematics.

Frames follow Blender's pose evaluation: bone i's posed frame in the chain's root frame is
G_i = G_{i-1} · L_i · R(q_i), where L_i is the bone's rest frame relative to its parent
(``parent.matrix_local⁻¹ @ bone.matrix_local``: a rotation and the head offset) and q_i the
pose rotation (``pose_bone.rotation_quaternion``). The root frame, the posed frame of the
first bone's parent (armature space when it has none), is where targets are given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat
from .limits import FreeJoint, JointLimit

Array = NDArray[np.float64]


@dataclass(frozen=True)
class ChainPose:
    """Forward kinematics of a batch of poses, all in the chain's root frame."""

    heads: Array  # (N, n, 3) joint positions
    pre_rotations: Array  # (N, n, 4) G_{i-1}·L_i: bone i's frame before its own rotation
    rotations: Array  # (N, n, 4) G_i: bone i's posed frame
    effector: Array  # (N, 3) tail of the tip bone plus the effector offset

    def take(self, rows: NDArray[np.intp]) -> ChainPose:
        """The poses of the given rows."""
        return ChainPose(self.heads[rows], self.pre_rotations[rows], self.rotations[rows], self.effector[rows])

    def put(self, rows: NDArray[np.intp], other: ChainPose) -> None:
        """Overwrite the given rows with another batch's poses (in place)."""
        self.heads[rows] = other.heads
        self.pre_rotations[rows] = other.pre_rotations
        self.rotations[rows] = other.rotations
        self.effector[rows] = other.effector


@dataclass(frozen=True, eq=False)
class Chain:
    """Bones root to tip with their rest frames and joint limits.

    ``rest_rotations`` (n, 4) and ``rest_offsets`` (n, 3) are each bone's rest orientation and
    head in its parent's rest frame (for the first bone: in the root frame); ``lengths`` (n,)
    the bone lengths; ``effector_offset`` (3,) is added to the tip's tail, in the tip's frame.
    """

    bone_names: tuple[str, ...]
    rest_rotations: Array
    rest_offsets: Array
    lengths: Array
    limits: tuple[JointLimit, ...] = ()
    effector_offset: Array = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self) -> None:
        n = len(self.bone_names)
        rest_rotations = quat.normalize(np.asarray(self.rest_rotations, dtype=float).reshape(n, 4))
        object.__setattr__(self, "bone_names", tuple(self.bone_names))
        object.__setattr__(self, "rest_rotations", rest_rotations)
        object.__setattr__(self, "rest_offsets", np.asarray(self.rest_offsets, dtype=float).reshape(n, 3))
        object.__setattr__(self, "lengths", np.asarray(self.lengths, dtype=float).reshape(n))
        object.__setattr__(self, "effector_offset", np.asarray(self.effector_offset, dtype=float).reshape(3))
        limits = tuple(self.limits) if self.limits else tuple(FreeJoint() for _ in range(n))
        if len(limits) != n:
            raise ValueError(f"chain has {n} bones but {len(limits)} limits")
        object.__setattr__(self, "limits", limits)
        if n == 0:
            raise ValueError("a chain needs at least one bone")
        if np.any(self.lengths <= 0.0) or not np.all(np.isfinite(self.lengths)):
            raise ValueError(f"bone lengths must be positive and finite: {self.lengths}")
        tip_vector = np.array([0.0, self.lengths[-1], 0.0]) + self.effector_offset
        reach = float(np.sum(np.linalg.norm(self.rest_offsets[1:], axis=-1)) + np.linalg.norm(tip_vector))
        # Read on every iteration of every solve: computed once.
        object.__setattr__(self, "_tip_vector", tip_vector)
        object.__setattr__(self, "_reach", reach)

    @classmethod
    def from_rig_spec(cls, rig, chain_name: str, *, clamp_mode: str = "closest") -> Chain:
        """The named chain of a ``RigSpec`` (see spec_chain.py and docs/rig_spec.md)."""
        from .spec_chain import chain_from_rig_spec

        return chain_from_rig_spec(rig, chain_name, clamp_mode=clamp_mode)

    @property
    def n_bones(self) -> int:
        return len(self.bone_names)

    @property
    def tip_vector(self) -> Array:
        """The effector in the tip bone's frame: its tail plus the offset."""
        return self._tip_vector

    @property
    def reach(self) -> float:
        """Longest distance from the first joint to the effector: the scale for tolerances."""
        return self._reach

    def clamp_to_limits(self, rotations: ArrayLike) -> Array:
        """Every bone's rotation brought inside its limit: (N, n, 4)."""
        rotations = np.array(rotations, dtype=float)
        for i, limit in enumerate(self.limits):
            rotations[..., i, :] = limit.clamp(rotations[..., i, :])
        return rotations

    def limit_violation(self, rotations: ArrayLike) -> Array:
        """How far (radians) each bone sits outside its limit: (N, n)."""
        rotations = np.asarray(rotations, dtype=float)
        return np.stack([limit.violation(rotations[..., i, :]) for i, limit in enumerate(self.limits)], axis=-1)

    def forward_kinematics(self, rotations: ArrayLike) -> ChainPose:
        """Joint positions and frames for pose rotations (N, n, 4) or (n, 4)."""
        rotations = np.asarray(rotations, dtype=float)
        batch = rotations.shape[:-2]
        frame = np.broadcast_to(quat.IDENTITY, (*batch, 4))
        head = np.zeros((*batch, 3))
        heads, pre_rotations, posed = [], [], []
        for i in range(self.n_bones):
            head = head + quat.rotate(frame, self.rest_offsets[i])
            pre = quat.multiply(frame, self.rest_rotations[i])
            frame = quat.multiply(pre, rotations[..., i, :])
            heads.append(head)
            pre_rotations.append(pre)
            posed.append(frame)
        effector = head + quat.rotate(frame, self.tip_vector)
        return ChainPose(
            heads=np.stack(heads, axis=-2),
            pre_rotations=np.stack(pre_rotations, axis=-2),
            rotations=np.stack(posed, axis=-2),
            effector=effector,
        )

    def random_poses(self, rng: np.random.Generator, count: int) -> Array:
        """(count, n, 4) random pose rotations inside every joint's limits."""
        return np.stack([limit.sample(rng, count) for limit in self.limits], axis=1)

    def centre_pose(self) -> Array:
        """(n, 4) the pose in the middle of every joint's limits (rest where a joint is free)."""
        return np.stack([getattr(limit, "centre", quat.IDENTITY) for limit in self.limits])

    def rest_pose(self, batch: int | None = None) -> Array:
        """Identity pose rotations, (n, 4) or (batch, n, 4)."""
        shape = (self.n_bones, 4) if batch is None else (batch, self.n_bones, 4)
        return np.broadcast_to(quat.IDENTITY, shape).copy()
