"""Session for any Blender (bpy 5.0 or the 3.4 binary): the main path once, small and fast.

Builds a rig, adds a chain, solves, bakes (3.4: Action.fcurves; 5.0: channelbags), checks
per-frame mode and an Euler bone, and saves the file for the headless tests.

argv: WORKDIR [--save-userpref]  (the latter keeps the add-on enabled for later sessions)
"""

import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    effector_world,
    empty,
    pose_mode,
    reset_scene,
    straight_rig,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks(f"smoke test in Blender {bpy.app.version_string}")
with checks.step("add chain"):
    reset_scene()
    scene = bpy.context.scene
    ob = straight_rig("Arm", 3)
    ob.pose.bones["B1"].rotation_mode = "ZXY"
    target = empty("Target", (1.0, 0.5, 2.0))
    target.keyframe_insert("location", frame=1)
    target.location = (-0.5, 1.0, 1.5)
    target.keyframe_insert("location", frame=20)
    scene.frame_set(1)
    checks.check("add chain", add_chain(ob, "B2", 3, "Target", mode="MANUAL") == {"FINISHED"}, "")
with checks.step("solve reaches"):
    checks.check("solve", bpy.ops.quat_ik.solve() == {"FINISHED"}, "")
    checks.check("solve reaches", (effector_world(ob, "B2") - target.matrix_world.translation).length < 1e-3, "")
with checks.step("bake keys every chain bone and reaches"):
    checks.check("bake", bpy.ops.quat_ik.bake(frame_start=1, frame_end=20) == {"FINISHED"}, "")
    compat = submodule("compat")
    curves = compat.all_action_fcurves(ob.animation_data.action)
    paths = sorted({(fc.data_path, len(fc.keyframe_points)) for fc in curves})
    checks.check(
        "keys on every chain bone in its rotation mode",
        ('pose.bones["B1"].rotation_euler', 20) in paths and ('pose.bones["B0"].rotation_quaternion', 20) in paths,
        paths,
    )
    errors = []
    for frame in (1, 7, 13, 20):
        scene.frame_set(frame)
        errors.append((effector_world(ob, "B2") - target.matrix_world.translation).length)
    checks.check("baked keys reach the target", max(errors) < 1e-3, errors)
with checks.step("per frame poses reach"):
    ob.animation_data.action = None
    ob.quat_ik.chains[0].mode = "PER_FRAME"
    for frame in (3, 15):
        scene.frame_set(frame)
        checks.check(
            f"per-frame pose at frame {frame}",
            (effector_world(ob, "B2") - target.matrix_world.translation).length < 1e-3,
            "",
        )
ob.quat_ik.chains[0].mode = "MANUAL"
pose_mode(ob)
bpy.ops.wm.save_as_mainfile(filepath=str(workdir / "smoke.blend"))
if "--save-userpref" in sys.argv:
    bpy.ops.wm.save_userpref()
checks.close()
