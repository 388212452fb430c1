"""The tip bone's free twist: kept where it was instead of wherever a solve left it.

When the tip's limit leaves its twist free and nothing the goals measure turns with it (the
effector sits on the bone's axis, no orientation goal, or an aim along the bone), every twist
of the tip is as good an answer as any other. The solver still has to pick one, and a restart
from a random pose picks a random one: the bone spins about itself between frames though its
direction moves smoothly, which a mesh shows as a twist and a bake reports as a pose jump.
These helpers give such a tip the twist of the shortest turn from its start pose (one solve)
or from the frame before (a shot), its direction untouched, so the goals' errors are too. A
tip whose twist is limited to a range but unseen by the goals is just as free inside it: it
gets the same twist, brought back into the range where the turn took it out.
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from numpy.typing import NDArray

from . import quaternion as quat
from .chain import Chain
from .goals import Goals
from .native import kernel_calls

Array = NDArray[np.float64]
# Offsets and aim axes this close to the bone's axis (sine of the angle off it) do not turn
# with the twist; further off, the twist moves the effector and is not free.
ON_AXIS = 1e-9


def _on_bone_axis(vector: Array) -> bool:
    x, y, z = (float(value) for value in vector)  # three floats: math, not numpy calls
    return math.hypot(x, z) <= ON_AXIS * max(math.sqrt(x * x + y * y + z * z), 1.0)


# Per chain object (chains are immutable): whether its tip may twist unseen by position goals.
_tip_may_twist: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def tip_twist_is_unseen(chain: Chain, goals: Goals) -> bool:
    """True when the tip turns about its own axis freely, or within a twist range, and nothing
    the goals measure turns with it."""
    may_twist = _tip_may_twist.get(chain)
    if may_twist is None:
        may_twist = chain.limits[-1].may_twist and _on_bone_axis(chain.effector_offset)
        _tip_may_twist[chain] = may_twist
    if not may_twist:
        return False
    if goals.orientations is not None:
        return False
    return goals.directions is None or _on_bone_axis(goals.aim_axis)


def within_tip_twist_range(chain: Chain, rotations: Array) -> Array:
    """Poses (N, n, 4) whose tip twist is brought into its limit's range where a carry took it
    out, the direction kept (a free or unlimited twist: the poses as they are)."""
    limit = chain.limits[-1]
    if limit.twist_range is None:
        return rotations
    kept = rotations.copy()
    kept[:, -1] = limit.twist_clamped(rotations[:, -1])
    return kept


def carry_tip_twist_within_range(chain: Chain, rotations: Array, starts: Array) -> Array:
    """``carry_tip_twist`` then ``within_tip_twist_range`` (on the native kernel where it runs)."""
    carried = kernel_calls.carry_tip_twist(chain, rotations, starts)
    return within_tip_twist_range(chain, carry_tip_twist(rotations, starts)) if carried is None else carried


def carry_tip_twist(rotations: Array, starts: Array) -> Array:
    """Poses (N, n, 4) whose tip turned from ``starts`` (N, n, 4) along the shortest arc to
    where it points now (Blow 2002's simple rotation), its direction kept exactly."""
    carried = rotations.copy()
    start_tip = starts[:, -1]
    turn = quat.rotation_between(quat.rotate_y_axis(start_tip), quat.rotate_y_axis(rotations[:, -1]))
    carried[:, -1] = quat.canonical(quat.multiply(turn, start_tip))
    return carried


def carry_tip_twist_along(rotations: Array, start: Array) -> Array:
    """A shot's poses (F, n, 4) whose tip turns from ``start`` (n, 4) to each frame's direction
    along the shortest arc from the frame before, so its twist only follows its swing.

    Frame by frame that is q'_f = R(d_{f-1} → d_f)·q'_{f-1}. Written as q'_f = S(d_f)·T_y(τ_f)
    (Blow's swing S from +Y, twist T about the bone) the twist grows by the y-twist of
    S(d_f)⁻¹·R(d_{f-1} → d_f)·S(d_{f-1}), which turns +Y onto itself, so τ is a cumulative
    sum and the whole shot is carried at once.
    """
    if len(rotations) == 0:
        return rotations.copy()
    directions = quat.rotate_y_axis(rotations[:, -1])
    before = np.concatenate((quat.rotate_y_axis(start[-1])[None], directions[:-1]))
    swing_before = quat.rotation_from_y(before)
    swing_now = quat.rotation_from_y(directions)
    step = quat.multiply(
        quat.conjugate(swing_now), quat.multiply(quat.rotation_between(before, directions), swing_before)
    )
    start_twist = quat.swing_twist_y(start[-1])[1]
    twist = start_twist + np.cumsum(quat.twist_about(step, np.array([0.0, 1.0, 0.0])))
    carried = rotations.copy()
    carried[:, -1] = quat.canonical(quat.multiply(swing_now, quat.from_y_angle(twist)))
    return carried
