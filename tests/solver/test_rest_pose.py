"""Rest frames from head/tail/roll (numpy only; the bpy comparison is in tests/blender)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quat_ik_addon.solver.rig.rest_pose import (
    ChainRestFrames,
    armature_rest_matrices,
    bone_rest_matrices,
    bone_rest_matrix,
    bone_rest_matrix3,
    bone_rest_rotation,
    bone_rest_rotations,
    effector_in_tip_frame,
    matrix_to_quaternion,
    relative_rest,
    relative_rest_matrix,
    spec_rest_frames,
    spec_rest_matrices,
)
from quat_ik_addon.solver.rig.spec import BoneSpec, ChainSpec, RigSpec, load_rig_spec

DATA = Path(__file__).resolve().parent / "data"

# bone.matrix_local rotations printed by bpy 5.0.1 for bones from the origin to `tail`
# with `roll` (radians), rounded to 7 decimals.  Tails are exact in float32.
BLENDER_MATRICES = [
    (
        (0.25, -1, 0.5),
        0.5,
        [[0.9080236, 0.2182179, -0.3575948], [0.0177342, -0.8728715, -0.4876276], [-0.418543, 0.4364358, -0.7964572]],
    ),
    ((0, -1, 0), 1.25, [[-0.3153224, 0.0, -0.9489846], [0.0, -1.0, 0.0], [-0.9489846, 0.0, 0.3153224]]),
    (
        (0.0009765625, -1, 0),
        -0.75,
        [[-0.7316885, 0.0009766, 0.6816385], [-0.0007145, -0.9999995, 0.0006657], [0.6816388, 0.0, 0.7316889]],
    ),
    (
        (0.5, 0.5, -0.25),
        3.0,
        [[-0.7448105, 0.6666668, -0.028511], [0.612955, 0.6666668, -0.4240775], [-0.263711, -0.3333334, -0.905177]],
    ),
    (
        (1.52587890625e-05, -1, 0),
        0.25,
        [[-0.9689124, 5e-07, -0.247404], [5e-07, -1.0, -3.8e-06], [-0.247404, -3.8e-06, 0.9689124]],
    ),
    ((0, 0, 1), 0.0, [[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]]),
]


def axis_angle_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' rotation formula, written independently of the module under test."""
    k = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * cross + (1 - math.cos(angle)) * cross @ cross


def quaternion_matrix(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


unit_vectors = (
    st.tuples(*[st.floats(-1, 1, allow_nan=False)] * 3)
    .filter(lambda v: np.linalg.norm(v) > 1e-3)
    .map(lambda v: np.array(v) / np.linalg.norm(v))
)
rolls = st.floats(-2 * math.pi, 2 * math.pi, allow_nan=False)


# ----------------------------------------------------------------------------- single bones


@pytest.mark.parametrize(("tail", "roll", "expected"), BLENDER_MATRICES)
def test_matches_matrices_printed_by_blender(tail: tuple, roll: float, expected: list) -> None:
    np.testing.assert_allclose(bone_rest_matrix3((0, 0, 0), tail, roll), expected, atol=2e-6)


def test_bone_along_y_without_roll_is_the_identity() -> None:
    np.testing.assert_allclose(bone_rest_matrix((1, 2, 3), (1, 2.5, 3), 0.0)[:3, :3], np.eye(3))
    np.testing.assert_allclose(bone_rest_rotation((1, 2, 3), (1, 2.5, 3), 0.0), [1, 0, 0, 0])


def test_rest_matrix_carries_the_head_as_translation() -> None:
    matrix = bone_rest_matrix((1.0, -2.0, 0.5), (1.0, -2.0, 1.5), 0.3)
    np.testing.assert_allclose(matrix[:3, 3], [1.0, -2.0, 0.5])
    np.testing.assert_allclose(matrix[3], [0, 0, 0, 1])


@settings(max_examples=300, deadline=None)
@given(unit_vectors, rolls)
def test_rest_rotation_is_a_rotation_taking_y_onto_the_bone(direction: np.ndarray, roll: float) -> None:
    matrix = bone_rest_matrix3((0.5, 0.5, 0.5), 0.5 + 2.0 * direction, roll)
    # Within 1 + y <= 6.1e-3 Blender's two-term series for theta leaves the matrix up to
    # ~5e-5 from orthonormal; we reproduce that rather than "fix" it.
    tolerance = 1e-4 if direction[1] < -0.99 else 1e-12
    np.testing.assert_allclose(matrix @ matrix.T, np.eye(3), atol=tolerance)
    assert np.linalg.det(matrix) == pytest.approx(1.0, abs=2 * tolerance)
    np.testing.assert_allclose(matrix[:, 1], direction, atol=3e-4)  # snapped onto -Y within 2.5e-4


@settings(max_examples=300, deadline=None)
@given(unit_vectors.filter(lambda n: n[1] > -0.99), rolls)
def test_zero_roll_is_the_shortest_arc_and_roll_turns_about_the_bone(direction: np.ndarray, roll: float) -> None:
    axis = np.cross([0, 1, 0], direction)
    angle = math.atan2(np.linalg.norm(axis), direction[1])  # acos loses small angles
    shortest_arc = axis_angle_matrix(axis, angle) if np.linalg.norm(axis) > 0.0 else np.eye(3)
    np.testing.assert_allclose(bone_rest_matrix3((0, 0, 0), direction, 0.0), shortest_arc, atol=1e-9)
    np.testing.assert_allclose(
        bone_rest_matrix3((0, 0, 0), direction, roll), axis_angle_matrix(direction, roll) @ shortest_arc, atol=1e-9
    )


def test_exactly_minus_y_is_the_half_turn_about_z() -> None:
    np.testing.assert_allclose(bone_rest_matrix3((0, 0, 0), (0, -1, 0), 0.0), np.diag([-1.0, -1.0, 1.0]))
    rolled = bone_rest_matrix3((0, 0, 0), (0, -3, 0), 0.7)
    np.testing.assert_allclose(rolled, axis_angle_matrix([0, -1, 0], 0.7) @ np.diag([-1.0, -1.0, 1.0]), atol=1e-12)


def test_within_critical_distance_of_minus_y_snaps_to_the_half_turn() -> None:
    # x^2 + z^2 <= (2.5e-4)^2 and 1 + y <= 6.1e-3: Blender ignores the tiny sideways part.
    np.testing.assert_allclose(bone_rest_matrix3((0, 0, 0), (1e-4, -1, -1e-4), 0.0), np.diag([-1.0, -1.0, 1.0]))


def test_near_minus_y_uses_the_series_for_theta_and_stays_continuous() -> None:
    # Just outside the critical distance theta comes from x and z; the frame must still
    # point along the bone and agree with the exact shortest arc to the series' accuracy.
    for offset in (3e-4, 1e-3, 0.01, 0.05, 0.11):
        direction = np.array([offset, -1.0, -0.5 * offset])
        direction /= np.linalg.norm(direction)
        matrix = bone_rest_matrix3((0, 0, 0), direction, 0.0)
        exact = axis_angle_matrix(np.cross([0, 1, 0], direction), math.acos(direction[1]))
        np.testing.assert_allclose(matrix[:, 1], direction, atol=1e-12)
        np.testing.assert_allclose(matrix, exact, atol=1e-4)


def test_zero_length_bone_is_rejected() -> None:
    with pytest.raises(ValueError, match="zero length"):
        bone_rest_matrix((1, 1, 1), (1, 1, 1), 0.0)


# ----------------------------------------------------------------------------- batches and quaternions


def test_batched_variants_equal_one_by_one() -> None:
    rng = np.random.default_rng(7)
    heads = rng.normal(size=(5, 4, 3))
    tails = heads + rng.normal(size=(5, 4, 3))
    roll = rng.uniform(-3, 3, size=(5, 4))
    matrices = bone_rest_matrices(heads, tails, roll)
    quaternions = bone_rest_rotations(heads, tails, roll)
    assert matrices.shape == (5, 4, 4, 4)
    assert quaternions.shape == (5, 4, 4)
    for i in range(5):
        for j in range(4):
            np.testing.assert_allclose(matrices[i, j], bone_rest_matrix(heads[i, j], tails[i, j], roll[i, j]))
            np.testing.assert_allclose(
                quaternions[i, j], bone_rest_rotation(heads[i, j], tails[i, j], roll[i, j]), atol=1e-15
            )


@settings(max_examples=300, deadline=None)
@given(unit_vectors, st.floats(0, math.pi, allow_nan=False))
def test_matrix_to_quaternion_inverts_quaternion_to_matrix(axis: np.ndarray, angle: float) -> None:
    quaternion = np.array([math.cos(angle / 2), *(math.sin(angle / 2) * axis)])
    recovered = matrix_to_quaternion(quaternion_matrix(quaternion))
    assert recovered[0] >= 0.0
    np.testing.assert_allclose(np.linalg.norm(recovered), 1.0)
    assert min(np.abs(recovered - quaternion).max(), np.abs(recovered + quaternion).max()) < 1e-9


def test_rest_rotation_quaternion_matches_its_matrix() -> None:
    for tail, roll, _ in BLENDER_MATRICES:
        q = bone_rest_rotation((0, 0, 0), tail, roll)
        np.testing.assert_allclose(quaternion_matrix(q), bone_rest_matrix3((0, 0, 0), tail, roll), atol=1e-12)


# ----------------------------------------------------------------------------- parent-relative frames


def test_relative_rest_recovers_the_offset() -> None:
    parent = bone_rest_matrix((0.2, 0.1, 0.0), (0.2, 0.1, 1.0), 0.4)
    offset = np.eye(4)
    offset[:3, :3] = axis_angle_matrix([1, 2, 3], 0.9)
    offset[:3, 3] = [0.1, 1.0, -0.2]
    rotation, head = relative_rest(parent, parent @ offset)
    np.testing.assert_allclose(relative_rest_matrix(parent, parent @ offset), offset, atol=1e-12)
    np.testing.assert_allclose(quaternion_matrix(rotation), offset[:3, :3], atol=1e-12)
    np.testing.assert_allclose(head, [0.1, 1.0, -0.2], atol=1e-12)


def test_connected_child_sits_at_the_parents_length_along_y() -> None:
    parent = bone_rest_matrix((0, 0, 0), (0.3, 0.4, 0.0), 0.2)
    child = bone_rest_matrix((0.3, 0.4, 0.0), (1.0, 0.4, 0.5), -1.0)
    _, head = relative_rest(parent, child)
    np.testing.assert_allclose(head, [0.0, 0.5, 0.0], atol=1e-12)


def _random_hierarchy(seed: int, count: int = 12) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int | None]]:
    rng = np.random.default_rng(seed)
    heads = rng.uniform(-1, 1, (count, 3))
    tails = heads + rng.normal(size=(count, 3))
    roll = rng.uniform(-3, 3, count)
    parents: list[int | None] = [None] + [int(rng.integers(0, i)) for i in range(1, count)]
    return heads, tails, roll, parents


def test_armature_rest_matrices_equal_edit_matrices_away_from_minus_y() -> None:
    heads, tails, roll, parents = _random_hierarchy(3)
    np.testing.assert_allclose(
        armature_rest_matrices(heads, tails, roll, parents), bone_rest_matrices(heads, tails, roll), atol=1e-12
    )


def test_armature_rest_matrices_accept_parents_listed_after_children() -> None:
    heads, tails, roll, parents = _random_hierarchy(4)
    order = np.arange(len(heads))[::-1]
    position = {int(old): new for new, old in enumerate(order)}
    reordered_parents = [None if parents[old] is None else position[parents[old]] for old in order]
    np.testing.assert_allclose(
        armature_rest_matrices(heads[order], tails[order], roll[order], reordered_parents),
        armature_rest_matrices(heads, tails, roll, parents)[order],
        atol=1e-12,
    )


def test_children_of_a_snapped_minus_y_bone_move_as_in_blender() -> None:
    # The parent points 1e-4 off -Y over length 2; Blender's rest frame points exactly
    # along -Y, and it places the child through that frame: the child's head moves by
    # length * (frame's Y - true direction).
    parent_tail = np.array([1e-4, -2.0, 0.0])
    heads = np.array([[0.0, 0.0, 0.0], parent_tail])
    tails = np.array([parent_tail, parent_tail + np.array([1.0, 0.0, 0.0])])
    matrices = armature_rest_matrices(heads, tails, [0.0, 0.0], [None, 0])
    np.testing.assert_allclose(matrices[0][:3, :3], np.diag([-1.0, -1.0, 1.0]))
    length = np.linalg.norm(parent_tail)
    np.testing.assert_allclose(matrices[1][:3, 3], [0.0, -length, 0.0], atol=1e-12)
    # The child's direction is kept relative to the parent's (snapped) frame.
    np.testing.assert_allclose(matrices[1][:3, 1], [1.0, 0.0, 0.0], atol=1e-3)
    assert np.abs(matrices[1] - bone_rest_matrix(heads[1], tails[1], 0.0)).max() > 5e-5


def test_armature_rest_matrices_reject_cycles() -> None:
    heads, tails, roll, _ = _random_hierarchy(5, count=3)
    with pytest.raises(ValueError, match="cycle"):
        armature_rest_matrices(heads, tails, roll, [2, 0, 1])


# ----------------------------------------------------------------------------- rig spec frames


@pytest.fixture
def arm3() -> RigSpec:
    return load_rig_spec(DATA / "arm3.rig.json")


def test_spec_rest_frames_of_the_example_arm(arm3: RigSpec) -> None:
    frames = spec_rest_frames(arm3, arm3.chain_bones("arm"))
    assert isinstance(frames, ChainRestFrames)
    np.testing.assert_allclose(frames.rest_rotations_local, np.tile([1.0, 0, 0, 0], (3, 1)))
    np.testing.assert_allclose(frames.head_offsets_local, [[0, 0, 0], [0, 0.3, 0], [0, 0.25, 0]], atol=1e-15)
    np.testing.assert_allclose(frames.lengths, [0.3, 0.25, 0.1])
    np.testing.assert_allclose(frames.root_parent_armature, np.eye(4))
    rotations, offsets, lengths, root_parent = frames  # unpacks like a tuple
    assert rotations is frames.rest_rotations_local and root_parent is frames.root_parent_armature
    assert offsets.shape == (3, 3) and lengths.shape == (3,)


def test_spec_rest_frames_of_a_sub_chain_start_from_the_parent(arm3: RigSpec) -> None:
    frames = spec_rest_frames(arm3, ["forearm", "hand"])
    np.testing.assert_allclose(frames.root_parent_armature, spec_rest_matrices(arm3)["upper_arm"])
    np.testing.assert_allclose(frames.head_offsets_local[0], [0, 0.3, 0])


def test_spec_rest_frames_need_a_parent_linked_chain(arm3: RigSpec) -> None:
    with pytest.raises(ValueError, match="parent"):
        spec_rest_frames(arm3, ["upper_arm", "hand"])
    with pytest.raises(ValueError):
        spec_rest_frames(arm3, [])


def _bent_spec() -> RigSpec:
    return RigSpec(
        name="bent",
        bones=(
            BoneSpec(name="root", head=(0.1, 0.2, 0.3), tail=(0.5, -0.2, 0.9), roll_deg=35.0),
            BoneSpec(name="a", head=(0.5, -0.2, 0.9), tail=(0.2, -0.9, 1.3), roll_deg=-120.0, parent="root"),
            BoneSpec(name="b", head=(0.3, -1.0, 1.3), tail=(-0.4, -1.2, 0.2), roll_deg=10.0, parent="a"),
            BoneSpec(name="c", head=(-0.4, -1.2, 0.2), tail=(-0.4, -2.2, 0.2), roll_deg=179.0, parent="b"),
        ),
        chains=(ChainSpec(name="limb", tip="c", root="a", effector_offset=(0.0, 0.1, -0.05)),),
    )


def test_forward_kinematics_through_rest_frames_rebuilds_the_rest_pose() -> None:
    """pose_armature = parent_pose_armature @ relative_rest @ rotation: at rest (identity
    rotations) each bone's tail must land where the spec says."""
    spec = _bent_spec()
    names = spec.chain_bones("limb")
    assert names == ("a", "b", "c")
    frames = spec_rest_frames(spec, names)
    current = frames.root_parent_armature
    for k, name in enumerate(names):
        local = np.eye(4)
        local[:3, :3] = quaternion_matrix(frames.rest_rotations_local[k])
        local[:3, 3] = frames.head_offsets_local[k]
        current = current @ local
        bone = spec.bone(name)
        np.testing.assert_allclose(current[:3, 3], bone.head, atol=1e-12)
        np.testing.assert_allclose(current[:3, :3] @ [0, frames.lengths[k], 0] + current[:3, 3], bone.tail, atol=1e-12)
    effector = current[:3, :3] @ effector_in_tip_frame(spec, "limb") + current[:3, 3]
    rest_c = spec_rest_matrices(spec)["c"]
    np.testing.assert_allclose(effector, rest_c[:3, 3] + rest_c[:3, :3] @ [0.0, 1.1, -0.05], atol=1e-12)


def test_spec_rest_matrices_use_degrees_from_the_spec() -> None:
    spec = _bent_spec()
    for bone in spec.bones:
        np.testing.assert_allclose(
            spec_rest_matrices(spec)[bone.name],
            bone_rest_matrix(bone.head, bone.tail, math.radians(bone.roll_deg)),
            atol=1e-12,
        )
