"""Session: reading and writing the rig in every space it can be in.

Every rotation mode gives the same world pose (solve and bake, continuous curves); locked
channels; rolled, unconnected bones with pose location and scale; an animated parent; a
rotated, non-uniformly and negatively scaled armature; targets that are bones of another
armature or parented objects; an effector offset; a chain hanging below another chain.

argv: WORKDIR
"""

import math

import bpy
import mathutils
import numpy as np

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    bone_world_matrices,
    effector_world,
    empty,
    make_rig,
    matrix_distance,
    pose_mode,
    reset_scene,
    straight_rig,
    submodule,
)

checks = Checks("rig spaces, rotation modes, targets")
rotation_modes = submodule("rig.rotation_modes")
compat = submodule("compat")

ROLLED = [((0, 0, 0), (0.3, 0.1, 1.0)), ((0.3, 0.1, 1.0), (0.2, 0.8, 1.8)), ((0.2, 0.8, 1.8), (0.5, 1.0, 2.6))]
ROLLS = [0.4, -1.1, 2.0]


def solve(ob, **kwargs) -> set:
    pose_mode(ob)
    return bpy.ops.quat_ik.solve(**kwargs)


# ---------------------------------------------------------------- rotation modes
with checks.step("every rotation mode gives the same world pose"):
    reset_scene()
    scene = bpy.context.scene
    reference = None
    for mode in rotation_modes.ROTATION_MODES:
        ob = make_rig(f"Rig_{mode}", ROLLED, rolls=ROLLS)
        target = empty(f"T_{mode}", (1.1, -0.6, 1.9))
        add_chain(ob, "B2", 3, target.name, mode="MANUAL")
        for pb in ob.pose.bones:
            pb.rotation_mode = mode
        solve(ob, from_rest=True)
        pose = bone_world_matrices(ob)
        if reference is None:
            reference = pose
        worst = max(matrix_distance(pose[name], reference[name]) for name in pose)
        checks.check(f"{mode}: same world pose as quaternion mode", worst < 1e-4, f"largest difference {worst:.2e}")
        checks.check(f"{mode}: reaches the target", (effector_world(ob, "B2") - target.location).length < 1e-3, "")
        bpy.ops.object.mode_set(mode="OBJECT")
        ob.hide_set(True)
        target.hide_set(True)

# A baked sequence's Euler curves are Blender's own compatible Eulers, computed in numpy.
with checks.step("euler curves equal blender's compatible eulers"):
    euler_curves = submodule("rig.rotation_modes")  # (its euler_curves is the solver's, solver/euler_curves.py)
    rng = np.random.default_rng(5)
    turns = np.cumsum(rng.normal(size=(300, 3)) * 0.03 + 0.06, axis=0)
    sequence = np.array([mathutils.Euler(angles, "XYZ").to_quaternion() for angles in turns])
    for order in rotation_modes.EULER_ORDERS:
        previous = mathutils.Euler((6.5, -3.0, 0.2), order)
        ours = euler_curves.euler_curves(sequence, order, tuple(previous))
        theirs = []
        for q in sequence:
            previous = mathutils.Quaternion(q).to_euler(order, previous)
            theirs.append(tuple(previous))
        difference = float(np.max(np.abs(ours - np.array(theirs))))
        checks.check(f"{order}: Euler curves equal Quaternion.to_euler(order, previous)", difference < 1e-4, difference)

# Bake a full turn: the root bone spins about the world Z axis, Euler curves must unwrap.
with checks.step("a baked full turn keys continuous curves in every mode"):
    scene.frame_start, scene.frame_end = 1, 48
    curves = {}
    for mode in ("QUATERNION", "XYZ", "ZYX", "YXZ", "AXIS_ANGLE"):
        ob = make_rig(f"Spin_{mode}", [((0, 0, 0), (1, 0, 0)), ((1, 0, 0), (2, 0, 0))])
        target = empty(f"Spin_T_{mode}")
        for frame in range(1, 49, 2):
            angle = 2.0 * math.pi * (frame - 1) / 47.0 * 1.2
            target.location = (1.6 * math.cos(angle), 1.6 * math.sin(angle), 0.3)
            target.keyframe_insert("location", frame=frame)
        add_chain(ob, "B1", 2, target.name, mode="MANUAL")
        for pb in ob.pose.bones:
            pb.rotation_mode = mode
        pose_mode(ob)
        result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=48)
        path, size = rotation_modes.data_path_and_size(mode)
        values = {}
        for fcurve in compat.all_action_fcurves(ob.animation_data.action):
            if fcurve.data_path == f'pose.bones["B0"].{path}':
                values[fcurve.array_index] = [k.co[1] for k in fcurve.keyframe_points]
        jumps = max(float(np.max(np.abs(np.diff(v)))) for v in values.values())
        checks.check(
            f"{mode}: bake keys the bone's own channels",
            result == {"FINISHED"} and sorted(values) == list(range(size)),
            sorted(values),
        )
        checks.check(
            f"{mode}: curves continuous over a full turn (largest key-to-key step {jumps:.3f})", jumps < 0.6, jumps
        )
        errors = []
        for frame in range(1, 49, 5):
            scene.frame_set(frame)
            errors.append((effector_world(ob, "B1") - target.matrix_world.translation).length)
        checks.check(f"{mode}: baked keys reach the target", max(errors) < 1e-3, max(errors))
        bpy.ops.object.mode_set(mode="OBJECT")
        ob.hide_set(True)

# ---------------------------------------------------------------- locked channels
with checks.step("locked channels hold and the chain reaches around them"):
    reset_scene()
    ob = make_rig("Locks", ROLLED, rolls=ROLLS)
    target = empty("T", (0.9, 0.2, 2.2))
    add_chain(ob, "B2", 3, "T", mode="MANUAL")
    pb = ob.pose.bones
    pb["B0"].rotation_mode = "XYZ"
    pb["B0"].rotation_euler = (0.0, 0.3, 0.0)
    pb["B0"].lock_rotation[1] = True
    pb["B1"].rotation_mode = "QUATERNION"
    pb["B1"].rotation_quaternion = (0.95, 0.2, 0.1, 0.2)
    pb["B1"].lock_rotation = (True, True, True)
    pb["B1"].lock_rotation_w = True  # 4D locking (the default): x, y, z alone leave a hinge about them
    held = tuple(pb["B1"].rotation_quaternion)
    solve(ob)
    chain = ob.quat_ik.chains[0]
    checks.check(
        "locked Euler Y keeps its exact value",
        pb["B0"].rotation_euler[1] == 0.3 or abs(pb["B0"].rotation_euler[1] - 0.3) < 1e-7,
        pb["B0"].rotation_euler[1],
    )
    checks.check(
        "fully locked bone is not written",
        tuple(pb["B1"].rotation_quaternion) == held,
        tuple(pb["B1"].rotation_quaternion),
    )
    checks.check(
        "the chain still reaches around the locked bone",
        (effector_world(ob, "B2") - target.location).length < 1e-3,
        (effector_world(ob, "B2") - target.location).length,
    )
# Quaternion and axis-angle locks, as Blender's rotate tool reads them: XYZ Euler angles,
# or with lock_rotations_4d the raw channels themselves (tests/window checks the tool).
with checks.step("a quaternion lock keeps its XYZ euler angle"):
    pb["B2"].rotation_quaternion = (0.9, 0.3, -0.2, 0.25)
    pb["B2"].lock_rotation = (True, False, False)
    pb["B2"].lock_rotations_4d = False
    euler_before = pb["B2"].rotation_quaternion.to_euler("XYZ")
    target.location = (0.4, 0.9, 2.0)
    solve(ob)
    euler_after = pb["B2"].rotation_quaternion.to_euler("XYZ")
    checks.check(
        "quaternion lock on X keeps the XYZ Euler X angle, the rest turns",
        abs(euler_after.x - euler_before.x) < 1e-6 and abs(euler_after.z - euler_before.z) > 1e-3,
        (tuple(euler_before), tuple(euler_after)),
    )
    checks.check("a quaternion lock is no warning", not chain.status_message, chain.status_message)

with checks.step("4D quaternion locks keep their raw channels, baked too"):
    pb["B2"].lock_rotations_4d = True
    pb["B2"].lock_rotation = (True, True, False)
    raw_before = tuple(pb["B2"].rotation_quaternion)
    target.location = (-0.5, 0.6, 2.1)
    solve(ob)
    raw_after = tuple(pb["B2"].rotation_quaternion)
    checks.check(
        "4D quaternion locks keep the raw X and Y exactly, W and Z change",
        raw_after[1:3] == raw_before[1:3]
        and abs(raw_after[0] - raw_before[0]) + abs(raw_after[3] - raw_before[3]) > 1e-3,
        (raw_before, raw_after),
    )
    pose_mode(ob)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=6, destination="NEW_ACTION")
    fcurves = compat.all_action_fcurves(ob.animation_data.action)
    keyed = sorted(fc.array_index for fc in fcurves if fc.data_path == 'pose.bones["B2"].rotation_quaternion')
    checks.check("a bake keys only the channels 4D locks leave free", result == {"FINISHED"} and keyed == [0, 3], keyed)
    scene = bpy.context.scene
    scene.frame_set(3)
    checks.check(
        "baked 4D-locked channels still hold their values",
        tuple(pb["B2"].rotation_quaternion)[1:3] == raw_before[1:3],
        tuple(pb["B2"].rotation_quaternion),
    )
    ob.animation_data.action = None

with checks.step("a 4D axis-angle lock keeps the angle"):
    pb["B2"].rotation_mode = "AXIS_ANGLE"
    pb["B2"].rotation_axis_angle = (0.6, 0.2, 0.9, -0.1)
    pb["B2"].lock_rotation = (False, False, False)
    pb["B2"].lock_rotation_w = True
    angle_before, *axis_before = pb["B2"].rotation_axis_angle
    target.location = (0.7, 0.7, 2.0)
    solve(ob)
    angle, *axis = pb["B2"].rotation_axis_angle
    turned = (mathutils.Vector(axis).normalized() - mathutils.Vector(axis_before).normalized()).length
    checks.check(
        "4D axis-angle lock on W keeps the angle exactly, the axis turns",
        angle == angle_before and turned > 1e-3,
        tuple(pb["B2"].rotation_axis_angle),
    )

# ---------------------------------------------------------------- unconnected bones, pose location and scale, effector offset
with checks.step("unconnected bones with pose location, scale and an effector offset reach"):
    reset_scene()
    ob = make_rig(
        "Gaps",
        [((0, 0, 0), (0, 0.3, 1.0)), ((0.2, 0.4, 1.2), (0.2, 0.4, 2.0)), ((0.5, 0.4, 2.1), (0.5, 1.0, 2.6))],
        rolls=[0.2, 0.9, -0.6],
        connected=[False, False, False],
    )
    target = empty("T", (1.0, 1.0, 1.6))
    add_chain(ob, "B2", 3, "T", mode="MANUAL")
    chain = ob.quat_ik.chains[0]
    ob.pose.bones["B1"].location = (0.1, -0.05, 0.2)
    ob.pose.bones["B1"].scale = (1.3, 1.3, 1.3)
    chain.effector_offset = (0.0, 0.2, 0.1)
    solve(ob)
    error = (effector_world(ob, "B2", chain.effector_offset) - target.location).length
    checks.check("unconnected bones + pose location + uniform scale + effector offset reach", error < 1e-3, error)

# ---------------------------------------------------------------- animated parent, transformed armature
with checks.step("transformed armatures with animated hips reach a bone target"):
    for label, location, rotation, scale in (
        ("rotated", (1, 2, 0), (0.5, -0.3, 1.2), (1, 1, 1)),
        ("non-uniform scale", (0, 0, 1), (0.2, 0.0, 0.4), (1.0, 2.0, 0.5)),
        ("negative scale", (0.5, 0, 0), (0.0, 0.3, 0.0), (-1.0, 1.0, 1.0)),
    ):
        reset_scene()
        scene = bpy.context.scene
        ob = make_rig(
            "Body",
            [((0, 0, 1), (0, 0, 2)), ((0, 0, 2), (0.2, 0, 2.9)), ((0.2, 0, 2.9), (0.3, 0.1, 3.7))],
            rolls=ROLLS,
            parent_of_first="Hips",
            extra_bones=[("Hips", (0, 0, 0), (0, 0, 1), None)],
        )
        ob.location, ob.rotation_euler, ob.scale = location, rotation, scale
        # Animated hips (the chain root's parent).
        hips = ob.pose.bones["Hips"]
        for frame, angle in ((1, 0.0), (10, 0.6), (20, -0.4)):
            hips.rotation_quaternion = (math.cos(angle / 2), 0.0, math.sin(angle / 2) * 0.6, math.sin(angle / 2) * 0.8)
            hips.keyframe_insert("rotation_quaternion", frame=frame)
        # Target: a bone of another, animated and transformed armature.
        other = straight_rig("Other", 2, 0.5)
        other.location, other.rotation_euler, other.scale = (0.8, 1.0, 1.5), (0.3, 0.2, 0.1), (1.5, 1.0, 0.8)
        for frame, x in ((1, 0.0), (20, 0.4)):
            other.pose.bones["B0"].rotation_euler = (x, 0, 0)
            other.pose.bones["B0"].rotation_mode = "XYZ"
            other.pose.bones["B0"].keyframe_insert("rotation_euler", frame=frame)

        def world_target(other=other):
            return other.matrix_world @ other.pose.bones["B1"].head

        add_chain(ob, "B2", 3, "Other", target_bone="B1", mode="PER_FRAME")
        errors = []
        for frame in (1, 5, 10, 15, 20):
            scene.frame_set(frame)
            errors.append((effector_world(ob, "B2") - world_target()).length)
        checks.check(
            f"{label} armature, animated hips, bone target: per-frame reaches",
            max(errors) < 1e-3,
            f"max {max(errors):.2e}",
        )
        pose_mode(ob)
        result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=20)
        errors = []
        for frame in range(1, 21, 3):
            scene.frame_set(frame)
            errors.append((effector_world(ob, "B2") - world_target()).length)
        checks.check(
            f"{label}: baked keys reach the world target",
            result == {"FINISHED"} and max(errors) < 1e-3,
            f"max {max(errors):.2e}",
        )

# ---------------------------------------------------------------- a chain below another chain
with checks.step("a chain below another chain reaches, solved and baked"):
    reset_scene()
    scene = bpy.context.scene
    ob = make_rig(
        "Torso",
        [((0, 0, 1), (0, 0, 1.6)), ((0, 0, 1.6), (0, 0, 2.2))],
        parent_of_first="Pelvis",
        extra_bones=[("Pelvis", (0, 0, 0), (0, 0, 1), None)],
    )
    pose_mode(ob)
    bpy.ops.object.mode_set(mode="EDIT")
    arm = ob.data.edit_bones
    upper = arm.new("Upper")
    upper.head, upper.tail, upper.parent = (0, 0, 2.2), (0.8, 0, 2.2), arm["B1"]
    lower = arm.new("Lower")
    lower.head, lower.tail, lower.parent, lower.use_connect = (0.8, 0, 2.2), (1.5, 0, 2.2), upper, True
    bpy.ops.object.mode_set(mode="OBJECT")
    chest_target = empty("ChestTarget", (0.4, 0.3, 2.0))
    hand_target = empty("HandTarget", (1.2, 1.0, 2.0))
    add_chain(ob, "B1", 2, "ChestTarget", mode="MANUAL")
    add_chain(ob, "Lower", 2, "HandTarget", mode="MANUAL")
    pose_mode(ob)
    solve(ob, chains="ALL", from_rest=True)
    spine_error = (effector_world(ob, "B1") - chest_target.location).length
    arm_error = (effector_world(ob, "Lower") - hand_target.location).length
    checks.check("spine chain reaches", spine_error < 1e-3, spine_error)
    checks.check("arm chain hanging below it reaches too (solved after the spine moved)", arm_error < 1e-3, arm_error)
    for frame, location in ((1, (0.4, 0.3, 2.0)), (12, (-0.3, 0.2, 2.0))):
        chest_target.location = location
        chest_target.keyframe_insert("location", frame=frame)
    for frame, location in ((1, (1.2, 1.0, 2.0)), (12, (0.6, -0.6, 2.3))):
        hand_target.location = location
        hand_target.keyframe_insert("location", frame=frame)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, chains="ALL")
    errors = []
    for frame in range(1, 13):
        scene.frame_set(frame)
        errors.append(
            max(
                (effector_world(ob, "B1") - chest_target.matrix_world.translation).length,
                (effector_world(ob, "Lower") - hand_target.matrix_world.translation).length,
            )
        )
    checks.check(
        "baking both chains together: both reach on every frame",
        result == {"FINISHED"} and max(errors) < 1e-3,
        f"max {max(errors):.2e}",
    )

# ---------------------------------------------------------------- orientation target
with checks.step("match target rotation"):
    reset_scene()
    ob = make_rig("Wrist", ROLLED, rolls=ROLLS)
    ob.rotation_euler = (0.3, 0.0, -0.5)
    # A target the tip can reach exactly, position and rotation: where a posed tip was.
    for name, rotation in (("B0", (0.9, 0.3, 0.1, 0.2)), ("B1", (0.8, -0.2, 0.4, 0.1)), ("B2", (0.9, 0.1, -0.3, 0.2))):
        ob.pose.bones[name].rotation_quaternion = rotation
    posed_tip = bone_world_matrices(ob)["B2"]
    target = empty("Hand", effector_world(ob, "B2"))
    target.rotation_euler = posed_tip.to_euler()
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_quaternion = (1, 0, 0, 0)
    add_chain(ob, "B2", 3, "Hand", mode="MANUAL", orientation_mode="MATCH_TARGET", iterations=500)
    ob.quat_ik.chains[0].orientation_weight = 1.0
    solve(ob, from_rest=True)
    tip = bone_world_matrices(ob)["B2"].to_quaternion()
    wanted = target.matrix_world.to_quaternion()
    angle = math.degrees(tip.rotation_difference(wanted).angle)
    error = (effector_world(ob, "B2") - target.location).length
    checks.check("match target rotation: the tip bone takes the target's rotation", angle < 1.0, f"{angle:.3f} degrees")
    checks.check("... while reaching its position", error < 1e-2, error)

checks.close()
