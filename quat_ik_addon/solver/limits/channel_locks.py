"""Locked rotation channels as joint limits: wrappers that apply a bone's limit and then its
locks, and the channel values a locked bone is written with.

Blender's rotate tool reads the locks this way (``blender/rig/locks.py`` says which wrapper
each lock setting takes): :class:`LockedEulerJoint` keeps locked Euler angles, exactly;
:class:`LockedComponentsJoint` keeps a rotation whose raw quaternion or axis-angle entries
locked in 4D can keep their values; :class:`HeldChannels` rewrites solved channel values so the
held ones keep theirs and the rotations stay the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import quaternion as quat
from ..euler_angles import EULER_ORDERS, euler_to_quaternion, other_triple, quaternion_to_euler, smallest_euler


class _LockWrapper:
    """What every lock wrapper does with its ``inner`` limit: apply it, then the lock (which
    wins, so a locked value outside the inner limit stays locked)."""

    # The joint limit protocol (``limits.JointLimit``): a locked joint is solved as a general one
    # (no hinge or fixed fast path, no free tip twist), from the rest pose its clamp brings inside.
    degrees_of_freedom = 3
    hinge_axis = None
    twist_range = None
    may_twist = False
    centre = quat.IDENTITY

    def _lock(self, q: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @property
    def stiffness(self) -> float:
        return self.inner.stiffness

    @property
    def step_share(self) -> float:
        return 1.0 - min(max(self.stiffness, 0.0), 1.0)

    def clamp(self, q: np.ndarray) -> np.ndarray:
        return self._lock(self.inner.clamp(q))

    def violation(self, q: np.ndarray) -> np.ndarray:
        return self.inner.violation(q) + quat.angle_between(q, self._lock(q))

    def step_towards(self, q: np.ndarray, *step_args) -> np.ndarray:
        # Whatever the solver's step protocol passes (vector pairs, weights) goes to the inner limit.
        return self._lock(self.inner.step_towards(q, *step_args))

    def sample(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """Random poses for restarts: the inner limit's, locked."""
        return self._lock(self.inner.sample(rng, count))


@dataclass(frozen=True, eq=False)
class LockedEulerJoint(_LockWrapper):
    """A joint limit whose Euler channels in ``locked`` keep ``values`` (radians, by axis).

    ``smallest``: of a rotation's two Euler triples take the one with the smaller sum of
    absolute angles, as Blender's quaternion-to-Euler conversion does (``mat3_normalized_to_eul``),
    which its rotate tool locks for quaternion and axis-angle bones. Else (an Euler bone, whose
    channels are the triple itself) a rotation is allowed when either of its triples has the
    locked values, so a bone posed with its middle angle past ±90° keeps its pose: the lock
    sets them in both triples and keeps the nearer rotation.
    """

    inner: object
    order: str
    locked: tuple[bool, bool, bool]
    values: tuple[float, float, float]
    smallest: bool = False

    def _held(self, euler: np.ndarray) -> np.ndarray:
        for axis in range(3):
            if self.locked[axis]:
                euler[..., axis] = self.values[axis]
        return euler_to_quaternion(euler, self.order)

    def _lock(self, q: np.ndarray) -> np.ndarray:
        if self.smallest:
            return self._held(smallest_euler(q, self.order))
        first = quaternion_to_euler(q, self.order)
        from_first, from_other = self._held(first), self._held(other_triple(first, self.order))
        first_nearer = quat.angle_between(from_first, q) <= quat.angle_between(from_other, q)
        return np.where(first_nearer[..., None], from_first, from_other)


# The locked part of a 4D-locked rotation keeps at least this much along its held direction:
# written out, the raw values are the rotation scaled by up to 1/RAY_FLOOR (Blender's own
# rotate tool scales them without bound).
RAY_FLOOR = 1e-3


@dataclass(frozen=True, eq=False)
class LockedComponentsJoint(_LockWrapper):
    """4D locks: rotations q (either sign) whose ``locked`` components (w, x, y, z) are a
    positive multiple of ``values`` there, i.e. those of some raw quaternion with exactly the
    locked entries, normalised. ``angle``: axis-angle's locked angle, where the rotation is
    cos(θ/2) + sin(θ/2)·â and the locks on x, y, z hold the raw axis's entries (the axis is
    q's vector part up to sign, so the same positive-multiple rule applies to it).

    The lock moves q to the nearest such rotation by projecting the locked part onto its
    ray (onto zero where the locked values are zero) for q and −q, keeping the closer.
    """

    inner: object
    locked: tuple[bool, bool, bool, bool]
    values: tuple[float, float, float, float]
    angle: float | None = None

    @staticmethod
    def _ray(part: np.ndarray, held: np.ndarray, whole: float) -> np.ndarray:
        """Locked entries ``part`` (…, k) of unit vectors moved onto the ray of their ``held``
        values (k,), or onto zero where those are zero (``whole``: the held vector's length;
        the held rotation itself always stays allowed)."""
        length = float(np.linalg.norm(held))
        if length < 1e-12:
            return np.zeros_like(part)
        direction = held / length
        along = np.maximum(part @ direction, min(RAY_FLOOR, length / whole))
        return along[..., None] * direction

    def _candidate(self, p: np.ndarray) -> np.ndarray:
        locked, held = np.array(self.locked), np.asarray(self.values, dtype=float)
        if self.angle is None:
            p = p.copy()
            p[..., locked] = self._ray(p[..., locked], held[locked], float(np.linalg.norm(held)))
            return _unit_or(p, np.eye(4)[int(np.argmin(locked))])
        axis = _unit_or(p[..., 1:], np.array([0.0, 1.0, 0.0]))
        on_axis = locked[1:]
        if on_axis.any():
            axis[..., on_axis] = self._ray(axis[..., on_axis], held[1:][on_axis], float(np.linalg.norm(held[1:])))
            axis = _unit_or(axis, np.eye(3)[int(np.argmin(on_axis))])
        half = 0.5 * self.angle
        return np.concatenate((np.full((*axis.shape[:-1], 1), math.cos(half)), math.sin(half) * axis), axis=-1)

    def _lock(self, q: np.ndarray) -> np.ndarray:
        q = quat.normalize(q)
        plus, minus = self._candidate(q), self._candidate(-q)
        closer = np.abs(np.einsum("...i,...i->...", plus, q)) >= np.abs(np.einsum("...i,...i->...", minus, q))
        return np.where(closer[..., None], plus, minus)


def _unit_or(v: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Rows of ``v`` normalised; rows of (almost) zero length become ``fallback``."""
    length = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(length > 1e-12, v / np.maximum(length, 1e-300), fallback)


@dataclass(frozen=True)
class HeldChannels:
    """Which channels of a bone's rotation property keep their values when it is written, and
    those values: Euler channels that are locked, and in 4D quaternion or axis-angle mode the
    locked raw entries (W first). Quaternion and axis-angle locks that are not 4D hold Euler
    angles, not channels: every channel changes."""

    mode: str
    locked: tuple[bool, ...]
    values: tuple[float, ...]

    def restore(self, values: np.ndarray) -> np.ndarray:
        """(F, k) channel values of solved rotations, rewritten so the held channels keep their
        values exactly and the rotations stay the same."""
        values = np.array(values, dtype=float)
        locked, held = np.array(self.locked), np.asarray(self.values, dtype=float)
        if not locked.any():
            return values
        if self.mode in EULER_ORDERS:
            values = _euler_held(values, self.mode, locked, held)
        elif self.mode == "QUATERNION":
            values = _scaled_to_held(values, locked, held)
        else:
            values = _axis_angle_held(values, locked, held)
        return values


def _euler_held(values: np.ndarray, order: str, locked: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Euler rows (by axis) of solved rotations with the held angles. A rotation has two Euler
    triples (``euler_angles.other_triple``) and the row may be either (the one that continues the
    curve): the one whose locked angles are the held ones, up to whole turns, is kept (the
    solver's lock guarantees one is), its other angles moved by the whole turns that bring
    them nearest the row's own, the locked ones set exactly."""
    other = other_triple(values, order)

    def off(triples: np.ndarray) -> np.ndarray:
        return np.max(np.abs(quat.wrap_angle(triples[:, locked] - held[locked])), axis=1)

    chosen = np.where((off(other) < off(values))[:, None], other, values)
    chosen += 2.0 * np.pi * np.round((values - chosen) / (2.0 * np.pi))
    chosen[:, locked] = held[locked]
    return chosen


def _scaled_to_held(raw: np.ndarray, locked: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Rows of ``raw`` (a rotation each, up to sign and positive scale) scaled so their
    ``locked`` entries equal ``held``'s (their normalised selves are unchanged)."""
    target = held[locked]
    squared = float(target @ target)
    if squared > 1e-24:
        along = raw[:, locked] @ target
        raw = raw * (squared / np.where(np.abs(along) > 1e-300, along, 1e-300))[:, None]
    raw[:, locked] = target
    return raw


def _axis_angle_held(values: np.ndarray, locked: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Axis-angle rows (angle, axis) of solved rotations with the held angle and axis entries:
    the rotation written as (−θ, −axis) where that matches them, whole turns added to the
    angle, the axis scaled."""
    angle, axis = values[:, 0], values[:, 1:]
    if locked[0]:
        # (θ, a) and (−θ, −a) are the same rotation; the locked angle says which is meant.
        flip = np.abs(quat.wrap_angle(-angle - held[0])) < np.abs(quat.wrap_angle(angle - held[0]))
    elif locked[1:].any():
        flip = axis[:, locked[1:]] @ held[1:][locked[1:]] < 0.0
    else:
        flip = np.zeros(len(values), dtype=bool)
    sign = np.where(flip, -1.0, 1.0)
    angle, axis = sign * angle, sign[:, None] * axis
    if locked[0]:
        angle = np.full_like(angle, held[0])  # the same angle to rounding, up to whole turns
    if locked[1:].any():
        axis = _scaled_to_held(axis, locked[1:], held[1:])
    return np.concatenate((angle[:, None], axis), axis=1)
