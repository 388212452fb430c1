"""Session: a file's Per Frame chains are solved when it loads, before any frame changes or edit:
the pose shown is the solved one even where the bones' own keys give another. Live chains keep
the pose they were saved with. Loading a file with no Per Frame chain solves nothing.

argv: WORKDIR
"""

import sys
from pathlib import Path

import bpy
import numpy as np

from tests.blender.sessions.common import Checks, add_chain, effector_world, empty, reset_scene, straight_rig, submodule

workdir = Path(sys.argv[1])
checks = Checks("Per Frame chains are solved when their file loads")
runtime = submodule("runtime.state").session
reset_scene()
scene = bpy.context.scene


def pose(ob) -> np.ndarray:
    """The rotations the bones hold (the original data: what the file shows before any update)."""
    return np.array([tuple(pose_bone.rotation_quaternion) for pose_bone in ob.pose.bones])


# A Per Frame arm whose bones are keyed at rest (the keys give the unsolved pose on every
# frame), reaching for an animated target; and a Live arm beside it.
with checks.step("frame 10 is solved before saving"):
    arm = straight_rig("Arm", 3)
    for pose_bone in arm.pose.bones:
        pose_bone.keyframe_insert("rotation_quaternion", frame=1)
    target = empty("Target", (1.0, 0.4, 2.2))
    target.keyframe_insert("location", frame=1)
    target.location = (-0.8, 0.9, 1.9)
    target.keyframe_insert("location", frame=20)
    add_chain(arm, "B2", 3, "Target", mode="PER_FRAME")
    live = straight_rig("LiveArm", 3)
    live.location.x = 4.0
    live_target = empty("LiveTarget", (5.0, 0.5, 2.0))
    add_chain(live, "B2", 3, "LiveTarget", mode="LIVE")
    scene.frame_set(10)
    solved, live_pose = pose(arm), pose(live)
    error = (effector_world(arm, "B2") - target.matrix_world.translation).length
    checks.check("frame 10 is solved before saving", error < 1e-3, error)

with checks.step("a per frame arm is solved when its file loads"):
    blend = workdir / "per_frame.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.read_homefile(use_empty=True)
    runtime.stats.clear()
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    arm, live, target = bpy.data.objects["Arm"], bpy.data.objects["LiveArm"], bpy.data.objects["Target"]
    checks.check("loaded: the Per Frame arm was solved", runtime.stats["chains_solved"] >= 1, dict(runtime.stats))
    checks.check(
        "... its bones hold the solved pose before any update", np.allclose(pose(arm), solved, atol=1e-6), pose(arm)
    )
    checks.check("... and the Live arm the pose it was saved with", np.allclose(pose(live), live_pose, atol=1e-6))
    error = (effector_world(arm, "B2") - target.matrix_world.translation).length
    checks.check("after the first update the arm still reaches the target", error < 1e-3, error)
with checks.step("frame 10 shows the same pose when set again"):
    scene = bpy.context.scene
    scene.frame_set(10)
    checks.check(
        "... the pose frame 10 shows when it is set again",
        np.allclose(pose(arm), solved, atol=1e-6),
        scene.frame_current,
    )

# A file without Per Frame chains: nothing is solved when it loads.
with checks.step("a file with no per frame chain solves nothing"):
    arm.quat_ik.chains[0].mode = "MANUAL"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    runtime.stats.clear()
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    checks.check("a file with no Per Frame chain: nothing solved", runtime.stats["solves"] == 0, dict(runtime.stats))

checks.close()
