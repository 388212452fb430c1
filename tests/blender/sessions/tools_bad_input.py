"""Session: hostile input to the chain and limit tools gives a clear error and no change,
and the tools never write limits a solve then refuses.

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import Checks, add_chain, empty, pose_mode, reset_scene, submodule

workdir = Path(sys.argv[1])
checks = Checks("hostile input to the chain and limit tools")
limit_conversion = submodule("limits.conversion")


def two_armed_rig(right_forearm: str = "forearm.R"):
    """A spine with two three-bone arms; the right forearm may be named off the mirror."""
    reset_scene()
    ob = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    bpy.context.scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    bones = ob.data.edit_bones
    spine = bones.new("spine")
    spine.head, spine.tail = (0, 0, 1), (0, 0, 1.5)
    for side, sign in (("L", 1), ("R", -1)):
        parent = spine
        for name, x in (("upper_arm", 0.2), ("forearm", 0.5), ("hand", 0.8)):
            full = right_forearm if (name, side) == ("forearm", "R") else f"{name}.{side}"
            bone = bones.new(full)
            bone.head, bone.tail = (sign * x, 0, 1.5), (sign * (x + 0.3), 0, 1.45)
            bone.parent, bone.use_connect = parent, parent is not spine
            parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    empty("target.L", (0.9, 0.2, 1.3))
    add_chain(ob, "hand.L", 3, "target.L", mode="MANUAL")
    return ob


def limit_is_valid(pose_bone) -> bool:
    try:
        limit_conversion.spec_limit(pose_bone.quat_ik)
    except Exception:
        return False
    return True


# ---- Mirror Chain: a counterpart whose bones are named off the mirror, or that is too short
with checks.step("mirror chain refuses counterparts that do not fit"):
    ob = two_armed_rig(right_forearm="lowerarm_right")
    checks.expect_error(
        "mirror chain, counterpart bones named differently", bpy.ops.quat_ik.mirror_chain, "do not mirror"
    )
    ob.quat_ik.chains[0].chain_length = 4
    ob = two_armed_rig()
    bpy.ops.object.mode_set(mode="EDIT")
    ob.data.edit_bones["upper_arm.R"].parent = None  # the right arm is one bone shorter above the hand
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_mode(ob, "hand.L")
    ob.quat_ik.chains[0].chain_length = 4
    checks.expect_error("mirror chain, counterpart too short", bpy.ops.quat_ik.mirror_chain, "does not fit")

# ---- Chain from IK Constraint: the pole is checked, a second conversion refused, rotation-only and distance IK refused
with checks.step("chain from IK constraint refuses what it cannot convert"):
    ob = two_armed_rig()
    ob.quat_ik.chains.clear()
    constraint = ob.pose.bones["hand.L"].constraints.new("IK")
    constraint.target, constraint.chain_count = bpy.data.objects["target.L"], 3
    constraint.pole_target, constraint.pole_subtarget = ob, "forearm.L"
    pose_mode(ob, "hand.L")
    checks.expect_error(
        "convert, pole bone inside the chain", bpy.ops.quat_ik.from_ik_constraint, "moves with the chain"
    )
    constraint.pole_target = None
    constraint.use_location = False
    checks.expect_error("convert, rotation-only IK", bpy.ops.quat_ik.from_ik_constraint, "only matches rotation")
    constraint.use_location = True
    ob.pose.ik_solver = "ITASC"  # iTaSC's IK can keep a distance instead of reaching
    constraint.ik_type = "DISTANCE"
    checks.expect_error("convert, iTaSC distance IK", bpy.ops.quat_ik.from_ik_constraint, "keeps a distance")
    constraint.ik_type = "COPY_POSE"
    ob.pose.ik_solver = "LEGACY"
    checks.check("convert", bpy.ops.quat_ik.from_ik_constraint() == {"FINISHED"})
    checks.expect_error(
        "convert the same constraint again", bpy.ops.quat_ik.from_ik_constraint, "already ends Quat IK chain"
    )

# ---- polygon corners: a new corner keeps a convex polygon convex; unusable corners are refused
with checks.step("new polygon corners keep it convex"):
    ob = two_armed_rig()
    limits = ob.pose.bones["forearm.L"].quat_ik
    limits.joint_type = "BALL"
    pose_mode(ob, "forearm.L")
    bpy.ops.quat_ik.window_shape_preset(shape="REGULAR_POLYGON", half_angle=math.radians(80.0), sides=6)
    window = limits.windows[-1]
    for index in (0, 2, 4):  # after a corner, then after the corners beyond each new one
        window.active_vertex_index = index
        bpy.ops.quat_ik.polygon_vertex_add()
    try:
        limit_conversion.spec_limit(limits)
        problem = ""
    except Exception as error:
        problem = str(error)
    checks.check("corners added midway on the window's plane keep it convex", not problem, problem)
    window.vertices[0].angles = (math.radians(95.0), 0.0)
    checks.expect_error("make convex with a corner past 90°", bpy.ops.quat_ik.polygon_make_convex, "less than 90°")
    limits.windows.clear()

# ---- 32-bit storage at the bounds: a 180° cone and a corner a hair under 90° stay valid
with checks.step("32-bit limits at their bounds stay valid"):
    limits.windows.add().shape = "CONE"
    limits.windows[0].half_angle = math.pi
    checks.check("a 180° cone stored as a 32-bit float is valid", limit_is_valid(ob.pose.bones["forearm.L"]))
    limits.windows.clear()
    bpy.ops.quat_ik.window_shape_preset(shape="CONE", half_angle=math.pi)
    checks.check("... and the shape preset at its maximum makes one", len(limits.windows) == 1)
    limits.windows[0].shape = "ELLIPTIC_CONE"
    limits.windows[0].half_angles = (math.radians(0.01), math.radians(89.99))  # the panel's bounds
    checks.check("an elliptic cone at the panel's bounds is valid", limit_is_valid(ob.pose.bones["forearm.L"]))

# ---- Fit from Action over a range no one means; Next Pose Jump past Blender's frames
with checks.step("fit from action refuses two billion frames"):
    ob.animation_data_create()
    ob.animation_data.action = bpy.data.actions.new("Motion")
    ob.pose.bones["forearm.L"].keyframe_insert("rotation_quaternion", frame=1)
    checks.expect_error(
        "fit from action over two billion frames",
        bpy.ops.quat_ik.limits_fit_from_action,
        "fit to at most",
        use_action_range=False,
        frame_start=-(2**31) + 1,
        frame_end=2**31 - 1,
    )
with checks.step("next pose jump skips frames blender does not have"):
    chain = ob.quat_ik.chains[0]
    chain.status_jump_frames = "99999999999,12"
    bpy.context.scene.frame_set(1)
    checks.check(
        "next pose jump skips frames Blender does not have",
        bpy.ops.quat_ik.next_jump() == {"FINISHED"} and bpy.context.scene.frame_current == 12,
        bpy.context.scene.frame_current,
    )

# ---- polls say why
with checks.step("polls say why"):
    ob.pose.bones["forearm.L"].quat_ik.windows.clear()
    for operator, why in (
        (bpy.ops.quat_ik.window_remove, "no reach window to remove"),
        (bpy.ops.quat_ik.polygon_vertex_add, "Select a polygon reach window"),
        (bpy.ops.quat_ik.polygon_vertex_remove, "more than three corners"),
    ):
        try:
            operator()
            message = "ran"
        except RuntimeError as error:
            message = str(error)
        checks.check(f"{operator.idname_py()} poll message", why in message, message)
checks.close()
