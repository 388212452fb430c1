"""How far a bone may lengthen or shorten along its own +Y axis: a prismatic joint.

A prismatic joint is van den Bergen 2014's slider (a translation along one axis of the link);
here the axis is the bone's own +Y and the joint value is the bone's Y scale ``s`` (1 = rest
length), as Blender's IK stretch writes it. A point (x, y, z) of the bone's frame moves to
(x, s·y, z): the tail, the children's heads and the effectors on the bone move with it, while
the children's frames stay rigid (their rotations are not sheared by the parent's scale).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..entry_checks import number_in, real_number
from ..entry_checks import stiffness as checked_stiffness

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Stretch:
    """Y scale within [``minimum``, ``maximum``] (1.0 = rest length, inside the range).

    ``stiffness`` in [0, 1] is the share of a step the bone refuses (as a joint's stiffness):
    1 never stretches, 0 stretches as readily as a joint turns.
    """

    minimum: float = 1.0
    maximum: float = 1.0
    stiffness: float = 0.0

    def __post_init__(self) -> None:
        minimum = number_in(self.minimum, 1e-3, 1.0, "stretch minimum")
        maximum = real_number(self.maximum, "stretch maximum")
        if not 1.0 <= maximum <= 1e3:
            raise ValueError(f"stretch maximum must be in [1, 1000], not {maximum!r}")
        object.__setattr__(self, "minimum", minimum)
        object.__setattr__(self, "maximum", maximum)
        object.__setattr__(self, "stiffness", checked_stiffness(self.stiffness, "stretch stiffness"))

    @property
    def can_move(self) -> bool:
        """Whether the solver may change this bone's length at all."""
        return self.maximum > self.minimum and self.stiffness < 1.0

    def clamp(self, scale: ArrayLike) -> Array:
        return np.clip(np.asarray(scale, dtype=float), self.minimum, self.maximum)

    def violation(self, scale: ArrayLike) -> Array:
        """How far (in scale) each value lies outside the range."""
        scale = np.asarray(scale, dtype=float)
        return np.maximum(self.minimum - scale, 0.0) + np.maximum(scale - self.maximum, 0.0)
