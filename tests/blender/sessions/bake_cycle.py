"""Session: a Cyclic bake loops. A 10-bone chain follows a target round a closed path; baked
plainly its pose at the last frame is far from where the first frame's pose would follow on
(the posture drifts), baked Cyclic it wraps as smoothly as it moves; a range whose last frame
repeats the first's target gets the first frame's keys again there; a wrap that stays a jump
is reported.

argv: WORKDIR
"""

import importlib
import math

import bpy

# isort: split
from tests.blender.sessions.common import Checks, add_chain, addon, empty, straight_rig, submodule

FRAMES = 120  # one lap: frame 121 would be frame 1 again

checks = Checks("cyclic bake")
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
rig = straight_rig("Tail", 10, length=0.3)  # 3 long, along +Z
target = empty("Target")


def key_lap(last_frame: int) -> None:
    """The target round a closed path, keyed on every frame up to ``last_frame``."""
    target.animation_data_clear()
    for frame in range(1, last_frame + 1):
        t = 2.0 * math.pi * (frame - 1) / FRAMES
        target.location = (1.1 * math.sin(t), 0.8 * math.sin(2.0 * t + 0.4), 2.0 + 0.35 * math.cos(t))
        target.keyframe_insert("location", frame=frame)


def baked_poses(first: int, last: int) -> list:
    poses = []
    for frame in range(first, last + 1):
        scene.frame_set(frame)
        poses.append([pb.rotation_quaternion.copy() for pb in rig.pose.bones])
    return poses


def turn(a, b) -> float:
    """Largest joint turn between two poses (radians)."""
    return max(p.rotation_difference(q).angle for p, q in zip(a, b, strict=True))


def bake(last_frame: int, **options) -> None:
    rig.animation_data_clear()
    for pose_bone in rig.pose.bones:
        pose_bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=last_frame, destination="NEW_ACTION", **options)
    checks.check(f"bake {options or 'plain'} finished", result == {"FINISHED"})


with checks.step("a chain is added"):
    key_lap(FRAMES)
    checks.check("chain added", add_chain(rig, "B9", 10, "Target", mode="MANUAL") == {"FINISHED"})
    rig.quat_ik.chains[0].tolerance = 1e-3

with checks.step("a plain bake drifts"):
    bake(FRAMES)
    plain = baked_poses(1, FRAMES)
    plain_steps = [turn(plain[i], plain[i + 1]) for i in range(FRAMES - 1)]
    plain_wrap = turn(plain[-1], plain[0])
    checks.check(
        "plain bake: the last pose is far from the first (the posture drifted)",
        plain_wrap > 3.0 * max(plain_steps),
        f"wrap {math.degrees(plain_wrap):.1f}°, steps up to {math.degrees(max(plain_steps)):.2f}°",
    )

with checks.step("a cyclic bake wraps as smoothly as it moves"):
    bake(FRAMES, cyclic=True)
    looped = baked_poses(1, FRAMES)
    steps = [turn(looped[i], looped[i + 1]) for i in range(FRAMES - 1)]
    wrap = turn(looped[-1], looped[0])
    checks.check(
        "cyclic bake: the last frame leads into the first as smoothly as the loop moves",
        wrap <= 1.5 * max(steps),
        f"wrap {math.degrees(wrap):.2f}°, steps up to {math.degrees(max(steps)):.2f}°",
    )
    checks.check(
        "... every frame reaching", rig.quat_ik.chains[0].status_converged, rig.quat_ik.chains[0].status_message
    )

with checks.step("a repeated first frame gets the first frame's pose"):
    # Keyed as Blender's Cycles modifier wants it: frame 121 repeats frame 1.
    key_lap(FRAMES + 1)
    bake(FRAMES + 1, cyclic=True)
    repeated = baked_poses(1, FRAMES + 1)
    checks.check("a repeated first frame gets the first frame's pose", turn(repeated[-1], repeated[0]) < 1e-5)
    checks.check(
        "... and the loop before it is the same loop",
        max(turn(a, b) for a, b in zip(repeated[:-1], looped, strict=True)) < 1e-4,
    )

with checks.step("a wrap that stays a jump is reported"):
    # A wrap the solver could not close is reported (forced here: the solver's tests make real ones).
    pipeline = importlib.import_module(f"{addon().__name__}.solver.request")
    pipeline.visible_wrap_jump = lambda rotations, repeats: math.radians(27.0)
    bake_module = submodule("bake.bake")
    job = bake_module.Bake(scene, rig, list(rig.quat_ik.chains), bake_module.BakeSettings(1, FRAMES, cyclic=True))
    job.gather_all(bpy.context.evaluated_depsgraph_get)
    job.solve()
    summary = job.write()
    checks.check(
        "a wrap that stays a jump is named in the report",
        any(
            f"the loop does not close: the pose jumps 27° where frame {FRAMES} leads into frame 1" in w
            for w in summary.warnings
        ),
        summary.warnings,
    )
checks.close()
