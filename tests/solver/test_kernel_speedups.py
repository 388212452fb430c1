"""The fast code paths compute what the plain formulas they replace compute.

Products switch between an outer-product table and per-component formulas by batch size,
clamping runs once per group of alike limits (and a chain's ball joints and hinges share one
split and one angle measurement each), forward kinematics takes a prefix scan for small
batches, and the DLS Jacobian applies each joint's projector by joint kind. Each is checked
here against the straightforward form, up to rounding (or exactly where the claim is exact).
"""

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint, group_alike
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow
from quat_ik_addon.solver.methods import dls
from quat_ik_addon.solver.rig.reference_chains import X_AXIS, Y_AXIS, Z_AXIS, arm3, limited_chain

BATCH_SHAPES = [((4,), (4,)), ((7, 4), (4,)), ((4,), (7, 4)), ((5, 1, 4), (3, 4)), ((6, 3, 4), (6, 3, 4))]


def random_quaternions(rng, shape):
    return quat.normalize(rng.normal(size=(*shape, 4)))


def hamilton_reference(p, q):
    """p·q as the matrix of left multiplication by p applied to q."""
    w, x, y, z = np.moveaxis(p, -1, 0)
    left = np.stack(
        [np.stack(row, axis=-1) for row in ([w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w])], axis=-2
    )
    return np.einsum("...ij,...j->...i", left, q)


@pytest.mark.parametrize(("shape_a", "shape_b"), BATCH_SHAPES)
def test_hamilton_product_by_table_and_by_formula_agree(rng, shape_a, shape_b):
    p, q = rng.normal(size=shape_a), rng.normal(size=shape_b)
    expected = hamilton_reference(p, q)
    np.testing.assert_allclose(quat._HAMILTON.by_table(p, q), expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(quat._HAMILTON.by_formula(p, q), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize(("shape_a", "shape_b"), BATCH_SHAPES)
def test_cross_product_by_table_and_by_formula_agree(rng, shape_a, shape_b):
    a, b = rng.normal(size=(*shape_a[:-1], 3)), rng.normal(size=(*shape_b[:-1], 3))
    expected = np.cross(a, b)
    # Two products per component: both ways round once, whatever order they add in.
    np.testing.assert_array_equal(quat._CROSS.by_table(a, b), expected)
    np.testing.assert_array_equal(quat._CROSS.by_formula(a, b), expected)


@pytest.mark.parametrize("rows", [1, 40, 3000])
def test_rotated_y_axis_is_the_rotation_of_y(rng, rows):
    q = random_quaternions(rng, (rows,))
    np.testing.assert_allclose(quat.rotate_y_axis(q), quat.to_matrix(q)[..., :, 1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(quat._Y_AXIS_IMAGE.by_table(q, q), quat._Y_AXIS_IMAGE.by_formula(q, q), atol=1e-15)


def test_a_row_is_the_same_product_in_a_small_and_a_large_batch(rng):
    """multiply and cross switch method with the batch size; a row's answer does not change."""
    p, q = random_quaternions(rng, (5000,)), random_quaternions(rng, (5000,))
    np.testing.assert_allclose(quat.multiply(p, q)[:3], quat.multiply(p[:3], q[:3]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(quat.cross(p[:, 1:], q[:, 1:])[:3], quat.cross(p[:3, 1:], q[:3, 1:]))


def test_rotate_by_matrices_equals_the_per_component_formula(rng):
    q, v = random_quaternions(rng, (2000,)), rng.normal(size=(2000, 3))
    large = quat.rotate(q, v)  # per component
    small = np.concatenate([quat.rotate(q[i : i + 100], v[i : i + 100]) for i in range(0, 2000, 100)])  # matrices
    np.testing.assert_allclose(small, large, rtol=0, atol=1e-14)
    np.testing.assert_allclose(large, np.einsum("nij,nj->ni", quat.to_matrix(q), v), rtol=0, atol=1e-14)


@pytest.mark.parametrize("q_shape, v_shape", [((4,), (3,)), ((7, 4), (3,)), ((4,), (7, 3)), ((5, 1, 4), (3, 3))])
def test_rotate_broadcasts_like_the_formula(rng, q_shape, v_shape):
    q, v = quat.normalize(rng.normal(size=q_shape)), rng.normal(size=v_shape)
    expected = quat._per_component(quat._rotated, q, v)
    np.testing.assert_allclose(quat.rotate(q, v), expected, rtol=0, atol=1e-14)


def test_rotation_tables_rotate_their_vectors(rng):
    """Forward kinematics rotates each bone's fixed step by the table of ``rotation_tables``."""
    vectors = rng.normal(size=(7, 3))
    q = random_quaternions(rng, (5, 7))
    expected = quat.rotate(q.reshape(-1, 4), np.tile(vectors, (5, 1))).reshape(5, 7, 3)
    np.testing.assert_allclose(quat.rotate_by_tables(q, quat.rotation_tables(vectors)), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("shape", [(3,), (1, 3), (9, 3), (4, 5, 3), (300, 4), (2, 2, 4)])
def test_length_rounds_exactly_like_numpy_norm(rng, shape):
    v = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8, size=shape)
    np.testing.assert_array_equal(quat.length(v), np.linalg.norm(v, axis=-1))


def test_normalize_takes_the_quick_way_only_without_zero_quaternions(rng):
    q = rng.normal(size=(6, 4))
    np.testing.assert_array_equal(quat.normalize(q), q / np.linalg.norm(q, axis=-1, keepdims=True))
    q[[1, 4]] = 0.0
    normalized = quat.normalize(q)
    np.testing.assert_array_equal(normalized[[1, 4]], np.broadcast_to(quat.IDENTITY, (2, 4)))
    np.testing.assert_allclose(np.linalg.norm(normalized, axis=-1), 1.0)


def test_rotation_between_handles_mixed_special_rows_in_one_batch(rng):
    """Antiparallel and zero rows take their branch only when present; mixed batches row by row."""
    a = rng.normal(size=(6, 3))
    b = rng.normal(size=(6, 3))
    b[1] = -2.0 * a[1]  # antiparallel
    a[3] = 0.0  # no direction
    batch = quat.rotation_between(a, b)
    for i in range(6):
        np.testing.assert_allclose(batch[i], quat.rotation_between(a[i], b[i]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(batch[3], quat.IDENTITY)
    assert abs(batch[1, 0]) < 1e-12  # a half turn


def mixed_chain(rng) -> Chain:
    """Every joint kind, alike limits repeated as separate objects, and bent rest frames."""
    polygon = PolygonWindow(Y_AXIS, X_AXIS, Z_AXIS, np.tan(np.radians([(-30, -20), (40, -25), (35, 40), (-25, 30)])))
    elliptic = EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (0.7, 0.4))
    twist = AngleRange(-0.4, 0.5)
    limits = (
        BallJoint((ConeWindow(Y_AXIS, 0.6),), twist),
        HingeJoint(X_AXIS, AngleRange(-1.0, 1.2)),
        BallJoint((ConeWindow(Y_AXIS, 0.6),), twist),
        FixedJoint(),
        BallJoint((EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, (0.7, 0.4)),), twist),
        FreeJoint(),
        BallJoint((elliptic, polygon), None, "boundary"),
        HingeJoint(X_AXIS, AngleRange(-1.0, 1.2)),
        BallJoint((elliptic,), twist),
        HingeJoint(Z_AXIS),
        FixedJoint(),
        BallJoint((polygon,), twist, use_fast_paths=False),
        BallJoint((ConeWindow(Y_AXIS, 0.6),), twist, twist_reference=quat.from_axis_angle(Z_AXIS, 1.2)),
        BallJoint(),  # no limit: only normalises
    )
    n = len(limits)
    rest = random_quaternions(rng, (n,))
    rest[[2, 5, 6]] = quat.IDENTITY
    offsets = rng.normal(size=(n, 3)) * 0.2
    return Chain(tuple(f"b{i}" for i in range(n)), rest, offsets, np.full(n, 0.25), limits, np.array([0.0, 0.1, 0.05]))


def test_alike_limits_share_a_group_and_different_ones_do_not(rng):
    chain = mixed_chain(rng)
    groups = [bones.tolist() for _, bones in group_alike(chain.limits)]
    assert groups == [[0, 2], [1, 7], [3, 10], [4, 8], [5], [6], [9], [11], [12], [13]]
    assert [bones.tolist() for _, bones in group_alike(limited_chain(10).limits)] == [
        [0, 3, 6, 9],
        [1, 7],
        [2, 5, 8],
        [4],
    ]


@pytest.mark.parametrize("make_chain", [arm3, lambda: limited_chain(10), None], ids=["arm3", "chain10", "mixed"])
def test_grouped_clamping_equals_clamping_joint_by_joint(rng, make_chain):
    chain = mixed_chain(rng) if make_chain is None else make_chain()
    rotations = random_quaternions(rng, (200, chain.n_bones))
    rotations[:50] = chain.random_poses(rng, 50)  # some already inside
    one_by_one = np.stack([limit.clamp(rotations[:, i]) for i, limit in enumerate(chain.limits)], axis=1)
    # The elliptic window's Newton iterations run until every row of the call has converged, so
    # a larger call can refine a row a step further: equal up to rounding.
    np.testing.assert_allclose(chain.clamp_to_limits(rotations), one_by_one, rtol=0, atol=1e-12)
    violation = np.stack([limit.violation(rotations[:, i]) for i, limit in enumerate(chain.limits)], axis=1)
    np.testing.assert_allclose(chain.limit_violation(rotations), violation, rtol=0, atol=1e-12)


def forward_kinematics_reference(chain, rotations):
    """The bone-by-bone recurrence of chain.py's docstring, written out plainly."""
    frame = np.broadcast_to(quat.IDENTITY, (*rotations.shape[:-2], 4))
    head = np.zeros((*rotations.shape[:-2], 3))
    heads, pre_rotations, posed = [], [], []
    for i in range(chain.n_bones):
        head = head + quat.rotate(frame, chain.rest_offsets[i])
        pre = quat.multiply(frame, chain.rest_rotations[i])
        frame = quat.multiply(pre, rotations[..., i, :])
        heads.append(head)
        pre_rotations.append(pre)
        posed.append(frame)
    effector = head + quat.rotate(frame, chain.tip_vector)
    return np.stack(heads, axis=-2), np.stack(pre_rotations, axis=-2), np.stack(posed, axis=-2), effector


@pytest.mark.parametrize("count", [None, 1, 7, 300])
def test_forward_kinematics_matches_the_plain_recurrence(rng, count):
    """Small batches go by prefix scan, large ones bone by bone: both match the plain loop."""
    chain = mixed_chain(rng)
    rotations = random_quaternions(rng, (chain.n_bones,) if count is None else (count, chain.n_bones))
    pose = chain.forward_kinematics(rotations)
    heads, pre_rotations, posed, effector = forward_kinematics_reference(chain, rotations)
    for got, expected in ((pose.heads, heads), (pose.pre_rotations, pre_rotations), (pose.rotations, posed)):
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-14)
    np.testing.assert_allclose(pose.effector, effector, rtol=0, atol=1e-14)


def test_prefix_scan_and_bone_by_bone_frames_agree(rng):
    chain = limited_chain(30)
    rotations = random_quaternions(rng, (4, chain.n_bones))
    scanned, bone_by_bone = chain._frames_by_prefix_scan(rotations), chain._frames_bone_by_bone(rotations)
    np.testing.assert_array_equal(scanned[0][:, 0], bone_by_bone[0][:, 0])
    np.testing.assert_allclose(scanned[0], bone_by_bone[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(scanned[1], bone_by_bone[1], rtol=0, atol=1e-14)


def jacobian_reference(chain, goals, pose):
    """J = [−[lever]× P_k ...; counted·P_k ...] with each joint's projector P_k built as a matrix."""
    count, n = pose.heads.shape[:2]
    projectors = []
    for i, limit in enumerate(chain.limits):
        if isinstance(limit, FixedJoint):
            projectors.append(np.zeros((count, 3, 3)))
        elif isinstance(limit, HingeJoint):
            axis = quat.rotate(pose.pre_rotations[:, i], limit.axis)
            projectors.append(axis[:, :, None] * axis[:, None, :])
        else:
            projectors.append(np.broadcast_to(np.eye(3), (count, 3, 3)))
    projectors = np.stack(projectors, axis=1)
    lever = pose.effector[:, None, :] - pose.heads
    moves = np.cross(np.eye(3), lever[..., None, :])  # [.., l, :] = e_l × lever: a turn about e_l
    position = np.einsum("nkli,nklm->nikm", moves, projectors).reshape(count, 3, 3 * n)
    rows = [np.sqrt(goals.position_weight) * position]
    _, counted = dls._orientation_residual(goals, pose.rotations[:, -1])
    orientation = np.einsum("nij,nkjl->nikl", counted, projectors).reshape(count, 3, 3 * n)
    rows.append(np.sqrt(goals.orientation_weight) * chain.reach * orientation)
    return np.concatenate(rows, axis=1), projectors


@pytest.mark.parametrize("goal_kind", ["orientations", "directions"])
def test_jacobian_by_joint_kind_equals_the_projected_skew_form(rng, goal_kind):
    chain = mixed_chain(rng)
    rotations = chain.random_poses(rng, 20)
    pose = chain.forward_kinematics(rotations)
    targets = {"orientations": random_quaternions(rng, (20,)), "directions": rng.normal(size=(20, 3))}
    goals = Goals(rng.normal(size=(20, 3)), orientation_weight=0.3, **{goal_kind: targets[goal_kind]})
    jacobian, _, allowed = dls._Problem(chain, goals).linearise(pose)
    expected, projectors = jacobian_reference(chain, goals, pose)
    np.testing.assert_allclose(jacobian, expected, rtol=0, atol=1e-14)
    turns = rng.normal(size=(20, chain.n_bones, 3))
    np.testing.assert_allclose(
        allowed.of_vectors(turns.copy()), np.einsum("nkij,nkj->nki", projectors, turns), rtol=0, atol=1e-15
    )


def test_one_slope_evaluation_over_both_angle_sets_equals_two(rng):
    """The elliptic window's Newton step evaluates slope and finite-difference partner together."""
    center = (Y_AXIS + 0.1 * X_AXIS) / np.linalg.norm(Y_AXIS + 0.1 * X_AXIS)  # a tilted window
    window = EllipticConeWindow(center, np.cross(center, Z_AXIS), Z_AXIS, (1.1, 0.3))
    d = rng.normal(size=(9, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    angle = rng.uniform(-np.pi, np.pi, 9)
    together = window._rim_slope(np.concatenate((d, d)), np.concatenate((angle, angle + 1e-7)))
    apart = np.concatenate((window._rim_slope(d, angle), window._rim_slope(d, angle + 1e-7)))
    np.testing.assert_array_equal(together, apart)


@pytest.mark.parametrize("half_angles_deg", [(50, 35), (10, 80), (85, 85), (1, 60)])
def test_elliptic_clamp_by_its_secular_equation_equals_the_scan(rng, half_angles_deg):
    """The elliptic window's nearest rim direction from the root of its secular equation (per
    direction in plain Python for a few, batched for many) is the scanned Newton's answer, for
    directions in front of the window plane and behind it."""
    window = EllipticConeWindow(Y_AXIS, X_AXIS, Z_AXIS, tuple(np.radians(half_angles_deg)))
    d = rng.normal(size=(6000, 3))
    d /= np.linalg.norm(d, axis=-1, keepdims=True)
    d = d[~window.contains(d, 0.0)]
    scanned = window.rim(window._scanned_rim_angle(d))
    batched = window.closest(d)
    one_by_one = np.concatenate([window.closest(d[i : i + 3]) for i in range(0, 300, 3)])
    np.testing.assert_allclose(batched, scanned, rtol=0, atol=1e-7)
    np.testing.assert_allclose(np.einsum("ij,ij->i", batched, d), np.einsum("ij,ij->i", scanned, d), rtol=0, atol=1e-14)
    np.testing.assert_allclose(one_by_one, batched[:300], rtol=0, atol=1e-12)
    assert np.all(window.contains(batched, 1e-12))


def test_product_matrices_multiply_from_either_side(rng):
    """Forward kinematics multiplies by each bone's rest rotation as a constant 4×4 matrix."""
    p, q = random_quaternions(rng, (6,)), random_quaternions(rng, (6,))
    before, after = quat.product_matrices(p)
    np.testing.assert_allclose((before @ q[..., None])[..., 0], quat.multiply(p, q), rtol=0, atol=1e-15)
    np.testing.assert_allclose((after @ q[..., None])[..., 0], quat.multiply(q, p), rtol=0, atol=1e-15)
