"""The kernel's joint limits (``qik_clamp``, ``qik_violation``) against the numpy reference.

Every limit kind and window shape, both clamp modes, with and without Blow's fast paths, on
thousands of rotations chosen to be hard: far outside, on and a hair off the boundary, the bone
pointing down −Y (where the swing/twist split changes form), w ≈ 0, not unit, zero. The kernel
is compiled into a temporary folder for the test session, so nothing depends on a build step.
"""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.limits.channel_locks import LockedEulerJoint
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow
from quat_ik_addon.solver.native import abi, library
from quat_ik_addon.solver.native.packing import pack_chain, unsupported_reason
from quat_ik_addon.solver.rig.reference_chains import REFERENCE_CHAINS, X_AXIS, Y_AXIS, Z_AXIS, polygon_window_deg
from quat_ik_addon.solver.rig.spec import load_rig_spec

REPO = Path(__file__).resolve().parents[3]
KERNEL = REPO / "quat_ik_addon" / "solver" / "native" / "kernel"
SAMPLE_RIGS = sorted((REPO / "sample_rigs").glob("*.rig.json"))

# Clamped rotations agree to this, compared up to sign (q and −q are one rotation), the largest
# component difference. Away from ties (below) the worst measured over every case here is 9e-15,
# the elliptic Newton and the scanned rim included (both settle below 1e-13 rad).
CLAMP_TOLERANCE = 1e-9
VIOLATION_TOLERANCE = 1e-9  # radians, for the violations and for the kernel's answer's own violation
# A legitimate tie: two allowed answers equally near the input (two windows, or a window's two
# rim points, at the same distance; a range's two ends seen from its opposite point). Each
# implementation keeps the first it meets, and rounding decides which that is.
TIE_TOLERANCE = 1e-9
# Below this angle from d, cos rounds to within a few ulps of 1: the clamps rank candidates by
# d·p, so for a direction this close to its window they cannot tell an edge's foot from the
# corner beside it, and their answers (and violations) may differ by up to this much.
FLAT_SCORE_ANGLE = 3e-8
# Within this of the window's reference direction's opposite, the great arc from the reference
# towards d (boundary mode) is undefined or carries d's rounding magnified: every rim point is
# as good an exit as another.
OPPOSITE_REFERENCE_ANGLE = 1e-6
# Random rotations almost never land on a tie; the probes aim at some (each window's reference
# and its opposite, each range's opposite point, twisted every way).
MAX_TIE_SHARE = 0.02  # of a case's rows


# ------------------------------------------------------------------------------- the kernel


_double_p = ctypes.POINTER(ctypes.c_double)


def native_clamp(kernel: ctypes.CDLL, chain: Chain, rotations: np.ndarray) -> tuple[int, np.ndarray]:
    clamped = np.array(rotations, dtype=np.float64, order="C")
    status = kernel.qik_clamp(pack_chain(chain).pointer, len(clamped), clamped.ctypes.data_as(_double_p))
    return status, clamped


def native_violation(kernel: ctypes.CDLL, chain: Chain, rotations: np.ndarray) -> tuple[int, np.ndarray]:
    rotations = np.ascontiguousarray(rotations, dtype=np.float64)
    violation = np.full(rotations.shape[:-1], -1.0)
    pointers = rotations.ctypes.data_as(_double_p), violation.ctypes.data_as(_double_p)
    return kernel.qik_violation(pack_chain(chain).pointer, len(rotations), *pointers), violation


# ------------------------------------------------------------------------------- the limits


def _degrees(low: float, high: float) -> AngleRange:
    return AngleRange(np.radians(low), np.radians(high))


def _unit(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


TILTED = _unit([0.5, 0.8, -0.3])
TILTED_X = _unit(np.cross(TILTED, Z_AXIS))
TILTED_Z = np.cross(TILTED_X, TILTED)

QUAD = [(-40, -30), (50, -30), (60, 40), (-30, 50)]
WINDOWS = {
    "cone_small": ConeWindow(Y_AXIS, np.radians(5)),
    "cone_90": ConeWindow(TILTED, np.pi / 2),
    "cone_wide": ConeWindow(-Z_AXIS, np.radians(130)),
    "cone_180": ConeWindow(X_AXIS, np.pi),
    "ellipse": EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (1.0, 0.3)),
    "ellipse_tilted": EllipticConeWindow(TILTED, TILTED_X, TILTED_Z, (np.radians(50), np.radians(35))),
    "ellipse_wide": EllipticConeWindow(Y_AXIS, Z_AXIS, X_AXIS, (np.radians(85), np.radians(70))),
    "ellipse_narrow": EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (np.radians(2), np.radians(60))),
    "polygon_quad": polygon_window_deg(QUAD),
    "polygon_quad_clockwise": polygon_window_deg(QUAD[::-1]),
    "polygon_triangle": polygon_window_deg([(-30, -20), (40, -25), (5, 45)], center=TILTED),
    "polygon_sliver": polygon_window_deg([(-60, -0.5), (60, -0.4), (0, 0.3)]),
    "polygon_off_centre": polygon_window_deg([(20, 20), (50, 20), (40, 50)]),
    "polygon_many_corners": PolygonWindow(
        -Y_AXIS,
        Z_AXIS,
        X_AXIS,
        np.stack(
            [1.2 * np.cos(np.linspace(0, 2 * np.pi, 37)[:-1]), 0.6 * np.sin(np.linspace(0, 2 * np.pi, 37)[:-1])], 1
        ),
    ),
    "polygon_wide": PolygonWindow(
        Z_AXIS, X_AXIS, Y_AXIS, np.tan(np.radians([(-80, -80), (85, -75), (80, 80), (-75, 85)]))
    ),
}

BALL_SHAPES = {
    **{name: ((window,), None, None) for name, window in WINDOWS.items()},
    "union_opposite_cones": ((ConeWindow(Y_AXIS, 0.5), ConeWindow(-Y_AXIS, 0.5)), _degrees(-10, 10), None),
    "union_equal_cones": ((ConeWindow(X_AXIS, 0.4), ConeWindow(Z_AXIS, 0.4)), None, None),
    "union_mixed": ((WINDOWS["cone_small"], WINDOWS["ellipse_tilted"], WINDOWS["polygon_off_centre"]), None, None),
    "union_ellipse_polygon": ((WINDOWS["ellipse_wide"], WINDOWS["polygon_many_corners"]), _degrees(-40, 60), None),
    "twist_only": ((), _degrees(-20, 35), None),
    "twist_not_holding_zero": ((), _degrees(100, 170), None),
    "twist_through_180": ((WINDOWS["cone_90"],), _degrees(-215, -160), None),
    "twist_and_polygon": ((WINDOWS["polygon_quad"],), AngleRange(-1.0, 1.0), None),
    "twist_full_circle": ((WINDOWS["ellipse"],), AngleRange(-np.pi, np.pi), None),
    "twist_reference": ((WINDOWS["polygon_triangle"],), AngleRange(-0.5, 0.8), _unit([0.8, 0.3, -0.2, 0.4])),
    "twist_reference_only": ((), _degrees(150, 200), _unit([0.3, -0.6, 0.2, 0.7])),
    "free_swing_and_twist": ((), None, None),
}

HINGES = {
    "hinge": HingeJoint(X_AXIS, _degrees(-30, 70)),
    "hinge_not_holding_zero": HingeJoint(Z_AXIS, _degrees(0.5, 170)),
    "hinge_through_180": HingeJoint(_unit([1.0, 0.2, -0.3]), _degrees(140, 235)),
    "hinge_through_minus_180": HingeJoint(Y_AXIS, _degrees(-215, -160)),
    "hinge_unlimited": HingeJoint(_unit([0.3, -0.4, 0.8])),
    "hinge_full_circle": HingeJoint(X_AXIS, AngleRange(-np.pi, np.pi)),
    "hinge_stiff": HingeJoint(X_AXIS, _degrees(-90, 10), stiffness=0.6),
}

LIMITS = {
    "free": FreeJoint(),
    "free_stiff": FreeJoint(stiffness=0.4),
    "fixed": FixedJoint(),
    **HINGES,
    **{
        f"{name}-{mode}{'' if fast else '-no_fast_paths'}": BallJoint(
            windows, twist, mode, stiffness=0.25 if fast else 0.0, use_fast_paths=fast, twist_reference=reference
        )
        for name, (windows, twist, reference) in BALL_SHAPES.items()
        for mode in ("closest", "boundary")
        for fast in (True, False)
    },
}


def one_bone_chain(limit) -> Chain:
    return Chain(("bone",), [quat.IDENTITY], [np.zeros(3)], [1.0], (limit,))


# ------------------------------------------------------------------------------- the probes


def _tiny_turns(rng: np.random.Generator, count: int) -> np.ndarray:
    """Rotations by 1e-16 ... 1e-8 rad about random axes: a hair off where they are applied."""
    axes = rng.normal(size=(count, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    return quat.from_rotation_vector(axes * 10.0 ** rng.uniform(-16, -8, size=(count, 1)))


def _special_angles(angle_range: AngleRange | None) -> np.ndarray:
    """A range's ends, its opposite point (where both ends are equally near) and ±π, exactly
    and a hair either side."""
    ends = [0.0, np.pi, -np.pi]
    if angle_range is not None:
        opposite = angle_range.minimum + 0.5 * angle_range.width + np.pi
        ends += [angle_range.minimum, angle_range.maximum, opposite]
    return np.array([end + offset for end in ends for offset in (0.0, 1e-15, -1e-15, 1e-10, -1e-10)])


def probe_rotations(limit, seed: int = 20260422) -> np.ndarray:
    """(N, 4) rotations, not all unit: random, scaled, down −Y, w ≈ 0, on and near the limit."""
    rng = np.random.default_rng(seed)
    uniform = quat.normalize(rng.normal(size=(2500, 4)))
    scaled = uniform[:400] * 10.0 ** rng.uniform(-3.0, 3.0, size=(400, 1))
    w_near_zero = rng.normal(size=(300, 4))
    w_near_zero[:, 0] = np.where(np.arange(300) % 3 == 0, 0.0, rng.normal(scale=1e-9, size=300))
    # The bone pointing (nearly) down −Y: the split's degenerate branch and Blow's S flipping.
    below = np.stack((10.0 ** rng.uniform(-17, -2, 300), -np.ones(300), 10.0 ** rng.uniform(-17, -2, 300)), axis=1)
    below *= rng.choice([-1.0, 1.0], size=(300, 3))
    below[::10, 0] = below[::10, 2] = 0.0
    down = quat.from_swing_twist_y(below / np.linalg.norm(below, axis=1, keepdims=True), rng.uniform(-4, 4, 300))
    exact_down = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.6, 0.0, -0.8], [1e-12, 0.6, 1e-12, 0.8]])
    on_limit = limit.clamp(uniform[:1000])
    near_limit = quat.multiply(_tiny_turns(rng, 1000), on_limit)
    inside = limit.sample(rng, 300)
    parts = [uniform, scaled, w_near_zero, down, exact_down, on_limit, near_limit, inside, np.zeros((2, 4))]
    if isinstance(limit, HingeJoint):
        angles = _special_angles(limit.angle_range)
        on_axis = quat.from_axis_angle(limit.axis, angles)
        parts += [on_axis, quat.multiply(on_axis, _tiny_turns(rng, len(angles)))]
    if isinstance(limit, BallJoint):
        angles = _special_angles(limit.twist_range)
        directions = quat.rotate_y_axis(inside[: len(angles)])
        parts += [limit._join(directions, angles), limit._join(np.tile([0.0, -1.0, 0.0], (len(angles), 1)), angles)]
        if limit.windows:
            # Directions exactly on each window's axis and opposite it, twisted every way.
            axes = np.array([sign * window.reference for window in limit.windows for sign in (1.0, -1.0)])
            parts += [limit._join(np.repeat(axes, len(angles), 0), np.tile(angles, len(axes)))]
    return np.concatenate(parts)


# ------------------------------------------------------------------------------- the comparisons


def sign_free_difference(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Largest component difference of two rotations, up to the sign of the quaternion."""
    return np.minimum(np.max(np.abs(p - q), axis=-1), np.max(np.abs(p + q), axis=-1))


def _tied(limit, rotations: np.ndarray, ours: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Rows where the two answers are equally near the input by what the clamp minimises: the
    hinge angle's distance, or a ball's twist distance and the angle between the bone
    directions (which the union and each closest window minimise; see FLAT_SCORE_ANGLE and
    OPPOSITE_REFERENCE_ANGLE for where it cannot)."""
    if isinstance(limit, HingeJoint):
        angle = limit.angle(rotations)
        ours_off, theirs_off = (np.abs(quat.wrap_angle(limit.angle(answer) - angle)) for answer in (ours, theirs))
        return np.abs(ours_off - theirs_off) <= TIE_TOLERANCE
    if not isinstance(limit, BallJoint):
        return np.zeros(len(rotations), dtype=bool)
    direction, twist = limit.split(quat.normalize(rotations))
    (ours_direction, ours_twist), (their_direction, their_twist) = limit.split(ours), limit.split(theirs)
    twist_off = np.abs(quat.wrap_angle(ours_twist - twist)) - np.abs(quat.wrap_angle(their_twist - twist))
    ours_off = quat.direction_angle(ours_direction, direction)
    theirs_off = quat.direction_angle(their_direction, direction)
    swing_tie = (np.abs(ours_off - theirs_off) <= TIE_TOLERANCE) | (
        np.maximum(ours_off, theirs_off) <= FLAT_SCORE_ANGLE
    )
    if limit.clamp_mode == "boundary":
        for window in limit.windows:
            swing_tie |= quat.direction_angle(direction, -window.reference) <= OPPOSITE_REFERENCE_ANGLE
    return swing_tie & (np.abs(twist_off) <= TIE_TOLERANCE)


def assert_clamp_parity(kernel: ctypes.CDLL, chain: Chain, rotations: np.ndarray) -> None:
    """qik_clamp against chain.clamp_to_limits, bone by bone, ties counted and explained."""
    status, ours = native_clamp(kernel, chain, rotations)
    with library.numpy_only():
        theirs = chain.clamp_to_limits(rotations)
        own_violation = chain.limit_violation(ours)
        their_violation = chain.limit_violation(theirs)
    assert status == abi.OK
    assert np.all(np.isfinite(ours))
    # Both answers inside the limits, by numpy's measure.
    for name, violation in (("the kernel's", own_violation), ("numpy's", their_violation)):
        outside = violation > VIOLATION_TOLERANCE
        assert not outside.any(), (
            f"{name} answer is {np.max(violation):.3g} rad outside the limits "
            f"(bones {sorted(set(np.nonzero(outside)[1].tolist()))})"
        )
    difference = sign_free_difference(ours, theirs)
    for bone, limit in enumerate(chain.limits):
        differs = difference[:, bone] > CLAMP_TOLERANCE
        tied = np.zeros_like(differs)
        tied[differs] = _tied(limit, rotations[differs, bone], ours[differs, bone], theirs[differs, bone])
        unexplained = differs & ~tied
        assert not unexplained.any(), (
            f"bone {bone} ({type(limit).__name__}): {np.count_nonzero(unexplained)} of {len(differs)} clamps differ "
            f"by up to {np.max(difference[unexplained, bone]):.3g}, none of them a tie; first input "
            f"{rotations[np.argmax(unexplained), bone].tolist()}"
        )
        assert np.count_nonzero(tied) <= MAX_TIE_SHARE * len(differs), (
            f"bone {bone}: {np.count_nonzero(tied)} ties (two allowed answers equally near), more than the probes aim at"
        )


def assert_violation_parity(kernel: ctypes.CDLL, chain: Chain, rotations: np.ndarray) -> None:
    """qik_violation against chain.limit_violation; below FLAT_SCORE_ANGLE both may differ."""
    status, ours = native_violation(kernel, chain, rotations)
    with library.numpy_only():
        theirs = chain.limit_violation(rotations)
    assert status == abi.OK
    differs = np.abs(ours - theirs) > VIOLATION_TOLERANCE
    unexplained = differs & (np.maximum(ours, theirs) > FLAT_SCORE_ANGLE)
    assert not unexplained.any(), (
        f"{np.count_nonzero(unexplained)} violations differ by up to {np.max(np.abs(ours - theirs)[unexplained]):.3g} "
        f"rad; first input {rotations[np.nonzero(unexplained)[0][0]].tolist()}"
    )
    assert np.count_nonzero(differs) <= MAX_TIE_SHARE * differs.size, (
        f"{np.count_nonzero(differs)} violations under {FLAT_SCORE_ANGLE} rad differ, more than the probes aim at"
    )


# ------------------------------------------------------------------------------- one joint at a time


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_clamp_matches_numpy(kernel, name):
    limit = LIMITS[name]
    assert_clamp_parity(kernel, one_bone_chain(limit), probe_rotations(limit)[:, None])


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_violation_matches_numpy(kernel, name):
    limit = LIMITS[name]
    assert_violation_parity(kernel, one_bone_chain(limit), probe_rotations(limit)[:, None])


# ------------------------------------------------------------------------------- whole chains


def _chain_rotations(chain: Chain, seed: int = 5) -> np.ndarray:
    """(N, n, 4): each bone's probes, rows drawn independently per bone."""
    rng = np.random.default_rng(seed)
    probes = [probe_rotations(limit, seed + bone) for bone, limit in enumerate(chain.limits)]
    count = min(len(p) for p in probes)
    return np.stack([rng.permutation(p)[:count] for p in probes], axis=1)


MIXED_CHAIN = Chain(
    tuple(f"bone_{i}" for i in range(6)),
    quat.normalize(np.random.default_rng(1).normal(size=(6, 4))),
    np.random.default_rng(2).normal(size=(6, 3)),
    np.full(6, 0.5),
    (
        LIMITS["union_mixed-closest"],
        HINGES["hinge_through_180"],
        FixedJoint(),
        LIMITS["twist_reference-boundary"],
        FreeJoint(0.3),
        LIMITS["ellipse_tilted-boundary-no_fast_paths"],
    ),
)
CHAINS = {
    **{
        f"{name}-{mode}": (lambda make=make, mode=mode: make(clamp_mode=mode))
        for name, make in REFERENCE_CHAINS.items()
        for mode in ("closest", "boundary")
    },
    "mixed": lambda: MIXED_CHAIN,
}


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_reference_chains_clamp_and_measure_as_numpy(kernel, name):
    chain = CHAINS[name]()
    rotations = _chain_rotations(chain)
    assert_clamp_parity(kernel, chain, rotations)
    assert_violation_parity(kernel, chain, rotations)


def _sample_rig_chains() -> list[tuple[str, Path, str, str]]:
    return [
        (f"{path.name.removesuffix('.rig.json')}:{spec.name}:{mode}", path, spec.name, mode)
        for path in SAMPLE_RIGS
        for spec in load_rig_spec(path).chains
        for mode in ("closest", "boundary")
    ]


@pytest.mark.parametrize(
    ("path", "chain_name", "mode"),
    [case[1:] for case in _sample_rig_chains()],
    ids=[case[0] for case in _sample_rig_chains()],
)
def test_sample_rig_chains_clamp_and_measure_as_numpy(kernel, path, chain_name, mode):
    chain = Chain.from_rig_spec(load_rig_spec(path), chain_name, clamp_mode=mode)
    assert unsupported_reason(chain) is None
    rotations = _chain_rotations(chain)
    assert_clamp_parity(kernel, chain, rotations)
    assert_violation_parity(kernel, chain, rotations)


# ------------------------------------------------------------------------------- packing and bad input


def test_packing_fills_the_structs_from_the_chain():
    chain = MIXED_CHAIN
    packed = pack_chain(chain)
    assert pack_chain(chain) is packed  # once per chain object
    struct = packed.struct
    assert (struct.n_bones, struct.n_windows, struct.has_shares) == (6, 5, 1)
    assert struct.n_corners == 3 + 3  # the off-centre triangle and the twist-referenced one
    joints = [struct.joints[i] for i in range(6)]
    assert [j.kind for j in joints] == [abi.BALL, abi.HINGE, abi.FIXED, abi.BALL, abi.FREE, abi.BALL]
    assert [j.window_first for j in joints[::3]] == [0, 3]
    np.testing.assert_allclose([j.share for j in joints], chain.step_shares)
    assert joints[4].stiffness == 0.3
    assert joints[1].flags == abi.HAS_RANGE and joints[1].range_min == np.radians(140)
    assert joints[3].flags == abi.HAS_RANGE | abi.BOUNDARY_MODE | abi.FAST_PATHS | abi.TWIST_REFERENCE
    assert joints[5].flags == abi.BOUNDARY_MODE
    ellipse = struct.windows[4]
    assert (ellipse.kind, ellipse.orthonormal) == (abi.ELLIPSE, 1)
    np.testing.assert_array_equal(np.ctypeslib.as_array(struct.step_vectors, (6, 3)), chain._step_vectors)
    assert struct.reach == chain.reach


def test_a_full_circle_range_is_packed_as_no_range():
    packed = pack_chain(one_bone_chain(LIMITS["twist_full_circle-closest"]))
    assert packed.struct.joints[0].flags & abi.HAS_RANGE == 0
    assert pack_chain(one_bone_chain(HINGES["hinge_full_circle"])).struct.joints[0].flags == 0


def test_locked_channels_and_unknown_limits_stay_on_numpy():
    locked = LockedEulerJoint(HINGES["hinge"], "XYZ", (True, False, False), (0.0, 0.0, 0.0))
    chain = Chain(("a", "b"), [quat.IDENTITY] * 2, np.zeros((2, 3)), [1.0, 1.0], (FreeJoint(), locked))
    assert unsupported_reason(chain) == "locked rotation channels (LockedEulerJoint) run on numpy"
    with pytest.raises(ValueError, match="LockedEulerJoint"):
        pack_chain(chain)
    assert unsupported_reason(MIXED_CHAIN) is None


def test_rows_that_are_not_finite_are_left_as_they_came(kernel):
    chain = CHAINS["arm3-closest"]()
    rotations = _chain_rotations(chain)[:4].copy()
    rotations[1, 2, 0] = np.nan
    rotations[3, 0, 3] = np.inf
    status, clamped = native_clamp(kernel, chain, rotations)
    assert status == abi.NOT_FINITE
    np.testing.assert_array_equal(clamped[[1, 3]], rotations[[1, 3]])
    np.testing.assert_allclose(clamped[[0, 2]], chain.clamp_to_limits(rotations[[0, 2]]), atol=CLAMP_TOLERANCE)
    status, violation = native_violation(kernel, chain, rotations)
    assert status == abi.NOT_FINITE
    assert np.isnan(violation[[1, 3]]).all() and np.isfinite(violation[[0, 2]]).all()


def _broken(packed, **changes) -> abi.ChainStruct:
    struct = abi.ChainStruct.from_buffer_copy(packed.struct)
    for name, value in changes.items():
        setattr(struct, name, value)
    return struct


def _with_joint(packed, index: int, **changes) -> abi.ChainStruct:
    """A copy of the struct whose joint ``index`` is changed (ctypes.cast keeps the new joint
    table alive with the struct)."""
    joints = (abi.Joint * packed.struct.n_bones)(*(packed.struct.joints[i] for i in range(packed.struct.n_bones)))
    for name, value in changes.items():
        setattr(joints[index], name, value)
    return _broken(packed, joints=ctypes.cast(joints, ctypes.POINTER(abi.Joint)))


@pytest.mark.parametrize(
    "breakage",
    ["no bones", "negative rows", "bad joint kind", "windows past the table", "negative window", "bad window kind"],
)
def test_bad_input_is_refused_not_read(kernel, breakage):
    packed = pack_chain(MIXED_CHAIN)
    rotations = np.tile(quat.IDENTITY, (2, 6, 1))
    rows = 2
    if breakage == "no bones":
        struct = _broken(packed, n_bones=0)
    elif breakage == "negative rows":
        struct, rows = packed.struct, -1
    elif breakage == "bad joint kind":
        struct = _with_joint(packed, 2, kind=7)
    elif breakage == "windows past the table":
        struct = _with_joint(packed, 5, window_count=2)
    elif breakage == "negative window":
        struct = _with_joint(packed, 0, window_first=-1)
    else:
        windows = (abi.Window * 5)(*(packed.struct.windows[i] for i in range(5)))
        windows[1].kind = 9
        struct = _broken(packed, windows=ctypes.cast(windows, ctypes.POINTER(abi.Window)))
    pointer = ctypes.pointer(struct)
    violation = np.zeros((2, 6))
    assert kernel.qik_clamp(pointer, rows, rotations.ctypes.data_as(_double_p)) == abi.BAD_INPUT
    assert (
        kernel.qik_violation(pointer, rows, rotations.ctypes.data_as(_double_p), violation.ctypes.data_as(_double_p))
        == abi.BAD_INPUT
    )


def test_a_null_chain_is_refused(kernel):
    rotations = np.tile(quat.IDENTITY, (1, 1, 1))
    assert kernel.qik_clamp(None, 1, rotations.ctypes.data_as(_double_p)) == abi.BAD_INPUT
    assert (
        kernel.qik_violation(None, 1, rotations.ctypes.data_as(_double_p), np.zeros(1).ctypes.data_as(_double_p))
        == abi.BAD_INPUT
    )
