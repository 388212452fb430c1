"""Bodies shared by the body solver's tests and benchmark.

``upper_body`` is a two-bone spine with two three-bone arms hanging from its top (the case of
a spine shared by both arms); ``legs`` is hips with two legs hanging down (two planted feet);
``random_body`` grows a tree of about ``n_bones`` bones with a given number of branch tips,
its joints drawn from the limit kinds of ``reference_chains``.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..limits.joints import AngleRange, BallJoint, FixedJoint, HingeJoint, JointLimit
from ..limits.reach_windows import ConeWindow, EllipticConeWindow
from .skeleton import Body
from .stretch import Stretch

X_AXIS = np.array([1.0, 0.0, 0.0])
Y_AXIS = np.array([0.0, 1.0, 0.0])
Z_AXIS = np.array([0.0, 0.0, 1.0])


def cone_joint(half_angle_deg: float, twist_deg: float = 30.0) -> BallJoint:
    twist = np.radians(twist_deg)
    return BallJoint((ConeWindow(Y_AXIS, np.radians(half_angle_deg)),), AngleRange(-twist, twist))


def hinge_joint(low_deg: float, high_deg: float, axis=X_AXIS) -> HingeJoint:
    return HingeJoint(np.asarray(axis, dtype=float), AngleRange(np.radians(low_deg), np.radians(high_deg)))


def upper_body(stretchy_arms: bool = False) -> Body:
    """Spine, chest, and per side an upper arm, forearm and hand; the arms' rest points out to
    the sides (+Y turned to ∓X). ``stretchy_arms``: upper arms and forearms stretch 0.8-1.5."""
    left = quat.from_axis_angle(Z_AXIS, np.pi / 2)
    right = quat.from_axis_angle(Z_AXIS, -np.pi / 2)
    identity = quat.IDENTITY
    stretch = Stretch(0.8, 1.5, 0.0) if stretchy_arms else None
    return Body(
        bone_names=("spine", "chest", "upper_arm.L", "forearm.L", "hand.L", "upper_arm.R", "forearm.R", "hand.R"),
        parents=(-1, 0, 1, 2, 3, 1, 5, 6),
        rest_rotations=np.array([identity, identity, left, identity, identity, right, identity, identity]),
        rest_offsets=np.array(
            [
                [0, 0, 0],
                [0, 0.3, 0],
                [-0.12, 0.3, 0],
                [0, 0.3, 0],
                [0, 0.26, 0],
                [0.12, 0.3, 0],
                [0, 0.3, 0],
                [0, 0.26, 0],
            ],
            dtype=float,
        ),
        lengths=np.array([0.3, 0.3, 0.3, 0.26, 0.1, 0.3, 0.26, 0.1]),
        limits=(
            cone_joint(20, 15),
            cone_joint(25, 20),
            cone_joint(80, 60),
            hinge_joint(0, 145),
            cone_joint(50, 40),
            cone_joint(80, 60),
            hinge_joint(0, 145),
            cone_joint(50, 40),
        ),
        stretch=(None, None, stretch, stretch, None, stretch, stretch, None),
    )


def legs() -> Body:
    """Hips pointing up, and per side a thigh and shin hanging down from it and a foot pointing
    forward (+Z); the hips' head at 1 above the root frame's origin."""
    down = quat.from_axis_angle(X_AXIS, np.pi)  # +Y to −Y
    forward = quat.from_axis_angle(X_AXIS, -np.pi / 2)  # the foot's +Y along the shin's −Z: forward
    identity = quat.IDENTITY
    return Body(
        bone_names=("hips", "thigh.L", "shin.L", "foot.L", "thigh.R", "shin.R", "foot.R"),
        parents=(-1, 0, 1, 2, 0, 4, 5),
        rest_rotations=np.array([identity, down, identity, forward, down, identity, forward]),
        rest_offsets=np.array(
            [[0, 1.0, 0], [-0.1, 0, 0], [0, 0.45, 0], [0, 0.45, 0], [0.1, 0, 0], [0, 0.45, 0], [0, 0.45, 0]],
            dtype=float,
        ),
        lengths=np.array([0.2, 0.45, 0.45, 0.15, 0.45, 0.45, 0.15]),
        limits=(
            cone_joint(40, 30),
            cone_joint(70, 40),
            hinge_joint(-150, 0),
            cone_joint(35, 20),
            cone_joint(70, 40),
            hinge_joint(-150, 0),
            cone_joint(35, 20),
        ),
    )


def _random_limit(rng: np.random.Generator) -> JointLimit:
    kind = rng.integers(6)
    if kind <= 1:
        return cone_joint(rng.uniform(20, 70), rng.uniform(10, 60))
    if kind == 2:
        window = EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, np.radians(rng.uniform(15, 60, 2)))
        twist = np.radians(rng.uniform(10, 45))
        return BallJoint((window,), AngleRange(-twist, twist))
    if kind <= 4:
        low = rng.uniform(-120, 0)
        return hinge_joint(low, low + rng.uniform(60, 150), X_AXIS if rng.random() < 0.5 else Z_AXIS)
    return FixedJoint() if rng.random() < 0.3 else cone_joint(45)


def random_body(rng: np.random.Generator, n_tips: int, n_bones: int = 20, stretch_share: float = 0.0) -> Body:
    """A trunk of a few bones and ``n_tips`` branches off it (each from a random trunk bone, so
    several share roots), about ``n_bones`` bones in all; ``stretch_share`` of the bones stretch
    0.7-1.4. Each branch ends in a tip (``tip_bones``)."""
    trunk = max(2, n_bones // (n_tips + 1))
    per_branch = max(1, (n_bones - trunk) // n_tips)
    parents = [-1, *range(trunk - 1)]
    for _ in range(n_tips):
        parent = int(rng.integers(1, trunk)) if trunk > 1 else 0
        for _ in range(per_branch):
            parents.append(parent)
            parent = len(parents) - 1
    count = len(parents)
    rest = quat.normalize(
        np.tile(quat.IDENTITY, (count, 1)) + 0.4 * rng.normal(size=(count, 4)) * (np.arange(count) > 0)[:, None]
    )
    lengths = rng.uniform(0.1, 0.3, count)
    offsets = np.zeros((count, 3))
    for bone, parent in enumerate(parents):
        if parent >= 0:
            offsets[bone] = [rng.normal(0, 0.02), lengths[parent], rng.normal(0, 0.02)]
    limits = tuple(_random_limit(rng) for _ in range(count))
    stretch = tuple(
        Stretch(0.7, 1.4, float(rng.uniform(0.0, 0.5))) if rng.random() < stretch_share else None for _ in range(count)
    )
    return Body(tuple(f"bone_{i:02d}" for i in range(count)), tuple(parents), rest, offsets, lengths, limits, stretch)


def tip_bones(body: Body) -> list[str]:
    """The bones no other bone hangs from, in order."""
    has_child = set(p for p in body.parents if p >= 0)
    return [name for i, name in enumerate(body.bone_names) if i not in has_child]
