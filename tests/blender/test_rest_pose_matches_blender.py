"""Our rest frames against Blender's own ``bone.matrix_local``, in a headless bpy.

bpy keeps global state, so Blender runs in a subprocess: it builds an armature from a
list of random bones (including directions at and near -Y, where Blender special-cases
the rest rotation) and writes back what it made.  We then rebuild every matrix with
``quat_ik_addon.solver.rig.rest_pose`` and compare.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from quat_ik_addon.solver.rig.rest_pose import (
    armature_rest_matrices,
    bone_rest_matrices,
    bone_rest_matrix,
    bone_rest_rotation,
    relative_rest,
    relative_rest_matrix,
    spec_rest_frames,
)
from quat_ik_addon.solver.rig.spec import BoneSpec, RigSpec

pytestmark = pytest.mark.bpy

REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5

BLENDER_SCRIPT = r"""
import json
import sys

import bpy

with open(sys.argv[1], encoding="utf-8") as handle:
    wanted = json.load(handle)

armature = bpy.data.armatures.new("rest_pose_check")
rig = bpy.data.objects.new("rest_pose_check", armature)
bpy.context.scene.collection.objects.link(rig)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.mode_set(mode="EDIT")
edit_bones = {}
for bone in wanted:
    edit_bone = armature.edit_bones.new(bone["name"])
    edit_bone.head = bone["head"]
    edit_bone.tail = bone["tail"]
    edit_bone.roll = bone["roll"]
    edit_bones[bone["name"]] = edit_bone
for bone in wanted:
    if bone["parent"] is not None:
        edit_bones[bone["name"]].parent = edit_bones[bone["parent"]]
        edit_bones[bone["name"]].use_connect = bone["connected"]
# What Blender holds after parenting (float32; connecting moves the head to the parent's tail).
edited = {
    eb.name: {
        "head": list(eb.head),
        "tail": list(eb.tail),
        "roll": eb.roll,
        "connected": eb.use_connect,
        "edit_matrix": [list(row) for row in eb.matrix],
    }
    for eb in armature.edit_bones
}
bpy.ops.object.mode_set(mode="OBJECT")

result = []
for bone in armature.bones:
    entry = dict(edited[bone.name])
    entry["name"] = bone.name
    entry["parent"] = bone.parent.name if bone.parent else None
    entry["matrix_local"] = [list(row) for row in bone.matrix_local]
    if bone.parent:
        relative = bone.parent.matrix_local.inverted() @ bone.matrix_local
        entry["relative"] = [list(row) for row in relative]
        # What Blender composes matrix_local from: bone_mat, with the head in the parent's
        # frame measured from the parent's tail.
        offset = bone.matrix.to_4x4()
        offset.translation = bone.head + bone.parent.length * type(bone.head)((0.0, 1.0, 0.0))
        entry["offset"] = [list(row) for row in offset]
    result.append(entry)
with open(sys.argv[2], "w", encoding="utf-8") as handle:
    json.dump(result, handle)
"""


def _python() -> str:
    venv_python = REPO / ".venv" / "bin" / "python"
    return str(venv_python) if venv_python.exists() else sys.executable


def _direction_cases() -> list[tuple[list[float], float]]:
    """(direction, roll) pairs at Blender's special cases and on both sides of them."""
    cases = []
    for roll in (0.0, 0.7, -2.5, math.pi):
        cases += [
            ([0.0, -1.0, 0.0], roll),  # exactly -Y: the half turn about Z
            ([1e-5, -1.0, 0.0], roll),  # within 2.5e-4 of -Y: still the half turn
            ([0.0, -1.0, -3e-5], roll),
            ([1e-3, -1.0, 0.0], roll),  # near -Y: theta rebuilt from x and z
            ([-4e-3, -1.0, 2e-3], roll),
            ([0.05, -1.0, -0.03], roll),  # 1 + y just under 6.1e-3
            ([0.3, -1.0, 0.2], roll),
            ([0.0, 1.0, 0.0], roll),
            ([1.0, 0.0, 0.0], roll),
            ([-1.0, 0.0, 0.0], roll),
            ([0.0, 0.0, 1.0], roll),
            ([0.0, 0.0, -1.0], roll),
        ]
    return cases


def _wanted_bones() -> list[dict]:
    rng = np.random.default_rng(20020401)
    bones: list[dict] = []
    for i, (direction, roll) in enumerate(_direction_cases()):
        head = rng.uniform(-1.0, 1.0, 3)
        tail = head + np.array(direction) / np.linalg.norm(direction) * rng.uniform(0.1, 1.5)
        bones.append({"name": f"special_{i}", "head": head.tolist(), "tail": tail.tolist(), "roll": roll})
    for i in range(60):
        head = rng.uniform(-2.0, 2.0, 3)
        direction = rng.normal(size=3)
        tail = head + direction / np.linalg.norm(direction) * rng.uniform(0.05, 2.0)
        bones.append(
            {
                "name": f"random_{i}",
                "head": head.tolist(),
                "tail": tail.tolist(),
                "roll": rng.uniform(-math.pi, math.pi),
            }
        )
    # Parents: random earlier bones (so no cycles), some connected, some not.
    for i, bone in enumerate(bones):
        bone["parent"] = None
        bone["connected"] = False
        if i >= 4 and rng.random() < 0.8:
            bone["parent"] = bones[int(rng.integers(0, i))]["name"]
            bone["connected"] = bool(rng.random() < 0.5)
    # A folded chain: a child pointing straight back along its parent (-Y in the parent's frame).
    bones += [
        {"name": "fold_a", "head": [0, 0, 0], "tail": [0, 0, 1], "roll": 0.4, "parent": None, "connected": False},
        {"name": "fold_b", "head": [0, 0, 1], "tail": [0, 0, 0.5], "roll": -1.1, "parent": "fold_a", "connected": True},
        {
            "name": "fold_c",
            "head": [0, 0, 0.5],
            "tail": [0, 0.5, 0.5],
            "roll": 0.0,
            "parent": "fold_b",
            "connected": True,
        },
    ]
    return bones


@pytest.fixture(scope="module")
def blender_bones(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    workdir = tmp_path_factory.mktemp("rest_pose_blender")
    (workdir / "make_rig.py").write_text(BLENDER_SCRIPT, encoding="utf-8")
    (workdir / "wanted.json").write_text(json.dumps(_wanted_bones()), encoding="utf-8")
    resources = workdir / "blender_user"
    resources.mkdir()
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(resources))
    completed = subprocess.run(
        [_python(), str(workdir / "make_rig.py"), str(workdir / "wanted.json"), str(workdir / "made.json")],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return json.loads((workdir / "made.json").read_text(encoding="utf-8"))


def test_blender_made_every_bone(blender_bones: list[dict]) -> None:
    assert sorted(b["name"] for b in blender_bones) == sorted(b["name"] for b in _wanted_bones())
    assert any(b["connected"] for b in blender_bones)
    assert any(b["parent"] and not b["connected"] for b in blender_bones)


def test_bone_rest_matrix_matches_edit_bone_matrix(blender_bones: list[dict]) -> None:
    for bone in blender_bones:
        ours = bone_rest_matrix(bone["head"], bone["tail"], bone["roll"])
        np.testing.assert_allclose(ours, bone["edit_matrix"], atol=TOLERANCE, err_msg=bone["name"])


def test_bone_rest_matrix_matches_matrix_local_of_root_bones(blender_bones: list[dict]) -> None:
    roots = [b for b in blender_bones if b["parent"] is None]
    assert len(roots) >= 4
    for bone in roots:
        ours = bone_rest_matrix(bone["head"], bone["tail"], bone["roll"])
        np.testing.assert_allclose(ours, bone["matrix_local"], atol=TOLERANCE, err_msg=bone["name"])


def test_armature_rest_matrices_match_matrix_local_of_every_bone(blender_bones: list[dict]) -> None:
    index = {b["name"]: i for i, b in enumerate(blender_bones)}
    ours = armature_rest_matrices(
        [b["head"] for b in blender_bones],
        [b["tail"] for b in blender_bones],
        [b["roll"] for b in blender_bones],
        [None if b["parent"] is None else index[b["parent"]] for b in blender_bones],
    )
    for bone, matrix in zip(blender_bones, ours, strict=True):
        np.testing.assert_allclose(matrix, bone["matrix_local"], atol=TOLERANCE, err_msg=bone["name"])


def test_near_minus_y_parents_shift_their_children_in_blender(blender_bones: list[dict]) -> None:
    """Why matrix_local needs the hierarchy: Blender snaps a direction within 2.5e-4 of -Y
    onto -Y in the parent's rest frame, and children are placed through that frame."""
    shifted = [
        b
        for b in blender_bones
        if np.abs(bone_rest_matrix(b["head"], b["tail"], b["roll"]) - np.array(b["matrix_local"])).max() > 1e-5
    ]
    assert shifted, "expected some children of nearly -Y bones to differ from their edit matrices"


def test_batched_matrices_and_quaternions_match(blender_bones: list[dict]) -> None:
    heads = np.array([b["head"] for b in blender_bones])
    tails = np.array([b["tail"] for b in blender_bones])
    rolls = np.array([b["roll"] for b in blender_bones])
    expected = np.array([b["edit_matrix"] for b in blender_bones])
    np.testing.assert_allclose(bone_rest_matrices(heads, tails, rolls), expected, atol=TOLERANCE)
    for bone, matrix in zip(blender_bones, expected, strict=True):
        w, x, y, z = bone_rest_rotation(bone["head"], bone["tail"], bone["roll"])
        np.testing.assert_allclose(
            _quaternion_matrix(np.array([w, x, y, z])), matrix[:3, :3], atol=TOLERANCE, err_msg=bone["name"]
        )


def test_relative_rest_matches_parent_inverse_times_child(blender_bones: list[dict]) -> None:
    by_name = {b["name"]: b for b in blender_bones}
    matrix_local = {b["name"]: np.array(b["matrix_local"]) for b in blender_bones}
    children = [b for b in blender_bones if b["parent"]]
    assert len(children) > 20
    for bone in children:
        parent = by_name[bone["parent"]]
        parent_matrix = matrix_local[parent["name"]]
        child_matrix = matrix_local[bone["name"]]
        expected = np.array(bone["relative"])
        np.testing.assert_allclose(
            relative_rest_matrix(parent_matrix, child_matrix), expected, atol=TOLERANCE, err_msg=bone["name"]
        )
        rotation, offset = relative_rest(parent_matrix, child_matrix)
        np.testing.assert_allclose(offset, expected[:3, 3], atol=TOLERANCE, err_msg=bone["name"])
        if bone["connected"]:
            length = math.dist(parent["head"], parent["tail"])
            np.testing.assert_allclose(offset, [0.0, length, 0.0], atol=TOLERANCE, err_msg=bone["name"])
        assert rotation.shape == (4,)


def test_relative_rest_matches_blenders_own_parent_offset(blender_bones: list[dict]) -> None:
    """Against ``[bone.matrix | bone.head + (0, parent.length, 0)]``, which Blender composes
    matrix_local from; free of the float32 rounding of inverting matrix_local."""
    by_name = {b["name"]: b for b in blender_bones}
    index = {b["name"]: i for i, b in enumerate(blender_bones)}
    ours = armature_rest_matrices(
        [b["head"] for b in blender_bones],
        [b["tail"] for b in blender_bones],
        [b["roll"] for b in blender_bones],
        [None if b["parent"] is None else index[b["parent"]] for b in blender_bones],
    )
    for bone in blender_bones:
        if bone["parent"] is None:
            continue
        relative = relative_rest_matrix(ours[index[bone["parent"]]], ours[index[bone["name"]]])
        np.testing.assert_allclose(relative, bone["offset"], atol=TOLERANCE, err_msg=bone["name"])
        np.testing.assert_allclose(relative, by_name[bone["name"]]["relative"], atol=1e-4, err_msg=bone["name"])


def _quaternion_matrix(quaternion: np.ndarray) -> np.ndarray:
    w, x, y, z = quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_spec_rest_frames_match_blender(blender_bones: list[dict]) -> None:
    spec = RigSpec(
        name="blender_check",
        bones=tuple(
            BoneSpec(
                name=b["name"], head=b["head"], tail=b["tail"], roll_deg=math.degrees(b["roll"]), parent=b["parent"]
            )
            for b in blender_bones
        ),
    )
    by_name = {b["name"]: b for b in blender_bones}
    # Each bone's path from its top-most ancestor, and the same path without that ancestor.
    for bone in blender_bones:
        names = [bone["name"]]
        while by_name[names[0]]["parent"]:
            names.insert(0, by_name[names[0]]["parent"])
        for chain in (names, names[1:]):
            if not chain:
                continue
            frames = spec_rest_frames(spec, chain)
            assert frames.rest_rotations_local.shape == (len(chain), 4)
            assert frames.head_offsets_local.shape == (len(chain), 3)
            np.testing.assert_allclose(
                frames.lengths, [math.dist(by_name[n]["head"], by_name[n]["tail"]) for n in chain], rtol=1e-12
            )
            root = by_name[chain[0]]
            if root["parent"] is None:
                np.testing.assert_allclose(frames.root_parent_armature, np.eye(4))
                expected_first = np.array(root["matrix_local"])
            else:
                np.testing.assert_allclose(
                    frames.root_parent_armature, by_name[root["parent"]]["matrix_local"], atol=TOLERANCE
                )
                expected_first = np.array(root["offset"])
            expected = [expected_first] + [np.array(by_name[n]["offset"]) for n in chain[1:]]
            for k, name in enumerate(chain):
                np.testing.assert_allclose(
                    frames.head_offsets_local[k], expected[k][:3, 3], atol=TOLERANCE, err_msg=name
                )
                np.testing.assert_allclose(
                    _quaternion_matrix(frames.rest_rotations_local[k]),
                    expected[k][:3, :3],
                    atol=TOLERANCE,
                    err_msg=name,
                )
