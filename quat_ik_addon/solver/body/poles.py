"""Pole targets in a body: which way a chain of the body bends, as ``solver/pole.py`` decides it
for a chain alone.

A ``BodyPole`` names the bones it may turn: the part of a chain below the bones it shares with
other chains of the body (an arm below the shared spine), first bone first. The turn is about
the line from that first bone's head to the part's effector (its last bone's tail), so it is a
change of the first bone alone that leaves the effector, and so every goal of that chain, where
it was; the chains hanging elsewhere do not move. What faces the pole is the part's bend (the
mean of its joints' heads, seen across the line), or with facing "root_x" the first bone's X
axis turned toward its Z axis by the pole angle, as Blender's IK has it (``pole._blender_up``).
The turned pose is then solved again (``request._Answer.face_poles``) and kept where it ranks
no worse and faces its poles better.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import quaternion as quat
from ..pole import POLE_FACINGS, UNDEFINED_BELOW, _across
from .skeleton import Body

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class BodyPole:
    """The bend of ``bones`` (a parent chain of the body, first bone first) faces ``position``
    ((3,), or one row per request row, root frame; a NaN row switches it off there), turned
    further by ``angle`` radians (one, or one per row; right-handed about the line to the
    effector) for facing "bend"; for "root_x", the first bone's X axis turned toward its Z axis
    by ``angle``."""

    bones: Sequence[str]
    position: ArrayLike
    angle: ArrayLike = 0.0
    facing: str = "bend"

    def __post_init__(self) -> None:
        object.__setattr__(self, "bones", tuple(self.bones))
        if not self.bones or not all(isinstance(bone, str) for bone in self.bones):
            raise ValueError(f"a pole's bones must be bone names, first bone first, not {self.bones!r}")
        if self.facing not in POLE_FACINGS:
            raise ValueError(f"a pole's facing must be one of {POLE_FACINGS}, not {self.facing!r}")
        try:
            angle = np.array(self.angle, dtype=float)
        except (TypeError, ValueError):
            angle = np.array(np.nan)
        if isinstance(self.angle, bool) or angle.ndim > 1 or not np.all(np.isfinite(angle)):
            raise ValueError(f"a pole's angle must be finite radians, one or one per row, not {self.angle!r}")
        object.__setattr__(self, "angle", angle)


def chain_pole(
    bones: Sequence[str],
    others: Sequence[Sequence[str]],
    position: ArrayLike,
    angle: ArrayLike = 0.0,
    facing: str = "bend",
) -> BodyPole | None:
    """The pole of a chain of a body (its ``bones``, first bone first, beside the ``others``
    chains' bones): on its bones below the last one it shares, which it may turn without moving
    the others; None when fewer are left than the facing needs (two for a bend, one for "root_x")."""
    shared = {name for other in others for name in other}
    last = max((k for k, name in enumerate(bones) if name in shared), default=-1)
    own = tuple(bones[last + 1 :])
    if len(own) < (1 if facing == "root_x" else 2):
        return None
    return BodyPole(own, position, angle, facing)


def check_pole_bones(body: Body, pole: BodyPole) -> NDArray[np.intp]:
    """The pole's bones as body indices; ValueError unless each hangs from the one before and
    the bend is defined (facing "bend" needs two bones at least)."""
    indices = np.array([body.index(bone) for bone in pole.bones], dtype=np.intp)
    for parent, child in itertools.pairwise(indices):
        if body.parents[child] != parent:
            raise ValueError(
                f"the pole's bones must each hang from the one before: {body.bone_names[child]!r} does not hang "
                f"from {body.bone_names[parent]!r}"
            )
    if pole.facing == "bend" and len(indices) < 2:
        raise ValueError(f"a pole on {pole.bones[0]!r} alone has no bend to turn: give it two bones or more")
    return indices


# A pole with its positions (N, 3) and angles (N,) on the N rows solved.
PoleRows = tuple[BodyPole, Array, Array]


def pole_turns(body: Body, rotations: Array, poles: Sequence[PoleRows]) -> list[tuple[Array, Array]]:
    """Per pole (with its rows for the N rows of ``rotations``): the unit axes (N, 3)
    of the lines from its first bone's head to its effector and the signed turns about them (N,)
    that make its bend face the pole (0 where the pole is off, or the line, bend or pole's
    direction across the line is shorter than UNDEFINED_BELOW of the body's size), as
    ``pole._turn_to_face`` measures it for a chain (atan2 of the bend and the wanted direction)."""
    pose = body.forward_kinematics(rotations)
    scale = UNDEFINED_BELOW * body.size
    turns = []
    for pole, positions, angles in poles:
        bones = check_pole_bones(body, pole)
        first, last = bones[0], bones[-1]
        root = pose.heads[:, first]
        effector = pose.points(np.array([last]), np.array([[0.0, body.lengths[last], 0.0]]))[:, 0]
        line = effector - root
        length = quat.length(line)
        axis = line / np.maximum(length, 1e-300)[:, None]
        if pole.facing == "root_x":
            turn = np.stack((np.cos(angles), np.zeros_like(angles), np.sin(angles)), axis=-1)
            bend = _across(quat.rotate(pose.rotations[:, first], turn), axis)
            bend *= body.size
        else:
            bend = _across(np.mean(pose.heads[:, bones[1:]] - root[:, None], axis=1), axis)
        wanted = _across(positions - root, axis)
        defined = (
            np.isfinite(positions).all(axis=1)
            & (length > scale)
            & (quat.length(bend) > scale)
            & (quat.length(np.nan_to_num(wanted)) > scale)
        )
        cross = np.einsum("ij,ij->i", axis, np.cross(bend, wanted))
        angle = np.arctan2(cross, np.einsum("ij,ij->i", bend, wanted))
        angle = np.where(defined, angle + (angles if pole.facing == "bend" else 0.0), 0.0)
        turns.append((axis, quat.wrap_angle(angle)))
    return turns


def facing_off(body: Body, rotations: Array, poles: Sequence[PoleRows]) -> Array:
    """(N,) how far the rows' bends are from facing their poles, radians summed over the poles."""
    off = np.zeros(len(rotations))
    for _axis, angle in pole_turns(body, rotations, poles):
        off += np.abs(angle)
    return off


def turned_to_poles(body: Body, rotations: Array, poles: Sequence[PoleRows]) -> Array:
    """Poses (N, B, 4) whose poles' first bones are turned about their lines to face the poles
    (a local rotation q of a bone with frame P before it becomes P⁻¹·T·P·q for the turn T), then
    brought inside the limits."""
    turned = np.array(rotations, dtype=float)
    for pole_rows in poles:  # one at a time: a pole's turn may move another's bones
        first = body.index(pole_rows[0].bones[0])
        ((axis, angle),) = pole_turns(body, turned, [pole_rows])
        before = body.forward_kinematics(turned).pre_rotations[:, first]
        turn = quat.from_axis_angle(axis, angle)
        turned[:, first] = quat.multiply(
            quat.conjugate(before), quat.multiply(turn, quat.multiply(before, turned[:, first]))
        )
    return body.clamp_rotations(turned)
