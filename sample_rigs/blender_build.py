"""bpy helpers that build a sample rig the way a user would: armature from a rig spec, joint
limits on the pose bones, "Add Quat IK Chain", an animated target, and a muted Blender IK
constraint with the closest limits Blender can express (for the demo's comparison).

Runs inside Blender (the bpy 5.0 module or a Blender ≥ 3.4 binary) with the add-on enabled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import bpy
import numpy as np

from quat_ik_addon.solver.rig import spec as spec

from .rig_math import BlenderIKLimits, blender_ik_limits

BLENDER_IK_NAME = "Blender IK (comparison)"  # muted; the demo unmutes it to bake Blender's answer


def new_scene(frame_end: int) -> bpy.types.Scene:
    """An empty file with frames 1..frame_end at 24 fps."""
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end, scene.frame_current = 1, frame_end, 1
    scene.render.fps, scene.render.fps_base = 24, 1.0
    return scene


def link(ob: bpy.types.Object) -> bpy.types.Object:
    bpy.context.scene.collection.objects.link(ob)
    return ob


def armature_from_spec(rig: spec.RigSpec, name: str) -> bpy.types.Object:
    """An armature object at the origin whose edit bones are the spec's bones (roll included)."""
    ob = link(bpy.data.objects.new(name, bpy.data.armatures.new(name)))
    ob.show_in_front = True
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    edit_bones = ob.data.edit_bones
    for bone in rig.bones:
        edit = edit_bones.new(bone.name)
        edit.head, edit.tail, edit.roll = bone.head, bone.tail, math.radians(bone.roll_deg)
    for bone in rig.bones:
        if bone.parent is not None:
            edit = edit_bones[bone.name]
            edit.parent = edit_bones[bone.parent]
            edit.use_connect = np.allclose(bone.head, rig.bone(bone.parent).tail, atol=1e-9)
    bpy.ops.object.mode_set(mode="OBJECT")
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_mode = "QUATERNION"
    return ob


def apply_blender_ik_limits(pose_bone, limits: BlenderIKLimits) -> None:
    """Lock and limit Blender's own IK on this bone (Bone properties > Inverse Kinematics)."""
    for axis in "xyz":
        setattr(pose_bone, f"lock_ik_{axis}", axis in limits.locked)
        setattr(pose_bone, f"use_ik_limit_{axis}", False)
    for axis, low, high in limits.ranges:
        setattr(pose_bone, f"use_ik_limit_{axis}", True)
        setattr(pose_bone, f"ik_min_{axis}", low)
        setattr(pose_bone, f"ik_max_{axis}", high)


def set_limits(ob: bpy.types.Object, limits: dict[str, spec.JointLimit]) -> None:
    """Our limit (written by the add-on's own writer, as its preset and import operators do)
    and Blender's closest version of it on every named pose bone."""
    from quat_ik_addon.blender.limits.conversion import write_limit

    for name, limit in limits.items():
        write_limit(ob.pose.bones[name].quat_ik, limit)
        apply_blender_ik_limits(ob.pose.bones[name], blender_ik_limits(limit))


def target_empty(name: str, *, size: float, oriented: bool) -> bpy.types.Object:
    """The object a chain reaches for: a sphere, or axes when its rotation matters too."""
    empty = link(bpy.data.objects.new(name, None))
    empty.empty_display_type = "ARROWS" if oriented else "SPHERE"
    empty.empty_display_size = size
    empty.rotation_mode = "QUATERNION"
    return empty


def key_path(ob: bpy.types.Object, frames: Sequence[int], locations: np.ndarray, rotations=None) -> None:
    """Key the object's location (and quaternion rotation) on every frame, linear in between."""
    for i, frame in enumerate(frames):
        ob.location = tuple(locations[i])
        ob.keyframe_insert("location", frame=int(frame))
        if rotations is not None:
            ob.rotation_quaternion = tuple(rotations[i])
            ob.keyframe_insert("rotation_quaternion", frame=int(frame))
    for fcurve in _fcurves(ob.animation_data.action, ob):
        for key in fcurve.keyframe_points:
            key.interpolation = "LINEAR"


def _fcurves(action, ob):
    if bpy.app.version < (4, 4, 0):
        return list(action.fcurves)
    slot = ob.animation_data.action_slot
    return [fc for layer in action.layers for strip in layer.strips for fc in strip.channelbag(slot).fcurves]


def path_curve(name: str, points: np.ndarray) -> bpy.types.Object:
    """A poly line through ``points`` so the target's path shows in the viewport."""
    curve = bpy.data.curves.new(name, "CURVE")
    curve.dimensions = "3D"
    spline = curve.splines.new("POLY")
    spline.points.add(len(points) - 1)
    spline.points.foreach_set("co", np.hstack((points, np.ones((len(points), 1)))).ravel().tolist())
    ob = link(bpy.data.objects.new(name, curve))
    ob.hide_select = True
    return ob


def add_chain(
    ob: bpy.types.Object,
    *,
    name: str,
    tip: str,
    length: int,
    target: bpy.types.Object,
    orientation: bool = False,
    **settings,
) -> None:
    """Press "Add Quat IK Chain" with ``tip`` active (the user's way), then mute-add Blender's
    IK constraint on the same bones and target for the comparison."""
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="POSE")
    ob.data.bones.active = ob.data.bones[tip]
    result = bpy.ops.quat_ik.add_chain(
        chain_name=name,
        chain_length=length,
        target=target.name,
        orientation_mode="MATCH_TARGET" if orientation else "NONE",
        **settings,
    )
    if result != {"FINISHED"}:
        raise RuntimeError(f"quat_ik.add_chain({name}) returned {result}")
    constraint = ob.pose.bones[tip].constraints.new("IK")
    constraint.name = BLENDER_IK_NAME
    constraint.target = target
    constraint.chain_count = length
    constraint.use_tail = True
    constraint.use_rotation = orientation
    constraint.mute = True
    bpy.ops.object.mode_set(mode="OBJECT")


def block(name: str, location, size) -> bpy.types.Object:
    """A box mesh (the arm's anchor, a table), ``size`` its full extent along X, Y, Z."""
    hx, hy, hz = (0.5 * s for s in size)
    corners = [(x, y, z) for x in (-hx, hx) for y in (-hy, hy) for z in (-hz, hz)]
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(corners, [], faces)
    ob = link(bpy.data.objects.new(name, mesh))
    ob.location = location
    ob.hide_select = True
    return ob


def height_field(name: str, xs: np.ndarray, ys: np.ndarray, heights: np.ndarray) -> bpy.types.Object:
    """A grid mesh with z = heights[i, j] at (xs[j], ys[i]) (the leg's uneven ground)."""
    rows, cols = heights.shape
    verts = [(float(xs[j]), float(ys[i]), float(heights[i, j])) for i in range(rows) for j in range(cols)]
    faces = [
        (i * cols + j, i * cols + j + 1, (i + 1) * cols + j + 1, (i + 1) * cols + j)
        for i in range(rows - 1)
        for j in range(cols - 1)
    ]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    ob = link(bpy.data.objects.new(name, mesh))
    ob.hide_select = True
    return ob


def save(path: Path) -> Path:
    """Save compressed, replacing any old file (so Blender writes no ``.blend1`` backup)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    bpy.context.scene.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(path), compress=True)
    return path
