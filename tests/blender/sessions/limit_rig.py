"""A small symmetrized body rig and helpers for the joint-limit tool and overlay sessions
(they run INSIDE a bpy session).

``make_body()`` builds, like a user would, an armature 'Body': 'spine' up +Z, a left arm
('upper_arm.L' with roll, 'forearm.L' connected) and 'Left_toe', mirrored to the right side
by Blender's own Symmetrize (so the right bones are exact mirror images, rolls negated), then
'hand.L' with no right-side partner, and a Quat IK chain 'Arm.L' (forearm.L, 2 bones).
"""

from __future__ import annotations

import math

import bpy

from tests.blender.sessions.common import add_chain, empty


def make_body() -> bpy.types.Object:
    armature = bpy.data.armatures.new("Body")
    ob = bpy.data.objects.new("Body", armature)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    bones = armature.edit_bones
    spine = bones.new("spine")
    spine.head, spine.tail = (0.0, 0.0, 1.0), (0.0, 0.0, 1.5)
    upper = bones.new("upper_arm.L")
    upper.head, upper.tail, upper.roll, upper.parent = (0.2, 0.0, 1.4), (0.5, 0.05, 1.1), 0.3, spine
    forearm = bones.new("forearm.L")
    forearm.head, forearm.tail, forearm.roll = upper.tail, (0.75, -0.05, 0.85), 0.1
    forearm.parent, forearm.use_connect = upper, True
    toe = bones.new("Left_toe")
    toe.head, toe.tail, toe.roll = (0.15, -0.1, 0.05), (0.15, -0.3, 0.0), math.radians(20)
    for bone in bones:
        bone.select = bone.select_head = bone.select_tail = bone.name != "spine"
    result = bpy.ops.armature.symmetrize(direction="NEGATIVE_X")
    assert result == {"FINISHED"}, result
    hand = bones.new("hand.L")
    hand.head, hand.tail, hand.parent, hand.use_connect = forearm.tail, (0.9, -0.1, 0.75), forearm, True
    bpy.ops.object.mode_set(mode="OBJECT")
    assert {"upper_arm.R", "forearm.R", "Right_toe"} <= set(armature.bones.keys()), armature.bones.keys()
    empty("Hand target", (0.6, -0.2, 0.9))
    add_chain(ob, "forearm.L", 2, "Hand target", mode="MANUAL")
    ob.quat_ik.chains[-1].name = "Arm.L"
    return ob


def select_bones(ob, names) -> None:
    """Select exactly ``names`` (selection moved from Bone to PoseBone in 5.0)."""
    for pose_bone in ob.pose.bones:
        owner = pose_bone if "select" in pose_bone.bl_rna.properties else pose_bone.bone
        owner.select = pose_bone.name in names


def spec_dicts_close(a, b, tolerance: float) -> bool:
    """Two rig-spec dicts (``to_dict()``) equal, numbers within ``tolerance``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(spec_dicts_close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(spec_dicts_close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= tolerance
    return a == b
