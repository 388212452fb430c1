"""Which way a clamp turned joints back onto their limits: the axes a DLS step keeps off.

DLS clamps each step to the limits afterwards (projection). A joint the clamp turned back
presses on its limit, and the next steps keep off the pressed directions while steepest
descent still pushes into them (``dls._AllowedTurns.keep_pressed``), so the other joints make
up for it instead of every step being clamped away.

A ball joint can press on two limits at once, its windows (the bone's direction) and its
twist range, and each gets its own axis: the arc that turned the direction back (about
d_turned × d_clamped) and the bone's own axis for its twist. The rotation the clamp made is
neither: the swing/twist split keeps the twist while the direction moves, which turns the
bone about itself by up to a fifth of the swing (measured on a 50° elliptic cone), so one
axis along that rotation blocked some twist the goal needed and let some of the push into the
window through. Such a joint sat a few degrees from poses that met the goal and stopped there
(the human arm of ``bench/busy_paths.py`` along its limits' corners). A hinge presses along
the rotation the clamp made: its own axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from .joints import BallJoint, JointLimit

Array = NDArray[np.float64]

SLOTS = 2  # pressed axes per joint: a ball joint's swing and twist; one for the other kinds
MOVED = 1e-9  # radians: a clamp that turned a joint less than this did not act on that part


class LimitContacts:
    """``axes`` for a chain's (limit, bones) groups (``limits.group_alike``)."""

    def __init__(self, groups: Sequence[tuple[JointLimit, NDArray[np.intp]]], n_bones: int) -> None:
        self.is_ball = np.zeros(n_bones, dtype=bool)
        # Ball joints whose twist a range limits, by how their limit measures twist: one
        # swing/twist split serves all that measure it plainly, the others split their own way.
        self.plain_twist = np.zeros(n_bones, dtype=bool)
        self.own_twist: list[tuple[BallJoint, NDArray[np.bool_]]] = []
        for limit, bones in groups:
            if not isinstance(limit, BallJoint):
                continue
            self.is_ball[bones] = True
            if limit.twist_range is None or limit.twist_range.is_full_circle:
                continue
            if limit.twist_reference is None:
                self.plain_twist[bones] = True
            else:
                own = np.zeros(n_bones, dtype=bool)
                own[bones] = True
                self.own_twist.append((limit, own))

    def axes(self, turned: Array, clamped: Array, rows: NDArray[np.intp], joints: NDArray[np.intp]) -> Array:
        """(k, SLOTS, 3): for the (row, joint) pairs the clamp moved, the unit axes (joint
        frame) about which it turned each part back onto its limit, zero for a part it left."""
        turned, clamped = turned[rows, joints], clamped[rows, joints]
        axes = np.zeros((len(joints), SLOTS, 3))
        ball = self.is_ball[joints]
        if ball.any():
            axes[ball] = self._ball_axes(turned[ball], clamped[ball], joints[ball])
        other = ~ball
        if other.any():
            back = quat.rotation_vector(quat.multiply(clamped[other], quat.conjugate(turned[other])))
            axes[other, 0] = _unit_or_zero(back)
        return axes

    def _ball_axes(self, turned: Array, clamped: Array, joints: NDArray[np.intp]) -> Array:
        axes = np.zeros((len(joints), SLOTS, 3))
        directions, twists = quat.swing_twist_y(np.concatenate((clamped, turned)))  # one call for both
        direction, direction_before = np.split(directions, 2)
        axes[:, 0] = _unit_or_zero(quat.cross(direction_before, direction))
        twist_change = np.where(self.plain_twist[joints], np.subtract(*np.split(twists, 2)), 0.0)
        for limit, own in self.own_twist:
            of_limit = own[joints]
            if of_limit.any():
                after, before = np.split(limit.split(np.concatenate((clamped[of_limit], turned[of_limit])))[1], 2)
                twist_change[of_limit] = after - before
        twist_change = quat.wrap_angle(twist_change)
        # A turn about the bone's own axis changes its twist by as much, whatever the split.
        axes[:, 1] = np.where((np.abs(twist_change) > MOVED)[:, None], np.sign(twist_change)[:, None] * direction, 0.0)
        return axes


def _unit_or_zero(vectors: Array) -> Array:
    size = quat.length(vectors)
    return np.where((size > MOVED)[:, None], vectors / np.maximum(size, 1e-300)[:, None], 0.0)
