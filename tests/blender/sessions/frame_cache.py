"""Session: Per Frame solves from rest are remembered by their inputs: playing the frames
again solves nothing and gives the very same poses; a changed limit, setting or parent
solves again.

argv: WORKDIR
"""

import sys
from pathlib import Path

import bpy
import numpy as np

from tests.blender.sessions.common import Checks, add_chain, empty, reset_scene, straight_rig, submodule

workdir = Path(sys.argv[1])
checks = Checks("Per Frame solves are remembered")
solve_cache = submodule("solving.cache")
reset_scene()
scene = bpy.context.scene

ob = straight_rig("Arm", 3)
for pose_bone in ob.pose.bones:
    pose_bone.quat_ik.joint_type = "BALL"
    window = pose_bone.quat_ik.windows.add()
    window.shape, window.half_angle = "CONE", np.radians(40.0)
target = empty("Target", (1.0, 0.4, 2.2))
target.keyframe_insert("location", frame=1)
target.location = (-0.8, 0.9, 1.9)
target.keyframe_insert("location", frame=20)
add_chain(ob, "B2", 3, "Target", mode="PER_FRAME")
frames = range(1, 21)


def play() -> np.ndarray:
    poses = []
    for frame in frames:
        scene.frame_set(frame)
        poses.append([tuple(pose_bone.rotation_quaternion) for pose_bone in ob.pose.bones])
    return np.array(poses)


with checks.step("a pass solves each frame once and playing again solves nothing"):
    solve_cache.clear()
    first = play()
    checks.check("the first pass solves every frame", solve_cache.stats["misses"] == 20, dict(solve_cache.stats))
    solve_cache.stats.clear()
    second = play()
    checks.check("playing again solves nothing", dict(solve_cache.stats) == {"hits": 20}, dict(solve_cache.stats))
    checks.check("... and gives the very same poses", np.array_equal(first, second), np.max(np.abs(first - second)))
    checks.check("the poses move with the target", np.max(np.abs(first[0] - first[-1])) > 0.1)

with checks.step("the rig read again is the same solver chain"):
    # The rig is read on every frame; while nothing it holds changes, it is the same solver chain
    # (built once, with its clamps and fingerprint), and a change builds a new one.
    rig_reader = submodule("rig.reader")
    read_chain = rig_reader.read_chain_rig(ob, ob.quat_ik.chains[0]).chain
    checks.check(
        "the rig read again is the same chain", rig_reader.read_chain_rig(ob, ob.quat_ik.chains[0]).chain is read_chain
    )


def tip_length(scale: float) -> None:
    ob.pose.bones["B2"].scale = (scale, scale, scale)


with checks.step("anything a solve depends on makes it solve again"):
    # Anything a solve depends on makes it solve again.
    changes = {
        "a narrower limit": lambda: setattr(ob.pose.bones["B1"].quat_ik.windows[0], "half_angle", np.radians(25.0)),
        "a solver setting": lambda: setattr(ob.quat_ik.chains[0], "tolerance", 1e-3),
        "a moved armature": lambda: setattr(ob, "location", (0.3, 0.0, 0.0)),
        "a scaled tip bone": lambda: tip_length(1.5),
        "a locked rotation channel": lambda: setattr(ob.pose.bones["B0"], "lock_rotation", (False, True, False)),
    }
    chain_changes = {"a narrower limit": np.radians(25.0), "a scaled tip bone": 1.5, "a locked rotation channel": None}
    for what, change in changes.items():
        scene.frame_set(10)
        before = [tuple(pose_bone.rotation_quaternion) for pose_bone in ob.pose.bones]
        chain_before = rig_reader.read_chain_rig(ob, ob.quat_ik.chains[0]).chain
        change()
        if what in chain_changes:
            changed = rig_reader.read_chain_rig(ob, ob.quat_ik.chains[0]).chain
            checks.check(
                f"{what}: a new solver chain",
                changed is not chain_before and changed.fingerprint != chain_before.fingerprint,
            )
        if what == "a scaled tip bone":
            checks.check(
                "... of the new length",
                abs(changed.lengths[-1] - 1.5 * chain_before.lengths[-1]) < 1e-9,
                changed.lengths,
            )
        solve_cache.stats.clear()
        scene.frame_set(11)
        scene.frame_set(10)
        after = [tuple(pose_bone.rotation_quaternion) for pose_bone in ob.pose.bones]
        checks.check(f"{what} solves again", solve_cache.stats["misses"] == 2, dict(solve_cache.stats))
        if what == "a narrower limit":
            checks.check("... to a new pose", np.max(np.abs(np.array(after) - np.array(before))) > 1e-3)

checks.close()
