"""A chain of bones from root to tip, and its batched forward kinematics.

Frames follow Blender's pose evaluation: bone i's posed frame in the chain's root frame is
G_i = G_{i-1} · L_i · R(q_i), where L_i is the bone's rest frame relative to its parent
(``parent.matrix_local⁻¹ @ bone.matrix_local``: a rotation and the head offset) and q_i the
pose rotation (``pose_bone.rotation_quaternion``). The root frame, the posed frame of the
first bone's parent (armature space when it has none), is where targets are given.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import quaternion as quat
from .entry_checks import finite_array, normalisable_rows
from .limits.chain_clamp import ChainClamp
from .limits.contacts import LimitContacts
from .limits.joints import FreeJoint, JointLimit, group_alike, hinges, parameter_digest
from .native import kernel_calls

Array = NDArray[np.float64]

# Batches of at most this many bone rotations (N·n) get their frames by a prefix scan, larger
# ones bone by bone (the crossover measured on 10- and 30-bone chains).
_PREFIX_SCAN_ROWS = 256
# Sizes the solver holds: bone lengths and offsets up to this, with goals up to
# ``goals.MAX_COORDINATE``, keep the products it squares (lengths times distances) inside
# float range. Below the smallest reach ``SolveSettings.angle_tolerance`` divides by 1e-12
# instead of the reach, and no goal with an orientation is met; 1e-9 is also the rig spec's
# shortest bone.
LARGEST_SIZE = 1e50
SMALLEST_REACH = 1e-9


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
        if n == 0:
            raise ValueError("a chain needs at least one bone")
        rest_rotations = quat.normalize(normalisable_rows(self.rest_rotations, "rest rotations", (n, 4)))
        object.__setattr__(self, "bone_names", tuple(self.bone_names))
        object.__setattr__(self, "rest_rotations", rest_rotations)
        object.__setattr__(self, "rest_offsets", finite_array(self.rest_offsets, (n, 3), "rest offsets"))
        object.__setattr__(self, "lengths", finite_array(self.lengths, (n,), "bone lengths"))
        object.__setattr__(self, "effector_offset", finite_array(self.effector_offset, (3,), "effector offset"))
        limits = tuple(self.limits) if self.limits else tuple(FreeJoint() for _ in range(n))
        if len(limits) != n:
            raise ValueError(f"chain has {n} bones but {len(limits)} limits")
        object.__setattr__(self, "limits", limits)
        if np.any(self.lengths <= 0.0):
            raise ValueError(f"bone lengths must be positive: {self.lengths}")
        for name in ("lengths", "rest_offsets", "effector_offset"):
            if np.max(np.abs(getattr(self, name))) > LARGEST_SIZE:
                raise ValueError(f"{name.replace('_', ' ')} must lie within ±{LARGEST_SIZE:g}")
        tip_vector = np.array([0.0, self.lengths[-1], 0.0]) + self.effector_offset
        reach = float(np.sum(np.linalg.norm(self.rest_offsets[1:], axis=-1)) + np.linalg.norm(tip_vector))
        if not reach > 1e-9 * float(np.max(self.lengths)):
            # Reach sets the solver's scales (damping, the weight of orientation): at 0 there are none.
            raise ValueError("the effector sits on the chain's first joint: nothing to reach with (reach 0)")
        if reach < SMALLEST_REACH:
            raise ValueError(f"the chain reaches {reach:g}: too small to solve (at least {SMALLEST_REACH:g})")
        # Read on every iteration of every solve: computed once.
        object.__setattr__(self, "_tip_vector", tip_vector)
        object.__setattr__(self, "_reach", reach)

    @classmethod
    def from_rig_spec(cls, rig, chain_name: str, *, clamp_mode: str = "closest") -> Chain:
        """The named chain of a ``RigSpec`` (see spec_chain.py and docs/rig_spec.md)."""
        from .rig.spec_chain import chain_from_rig_spec

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

    # Derived once per chain, on first use (cached_property also serves chains unpickled from
    # before these existed).
    @cached_property
    def limit_groups(self) -> tuple[tuple[JointLimit, NDArray[np.intp]], ...]:
        """(limit, bones) for each set of bones whose limits are alike: one call clamps them all."""
        return group_alike(self.limits)

    @cached_property
    def fingerprint(self) -> bytes:
        """A digest of everything a solve reads from the chain (bones, rest frames, lengths,
        effector offset, limits by value): equal chains have equal fingerprints."""
        digest = hashlib.blake2b(digest_size=16)
        for name in self.bone_names:
            digest.update(name.encode() + b"\0")
        for array in (self.rest_rotations, self.rest_offsets, self.lengths, self.effector_offset):
            digest.update(array.tobytes())
        for limit, bones in self.limit_groups:
            digest.update(parameter_digest(limit) + bones.tobytes())
        return digest.digest()

    @cached_property
    def hinge_bones(self) -> NDArray[np.intp]:
        """Indices of the bones with hinge joints."""
        return hinges(self.limits)[0]

    @cached_property
    def hinge_axes(self) -> Array:
        """(h, 3) the hinge axes of ``hinge_bones``, each in its bone's rest frame."""
        return hinges(self.limits)[1]

    @cached_property
    def step_shares(self) -> Array | None:
        """(n,) the share of a step each joint takes, 1 − stiffness (Zhong 2000's damping along
        the chain); None when every joint takes all of it. Fixed joints, which never move, count 1."""
        shares = np.array([limit.step_share for limit in self.limits])
        return None if np.all(shares == 1.0) else shares

    @cached_property
    def fixed_bones(self) -> NDArray[np.intp]:
        """Indices of the bones with fixed joints."""
        return np.array([i for i, limit in enumerate(self.limits) if limit.degrees_of_freedom == 0], dtype=np.intp)

    @cached_property
    def _rest_is_identity(self) -> tuple[bool, ...]:
        """Per bone: is its rest rotation exactly the identity (then G_{i-1}·L_i is G_{i-1})?"""
        return tuple(bool(np.array_equal(rest, quat.IDENTITY)) for rest in self.rest_rotations)

    @cached_property
    def _rest_products(self) -> tuple[Array, Array]:
        """(n, 4, 4) twice: L_i·q and q·L_i as matrix products (``quat.product_matrices``)."""
        return quat.product_matrices(self.rest_rotations)

    @cached_property
    def _step_vectors(self) -> Array:
        """(n, 3) what each posed frame carries to the next joint: the next head offset, and
        for the tip bone the effector."""
        return np.concatenate((self.rest_offsets[1:], self.tip_vector[None, :]))

    @cached_property
    def _step_tables(self) -> Array:
        """(n, 16, 3) ``_step_vectors`` as ``quat.rotation_tables``: small batches rotate them in
        two numpy calls."""
        return quat.rotation_tables(self._step_vectors)

    def clamp_to_limits(self, rotations: ArrayLike) -> Array:
        """Every bone's rotation brought inside its limit: (N, n, 4)."""
        clamped = kernel_calls.clamp(self, rotations)
        if clamped is not None:
            return clamped
        if len(self.limit_groups) == 1:  # one limit shape for every bone, in order
            return self.limit_groups[0][0].clamp(np.asarray(rotations, dtype=float))
        return self._clamp(rotations)

    @cached_property
    def _clamp(self) -> ChainClamp:
        return ChainClamp(self.limit_groups)

    @cached_property
    def limit_contacts(self) -> LimitContacts:
        """Which way a clamp turned each joint back onto its limit (for DLS's pressed joints)."""
        return LimitContacts(self.limit_groups, self.n_bones)

    def limit_violation(self, rotations: ArrayLike) -> Array:
        """How far (radians) each bone sits outside its limit: (N, n)."""
        outside = kernel_calls.violation(self, rotations)
        if outside is not None:
            return outside
        rotations = np.asarray(rotations, dtype=float)
        violation = np.empty(rotations.shape[:-1])
        for limit, bones in self.limit_groups:
            violation[..., bones] = limit.violation(rotations[..., bones, :])
        return violation

    def forward_kinematics(self, rotations: ArrayLike) -> ChainPose:
        """Joint positions and frames for pose rotations (N, n, 4) or (n, 4)."""
        rotations = np.asarray(rotations, dtype=float)
        batch = rotations.shape[:-2]
        steps = np.empty((*batch, self.n_bones + 1, 3))
        # head_i = head_{i-1} + G_{i-1}·offset_i and effector = head_{n-1} + G_{n-1}·tip: every
        # step rotated in one call, then summed root to tip (cumsum adds in the loop's order).
        if rotations.size // 4 <= _PREFIX_SCAN_ROWS:
            pre_rotations, posed = self._frames_by_prefix_scan(rotations)
            steps[..., 1:, :] = quat.rotate_by_tables(posed, self._step_tables)
        else:
            pre_rotations, posed = self._frames_bone_by_bone(rotations)
            steps[..., 1:, :] = quat.rotate(posed, self._step_vectors)
        steps[..., 0, :] = self.rest_offsets[0]
        joints = np.cumsum(steps, axis=-2)
        return ChainPose(
            heads=joints[..., :-1, :],
            pre_rotations=pre_rotations,
            rotations=posed,
            effector=joints[..., -1, :].copy(),  # results keep it: not a view of every joint
        )

    def _frames_bone_by_bone(self, rotations: Array) -> tuple[Array, Array]:
        """G_{i-1}·L_i and G_i = (G_{i-1}·L_i)·q_i root to tip: one product per bone (two where
        L_i is not the identity), each over the whole batch."""
        batch = rotations.shape[:-2]
        pre_rotations = np.empty((*batch, self.n_bones, 4))
        posed = np.empty((*batch, self.n_bones, 4))
        frame = np.broadcast_to(quat.IDENTITY, (*batch, 4))
        after_rest = self._rest_products[1]
        for i, rest_is_identity in enumerate(self._rest_is_identity):
            pre = frame if rest_is_identity else frame @ after_rest[i].T
            frame = quat.multiply(pre, rotations[..., i, :])
            pre_rotations[..., i, :] = pre
            posed[..., i, :] = frame
        return pre_rotations, posed

    def _frames_by_prefix_scan(self, rotations: Array) -> tuple[Array, Array]:
        """G_i = (L_0·q_0)···(L_i·q_i) as an inclusive prefix product (Hillis & Steele 1986):
        ⌈log2 n⌉ products over all bones at once instead of n one after another, which is what
        counts for small batches, where every numpy call costs about the same. The products
        associate differently from the bone-by-bone loop, so the frames may differ in the last
        bits."""
        all_identity = all(self._rest_is_identity)
        before_rest, after_rest = self._rest_products
        posed = np.array(rotations) if all_identity else (before_rest @ rotations[..., None])[..., 0]
        span = 1
        while span < self.n_bones:
            posed[..., span:, :] = quat.multiply(posed[..., :-span, :], posed[..., span:, :])
            span *= 2
        parents = np.empty(posed.shape)
        parents[..., 0, :] = quat.IDENTITY
        parents[..., 1:, :] = posed[..., :-1, :]
        return (parents if all_identity else (after_rest @ parents[..., None])[..., 0]), posed

    def random_poses(self, rng: np.random.Generator, count: int) -> Array:
        """(count, n, 4) random pose rotations inside every joint's limits. They depend on the
        generator's state and ``count`` alone, and a solve's restart rounds draw the same ones
        whenever they start from the same seed (every Live update of a chain that misses): a few
        rows drawn before are answered from memory, the generator left where drawing them leaves
        it (drawing takes ~0.1 ms a joint, the rejection sampling of windows)."""
        key = _draw_key(rng, count)
        if key is not None:
            kept = self._draws.get(key)
            if kept is not None:
                poses, after = kept
                rng.bit_generator.state = after
                return poses.copy()
        poses = np.stack([limit.sample(rng, count) for limit in self.limits], axis=1)
        if key is not None:
            if len(self._draws) >= DRAWS_KEPT:
                self._draws.clear()
            self._draws[key] = (poses.copy(), rng.bit_generator.state)
        return poses

    @cached_property
    def _draws(self) -> dict:
        """``random_poses``'s draws kept: (count, generator state) -> (poses, state after)."""
        return {}

    def centre_pose(self) -> Array:
        """(n, 4) the pose in the middle of every joint's limits (rest where a joint is free)."""
        return self._centre_pose.copy()

    @cached_property
    def _centre_pose(self) -> Array:
        """``centre_pose``, formed once: every shot and Per Frame solve starts from it."""
        return np.stack([limit.centre for limit in self.limits])

    def rest_pose(self, batch: int | None = None) -> Array:
        """Identity pose rotations, (n, 4) or (batch, n, 4)."""
        shape = (self.n_bones, 4) if batch is None else (batch, self.n_bones, 4)
        return np.broadcast_to(quat.IDENTITY, shape).copy()


# ``Chain.random_poses`` keeps draws of this many rows at most (a restart round's candidates for a
# goal or two), and this many draws per chain.
DRAW_ROWS_KEPT = 32
DRAWS_KEPT = 16


def _draw_key(rng: np.random.Generator, count: int) -> tuple | None:
    """What a draw of ``count`` rows from ``rng`` depends on, for a PCG64 generator (the one
    ``numpy.random.default_rng`` makes) and a few rows; else None (not kept)."""
    if count > DRAW_ROWS_KEPT:
        return None
    state = rng.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        return None
    return (count, state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"])
