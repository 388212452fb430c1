"""Every joint of a chain brought inside its limit in a few numpy calls.

Small batches (a shot's solves one after another, Live updates) pay for each numpy call, not
for each element, and clamping limit shape by shape repeats the same calls per shape: a
normalisation and a swing/twist split for each kind of ball joint, an angle and a rebuild for
each kind of hinge. Here the chain's ball joints share one normalisation and one split, and its
hinges one angle measurement and one rebuild; only the inside tests, and the clamps of the
joints found outside, stay per shape. Each shape's bones sit side by side in the shared arrays,
so a shape works on a view of them. The answers are those of the joints' own ``clamp``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from .joints import BallJoint, HingeJoint, JointLimit

Array = NDArray[np.float64]


def _side_by_side(groups: Sequence[tuple[JointLimit, NDArray[np.intp]]]) -> tuple[NDArray[np.intp], list[slice]]:
    """The groups' bones one group after another, and each group's slice of that order."""
    bones = np.concatenate([group_bones for _, group_bones in groups]) if groups else np.zeros(0, dtype=np.intp)
    ends = np.cumsum([len(group_bones) for _, group_bones in groups], dtype=int)
    return bones, [slice(end - len(group_bones), end) for end, (_, group_bones) in zip(ends, groups, strict=True)]


class ChainClamp:
    """``clamp_to_limits`` for a chain's (limit, bones) groups (``limits.group_alike``)."""

    def __init__(self, groups: Sequence[tuple[JointLimit, NDArray[np.intp]]]) -> None:
        # A ball joint with a twist reference splits differently; one without limits only
        # normalises: both keep their own clamp, as free and fixed joints do.
        balls = [
            (limit, bones)
            for limit, bones in groups
            if isinstance(limit, BallJoint)
            and limit.twist_reference is None
            and (limit.reach is not None or limit.twist_range is not None)
        ]
        hinges = [(limit, bones) for limit, bones in groups if isinstance(limit, HingeJoint)]
        shared = {id(limit) for limit, _ in balls + hinges}
        self.own_clamp = [(limit, bones) for limit, bones in groups if id(limit) not in shared]
        self.ball_bones, ball_slices = _side_by_side(balls)
        self.balls = [(limit, columns) for (limit, _), columns in zip(balls, ball_slices, strict=True)]
        self.hinge_bones, hinge_slices = _side_by_side(hinges)
        self.hinges = [(limit, columns) for (limit, _), columns in zip(hinges, hinge_slices, strict=True)]
        # (h, 3): each hinge bone's axis, in ``hinge_bones`` order.
        self.hinge_axes = np.array([limit.axis for limit, bones in hinges for _ in bones]).reshape(-1, 3)

    def __call__(self, rotations: ArrayLike) -> Array:
        """(..., n, 4) rotations, each inside its bone's limit (a new array)."""
        rotations = np.array(rotations, dtype=float)
        if self.ball_bones.size:
            rotations[..., self.ball_bones, :] = self._clamp_balls(rotations[..., self.ball_bones, :])
        if self.hinge_bones.size:
            # ``HingeJoint.clamp`` for every hinge: the angle about each axis, its range, the rebuild.
            angle = quat.twist_about(rotations[..., self.hinge_bones, :], self.hinge_axes)
            for limit, columns in self.hinges:
                angle[..., columns] = limit.clamp_angle(angle[..., columns])
            rotations[..., self.hinge_bones, :] = quat.from_axis_angle(self.hinge_axes, angle)
        for limit, bones in self.own_clamp:
            rotations[..., bones, :] = limit.clamp(rotations[..., bones, :])
        return rotations

    def _clamp_balls(self, q: Array) -> Array:
        """``BallJoint.clamp`` of the ball bones' rotations (..., b, 4): one split for all."""
        q = quat.normalize(q)
        direction, twist = quat.swing_twist_y(q)
        for limit, columns in self.balls:
            part = q[..., columns, :]
            clamped = limit.clamp_split(part, direction[..., columns, :], twist[..., columns])
            if clamped is not part:
                q[..., columns, :] = clamped
        return q
