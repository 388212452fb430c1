"""Reference chains shared by tests, benchmarks and the command-line demo.

``arm3`` is the arm of Blow 2002's Figure 1: a ball shoulder reaching through a polygonal
window with a twist range, a hinge elbow whose range starts at the straight rest pose (the
case where Blender's own IK gets stuck), and a ball wrist in a cone. ``limited_chain(n)`` is
an n-bone tentacle whose joints cycle through cones, hinges and elliptical cones.
"""

from __future__ import annotations

import numpy as np

from .. import quaternion as quat
from ..chain import Chain
from ..limits.joints import AngleRange, BallJoint, FreeJoint, HingeJoint, JointLimit
from ..limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow

X_AXIS = np.array([1.0, 0.0, 0.0])
Y_AXIS = np.array([0.0, 1.0, 0.0])
Z_AXIS = np.array([0.0, 0.0, 1.0])


def _straight_chain(
    lengths: np.ndarray, limits: tuple[JointLimit, ...], names: tuple[str, ...], first_rest=quat.IDENTITY
) -> Chain:
    """Bones laid end to end along the first bone's +Y (``first_rest`` turns it in the root
    frame), each connected to its parent's tail."""
    offsets = np.zeros((len(lengths), 3))
    offsets[1:, 1] = lengths[:-1]
    rest = np.tile(quat.IDENTITY, (len(lengths), 1))
    rest[0] = first_rest
    return Chain(names, rest, offsets, lengths, limits)


def polygon_window_deg(corners_deg: list[tuple[float, float]], center=Y_AXIS) -> PolygonWindow:
    """A window whose corners are swing angles (degrees) toward +X and +Z."""
    return PolygonWindow(center, X_AXIS, Z_AXIS, np.tan(np.radians(np.asarray(corners_deg, dtype=float))))


def _degrees(low: float, high: float) -> AngleRange:
    return AngleRange(np.radians(low), np.radians(high))


def arm3(clamp_mode: str = "closest", use_fast_paths: bool = True) -> Chain:
    shoulder = BallJoint(
        (polygon_window_deg([(-40, -30), (70, -35), (80, 45), (-30, 60), (-50, 20)]),),
        _degrees(-70, 70),
        clamp_mode,
        use_fast_paths=use_fast_paths,
    )
    elbow = HingeJoint(X_AXIS, _degrees(0.0, 150.0))
    wrist = BallJoint(
        (ConeWindow(Y_AXIS, np.radians(60)),), _degrees(-40, 40), clamp_mode, use_fast_paths=use_fast_paths
    )
    return _straight_chain(np.array([0.30, 0.28, 0.10]), (shoulder, elbow, wrist), ("shoulder", "elbow", "wrist"))


def limited_chain(n_bones: int, clamp_mode: str = "closest", use_fast_paths: bool = True) -> Chain:
    limits: list[JointLimit] = []
    for i in range(n_bones):
        if i % 3 == 0:
            limits.append(
                BallJoint(
                    (ConeWindow(Y_AXIS, np.radians(35)),), _degrees(-20, 20), clamp_mode, use_fast_paths=use_fast_paths
                )
            )
        elif i % 3 == 1:
            limits.append(HingeJoint(X_AXIS if i % 2 else Z_AXIS, _degrees(-60, 60)))
        else:
            window = EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (np.radians(40), np.radians(25)))
            limits.append(BallJoint((window,), _degrees(-15, 15), clamp_mode, use_fast_paths=use_fast_paths))
    names = tuple(f"bone_{i:02d}" for i in range(n_bones))
    return _straight_chain(np.full(n_bones, 1.0 / n_bones), tuple(limits), names)


def elliptic_chain(n_bones: int) -> Chain:
    """The Blender benchmark's chain: n bones standing along the root frame's +Z, 3 long in
    all, each a ball joint whose swing lies in an elliptic cone (50° towards X, 35° towards Z
    of the bone) with twist within ±30°: limits Blender's IK can express too."""
    window = EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (np.radians(50), np.radians(35)))
    ball = BallJoint((window,), _degrees(-30, 30))
    names = tuple(f"B{i:02d}" for i in range(n_bones))
    up = quat.from_axis_angle(X_AXIS, np.pi / 2)  # the first bone's +Y up the root's +Z
    return _straight_chain(np.full(n_bones, 3.0 / n_bones), (ball,) * n_bones, names, up)


def free_chain(n_bones: int) -> Chain:
    names = tuple(f"bone_{i:02d}" for i in range(n_bones))
    return _straight_chain(np.full(n_bones, 1.0 / n_bones), tuple(FreeJoint() for _ in range(n_bones)), names)


REFERENCE_CHAINS = {
    "arm3": arm3,
    "chain10": lambda **kw: limited_chain(10, **kw),
    "chain30": lambda **kw: limited_chain(30, **kw),
}
