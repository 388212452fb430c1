"""Blender's own IK on quat-ik's reference chains: the comparison half of bench_solver.py.

Run in its own process (bpy's state is global, and this script resets it):

    .venv/bin/python bench/blender_ik_reference.py REQUEST.json RESULT.npz

REQUEST.json (written by bench_solver.py; plain data, no quat-ik import here)::

    {"chains": [{"name": "arm3",
                 "lengths": [0.30, 0.28, 0.10],
                 "joints": [{"lock": ["y"], "limits": {"x": [lo, hi], "z": [lo, hi]}}, ...],
                 "target_sets": {"latency": "/tmp/.../arm3_latency.npy", ...},
                 "start_sets": {"latency_warm": "/tmp/.../arm3_latency_warm_starts.npy"}}]}

Limits are radians in Blender's pose-bone IK terms (``ik_min_x`` … ``ik_max_z``, ``lock_ik_*``).
``start_sets`` (optional) names target sets solved from given start poses: (N, n, 4) pose-bone
``rotation_quaternion`` values (w, x, y, z), one pose per target.

RESULT.npz holds, for every chain C and target set S:

* ``C/S/tips`` (N, 3): the tip bone's tail in armature space after the update;
* ``C/S/bone_rotations`` (N, n, 4): every pose bone's armature-space rotation (w, x, y, z);
* ``C/S/seconds`` (N,): the time of one solve: set the target, ``view_layer.update()``, read
  the tail (reading the other bones' matrices is outside the timed part). The request's
  ``"clock"`` says which time: ``"wall"`` (default) or ``"cpu"`` (this process's CPU time,
  all of Blender's threads);
* ``C/update_only_seconds`` (K,): the same loop with the IK constraint muted, i.e. the
  depsgraph overhead that every Blender-side solve pays whatever the solver.

Blender's legacy ("Standard") IK starts from the pose bones' own rotations every time the
armature is evaluated, never from the previous result. This script sets every pose bone's
rotation to identity before each update (they never change, since IK does not write them),
so every solve starts from rest, as it does in Blender's normal use. A target set with a
start set is solved warm instead: before each update the pose bones get that target's start
pose (as in a rig whose pose holds the previous answer, a target moved a little from it).
Setting the start, like the reset to rest, is outside the timed part.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import time

# Blender's user folders go to a throwaway place before bpy is imported (BLENDER_NOTES.md).
if "BLENDER_USER_RESOURCES" not in os.environ:
    os.environ["BLENDER_USER_RESOURCES"] = tempfile.mkdtemp(prefix="quat_ik_bench_blender_")
    atexit.register(shutil.rmtree, os.environ["BLENDER_USER_RESOURCES"], ignore_errors=True)

import bpy  # must follow the environment set-up above
import numpy as np

UPDATE_ONLY_SAMPLES = 200
IDENTITY = (1.0, 0.0, 0.0, 0.0)


def new_scene() -> bpy.types.Scene:
    """An empty factory scene: nothing from a previous chain stays behind."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return bpy.context.scene


def build_chain_armature(scene: bpy.types.Scene, *, name: str, lengths: list[float]) -> bpy.types.Object:
    """A straight chain along +Y from the origin, connected bones, roll 0, object unrotated
    at the origin, so armature space is the chain's root frame."""
    data = bpy.data.armatures.new(name)
    armature = bpy.data.objects.new(name, data)
    scene.collection.objects.link(armature)
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    parent, y = None, 0.0
    for index, length in enumerate(lengths):
        bone = data.edit_bones.new(f"bone_{index:02d}")
        bone.head, bone.tail, bone.roll = (0.0, y, 0.0), (0.0, y + length, 0.0), 0.0
        if parent is not None:
            bone.parent, bone.use_connect = parent, True
        parent, y = bone, y + length
    bpy.ops.object.mode_set(mode="OBJECT")
    for pose_bone in armature.pose.bones:
        pose_bone.rotation_mode = "QUATERNION"
    return armature


def apply_ik_limits(pose_bone: bpy.types.PoseBone, joint: dict) -> None:
    """``lock_ik_*`` for the locked axes and ``use_ik_limit_*`` with ``ik_min_*``/``ik_max_*``."""
    for axis in joint.get("lock", ()):
        setattr(pose_bone, f"lock_ik_{axis}", True)
    for axis, (low, high) in joint.get("limits", {}).items():
        setattr(pose_bone, f"use_ik_limit_{axis}", True)
        setattr(pose_bone, f"ik_min_{axis}", low)
        setattr(pose_bone, f"ik_max_{axis}", high)


def add_ik(scene: bpy.types.Scene, armature: bpy.types.Object, chain_length: int) -> tuple:
    """An IK constraint on the tip bone (whole chain, tail reaches) aimed at a new empty."""
    target = bpy.data.objects.new("ik_target", None)
    scene.collection.objects.link(target)
    tip = armature.pose.bones[-1]
    constraint = tip.constraints.new("IK")
    constraint.target = target
    constraint.chain_count = chain_length
    constraint.use_tail = True
    return target, constraint


def reset_to_rest(armature: bpy.types.Object) -> None:
    for pose_bone in armature.pose.bones:
        pose_bone.rotation_quaternion = IDENTITY


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["wall"]


def set_pose(armature: bpy.types.Object, rotations: np.ndarray) -> None:
    for pose_bone, rotation in zip(armature.pose.bones, rotations, strict=True):
        pose_bone.rotation_quaternion = tuple(rotation)


def solve_each(
    armature: bpy.types.Object, target: bpy.types.Object, targets: np.ndarray, starts: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """One Blender IK solve per target, from rest or from ``starts`` (N, n, 4) pose-bone
    rotations: tips, per-bone armature-space rotations and times."""
    view_layer = bpy.context.view_layer
    tip = armature.pose.bones[-1]
    bones = list(armature.pose.bones)
    tips = np.zeros((len(targets), 3))
    rotations = np.zeros((len(targets), len(bones), 4))
    seconds = np.zeros(len(targets))
    for row, position in enumerate(targets):
        if starts is None:
            reset_to_rest(armature)
        else:
            set_pose(armature, starts[row])
        started = clock()
        target.location = position
        view_layer.update()
        tips[row] = tip.tail
        seconds[row] = clock() - started
        rotations[row] = [tuple(bone.matrix.to_quaternion()) for bone in bones]
    return {"tips": tips, "bone_rotations": rotations, "seconds": seconds}


def update_only_seconds(armature, target, constraint, targets: np.ndarray) -> np.ndarray:
    """The same loop with the IK constraint muted: Blender's per-update overhead."""
    constraint.mute = True
    try:
        return solve_each(armature, target, targets[:UPDATE_ONLY_SAMPLES])["seconds"]
    finally:
        constraint.mute = False


def run_chain(spec: dict) -> dict[str, np.ndarray]:
    scene = new_scene()
    armature = build_chain_armature(scene, name=spec["name"], lengths=spec["lengths"])
    for pose_bone, joint in zip(armature.pose.bones, spec["joints"], strict=True):
        apply_ik_limits(pose_bone, joint)
    target, constraint = add_ik(scene, armature, len(spec["lengths"]))
    root_head = np.array(armature.pose.bones[0].head)
    if np.any(np.abs(root_head) > 1e-9):
        raise RuntimeError(f"root bone head is not at the origin: {root_head}")
    results = {}
    first_targets = None
    start_sets = spec.get("start_sets", {})
    for set_name, path in spec["target_sets"].items():
        targets = np.load(path)
        starts = np.load(start_sets[set_name]) if set_name in start_sets else None
        if starts is not None and starts.shape != (len(targets), len(spec["lengths"]), 4):
            raise ValueError(f"{spec['name']}/{set_name}: start poses shaped {starts.shape}")
        first_targets = targets if first_targets is None else first_targets
        for key, value in solve_each(armature, target, targets, starts).items():
            results[f"{spec['name']}/{set_name}/{key}"] = value
    results[f"{spec['name']}/update_only_seconds"] = update_only_seconds(armature, target, constraint, first_targets)
    results[f"{spec['name']}/iterations"] = np.array(constraint.iterations)
    results[f"{spec['name']}/ik_solver"] = np.array(armature.pose.ik_solver)
    return results


def main(request_path: str, result_path: str) -> None:
    global clock
    with open(request_path, encoding="utf-8") as handle:
        request = json.load(handle)
    clock = CLOCKS[request.get("clock", "wall")]
    results = {"blender_version": np.array(bpy.app.version_string)}
    for spec in request["chains"]:
        results.update(run_chain(spec))
    np.savez(result_path, **results)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: blender_ik_reference.py REQUEST.json RESULT.npz")
    main(sys.argv[1], sys.argv[2])
