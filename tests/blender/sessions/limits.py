"""Session: per-bone joint limits: converted from Blender's IK limits and Limit Rotation,
edited with the window operators, shared by chains, and respected by solves.

argv: WORKDIR
"""

import math
import time

import bpy
import numpy as np

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    empty,
    pose_mode,
    radians,
    reset_scene,
    straight_rig,
    submodule,
)

checks = Checks("joint limits")
rig_reader = submodule("rig.reader")
reset_scene()
ob = straight_rig("Arm", 3)
target = empty("Target", (1.2, -0.8, 1.2))
add_chain(ob, "B2", 3, "Target", mode="MANUAL")
chain = ob.quat_ik.chains[0]
pb = ob.pose.bones

with checks.step("Blender's IK limits become a ball, a hinge and a fixed joint"):
    # ---- from Blender's IK limits
    b0, b1, b2 = pb["B0"], pb["B1"], pb["B2"]
    b0.use_ik_limit_x, b0.ik_min_x, b0.ik_max_x = True, radians(-30), radians(60)
    b0.use_ik_limit_z, b0.ik_min_z, b0.ik_max_z = True, radians(-45), radians(45)
    b0.use_ik_limit_y, b0.ik_min_y, b0.ik_max_y = True, radians(-20), radians(20)
    b1.lock_ik_y = b1.lock_ik_z = True
    b1.use_ik_limit_x, b1.ik_min_x, b1.ik_max_x = True, radians(0), radians(140)
    b2.lock_ik_x = b2.lock_ik_y = b2.lock_ik_z = True
    pose_mode(ob, "B0")
    for bone in (b0, b1, b2):  # selection moved from Bone to PoseBone in 5.0
        (bone if "select" in bone.bl_rna.properties else bone.bone).select = True
    result = bpy.ops.quat_ik.limits_from_blender(source="IK")
    checks.check("convert IK limits finished", result == {"FINISHED"}, result)
    l0, l1, l2 = b0.quat_ik, b1.quat_ik, b2.quat_ik
    checks.check("X, Y, Z limits -> ball", l0.joint_type == "BALL", l0.joint_type)
    checks.check(
        "Y range -> twist range",
        l0.use_twist_range
        and abs(math.degrees(l0.twist_min) + 20) < 1e-4
        and abs(math.degrees(l0.twist_max) - 20) < 1e-4,
        (l0.twist_min, l0.twist_max),
    )
    window = l0.windows[0] if l0.windows else None
    checks.check(
        "X and Z ranges -> one elliptic cone",
        window is not None and window.shape == "ELLIPTIC_CONE" and len(l0.windows) == 1,
        [w.shape for w in l0.windows],
    )
    checks.check(
        "half-angles: 45 toward X (the Z range), 45 toward Z (the X range)",
        np.allclose(np.degrees(window.half_angles), (45, 45), atol=1e-4),
        np.degrees(window.half_angles),
    )
    checks.check(
        "off-centre X range tilts the cone toward +Z",
        window.center[2] > 0.2 and abs(window.center[0]) < 1e-6,
        tuple(window.center),
    )
    checks.check(
        "one free axis -> hinge with its range",
        l1.joint_type == "HINGE"
        and l1.hinge_axis == "X"
        and l1.use_hinge_range
        and abs(math.degrees(l1.hinge_max) - 140) < 1e-4,
        (l1.joint_type, l1.hinge_axis),
    )
    checks.check("all locked -> fixed", l2.joint_type == "FIXED", l2.joint_type)

with checks.step("a Limit Rotation becomes a ball with a tilted ellipse"):
    # ---- from a Limit Rotation constraint
    constraint = b2.constraints.new("LIMIT_ROTATION")
    constraint.use_limit_x, constraint.min_x, constraint.max_x = True, radians(-10), radians(10)
    constraint.use_limit_z, constraint.min_z, constraint.max_z = True, radians(-70), radians(30)
    ob.data.bones.active = ob.data.bones["B2"]
    result = bpy.ops.quat_ik.limits_from_blender(source="LIMIT_ROTATION", only_active=True)
    window = l2.windows[0] if l2.windows else None
    checks.check(
        "Limit Rotation -> ball with free twist and a tilted ellipse",
        result == {"FINISHED"} and l2.joint_type == "BALL" and not l2.use_twist_range and window is not None,
        (result, l2.joint_type),
    )
    checks.check(
        "Z range -70..30 -> 50 toward X, centred toward +X",
        abs(math.degrees(window.half_angles[0]) - 50) < 1e-4 and window.center[0] > 0.3,
        (np.degrees(window.half_angles), tuple(window.center)),
    )
    b2.constraints.remove(constraint)

with checks.step("a Limit Rotation twist range through 180° stays round the back"):
    # ---- a Limit Rotation twist range through ±180°
    constraint = b2.constraints.new("LIMIT_ROTATION")
    constraint.use_limit_x, constraint.min_x, constraint.max_x = True, radians(-10), radians(10)
    constraint.use_limit_y, constraint.min_y, constraint.max_y = True, radians(150), radians(210)
    result = bpy.ops.quat_ik.limits_from_blender(source="LIMIT_ROTATION", only_active=True)
    twist_range = rig_reader.read_chain_rig(ob, chain).chain.limits[2].twist_range
    checks.check(
        "Y range 150..210 -> a twist range through 180, not round the front",
        result == {"FINISHED"}
        and l2.use_twist_range
        and np.allclose(np.degrees((l2.twist_min, l2.twist_max)), (150, 210), atol=1e-4)
        and bool(twist_range.contains(math.pi))
        and not bool(twist_range.contains(0.0)),
        (result, np.degrees((l2.twist_min, l2.twist_max))),
    )
    b2.constraints.remove(constraint)
    l2.use_twist_range = False

with checks.step("the window operators add and remove windows and corners"):
    # ---- solves respect the limits (ball + ellipse + twist, hinge, ball with a polygon)
    ob.data.bones.active = ob.data.bones["B2"]
    l2.windows.clear()
    result = bpy.ops.quat_ik.window_add(shape="POLYGON")
    checks.check(
        "add polygon window: four default corners",
        result == {"FINISHED"} and len(l2.windows[0].vertices) == 4,
        len(l2.windows[0].vertices) if l2.windows else 0,
    )
    bpy.ops.quat_ik.polygon_vertex_add()
    checks.check("add a corner: five, still convex", len(l2.windows[0].vertices) == 5, len(l2.windows[0].vertices))
    bpy.ops.quat_ik.polygon_vertex_remove()
    checks.check("remove a corner: four again", len(l2.windows[0].vertices) == 4, len(l2.windows[0].vertices))
    bpy.ops.quat_ik.window_add(shape="CONE")
    l2.windows[1].center = (1.0, 1.0, 0.0)
    l2.windows[1].half_angle = radians(15)
    checks.check(
        "two windows on one bone", [w.shape for w in l2.windows] == ["POLYGON", "CONE"], [w.shape for w in l2.windows]
    )

with checks.step("solves keep every limit"):
    rig = rig_reader.read_chain_rig(ob, chain)
    rng = np.random.default_rng(3)
    worst, reached = 0.0, 0
    for location in rng.uniform(-2.0, 2.0, size=(12, 3)):
        target.location = location + np.array([0, 0, 1.0])
        bpy.ops.quat_ik.solve(from_rest=True)
        rotations = np.array([[tuple(p.rotation_quaternion) for p in (b0, b1, b2)]])
        worst = max(worst, float(np.max(rig.chain.limit_violation(rotations))))
        reached += chain.status_converged
    checks.check("12 random targets: no solved pose violates a limit", worst < 1e-6, worst)
    checks.check("... and some of them are reachable within the limits", reached >= 2, reached)
    twist = np.array([tuple(b1.rotation_quaternion)])
    axis = twist[0, 1:] / max(np.linalg.norm(twist[0, 1:]), 1e-12)
    checks.check(
        "the hinge bone turns about X only", abs(abs(axis[0]) - 1.0) < 1e-6 or np.linalg.norm(twist[0, 1:]) < 1e-9, axis
    )

with checks.step("a second chain through a bone shares its limits"):
    # ---- limits live on the bone: a second chain through B1 shares them
    add_chain(ob, "B1", 2, "Target", mode="MANUAL")
    second = rig_reader.read_chain_rig(ob, ob.quat_ik.chains[1])
    checks.check(
        "a second chain through B1 sees its hinge",
        type(second.chain.limits[1]).__name__ == "HingeJoint",
        second.chain.limits[1],
    )
    ob.quat_ik.chains.remove(1)  # (sharing bones, the two would be one body with the body's start poses)
    ob.quat_ik.active_chain_index = 0

with checks.step("learned start poses are stored and go stale when a limit changes"):
    # ---- learned start poses: stored on the chain, stale after a limit changes
    started = time.perf_counter()
    result = bpy.ops.quat_ik.learn_start_poses()
    took = time.perf_counter() - started
    learned_store = submodule("chains.learned_store")
    checks.check(
        "learn start poses finished and stored them on the chain",
        result == {"FINISHED"} and learned_store.KEY in chain,
        f"{took:.1f} s",
    )
    bpy.ops.quat_ik.solve(from_rest=True)
    checks.check(
        "a solve with fresh learned poses has no warning about them",
        "learned" not in chain.status_message,
        chain.status_message,
    )
    l1.hinge_max = radians(120)
    bpy.ops.quat_ik.solve(from_rest=True)
    checks.check(
        "after a limit changes they are stale, and the chain says so",
        "stale" in chain.status_message,
        chain.status_message,
    )

checks.close()
