"""Export a baked rig to BVH with Blender's bundled exporter, import it back with the bundled
importer, and check the motion survived. Runs inside bpy.

BVH stores, per joint, an offset from its parent and Euler angles in the joint's own axes; it
has no bone roll, so the importer builds bones whose rest frames differ from ours by a fixed
turn, and Euler angles wrap. So the check compares what does not depend on those conventions,
frame by frame in world space:

* every bone's head, and the tail of every bone whose tail BVH records (a leaf's "End Site",
  or the head of a bone's only child connected to it; the importer puts other tails where it
  can, e.g. rigify_human's spine, with several children), within ``POSITION_TOLERANCE``;
* every bone's world rotation up to its fixed rest difference: ``R_ours(f)ᵀ R_bvh(f)`` must stay
  what it is on the first frame, within ``ANGLE_TOLERANCE`` (this catches a twist about the
  bone, which heads and tails alone would not).

The exporter writes armature space with 6 decimals (micrometres, micro-degrees), so the
tolerances leave two orders of magnitude for float32 round-off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import bpy
import numpy as np

POSITION_TOLERANCE = 1e-5  # scene units: 0.01 mm
ANGLE_TOLERANCE = math.radians(0.01)


@dataclass(frozen=True)
class BvhCheck:
    path: Path
    bones: int
    frames: int
    position_error: float  # largest head/tail distance, scene units
    angle_error: float  # largest drift of the rest difference, radians

    @property
    def ok(self) -> bool:
        return self.position_error <= POSITION_TOLERANCE and self.angle_error <= ANGLE_TOLERANCE


def _tail_carried(bone) -> bool:
    """Does BVH record this bone's tail: a leaf's end site, or its only child's connected head?"""
    return not bone.children or (len(bone.children) == 1 and bone.children[0].use_connect)


def _pose_in_world(ob, names: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    world = ob.matrix_world
    heads = np.array([tuple(world @ ob.pose.bones[n].head) for n in names])
    tails = np.array([tuple(world @ ob.pose.bones[n].tail) for n in names])
    rotations = np.array([np.array((world @ ob.pose.bones[n].matrix).to_3x3().normalized()) for n in names])
    return heads, tails, rotations


def _sample(ob, names, frames) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scene = bpy.context.scene
    out = [[], [], []]
    for frame in frames:
        scene.frame_set(int(frame))
        for store, values in zip(out, _pose_in_world(ob, names), strict=True):
            store.append(values)
    return tuple(np.array(values) for values in out)


def bvh_round_trip(baked_blend: Path, bvh_path: Path) -> BvhCheck:
    """Open a baked rig, export its armature's animation to ``bvh_path``, import it back."""
    bpy.ops.wm.open_mainfile(filepath=str(baked_blend))
    scene = bpy.context.scene
    ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    for chain in ob.quat_ik.chains:
        chain.mode = "MANUAL"  # play the baked keys only
    names = [bone.name for bone in ob.data.bones]
    carried = np.array([_tail_carried(bone) for bone in ob.data.bones])
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    ours = _sample(ob, names, frames)

    bpy.context.view_layer.objects.active = ob
    ob.select_set(True)
    result = bpy.ops.export_anim.bvh(
        filepath=str(bvh_path), frame_start=int(frames[0]), frame_end=int(frames[-1]), rotate_mode="NATIVE"
    )
    if result != {"FINISHED"}:
        raise RuntimeError(f"export_anim.bvh returned {result}")
    before = set(bpy.data.objects)
    # The exporter writes Blender's own axes (Z up), so import without the default Y-up turn.
    result = bpy.ops.import_anim.bvh(
        filepath=str(bvh_path),
        axis_forward="Y",
        axis_up="Z",
        rotate_mode="NATIVE",
        frame_start=int(frames[0]),
        use_fps_scale=False,
        update_scene_fps=False,
        update_scene_duration=False,
    )
    if result != {"FINISHED"}:
        raise RuntimeError(f"import_anim.bvh returned {result}")
    imported = next(o for o in set(bpy.data.objects) - before if o.type == "ARMATURE")
    missing = [n for n in names if n not in imported.pose.bones]
    if missing:
        raise RuntimeError(f"the re-imported BVH lacks bones {missing}")
    theirs = _sample(imported, names, frames)

    heads = np.linalg.norm(ours[0] - theirs[0], axis=-1)
    tails = np.linalg.norm(ours[1] - theirs[1], axis=-1)[:, carried]
    position_error = max(float(np.max(heads)), float(np.max(tails, initial=0.0)))
    offsets = np.einsum("fbji,fbjk->fbik", ours[2], theirs[2])  # R_oursᵀ R_bvh per frame and bone
    drift = np.einsum("bji,fbjk->fbik", offsets[0], offsets)  # against the first frame's
    # A rotation by θ has ‖R − I‖ = 2√2 sin(θ/2) (Frobenius): precise for tiny θ, unlike acos.
    distance = np.linalg.norm(drift - np.eye(3), axis=(-2, -1))
    angle = 2.0 * np.arcsin(np.clip(distance / (2.0 * math.sqrt(2.0)), 0.0, 1.0))
    return BvhCheck(bvh_path, len(names), len(frames), position_error, float(np.max(angle)))
