"""Session: a chain's Influence blends the solved pose with the bones' own pose. Solve Now at
0.5 turns each joint half way from a hand-made pose to the solved one, and again and again
stays there (the own pose is remembered, the blend does not creep); a hand edit becomes the new
own pose; 0 leaves the pose alone. Per Frame blends with the bones' keys at each frame. A bake
with an animated Influence (keyed 0 → 1) starts on the keys and ends on the target, and reads
the same whether its inputs are sampled from the F-curves or read frame by frame.

argv: WORKDIR
"""

import bpy
from mathutils import Euler, Quaternion

# isort: split
from tests.blender.sessions.common import Checks, add_chain, effector_world, empty, straight_rig, submodule

checks = Checks("influence")
bpy.ops.wm.read_homefile(use_empty=True)
scene = bpy.context.scene
rig = straight_rig("Arm", 3, length=1.0)
target = empty("Target", (1.2, 0.4, 1.6))
with checks.step("a chain is added"):
    checks.check("chain added", add_chain(rig, "B2", 3, "Target", mode="MANUAL") == {"FINISHED"})
    chain = rig.quat_ik.chains[0]
    chain.tolerance = 1e-5
    bones = [rig.pose.bones[f"B{i}"] for i in range(3)]
    HAND_POSE = [Euler(e).to_quaternion() for e in ((0.3, 0.0, -0.2), (0.5, 0.1, 0.0), (-0.4, 0.2, 0.3))]


def pose() -> list[Quaternion]:
    return [b.rotation_quaternion.copy() for b in bones]


def set_pose(rotations) -> None:
    for bone, q in zip(bones, rotations, strict=True):
        bone.rotation_quaternion = q
    bpy.context.view_layer.update()


def gap(a, b) -> float:
    return max(p.rotation_difference(q).angle for p, q in zip(a, b, strict=True))


def halfway(a, b, share: float = 0.5) -> list[Quaternion]:
    return [p.slerp(q, share) for p, q in zip(a, b, strict=True)]


def reach() -> float:
    return (effector_world(rig, "B2") - target.matrix_world.translation).length


with checks.step("influence 1 reaches"):
    set_pose(HAND_POSE)
    bpy.ops.quat_ik.solve(from_rest=True)
    solved = pose()
    checks.check("influence 1 reaches", reach() < 1e-4, f"{reach():.2e}")

with checks.step("influence 0.5 poses half way from the own pose, solved again too"):
    set_pose(HAND_POSE)
    chain.influence = 0.5
    bpy.ops.quat_ik.solve(from_rest=True)
    checks.check("influence 0.5: half way from the hand-made pose", gap(pose(), halfway(HAND_POSE, solved)) < 1e-5)
    checks.check("... so the tip misses", reach() > 0.05, f"{reach():.3f}")
    for _ in range(3):
        bpy.ops.quat_ik.solve(from_rest=True)
    checks.check(
        "solved again three times: still half way (the own pose is remembered)",
        gap(pose(), halfway(HAND_POSE, solved)) < 1e-5,
        f"{gap(pose(), halfway(HAND_POSE, solved)):.2e} (creeping would give {gap(halfway(HAND_POSE, solved, 0.875), halfway(HAND_POSE, solved)):.2f})",
    )
with checks.step("a hand edit is the bone's new own pose, influence 0 leaves it"):
    edited = [HAND_POSE[0], Euler((-0.6, 0.0, 0.4)).to_quaternion(), HAND_POSE[2]]
    bones[1].rotation_quaternion = edited[1]
    bpy.ops.quat_ik.solve(from_rest=True)
    checks.check("a hand edit is the bone's new own pose", gap(pose(), halfway(edited, solved)) < 1e-5)
    chain.influence = 0.0
    bpy.ops.quat_ik.solve(from_rest=True)
    checks.check("influence 0 leaves the own pose", gap(pose(), edited) < 1e-5)

with checks.step("Per Frame blends with the keys and does not creep"):
    # Per Frame: the keys are the own pose, frame after frame.
    chain.influence = 1.0
    rig.animation_data_clear()
    KEYED = {
        1: HAND_POSE,
        20: [Euler(e).to_quaternion() for e in ((-0.3, 0.0, 0.4), (0.2, -0.3, 0.1), (0.6, 0.0, -0.2))],
    }
    for frame, rotations in KEYED.items():
        set_pose(rotations)
        for bone in bones:
            bone.keyframe_insert("rotation_quaternion", frame=frame)
    chain.influence = 0.5
    chain.mode = "PER_FRAME"
    scene.frame_set(20)
    first = pose()
    checks.check(
        "per frame: half way from the keys at frame 20",
        gap(first, halfway(KEYED[20], solved)) < 1e-4,
        gap(first, halfway(KEYED[20], solved)),
    )
    scene.frame_set(19)
    scene.frame_set(20)
    checks.check("... and the same on coming back (no creep)", gap(pose(), first) < 1e-6)
    chain.mode = "MANUAL"

with checks.step("a bake after Per Frame blends from the hand-made pose"):
    # A bone no key moves holds what Per Frame wrote: a bake blends from the pose it had before.
    rig.animation_data_clear()
    set_pose(HAND_POSE)
    chain.mode = "PER_FRAME"
    scene.frame_set(2)
    scene.frame_set(3)
    chain.mode = "MANUAL"
    bpy.ops.quat_ik.bake(frame_start=1, frame_end=3, destination="NEW_ACTION")
    scene.frame_set(2)
    checks.check(
        "a bake after Per Frame blends from the hand-made pose, not from what was written",
        gap(pose(), halfway(HAND_POSE, solved)) < 1e-4,
        gap(pose(), halfway(HAND_POSE, solved)),
    )
    rig.animation_data_clear()
    for frame, rotations in KEYED.items():
        set_pose(rotations)
        for bone in bones:
            bone.keyframe_insert("rotation_quaternion", frame=frame)

with checks.step("an animated influence is sampled as read frame by frame"):
    # A bake with Influence keyed 0 at frame 1 and 1 at frame 20.
    chain.influence = 0.0
    chain.keyframe_insert("influence", frame=1)
    chain.influence = 1.0
    chain.keyframe_insert("influence", frame=20)
    scene.frame_set(1)  # the keys hold again (sampling checks the current frame against the scene)
    bake = submodule("bake.bake")
    outcomes = {}
    for sample in (True, False):
        job = bake.Bake(scene, rig, [chain], bake.BakeSettings(1, 20, sample_inputs=sample))
        job.gather_all(bpy.context.evaluated_depsgraph_get)
        outcomes[job.gather_path] = (job.solve()[0].outcome.rotations, job.sampling_refused)
    checks.check(
        "an animated influence is sampled from its F-curve",
        set(outcomes) == {"sampled", "frame_set"},
        outcomes.get("frame_set", (0, ""))[1],
    )
    if len(outcomes) == 2:
        difference = abs(outcomes["sampled"][0] - outcomes["frame_set"][0]).max()
        checks.check("... the same as reading frame by frame", difference < 1e-6, difference)
with checks.step("a bake follows an animated influence"):
    checks.check(
        "bake finished", bpy.ops.quat_ik.bake(frame_start=1, frame_end=20, destination="NEW_ACTION") == {"FINISHED"}
    )
    scene.frame_set(1)
    checks.check(
        "baked frame 1 (influence 0) holds the keyed pose", gap(pose(), HAND_POSE) < 1e-4, gap(pose(), HAND_POSE)
    )
    scene.frame_set(20)
    checks.check("baked frame 20 (influence 1) reaches", reach() < 1e-3, f"{reach():.2e}")
    scene.frame_set(10)
    checks.check("baked frame 10 (influence between) neither", gap(pose(), HAND_POSE) > 0.05 and reach() > 1e-3)

with checks.step("Live follows an animated influence at the next edit"):
    # Live: Blender runs no depsgraph handler on a frame change, but the next edit of anything
    # re-solves a chain whose (animated) Influence changed since, even if its inputs did not.
    rig.animation_data_clear()
    chain.influence = 0.0
    chain.keyframe_insert("influence", frame=1)
    chain.influence = 1.0
    chain.keyframe_insert("influence", frame=10)
    set_pose(HAND_POSE)
    scene.frame_set(1)
    chain.mode = "LIVE"
    bpy.context.view_layer.update()
    checks.check("live, influence 0 at frame 1: the own pose", gap(pose(), HAND_POSE) < 1e-5, gap(pose(), HAND_POSE))
    scene.frame_set(10)
    unrelated = empty("Unrelated")
    unrelated.location.x = 1.0
    bpy.context.view_layer.update()
    checks.check("live, influence 1 at frame 10, after an unrelated edit: reaches", reach() < 1e-3, f"{reach():.2e}")
    chain.mode = "MANUAL"
checks.close()
