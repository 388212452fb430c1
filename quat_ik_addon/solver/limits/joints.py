"""Joint limits: small objects with one ``clamp`` each, so a new limit is one new class.

Every limit is measured from the bone's REST pose (the identity pose rotation), never from
the incoming pose, and every ``clamp`` returns a pose inside the limit whatever it is given,
so a start pose outside the limits is brought inside at the first step.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..entry_checks import normalisable, real_number
from ..entry_checks import stiffness as checked_stiffness
from ..methods.alignment import best_hinge_turn, best_turn
from .reach_windows import ReachWindow, ReachWindows

Array = NDArray[np.float64]

CLAMP_MODES = ("closest", "boundary")


@dataclass(frozen=True)
class AngleRange:
    """The angles met turning from ``minimum`` up to ``maximum`` (radians), round the circle.

    Both ends lie in [−2π, 2π] and the range spans at most one turn, so it may run through
    ±π (150°…210° is 60° about the back of the circle) and need not contain zero (a knee
    bending 0.5°…170° is common). Angles outside go to the nearer end measured round the
    circle, which is the in-range angle closest to them.
    """

    minimum: float
    maximum: float

    def __post_init__(self) -> None:
        turn = 2.0 * np.pi + 1e-12
        real_number(self.minimum, "angle range minimum")
        real_number(self.maximum, "angle range maximum")
        if not (-turn <= self.minimum <= self.maximum <= turn and self.maximum - self.minimum <= turn):
            raise ValueError(
                f"angle range [{self.minimum}, {self.maximum}] must satisfy -2pi <= min <= max <= 2pi "
                "and span at most one turn"
            )

    @property
    def is_full_circle(self) -> bool:
        return self.width >= 2.0 * np.pi - 1e-12

    @property
    def width(self) -> float:
        return self.maximum - self.minimum

    @property
    def middle(self) -> float:
        """The angle half way through the range, in (−π, π]."""
        return float(quat.wrap_angle(0.5 * (self.minimum + self.maximum)))

    def _past_minimum(self, angle: Array) -> Array:
        """How far round the circle from ``minimum`` each angle lies, in [0, 2π)."""
        return np.mod(angle - self.minimum, 2.0 * np.pi)

    def contains(self, angle: ArrayLike, tolerance: float = 1e-12) -> NDArray[np.bool_]:
        angle = np.asarray(angle, dtype=float)
        if self.is_full_circle:
            return np.ones(angle.shape, dtype=bool)
        past = self._past_minimum(angle)
        return (past <= self.width + tolerance) | (past >= 2.0 * np.pi - tolerance)

    def clamp(self, angle: ArrayLike) -> Array:
        angle = quat.wrap_angle(angle)
        if self.is_full_circle:
            return angle
        past = self._past_minimum(angle)
        inside = past <= self.width
        if inside.all():
            return angle
        # Outside, the angle is (past - width) beyond the maximum and (2π - past) short of the minimum.
        end = np.where(2.0 * np.pi - past <= past - self.width, self.minimum, self.maximum)
        return np.where(inside, angle, quat.wrap_angle(end))

    def sample(self, rng: np.random.Generator, count: int) -> Array:
        """Uniformly random angles inside the range, in (−π, π]."""
        if self.is_full_circle:
            return rng.uniform(-np.pi, np.pi, count)
        return quat.wrap_angle(rng.uniform(self.minimum, self.maximum, count))

    def distance_outside(self, angle: ArrayLike) -> Array:
        angle = quat.wrap_angle(angle)
        return np.abs(quat.wrap_angle(self.clamp(angle) - angle))


class _StepShare:
    """``step_share`` from the joint's ``stiffness``."""

    @property
    def step_share(self) -> float:
        """The share of a solver step the joint takes, 1 - stiffness (Zhong 2000's damping)."""
        return 1.0 - min(max(self.stiffness, 0.0), 1.0)


@dataclass(frozen=True)
class FreeJoint(_StepShare):
    """Any rotation."""

    stiffness: float = 0.0
    degrees_of_freedom: ClassVar[int] = 3
    hinge_axis: ClassVar[None] = None
    twist_range: ClassVar[None] = None
    may_twist: ClassVar[bool] = True
    centre: ClassVar[Array] = quat.IDENTITY

    def __post_init__(self) -> None:
        checked_stiffness(self.stiffness)

    def clamp(self, q: Array) -> Array:
        return quat.normalize(q)

    def violation(self, q: Array) -> Array:
        return np.zeros(np.shape(q)[:-1])

    def step_towards(self, q: Array, now: Array, wanted: Array, weights: Array) -> Array:
        return self.clamp(_turn_step(q, now, wanted, weights, self.stiffness))

    def sample(self, rng: np.random.Generator, count: int) -> Array:
        """Uniformly random rotations (normalised 4D Gaussians are uniform on SO(3))."""
        return quat.normalize(rng.normal(size=(count, 4)))


@dataclass(frozen=True)
class FixedJoint:
    """No rotation: the bone stays at its rest orientation."""

    stiffness: float = 1.0
    degrees_of_freedom: ClassVar[int] = 0
    hinge_axis: ClassVar[None] = None
    twist_range: ClassVar[None] = None
    may_twist: ClassVar[bool] = False
    centre: ClassVar[Array] = quat.IDENTITY
    # A step's share does not matter to a joint its clamp holds at rest: counted whole, so a chain
    # without stiff joints keeps its fast path (``Chain.step_shares``).
    step_share: ClassVar[float] = 1.0

    def __post_init__(self) -> None:
        checked_stiffness(self.stiffness)

    def clamp(self, q: Array) -> Array:
        return np.broadcast_to(quat.IDENTITY, np.shape(q)).copy()

    def violation(self, q: Array) -> Array:
        return quat.angle_between(q, quat.IDENTITY)

    def step_towards(self, q: Array, now: Array, wanted: Array, weights: Array) -> Array:
        return self.clamp(q)

    def sample(self, rng: np.random.Generator, count: int) -> Array:
        return np.broadcast_to(quat.IDENTITY, (count, 4)).copy()


@dataclass(frozen=True)
class HingeJoint(_StepShare):
    """Rotation about one axis of the bone's rest frame (elbow, knee), optionally in a range.

    van den Bergen 2014's revolute joint; Zhong 2000's bend joint.
    """

    axis: Array
    angle_range: AngleRange | None = None
    stiffness: float = 0.0
    degrees_of_freedom: ClassVar[int] = 1
    twist_range: ClassVar[None] = None
    may_twist: ClassVar[bool] = False

    @property
    def hinge_axis(self) -> Array:
        return self.axis

    def __post_init__(self) -> None:
        axis = normalisable(self.axis, "hinge axis")
        object.__setattr__(self, "axis", axis / np.linalg.norm(axis))
        if self.angle_range is not None and not isinstance(self.angle_range, AngleRange):
            raise ValueError(f"a hinge's angle range must be an AngleRange or None, not {self.angle_range!r}")
        checked_stiffness(self.stiffness, "hinge stiffness")

    @property
    def centre(self) -> Array:
        """The rotation half way through the range (rest when unlimited)."""
        middle = 0.0 if self.angle_range is None else self.angle_range.middle
        return quat.from_axis_angle(self.axis, middle)

    def angle(self, q: Array) -> Array:
        """Hinge angle of the rotation about the axis nearest q."""
        return quat.twist_about(q, self.axis)

    def clamp_angle(self, angle: ArrayLike) -> Array:
        return quat.wrap_angle(angle) if self.angle_range is None else self.angle_range.clamp(angle)

    def clamp(self, q: Array) -> Array:
        return quat.from_axis_angle(self.axis, self.clamp_angle(self.angle(q)))

    def violation(self, q: Array) -> Array:
        return quat.angle_between(q, self.clamp(q))

    def step_towards(self, q: Array, now: Array, wanted: Array, weights: Array) -> Array:
        """Exact coordinate-descent step for one revolute DoF (van den Bergen 2014): the best
        turn about the axis for the vector pairs, then the range."""
        turn = best_hinge_turn(self.axis, now, wanted, weights)
        return quat.from_axis_angle(self.axis, self.clamp_angle(self.angle(q) + (1.0 - self.stiffness) * turn))

    def sample(self, rng: np.random.Generator, count: int) -> Array:
        angles = rng.uniform(-np.pi, np.pi, count) if self.angle_range is None else self.angle_range.sample(rng, count)
        return quat.from_axis_angle(self.axis, angles)


@dataclass(frozen=True)
class BallJoint(_StepShare):
    """Swing through reach windows and twist about the bone in a range (Blow 2002).

    q = S·T_y(twist) with S the simple rotation from +Y to the bone direction d = q·ŷ. The
    direction is clamped into the union of ``windows`` (none: any direction) with ``clamp_mode``
    "closest" (Blow's nearest allowed direction) or "boundary" (Wilhelms–Van Gelder's wall
    crossing), and the twist into ``twist_range`` (None: free twist).

    ``twist_reference`` (a unit quaternion M) measures the twist of M·q instead of q's: a
    limit written for another rest frame (an anatomical preset on a T-pose rig, ``retarget.py``)
    keeps its twist range exactly, where twist measured from this rest would depend on the
    swing (Codman's paradox). The windows stay in this bone's frame.
    """

    windows: tuple[ReachWindow, ...] = ()
    twist_range: AngleRange | None = None
    clamp_mode: str = "closest"
    stiffness: float = 0.0
    degrees_of_freedom: ClassVar[int] = 3
    hinge_axis: ClassVar[None] = None
    may_twist: ClassVar[bool] = True
    use_fast_paths: bool = True
    twist_reference: Array | None = None

    def __post_init__(self) -> None:
        if self.clamp_mode not in CLAMP_MODES:
            raise ValueError(f"clamp_mode must be one of {CLAMP_MODES}, not {self.clamp_mode!r}")
        object.__setattr__(self, "windows", tuple(self.windows))
        object.__setattr__(self, "_reach", ReachWindows(self.windows) if self.windows else None)
        if self.twist_range is not None and not isinstance(self.twist_range, AngleRange):
            raise ValueError(f"a twist range must be an AngleRange or None, not {self.twist_range!r}")
        checked_stiffness(self.stiffness, "ball joint stiffness")
        if self.twist_reference is not None:
            # (A zero quaternion would silently become the identity.)
            reference = quat.normalize(normalisable(self.twist_reference, "twist reference", size=4))
            object.__setattr__(self, "twist_reference", reference)

    def split(self, q: Array) -> tuple[Array, Array]:
        """The bone direction (this frame) and the twist the range limits (of M·q with a twist
        reference M, else of q)."""
        if self.twist_reference is None:
            return quat.swing_twist_y(q)
        return quat.rotate_y_axis(q), quat.swing_twist_y(quat.multiply(self.twist_reference, q))[1]

    def untwisted(self, direction: Array) -> Array:
        """The rotation pointing the bone along ``direction`` with twist 0 as ``split`` measures it."""
        if self.twist_reference is None:
            return quat.rotation_from_y(direction)
        # M·q = S(M·d) has twist 0, and q·ŷ = Mᵀ·S(M·d)·ŷ = d.
        reference = self.twist_reference
        return quat.multiply(quat.conjugate(reference), quat.rotation_from_y(quat.rotate(reference, direction)))

    def _join(self, direction: Array, twist: Array) -> Array:
        """The rotation with this bone direction and twist (``split``'s inverse)."""
        if self.twist_reference is None:
            return quat.from_swing_twist_y(direction, twist)
        # M·q = S(M·d)·T(twist) (``untwisted``'s reasoning, twisted).
        reference = self.twist_reference
        return quat.multiply(
            quat.conjugate(reference), quat.from_swing_twist_y(quat.rotate(reference, direction), twist)
        )

    @property
    def reach(self) -> ReachWindows | None:
        """The union of the windows, or None for free swing."""
        return self._reach

    @property
    def centre(self) -> Array:
        """Pointing through the first window's middle, twisted half way through the range."""
        direction = np.array([0.0, 1.0, 0.0]) if not self.windows else self.windows[0].reference
        twist = 0.0 if self.twist_range is None else self.twist_range.middle
        return self._join(direction, np.asarray(twist))

    def _inside(self, direction: Array, twist: Array) -> NDArray[np.bool_]:
        """Rows that certainly need no clamping, by the cheapest tests first (Blow's fast paths)."""
        reach = self.reach
        inside = np.ones(direction.shape[:-1], dtype=bool)
        if reach is not None:
            if self.use_fast_paths:
                inside = reach.early_accept(direction)
                undecided = ~inside
                if undecided.any():
                    inside[undecided] = reach.contains(direction[undecided], 0.0)
            else:
                inside = reach.contains(direction, 0.0)
        if self.twist_range is not None and not self.twist_range.is_full_circle:
            inside &= self.twist_range.contains(twist, 0.0)
        return inside

    def clamp(self, q: Array) -> Array:
        q = quat.normalize(q)
        if self.reach is None and self.twist_range is None:
            return q
        # One split serves both the inside tests and the clamp of the rows outside.
        return self.clamp_split(q, *self.split(q))

    def clamp_split(self, q: Array, direction: Array, twist: Array) -> Array:
        """``clamp`` of unit rotations whose ``split`` is known; returns q itself when every
        rotation is inside (a chain splits all its ball joints in one call: ``chain_clamp``)."""
        outside = ~self._inside(direction, twist)
        if not outside.any():
            return q
        direction, twist = direction[outside], twist[outside]
        if self.reach is not None:
            direction = self.reach.clamp(direction, self.clamp_mode)
        if self.twist_range is not None:
            twist = self.twist_range.clamp(twist)
        clamped = q.copy()
        clamped[outside] = self._join(direction, twist)
        return clamped

    def twist_clamped(self, q: Array) -> Array:
        """Unit rotations whose twist is brought into the range, their directions kept exactly."""
        if self.twist_range is None or self.twist_range.is_full_circle:
            return q
        direction, twist = self.split(q)
        outside = ~self.twist_range.contains(twist, 0.0)
        if not outside.any():
            return q
        clamped = q.copy()
        clamped[outside] = self._join(direction[outside], self.twist_range.clamp(twist[outside]))
        return clamped

    def violation(self, q: Array) -> Array:
        """How far outside, in radians: swing angle outside the windows plus twist outside."""
        direction, twist = self.split(quat.normalize(q))
        outside = np.zeros(direction.shape[:-1])
        if self.reach is not None:
            outside = outside + self.reach.angle_outside(direction)
        if self.twist_range is not None:
            outside = outside + self.twist_range.distance_outside(twist)
        return outside

    def step_towards(self, q: Array, now: Array, wanted: Array, weights: Array) -> Array:
        return self.clamp(_turn_step(q, now, wanted, weights, self.stiffness))

    def sample(self, rng: np.random.Generator, count: int, tries: int = 64) -> Array:
        """Random poses inside the limit: directions uniform over the allowed part of the
        sphere, twist uniform over its range. Directions by rejection: round after round, each
        row still outside draws the next direction of the stream, rows in order; after ``tries``
        rounds the rest are clamped in. The stream is drawn and tested in one call and the rounds
        replayed on indices (a 50° × 35° cone keeps about one direction in eight: ~30 rounds of
        numpy calls for a batch of 80 rows otherwise), and the generator is left where the rounds
        leave it."""
        if self.reach is None:
            directions = _uniform_directions(rng, count)
        else:
            directions = self._directions_inside(rng, count, tries)
        twist_range = self.twist_range or AngleRange(-np.pi, np.pi)
        return self._join(directions, twist_range.sample(rng, count))

    def _directions_inside(self, rng: np.random.Generator, count: int, tries: int) -> Array:
        state = rng.bit_generator.state
        drawn = _uniform_directions(rng, 8 * count + 8)
        inside = self.reach.contains(drawn, 0.0).tolist()
        taken = list(range(count))
        pending = [row for row in range(count) if not inside[row]]
        used = count
        for _ in range(tries):
            if not pending:
                break
            if used + len(pending) > len(inside):  # the stream goes on where the buffer ended
                more = _uniform_directions(rng, len(inside))
                drawn = np.concatenate((drawn, more))
                inside += self.reach.contains(more, 0.0).tolist()
            outside = []
            for row in pending:  # plain Python: after the first rounds a round is a few rows
                taken[row] = used
                if not inside[used]:
                    outside.append(row)
                used += 1
            pending = outside
        rng.bit_generator.state = state
        rng.normal(size=(used, 3))  # the generator where the rounds left it
        directions = drawn[taken]
        if pending:  # rows no round placed inside (rare): clamped in
            directions[pending] = self.reach.clamp(directions[pending], "closest")
        return directions


def _uniform_directions(rng: np.random.Generator, count: int) -> Array:
    v = rng.normal(size=(count, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _turn_step(q: Array, now: Array, wanted: Array, weights: Array, stiffness: float) -> Array:
    """CCD's unconstrained step: the best turn of the vector pairs (effector onto target, tip
    axes onto wanted axes), scaled by (1 − stiffness) (Zhong 2000's damping), composed before
    the current pose. Vectors are in the bone's pre-rotation frame, where a turn Δ gives Δ·q.
    """
    turn = best_turn(now, wanted, weights)
    if stiffness > 0.0:
        turn = quat.slerp_from_identity(turn, 1.0 - stiffness)
    return quat.multiply(turn, q)


class JointLimit(Protocol):
    """What every joint limit is and does: code outside the limits asks these, never the class.

    Rotations are pose rotations (w, x, y, z) measured from the bone's rest pose; every method
    takes (..., 4) arrays.
    """

    stiffness: float  # 0-1: how much of each solver step the joint refuses (Zhong 2000)
    degrees_of_freedom: int  # 0 (fixed), 1 (a hinge) or 3
    hinge_axis: Array | None  # the axis of a one-degree joint, in the bone's rest frame
    twist_range: AngleRange | None  # the range of a swing/twist joint's twist about the bone
    may_twist: bool  # the bone may turn about its own axis, freely or within ``twist_range``
    centre: Array  # the rotation in the middle of the limit (rest where unlimited)

    @property
    def step_share(self) -> float:
        """The share of a solver step the joint takes, 1 - stiffness."""

    def clamp(self, q: Array) -> Array:
        """The rotations brought inside the limit (unit quaternions)."""

    def violation(self, q: Array) -> Array:
        """How far (radians) each rotation lies outside the limit; 0 inside."""

    def step_towards(self, q: Array, now: Array, wanted: Array, weights: Array) -> Array:
        """One CCD step: q turned to bring the ``now`` vectors onto ``wanted``, then clamped."""

    def sample(self, rng: np.random.Generator, count: int) -> Array:
        """(count, 4) random rotations inside the limit."""


def hinges(limits: Sequence[JointLimit]) -> tuple[NDArray[np.intp], Array]:
    """The indices of the one-degree joints among ``limits`` and their axes (h, 3), each in its
    bone's rest frame: what a Jacobian needs to give a hinge one column instead of three."""
    bones = np.array([i for i, limit in enumerate(limits) if limit.degrees_of_freedom == 1], dtype=np.intp)
    return bones, np.array([limits[i].hinge_axis for i in bones]).reshape(-1, 3)


def parameter_key(value) -> Hashable:
    """A hashable stand-in for a limit's parameters, compared by value (arrays by their bytes).

    A limit's key is kept on the limit the first time (its parameters never change: frozen,
    set in ``__post_init__`` only): Live and Per Frame build their chain on every update from
    the same cached limits, and keying them again cost a fifth of a frame answered from memory."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        known = getattr(value, "__dict__", {}).get(_KEY)
        if known is None:
            fields = dataclasses.fields(value)
            known = (type(value), *(parameter_key(getattr(value, f.name)) for f in fields if f.init))
            if hasattr(value, "__dict__"):
                object.__setattr__(value, _KEY, known)
        return known
    if isinstance(value, tuple | list):
        return tuple(parameter_key(item) for item in value)
    return value


_KEY = "_parameter_key"
_DIGEST = "_parameter_digest"


def parameter_digest(limit: JointLimit) -> bytes:
    """A digest of ``parameter_key(limit)`` (kept on the limit, like the key)."""
    kept = getattr(limit, "__dict__", None)
    known = None if kept is None else kept.get(_DIGEST)
    if known is None:
        known = hashlib.blake2b(repr(parameter_key(limit)).encode(), digest_size=16).digest()
        if kept is not None:
            object.__setattr__(limit, _DIGEST, known)
    return known


def group_alike(limits: Sequence[JointLimit]) -> tuple[tuple[JointLimit, NDArray[np.intp]], ...]:
    """Joints whose limits have equal parameters, as (limit, joint indices) in order of first
    appearance: equal parameters clamp alike, so one call over all the group's rows serves it
    (an n-bone tentacle of a few limit shapes clamps in a few calls instead of n)."""
    groups: dict[Hashable, tuple[JointLimit, list[int]]] = {}
    keys: dict[int, Hashable] = {}  # one key per distinct object: a shared limit is keyed once
    for index, limit in enumerate(limits):
        if id(limit) not in keys:
            keys[id(limit)] = parameter_key(limit)
        key = keys[id(limit)]
        groups.setdefault(key, (limit, []))[1].append(index)
    return tuple((limit, np.array(indices, dtype=np.intp)) for limit, indices in groups.values())
