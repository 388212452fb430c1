"""A body: a tree of bones with rest frames, joint limits and stretch, and its batched forward
kinematics.

Frames follow ``Chain`` (and Blender's pose evaluation): bone b's posed frame in the body's
root frame is G_b = G_p · L_b · R(q_b) with p its parent (the identity for a root), L_b its
rest frame relative to the parent (a rotation and the head offset, in the parent's rest frame)
and q_b the pose rotation (``pose_bone.rotation_quaternion``, wxyz). A head sits at
head_b = head_p + G_p · S_p · offset_b, where S_p = diag(1, s_p, 1) is the parent's stretch
(``stretch.py``); a root's head is its offset in the root frame, where every goal is given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..chain import LARGEST_SIZE, Chain
from ..entry_checks import finite_array, normalisable_rows
from ..limits.chain_clamp import ChainClamp
from ..limits.contacts import LimitContacts
from ..limits.joints import FreeJoint, JointLimit, group_alike, hinges, parameter_key
from .stretch import Stretch

Array = NDArray[np.float64]

Y_AXIS = np.array([0.0, 1.0, 0.0])
# Two chains' rest data for a bone they share may differ by rounding only (relative).
SAME_REST = 1e-9


@dataclass(frozen=True)
class BodyPose:
    """Forward kinematics of a batch of poses, all in the body's root frame."""

    heads: Array  # (N, B, 3)
    pre_rotations: Array  # (N, B, 4) G_p·L_b: bone b's frame before its own rotation
    rotations: Array  # (N, B, 4) G_b: bone b's posed frame
    stretch: Array  # (N, B) Y scales

    def points(self, bones: NDArray[np.intp], local: Array) -> Array:
        """(N, k, 3) root-frame positions of points given in their bones' frames from the head
        (``local`` (k, 3), unstretched): head + G·S·local."""
        scaled = np.broadcast_to(local, (len(self.heads), *local.shape)).copy()
        scaled[..., 1] *= self.stretch[:, bones]
        return self.heads[:, bones] + quat.rotate(self.rotations[:, bones], scaled)


@dataclass(frozen=True, eq=False)
class Body:
    """Bones listed parents first, ``parents[b]`` the index of b's parent (−1: a root; a body
    may have several). ``rest_rotations`` (B, 4) and ``rest_offsets`` (B, 3) are each bone's
    rest orientation and head in its parent's rest frame (a root's: in the root frame), as in
    ``Chain``; ``lengths`` (B,); one limit per bone; ``stretch`` one ``Stretch`` or None (the
    bone keeps its length) per bone."""

    bone_names: tuple[str, ...]
    parents: tuple[int, ...]
    rest_rotations: Array
    rest_offsets: Array
    lengths: Array
    limits: tuple[JointLimit, ...] = ()
    stretch: tuple[Stretch | None, ...] = ()

    def __post_init__(self) -> None:
        names = tuple(self.bone_names)
        count = len(names)
        if count == 0:
            raise ValueError("a body needs at least one bone")
        if len(set(names)) != count:
            raise ValueError(f"bone names must be unique: {names}")
        parents = tuple(int(p) for p in self.parents)
        if len(parents) != count:
            raise ValueError(f"a body of {count} bones needs {count} parent indices, not {len(parents)}")
        for bone, parent in enumerate(parents):
            if not -1 <= parent < bone:
                raise ValueError(
                    f"bone {names[bone]!r}: its parent index {parent} must name a bone listed before it (or -1)"
                )
        object.__setattr__(self, "bone_names", names)
        object.__setattr__(self, "parents", parents)
        rest = quat.normalize(normalisable_rows(self.rest_rotations, "rest rotations", (count, 4)))
        object.__setattr__(self, "rest_rotations", rest)
        object.__setattr__(self, "rest_offsets", finite_array(self.rest_offsets, (count, 3), "rest offsets"))
        object.__setattr__(self, "lengths", finite_array(self.lengths, (count,), "bone lengths"))
        if np.any(self.lengths <= 0.0):
            raise ValueError(f"bone lengths must be positive: {self.lengths}")
        for name in ("lengths", "rest_offsets"):
            if np.max(np.abs(getattr(self, name))) > LARGEST_SIZE:
                raise ValueError(f"{name.replace('_', ' ')} must lie within ±{LARGEST_SIZE:g}")
        limits = tuple(self.limits) if self.limits else tuple(FreeJoint() for _ in range(count))
        if len(limits) != count:
            raise ValueError(f"a body of {count} bones needs {count} limits, not {len(limits)}")
        object.__setattr__(self, "limits", limits)
        stretch = tuple(self.stretch) if self.stretch else (None,) * count
        if len(stretch) != count:
            raise ValueError(f"a body of {count} bones needs {count} stretch entries (or none), not {len(stretch)}")
        for name, entry in zip(names, stretch, strict=True):
            if entry is not None and not isinstance(entry, Stretch):
                raise ValueError(f"bone {name!r}: stretch must be a Stretch or None, not {entry!r}")
        object.__setattr__(self, "stretch", stretch)

    @classmethod
    def from_chains(
        cls,
        chains: Sequence[Chain],
        *,
        stretch: Mapping[str, Stretch] | None = None,
        attach: Mapping[str, str] | None = None,
    ) -> Body:
        """The chains merged by bone name: a bone several chains hold is one bone of the body.

        Each chain's bones hang one from the next; a chain's first bone hangs from the bone
        another chain gives it, or from ``attach[name]`` (a bone of the body), or else is a
        root. Every chain's root frame must therefore be the body's (armature space), unless
        its first bone is attached. A shared bone must have the same parent, rest frame,
        length and limit in every chain that holds it (ValueError otherwise). ``stretch``:
        bone name → Stretch for the bones that may stretch."""
        if not chains:
            raise ValueError("a body needs at least one chain")
        attach = dict(attach or {})
        stretch = dict(stretch or {})
        parent_of: dict[str, str | None] = {}
        data: dict[str, tuple[Array, Array, float, JointLimit, str]] = {}
        order: list[str] = []
        for index, chain in enumerate(chains):
            if not isinstance(chain, Chain):
                raise ValueError(f"chain {index} is not a Chain: {chain!r}")
            for i, name in enumerate(chain.bone_names):
                said = chain.bone_names[i - 1] if i else attach.get(name)
                if name not in data:
                    order.append(name)
                    data[name] = (
                        chain.rest_rotations[i],
                        chain.rest_offsets[i],
                        float(chain.lengths[i]),
                        chain.limits[i],
                        f"chain {index}",
                    )
                    parent_of[name] = said
                    continue
                rest, offset, length, limit, first = data[name]
                if said is not None and parent_of[name] is not None and said != parent_of[name]:
                    raise ValueError(
                        f"bone {name!r} hangs from {parent_of[name]!r} in {first} but from {said!r} in chain {index}"
                    )
                if said is not None:
                    parent_of[name] = said
                scale = max(float(np.max(np.abs(offset))), length)
                same = (
                    np.allclose(np.abs(np.dot(rest, chain.rest_rotations[i])), 1.0, rtol=0.0, atol=SAME_REST)
                    and np.allclose(offset, chain.rest_offsets[i], rtol=0.0, atol=SAME_REST * scale)
                    and abs(length - chain.lengths[i]) <= SAME_REST * length
                )
                if not same:
                    raise ValueError(f"bone {name!r} has different rest frames or lengths in {first} and chain {index}")
                if parameter_key(limit) != parameter_key(chain.limits[i]):
                    raise ValueError(f"bone {name!r} has different joint limits in {first} and chain {index}")
        unknown = sorted(set(attach.values()) - set(data))
        if unknown:
            raise ValueError(f"chains attached to bones no chain holds: {unknown}")
        unknown = sorted(set(stretch) - set(data))
        if unknown:
            raise ValueError(f"stretch given for bones no chain holds: {unknown}")
        names = _parents_first(order, parent_of)
        index_of = {name: i for i, name in enumerate(names)}
        return cls(
            bone_names=tuple(names),
            parents=tuple(-1 if parent_of[n] is None else index_of[parent_of[n]] for n in names),
            rest_rotations=np.array([data[n][0] for n in names]),
            rest_offsets=np.array([data[n][1] for n in names]),
            lengths=np.array([data[n][2] for n in names]),
            limits=tuple(data[n][3] for n in names),
            stretch=tuple(stretch.get(n) for n in names),
        )

    @property
    def n_bones(self) -> int:
        return len(self.bone_names)

    def index(self, bone: str) -> int:
        """The index of the named bone (ValueError naming it when the body has none)."""
        try:
            return self._index_of[bone]
        except KeyError:
            raise ValueError(f"the body has no bone {bone!r}") from None

    @cached_property
    def _index_of(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.bone_names)}

    @cached_property
    def fingerprint(self) -> bytes:
        """A digest of everything a solve reads from the body (bones, parents, rest frames,
        lengths, limits by value, stretch): equal bodies have equal fingerprints."""
        digest = hashlib.blake2b(repr((self.bone_names, self.parents)).encode(), digest_size=16)
        for array in (self.rest_rotations, self.rest_offsets, self.lengths):
            digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
        digest.update(repr([parameter_key(limit) for limit in self.limits]).encode())
        digest.update(repr(self.stretch).encode())
        return digest.digest()

    @cached_property
    def size(self) -> float:
        """The longest distance from a root's head to a tail along the bones at rest: the scale
        of tolerances, damping and the weight of orientations."""
        to_head = np.zeros(self.n_bones)
        for bone, parent in enumerate(self.parents):
            if parent >= 0:
                to_head[bone] = to_head[parent] + np.linalg.norm(self.rest_offsets[bone])
        return float(np.max(to_head + self.lengths))

    @cached_property
    def carries(self) -> NDArray[np.bool_]:
        """(B, B): ``carries[a, b]`` when turning bone a moves bone b (a is b or an ancestor)."""
        carries = np.eye(self.n_bones, dtype=bool)
        for bone, parent in enumerate(self.parents):
            if parent >= 0:
                carries[:, bone] |= carries[:, parent]
        return carries

    @cached_property
    def child_towards(self) -> NDArray[np.intp]:
        """(B, B): for a a proper ancestor of b, the child of a on the way to b (−1 elsewhere)."""
        towards = np.full((self.n_bones, self.n_bones), -1, dtype=np.intp)
        for bone, parent in enumerate(self.parents):
            if parent >= 0:
                towards[:, bone] = towards[:, parent]
                towards[parent, bone] = bone
        return towards

    @cached_property
    def depth_levels(self) -> tuple[tuple[NDArray[np.intp], NDArray[np.intp]], ...]:
        """(bones, their parents) at each depth, roots first: one batched product per depth."""
        depth = np.zeros(self.n_bones, dtype=int)
        for bone, parent in enumerate(self.parents):
            depth[bone] = 0 if parent < 0 else depth[parent] + 1
        parents = np.array(self.parents, dtype=np.intp)
        return tuple((np.nonzero(depth == d)[0], parents[depth == d]) for d in range(int(depth.max()) + 1))

    @cached_property
    def limit_groups(self) -> tuple[tuple[JointLimit, NDArray[np.intp]], ...]:
        return group_alike(self.limits)

    @cached_property
    def clamp_rotations(self) -> ChainClamp:
        """Every bone's rotation brought inside its limit, (N, B, 4): the limits' own clamps."""
        return ChainClamp(self.limit_groups)

    @cached_property
    def limit_contacts(self) -> LimitContacts:
        return LimitContacts(self.limit_groups, self.n_bones)

    @cached_property
    def hinge_bones(self) -> NDArray[np.intp]:
        return hinges(self.limits)[0]

    @cached_property
    def hinge_axes(self) -> Array:
        """(h, 3) the axes of ``hinge_bones``, each in its bone's rest frame."""
        return hinges(self.limits)[1]

    @cached_property
    def turn_shares(self) -> Array:
        """(B,) the share of a step each joint takes, 1 − stiffness (0 for a fixed joint)."""
        return np.array([0.0 if limit.degrees_of_freedom == 0 else 1.0 - limit.stiffness for limit in self.limits])

    @cached_property
    def stretchy_bones(self) -> NDArray[np.intp]:
        """Bones whose length the solver may change."""
        return np.array([i for i, s in enumerate(self.stretch) if s is not None and s.can_move], dtype=np.intp)

    @cached_property
    def stretch_bounds(self) -> tuple[Array, Array]:
        """(B,) twice: each bone's least and greatest Y scale (1 and 1 where it keeps its length)."""
        low = np.array([1.0 if s is None else s.minimum for s in self.stretch])
        high = np.array([1.0 if s is None else s.maximum for s in self.stretch])
        return low, high

    @cached_property
    def stretch_shares(self) -> Array:
        """(B,) the share of a step each bone's stretch takes, 1 − its stiffness."""
        return np.array([0.0 if s is None else 1.0 - s.stiffness for s in self.stretch])

    def clamp_stretch(self, stretch: ArrayLike) -> Array:
        low, high = self.stretch_bounds
        return np.clip(np.asarray(stretch, dtype=float), low, high)

    def limit_violation(self, rotations: ArrayLike) -> Array:
        """How far (radians) each bone's rotation lies outside its limit, by the limit's own
        measure: (N, B)."""
        rotations = np.asarray(rotations, dtype=float)
        violation = np.empty(rotations.shape[:-1])
        for limit, bones in self.limit_groups:
            violation[..., bones] = limit.violation(rotations[..., bones, :])
        return violation

    def stretch_violation(self, stretch: ArrayLike) -> Array:
        """How far (in scale) each bone's stretch lies outside its range: (N, B)."""
        low, high = self.stretch_bounds
        stretch = np.asarray(stretch, dtype=float)
        return np.maximum(low - stretch, 0.0) + np.maximum(stretch - high, 0.0)

    def forward_kinematics(self, rotations: ArrayLike, stretch: ArrayLike | None = None) -> BodyPose:
        """Heads and frames for pose rotations (N, B, 4) and Y scales (N, B) (None: rest lengths)."""
        rotations = np.asarray(rotations, dtype=float)
        if rotations.ndim == 2:
            rotations = rotations[None]
        count = len(rotations)
        scales = np.ones((count, self.n_bones)) if stretch is None else np.broadcast_to(stretch, (count, self.n_bones))
        heads = np.empty((count, self.n_bones, 3))
        pre = np.empty((count, self.n_bones, 4))
        posed = np.empty((count, self.n_bones, 4))
        for bones, parents in self.depth_levels:
            rest = self.rest_rotations[bones]
            offsets = np.broadcast_to(self.rest_offsets[bones], (count, len(bones), 3))
            if parents[0] < 0:  # the roots, all at depth 0
                pre[:, bones] = rest
                heads[:, bones] = offsets
            else:
                parent_frames = posed[:, parents]
                pre[:, bones] = quat.multiply(parent_frames, rest)
                scaled = offsets.copy()
                scaled[..., 1] *= scales[:, parents]
                heads[:, bones] = heads[:, parents] + quat.rotate(parent_frames, scaled)
            posed[:, bones] = quat.multiply(pre[:, bones], rotations[:, bones])
        return BodyPose(heads, pre, posed, np.array(scales))

    def points_at(self, rotations: ArrayLike, stretch: ArrayLike | None, bones, local: ArrayLike) -> Array:
        """``forward_kinematics(rotations, stretch).points(bones, local)``: (N, k, 3) root-frame
        positions of points given in their bones' frames. One pose (Live, Per Frame) is followed in
        plain floats along those bones and their ancestors only, where numpy's calls cost far more
        than the arithmetic (a 10-bone body: 0.2 ms against 0.03); it agrees to rounding."""
        rotations = np.asarray(rotations, dtype=float)
        if rotations.ndim == 2:
            rotations = rotations[None]
        bones, local = np.asarray(bones, dtype=np.intp), np.asarray(local, dtype=float)
        if len(rotations) != 1:
            return self.forward_kinematics(rotations, stretch).points(bones, local)
        scales = [1.0] * self.n_bones if stretch is None else np.asarray(stretch, dtype=float).reshape(-1).tolist()
        turns = rotations[0].tolist()
        rest_rotations, rest_offsets = self._rest_lists
        heads: dict[int, list[float]] = {}
        frames: dict[int, list[float]] = {}
        for bone in sorted(self._with_ancestors(bones.tolist())):  # (parents come first)
            parent = self.parents[bone]
            if parent < 0:
                pre, head = rest_rotations[bone], rest_offsets[bone]
            else:
                frame = frames[parent]
                pre = quat.multiply_one(frame, rest_rotations[bone])
                x, y, z = rest_offsets[bone]
                offset = quat.rotate_one(frame, (x, y * scales[parent], z))
                head = [a + b for a, b in zip(heads[parent], offset, strict=True)]
            heads[bone], frames[bone] = head, quat.multiply_one(pre, turns[bone])
        points = []
        for bone, (x, y, z) in zip(bones.tolist(), local.tolist(), strict=True):
            offset = quat.rotate_one(frames[bone], (x, y * scales[bone], z))
            points.append([a + b for a, b in zip(heads[bone], offset, strict=True)])
        return np.array(points)[None]

    @cached_property
    def _rest_lists(self) -> tuple[list, list]:
        """``rest_rotations`` and ``rest_offsets`` as plain floats (``points_at``)."""
        return self.rest_rotations.tolist(), self.rest_offsets.tolist()

    def _with_ancestors(self, bones: list[int]) -> set[int]:
        found: set[int] = set()
        for bone in bones:
            while bone >= 0 and bone not in found:
                found.add(bone)
                bone = self.parents[bone]
        return found

    def rest_pose(self, count: int) -> Array:
        """(count, B, 4) identity rotations."""
        return np.broadcast_to(quat.IDENTITY, (count, self.n_bones, 4)).copy()

    def random_poses(self, rng: np.random.Generator, count: int) -> Array:
        """(count, B, 4) random rotations inside every joint's limits (each limit's ``sample``)."""
        return np.stack([limit.sample(rng, count) for limit in self.limits], axis=1)


def _parents_first(names: list[str], parent_of: Mapping[str, str | None]) -> list[str]:
    """The bones ordered so that each comes after its parent (first-seen order otherwise)."""
    placed: list[str] = []
    done: set[str] = set()
    for name in names:
        path = []
        bone: str | None = name
        while bone is not None and bone not in done:
            if bone in path:
                raise ValueError(f"the chains' bones hang from each other in a loop: {path}")
            path.append(bone)
            bone = parent_of[bone]
        for bone in reversed(path):
            placed.append(bone)
            done.add(bone)
    return placed
