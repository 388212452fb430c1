"""Session: a bake that must leave a pose jump says where, and Next Pose Jump goes there.

One bone in a 30° cone, its target passing straight behind it: the closest direction the cone
allows flips from one side of the cone to the other (60°) once the target has crossed the
plane through the bone's axis, between frames 20 and 21. A target inside the cone gives a
smooth bake and no jump.

argv: WORKDIR
"""

import bpy
import numpy as np

from tests.blender.sessions.common import Checks, add_chain, empty, make_rig, radians, reset_scene, submodule

checks = Checks("bake jumps: reported, kept on the chain, stepped through")
bake = submodule("bake.bake")
reset_scene()
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 41
ob = make_rig("Rig", [((0, 0, 0), (0, 0, 1))])
ball = ob.pose.bones["B0"].quat_ik
ball.joint_type = "BALL"
window = ball.windows.add()
window.shape = "CONE"
window.half_angle = radians(30)
target = empty("Target")
for frame, x in ((1, -1.0), (40, 1.0)):
    target.location = (x, 0.0, -1.0)  # behind the bone, crossing its axis at frame 20.5
    target.keyframe_insert("location", frame=frame)
add_chain(ob, "B0", 1, "Target")
chain = ob.quat_ik.chains[0]


def bake_range(start: int, end: int, **settings):
    job = bake.Bake(scene, ob, [chain], bake.BakeSettings(start, end, **settings))
    job.gather_all(bpy.context.evaluated_depsgraph_get)
    job.solve()
    return job.write()


with checks.step("the bake reports the jump and keeps its frame on the chain"):
    summary = bake_range(1, 41)
    jump_lines = [line for line in summary.warnings if "jumps" in line]
    checks.check("the bake report names the jump", len(jump_lines) == 1, summary.warnings)
    frames = [int(text) for text in chain.status_jump_frames.split(",") if text]
    checks.check("one jump kept on the chain, where the target crosses behind", frames == [21], frames)
    checks.check(
        "... and the report names that frame", bool(frames) and f"frame {frames[0]}" in jump_lines[0], jump_lines
    )


def baked_rotation(frame: int):
    scene.frame_set(frame)
    return ob.pose.bones["B0"].rotation_quaternion.copy()


with checks.step("the jump kept is the baked keys' turn into that frame"):
    if frames:
        turn = baked_rotation(frames[0] - 1).rotation_difference(baked_rotation(frames[0])).angle
        checks.near("the jump kept is the baked keys' turn into that frame", chain.status_largest_jump, turn, 1e-4)
        checks.near("... the cone's width: the bone swings from one side to the other", turn, radians(60), 0.01)

with checks.step("Next Pose Jump goes to the jump from either side"):
    scene.frame_set(1)
    checks.check("Next Pose Jump goes to the jump", bpy.ops.quat_ik.next_jump() == {"FINISHED"})
    checks.check("... which is the current frame now", scene.frame_current == frames[0], scene.frame_current)
    checks.check("no jump after it: cancelled", bpy.ops.quat_ik.next_jump() == {"CANCELLED"})
    checks.check("... and the frame stays", scene.frame_current == frames[0], scene.frame_current)
    scene.frame_set(41)
    checks.check("Previous goes back to it", bpy.ops.quat_ik.next_jump(previous=True) == {"FINISHED"})
    checks.check("... from the end of the shot", scene.frame_current == frames[0], scene.frame_current)

with checks.step("frames that are not numbers are skipped"):
    chain.status_jump_frames = f"x,{frames[0]},"  # only a script can write this: skipped, not an error
    scene.frame_set(1)
    checks.check("frames that are not numbers are skipped", bpy.ops.quat_ik.next_jump() == {"FINISHED"})
    checks.check("... the jump is still found", scene.frame_current == frames[0], scene.frame_current)

with checks.step("an eased bake turns through the jump in small steps"):
    # Eased over 10 frames, the pop becomes ten small turns: no jump reported, none kept.
    before = [baked_rotation(frame) for frame in range(1, 42)]
    summary = bake_range(1, 41, ease_jumps=10)
    checks.check(
        "an eased bake reports no jump", not any("jumps" in line for line in summary.warnings), summary.warnings
    )
    checks.check("... and keeps none", chain.status_jump_frames == "")
    after = [baked_rotation(frame) for frame in range(1, 42)]
    moved = [
        frame
        for frame, (a, b) in enumerate(zip(before, after, strict=True), start=1)
        if a.rotation_difference(b).angle > 1e-5
    ]
    checks.check(
        "... only frames round the jump moved",
        moved and min(moved) >= frames[0] - 5 and max(moved) < frames[0] + 5,
        moved,
    )
    # From the first eased frame on, each step is a share of the jump.
    eased_steps = [after[i - 1].rotation_difference(after[i]).angle for i in range(min(moved), max(moved) + 1)]
    checks.check("... each step through them a share of the jump", max(eased_steps) < turn / 3.0, (eased_steps, turn))
with checks.step("a negative easing is refused"):
    try:
        bake.Bake(scene, ob, [chain], bake.BakeSettings(1, 41, ease_jumps=-1))
        checks.check("a negative easing is refused", False)
    except submodule("errors").ChainError as error:
        checks.check("a negative easing is refused", "cannot be negative" in str(error), error)

with checks.step("a solve at one frame clears the bake's jumps"):
    # Solving now is not a bake: the jumps it reported are gone, and so is the way to them.
    bpy.ops.quat_ik.solve()
    checks.check("a solve at one frame clears the bake's jumps", chain.status_jump_frames == "")
    checks.check("Next Pose Jump is greyed out then", not bpy.ops.quat_ik.next_jump.poll())

with checks.step("a smooth bake reports no jump"):
    # A target the cone lets the bone point at every frame: a smooth bake and nothing to report.
    for fcurve_frame, x in ((1, -0.3), (40, 0.3)):
        target.location = (x, 0.2, 2.0)
        target.keyframe_insert("location", frame=fcurve_frame)
    chain.mode = "MANUAL"
    summary = bake_range(1, 41)
    checks.check(
        "a smooth bake reports no jump", not any("jumps" in line for line in summary.warnings), summary.warnings
    )
    checks.check("... and keeps none", chain.status_jump_frames == "" and chain.status_largest_jump == 0.0)

with checks.step("many jumps are named in one short warning"):
    # A shot with many jumps names the first few and counts the rest; the largest is named too.
    line = bake.jumps_warning(np.arange(1, 9) * 10.0, np.radians([12, 15, 20, 11, 13, 14, 90, 16]))
    checks.check("many jumps: the first five named, the rest counted", "(10, 20, 30, 40, 50 and 3 more)" in line, line)
    checks.check("... and the largest with its frame", "up to 90° at frame 70" in line, line)
    line = bake.jumps_warning(np.array([70.0]), np.radians([14.0]))
    checks.check("one jump: its turn and frame", "jumps between solution branches 14° at frame 70," in line, line)
    edges = {41.0: "pin 'foot.L' takes hold"}
    line = bake.jumps_warning(np.array([41.0]), np.radians([14.0]), edges)
    checks.check(
        "a jump where a pin takes hold names the pin", "where pin 'foot.L' takes hold at frame 41" in line, line
    )
    line = bake.jumps_warning(np.array([41.0, 60.0]), np.radians([14.0, 30.0]), edges)
    checks.check("... not when another jump is the solve's", "solution branches" in line, line)

checks.close()
