"""Session: anatomical presets fitted to a rig's own rest pose and bone roll.

Two left arms (upper arm, forearm, hand): one drawn hanging at the side but with every bone
rolled so its local +Z points sideways (+X) instead of to the front, one drawn in a T-pose
with palms down. The first gets the shoulder, elbow and wrist presets fitted to its rest pose;
the second is posed in the anatomical position (arm hanging, palm forward) and gets them
fitted to that pose. Then the same anatomical motions, made as armature-space turns of each
arm, must be allowed or refused alike on both rigs: flexing the shoulder 90° (allowed) or
extending it 90° (refused: extension stops at 60°), raising the arm sideways 90° (allowed),
bringing it 60° across the body (refused: adduction stops at 30°), bending the elbow 90°
(allowed) or over-straightening it by 30° (refused), flexing the wrist 60° toward the palm
(allowed) and 85° back (refused), and rotating the arm about itself within its twist range,
hanging or flexed (Codman's paradox makes the last one exact only with the fitted twist
reference). As written, the presets get these wrong on both rigs.

argv: WORKDIR
"""

import importlib

import bpy
import numpy as np
from mathutils import Matrix

from tests.blender.sessions.common import (
    Checks,
    addon,
    pose_mode,
    reset_scene,
    scene_snapshot,
    snapshot_difference,
    submodule,
)
from tests.blender.sessions.limit_rig import select_bones, spec_dicts_close

checks = Checks("presets fitted to the rig")
package = addon().__name__
conversion = submodule("limits.conversion")
spec_chain = importlib.import_module(f"{package}.solver.rig.spec_chain")
presets = importlib.import_module(f"{package}.solver.limits.presets")
ops = bpy.ops.quat_ik
BONES = ("upper_arm.L", "forearm.L", "hand.L")
PRESETS = ("shoulder", "elbow", "wrist")
FRONT, LEFT, DOWN = np.array([0.0, -1.0, 0.0]), np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, -1.0])


def build(name: str, direction, z_axis) -> bpy.types.Object:
    """A left arm from the shoulder along ``direction``, every bone's local +Z along ``z_axis``."""
    armature = bpy.data.armatures.new(name)
    ob = bpy.data.objects.new(name, armature)
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    head, parent = np.array([0.2, 0.0, 1.4]), None
    for bone_name, length in zip(BONES, (0.3, 0.27, 0.1), strict=True):
        bone = armature.edit_bones.new(bone_name)
        bone.head, bone.tail = head, head + length * np.asarray(direction)
        bone.align_roll(z_axis)
        bone.parent, bone.use_connect = parent, parent is not None
        head, parent = head + length * np.asarray(direction), bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob


def frame(y_axis, z_axis) -> np.ndarray:
    y, z = np.asarray(y_axis, dtype=float), np.asarray(z_axis, dtype=float)
    return np.column_stack((np.cross(y, z), y, z))


def turn(axis, degrees: float) -> np.ndarray:
    return np.array(Matrix.Rotation(np.radians(degrees), 3, tuple(axis)))


def set_frames(ob, frames: dict) -> None:
    """Pose bones (root first) so their armature-space rotations are ``frames``."""
    for bone_name in BONES:
        if bone_name in frames:
            pose_bone = ob.pose.bones[bone_name]
            matrix = Matrix(frames[bone_name].tolist()).to_4x4()
            matrix.translation = pose_bone.head
            pose_bone.matrix = matrix
            bpy.context.view_layer.update()


def posed_frames(ob) -> dict:
    return {name: np.array(ob.pose.bones[name].matrix.to_3x3().normalized()) for name in BONES}


def allowed(ob, bone_name: str) -> bool:
    pose_bone = ob.pose.bones[bone_name]
    limit = spec_chain.solver_limit(conversion.spec_limit(pose_bone.quat_ik))
    q = np.array(tuple(pose_bone.rotation_quaternion))[None]
    return float(limit.violation(q)[0]) < 1e-4


with checks.step("the T-pose arm posed in the anatomical position"):
    reset_scene()
    hanging = build("Hanging", DOWN, LEFT)  # drawn anatomically, but rolled 90° off
    t_pose = build("TPose", LEFT, DOWN)  # arms out sideways, palms down
    for ob in (hanging, t_pose):
        for pose_bone in ob.pose.bones:
            pose_bone.rotation_mode = "QUATERNION"

    # The T-pose arm posed in the anatomical position: hanging, every bone's +Z to the front.
    anatomical = frame(DOWN, FRONT)
    set_frames(t_pose, dict.fromkeys(BONES, anatomical))
    checks.check(
        "T-pose arm posed hanging with the palm forward",
        all(np.allclose(f, anatomical, atol=1e-5) for f in posed_frames(t_pose).values()),
    )


def apply_presets(ob, fit: str) -> None:
    for bone_name, preset in zip(BONES, PRESETS, strict=True):
        pose_mode(ob, bone_name)
        result = ops.apply_limit_preset(preset=preset, fit=fit)
        checks.check(f"{ob.name}: {preset} preset on {bone_name}, fit {fit}", result == {"FINISHED"}, result)


# Anatomical motions as armature-space turns: flexion swings the hanging arm toward the front
# (a turn about the left axis), abduction out to the left side, adduction across the body.
MOTIONS = (
    ("shoulder flexed 90°", "upper_arm.L", turn(LEFT, -90.0), True),
    ("shoulder extended 90°", "upper_arm.L", turn(LEFT, 90.0), False),
    ("shoulder abducted 90°", "upper_arm.L", turn(-FRONT, -90.0), True),
    ("shoulder adducted 60°", "upper_arm.L", turn(-FRONT, 60.0), False),
    ("shoulder rotated 60° inward", "upper_arm.L", turn(DOWN, 60.0), True),  # twist about the hanging bone
    ("shoulder rotated 85° inward", "upper_arm.L", turn(DOWN, 85.0), False),  # internal rotation stops at 70°
    ("shoulder rotated 80° outward", "upper_arm.L", turn(DOWN, -80.0), True),
    ("shoulder rotated 100° outward", "upper_arm.L", turn(DOWN, -100.0), False),  # external stops at 90°
    ("shoulder flexed 90° and rotated 60° inward", "upper_arm.L", turn(FRONT, 60.0) @ turn(LEFT, -90.0), True),
    ("shoulder flexed 90° and rotated 85° inward", "upper_arm.L", turn(FRONT, 85.0) @ turn(LEFT, -90.0), False),
    ("elbow flexed 90°", "forearm.L", turn(LEFT, -90.0), True),
    ("elbow hyperextended 30°", "forearm.L", turn(LEFT, 30.0), False),
    ("wrist flexed 60° toward the palm", "hand.L", turn(LEFT, -60.0), True),
    ("wrist extended 85°", "hand.L", turn(LEFT, 85.0), False),
)


def verdicts(ob, zero: dict) -> dict:
    """Each motion from the arm's anatomical posture ``zero``: allowed by the bone's limit?"""
    out = {}
    for label, bone_name, motion, _expected in MOTIONS:
        set_frames(ob, zero)
        set_frames(ob, {bone_name: motion @ zero[bone_name]})
        out[label] = allowed(ob, bone_name)
    set_frames(ob, zero)
    return out


def check_motions(ob, zero: dict, title: str) -> None:
    got = verdicts(ob, zero)
    for label, _bone, _motion, expected in MOTIONS:
        checks.check(f"{title}: {label} {'allowed' if expected else 'refused'}", got[label] == expected, got[label])


def check_some_wrong(ob, fit: str, zero: dict, title: str) -> None:
    """With the wrong fit, some motion's verdict differs from anatomy's."""
    apply_presets(ob, fit)
    got = verdicts(ob, zero)
    checks.check(title, any(got[label] != expected for label, _b, _m, expected in MOTIONS), got)


with checks.step("as written, the rolled arm gets some motions wrong"):
    hanging_zero = {name: np.array(hanging.data.bones[name].matrix_local.to_3x3()) for name in BONES}
    t_pose_zero = posed_frames(t_pose)

    check_some_wrong(hanging, "AS_WRITTEN", hanging_zero, "as written, the rolled arm gets some motions wrong")
with checks.step("the rolled arm fitted to its rest pose"):
    apply_presets(hanging, "REST")
    check_motions(hanging, hanging_zero, "rolled arm fitted to its rest pose")
    checks.check("fitted to its rest pose, the rest pose is allowed", all(allowed(hanging, name) for name in BONES))
with checks.step("a forearm twist fitted palm forward"):
    pose_mode(hanging, "forearm.L")  # its +Z points away from the body: the thumb's way, palm forward
    ops.apply_limit_preset(preset="forearm_twist", fit="REST")
    twist_hinge = conversion.spec_limit(hanging.pose.bones["forearm.L"].quat_ik)
    checks.check(
        "a forearm twist fitted palm forward: pronation 80° from thumb-forward is 170° from the rest",
        np.allclose(twist_hinge.range_deg, (10.0, 170.0), atol=1e-3),
        twist_hinge.range_deg,
    )
    ops.apply_limit_preset(preset="elbow", fit="REST")

with checks.step("the T-pose arm fitted to its anatomical pose"):
    apply_presets(t_pose, "POSE")
    check_motions(t_pose, t_pose_zero, "T-pose arm fitted to its anatomical pose")
    checks.check("the anatomical pose itself is allowed", all(allowed(t_pose, name) for name in BONES))
with checks.step("the fitted shoulder measures its twist through a reference"):
    shoulder = t_pose.pose.bones["upper_arm.L"].quat_ik
    reference = conversion.spec_limit(shoulder).twist_reference
    checks.check("the fitted shoulder measures its twist through a reference", reference is not None, reference)
    shoulder.use_twist_reference = False
    checks.check(
        "'Fitted Twist' off: twist from the rest pose", conversion.spec_limit(shoulder).twist_reference is None
    )
    shoulder.use_twist_reference = True

with checks.step("the T-pose arm fitted to its rest pose gets some motions wrong"):
    check_some_wrong(
        t_pose, "REST", t_pose_zero, "the T-pose arm fitted to its rest pose instead gets some motions wrong"
    )

# ---- a whole limb at once: the same limits as bone by bone
with checks.step("limb presets give what bone by bone presets give"):
    apply_presets(t_pose, "POSE")
    one_by_one = {name: conversion.spec_limit(t_pose.pose.bones[name].quat_ik).to_dict() for name in BONES}
    for name in BONES:
        t_pose.pose.bones[name].quat_ik.joint_type = "FREE"
    pose_mode(t_pose, "forearm.L")
    select_bones(t_pose, BONES)
    result = ops.apply_limb_presets(limb="ARM", fit="POSE")
    checks.check(
        "limb presets: the arm's three bones get what they got one by one",
        result == {"FINISHED"}
        and all(
            spec_dicts_close(conversion.spec_limit(t_pose.pose.bones[n].quat_ik).to_dict(), one_by_one[n], 1e-5)
            for n in BONES
        ),
        result,
    )


def expect_limb_error(label: str, expected: str, **kwargs) -> None:
    before = scene_snapshot()
    try:
        message = f"no error: {ops.apply_limb_presets(**kwargs)}"
    except RuntimeError as error:
        message = str(error)
    checks.check(f"{label}: clear error", expected in message, message.strip())
    checks.check(f"{label}: scene unchanged", not snapshot_difference(before, scene_snapshot()))


with checks.step("limb presets refuse a wrong selection"):
    select_bones(t_pose, BONES[:2])
    expect_limb_error("two bones for an arm", "select the 3 bones of the arm (2 selected)", limb="ARM")
    select_bones(t_pose, (BONES[0], BONES[2]))
    expect_limb_error("a gap in the chain", "'hand.L' is not the child of 'upper_arm.L'", limb="ARM")
with checks.step("spine presets go on any number of bones"):
    select_bones(t_pose, BONES)
    result = ops.apply_limb_presets(limb="SPINE", fit="AS_WRITTEN")
    checks.check(
        "spine presets go on any number of bones",
        result == {"FINISHED"}
        and all(
            spec_dicts_close(
                conversion.spec_limit(t_pose.pose.bones[n].quat_ik).to_dict(),
                presets.load_preset("spine_segment").to_dict(),
                1e-4,
            )
            for n in BONES
        ),
    )

checks.close()
