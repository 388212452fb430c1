"""Session: a bake longer than a block is read and solved a block at a time (issue 35).

``bake.BLOCK_FRAMES`` is made small here (200 frames) so a few blocks take seconds. A 3-bone
chain follows a target circling through its reach, sampled from its keys.

argv: WORKDIR PART, PART one of:

* ``seams``: every frame keyed once; at each seam the pose turns no more than on the other
  steps; the keys agree with one bake of the whole range; with a frame step, keys on the step's
  frames and the range's end only, and keys outside the range kept.
* ``memory``: the peak memory (tracemalloc) of a bake of 4 blocks is about that of 2 blocks;
  one bake of the whole range (as before blocks) takes about twice as much for twice the frames.
* ``stopped``: an error in the second block leaves the scene as it was: no block's keys are
  written before every block is solved.
* ``cost``: the estimate a long bake shows in its dialog and prints before it starts from Python.
"""

import contextlib
import io
import math
import sys
import tracemalloc

import bpy
import numpy as np

from tests.blender.sessions.common import Checks, add_chain, empty, make_rig, reset_scene, submodule

part = sys.argv[2]
checks = Checks(f"bake in blocks: {part}")
bake = submodule("bake.bake")
compat = submodule("compat")
operators_bake = submodule("operators.bake")
errors = submodule("errors")
runtime = submodule("runtime.state").session
BLOCK = 200
bake.BLOCK_FRAMES = BLOCK
BONES = 3


def make_scene(frames: int):
    reset_scene()
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    ob = make_rig("Rig", [((0, 0, 0), (0, 0.05, 1)), ((0, 0.05, 1), (0, 0, 2)), ((0, 0, 2), (0, 0.05, 2.6))])
    target = empty("Target")
    for frame in range(1, frames + 26, 25):
        angle = frame / 60.0
        target.location = (1.2 * math.cos(angle), 1.2 * math.sin(angle), 1.6 + 0.3 * math.sin(angle / 3))
        target.keyframe_insert("location", frame=frame)
    scene.frame_set(1)
    add_chain(ob, "B2", BONES, "Target")
    bpy.ops.object.mode_set(mode="OBJECT")
    return scene, ob


def run_bake(scene, ob, start: int, end: int, **settings):
    job = bake.Bake(scene, ob, [ob.quat_ik.chains[0]], bake.BakeSettings(start, end, **settings))
    job.gather_all(bpy.context.evaluated_depsgraph_get)
    job.solve()
    return job, job.write()


def keyed_rotations(ob) -> tuple[np.ndarray, np.ndarray]:
    """(frames (K,), rotations (K, bones, 4)) read from the keys of the bones' quaternion curves,
    which must all be keyed on the same frames."""
    curves = {(c.data_path, c.array_index): c for c in compat.all_action_fcurves(ob.animation_data.action)}
    keys = []
    for bone in range(BONES):
        for index in range(4):
            points = curves[(f'pose.bones["B{bone}"].rotation_quaternion', index)].keyframe_points
            co = np.zeros(2 * len(points))
            points.foreach_get("co", co)
            keys.append(co.reshape(-1, 2))
    frames = keys[0][:, 0]
    if not all(np.array_equal(co[:, 0], frames) for co in keys):
        raise AssertionError("the bones' quaternion channels are keyed on different frames")
    rotations = np.stack([co[:, 1] for co in keys], axis=1).reshape(len(frames), BONES, 4)
    return frames, rotations / np.linalg.norm(rotations, axis=-1, keepdims=True)


def largest_turns(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The largest joint turn (radians) from each pose of ``a`` to the same row's of ``b``."""
    dots = np.abs(np.sum(a * b, axis=-1))
    return 2.0 * np.arccos(np.minimum(np.min(dots, axis=-1), 1.0))


def seams():
    frames = 4 * BLOCK
    scene, ob = make_scene(frames)
    with checks.step("the range is baked in blocks, every frame keyed once"):
        job, summary = run_bake(scene, ob, 1, frames)
        checks.check("the range is baked in 4 blocks", job.block_count == 4 and job.blocks_done == 4, job.blocks)
        checks.check("the summary counts every frame", summary.frames == frames, summary)
        keyed, rotations = keyed_rotations(ob)
        checks.check("every frame keyed once", np.array_equal(keyed, np.arange(1, frames + 1)), keyed[:5])

    with checks.step("no bigger turn at a seam, every frame reached"):
        turns = largest_turns(rotations[1:], rotations[:-1])
        seam_steps = np.array([BLOCK * k - 1 for k in range(1, 4)])  # step from frame 200k to 200k + 1
        elsewhere = np.delete(turns, seam_steps)
        checks.check(
            "no turn at a seam bigger than on the steps elsewhere",
            np.max(turns[seam_steps]) <= np.max(elsewhere),
            f"seams {np.degrees(turns[seam_steps]).round(3)}°, elsewhere up to {np.degrees(np.max(elsewhere)):.3f}°",
        )
        checks.check("every frame reached", summary.converged_frames == frames, summary.converged_frames)
        checks.check(
            "no pose jumps kept",
            ob.quat_ik.chains[0].status_jump_frames == "",
            ob.quat_ik.chains[0].status_jump_frames,
        )

    # The chain is redundant (three bones for a position): a shot solved in one piece may settle
    # in other postures than the blocks, each following its own start; both must reach as well.
    with checks.step("blocks reach and turn like a bake in one piece"):
        bake.BLOCK_FRAMES = 10 * frames
        one_job, one_summary = run_bake(scene, ob, 1, frames)
        _, whole = keyed_rotations(ob)
        checks.check("a bake of one block keys the same range in one piece", one_job.block_count == 1, one_job.blocks)
        checks.check(
            "... and reaches no frame the blocks miss",
            one_summary.converged_frames <= summary.converged_frames,
            f"{one_summary.converged_frames} vs {summary.converged_frames}; postures up to "
            f"{np.degrees(np.max(largest_turns(whole, rotations))):.1f}° apart",
        )
        whole_turns = largest_turns(whole[1:], whole[:-1])
        checks.check(
            "... and the blocks turn their joints on their largest step at most 1.5x as far as it does",
            np.max(turns) <= np.max(whole_turns) * 1.5,
            f"{np.degrees(np.max(turns)):.3f}° vs {np.degrees(np.max(whole_turns)):.3f}°",
        )

    # A frame step: keys on the step's frames and the range's end, none between, none outside moved.
    with checks.step("a stepped bake keys the step's frames and keeps keys outside its range"):
        bake.BLOCK_FRAMES = BLOCK // 4  # 50 keyed frames a block
        ob.pose.bones["B1"].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        ob.pose.bones["B1"].keyframe_insert("rotation_quaternion", frame=600)  # past the range: kept
        step_job, _ = run_bake(scene, ob, 11, 420, step=3)
        keyed, _ = keyed_rotations(ob)
        expected = np.concatenate((np.arange(1, 11), np.arange(11, 420, 3), [420], np.arange(421, frames + 1)))
        checks.check("a stepped bake of blocks: blocks of 50 keyed frames", step_job.block_count == 3, step_job.blocks)
        checks.check(
            "... keys on the step's frames and the range's end, the keys outside the range kept",
            np.array_equal(keyed, expected),
            np.setxor1d(keyed, expected)[:10],
        )


def memory():
    with checks.step("a bake's peak memory does not grow with its blocks"):
        peaks = {}
        for label, frames, block_frames in (
            ("2 blocks", 1000, 500),
            ("4 blocks", 2000, 500),
            ("1000 frames in one piece", 1000, 10**9),
            ("2000 frames in one piece", 2000, 10**9),
        ):
            bake.BLOCK_FRAMES = block_frames
            scene, ob = make_scene(frames)
            run_bake(scene, ob, 1, min(frames, 200))  # warm caches (imports, the solver's tables) first
            scene, ob = make_scene(frames)
            tracemalloc.start()
            run_bake(scene, ob, 1, frames)
            peaks[label] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        print("peak memory:", {label: f"{peak / 1e6:.2f} MB" for label, peak in peaks.items()})
        grown = peaks["4 blocks"] / peaks["2 blocks"]
        checks.check("a bake of 4 blocks peaks within 1.3x of one of 2 blocks", grown < 1.3, f"{grown:.2f}x")
        whole = peaks["2000 frames in one piece"] / peaks["1000 frames in one piece"]
        checks.check("(one piece twice as long peaks higher: the check sees growth)", whole > 1.6, f"{whole:.2f}x")


def stopped():
    frames = 3 * BLOCK
    make_scene(frames)
    solve_steps = bake.Bake.solve_steps
    solved_blocks = []

    def failing_in_the_second_block(job, threaded=False):
        solved_blocks.append(job.block_index)
        if job.block_index == 1:
            raise errors.ChainError("a failure for the test")
        yield from solve_steps(job, threaded)

    with checks.step("an error in the second block changes nothing"):
        bake.Bake.solve_steps = failing_in_the_second_block
        checks.expect_error(
            "an error in the second block",
            bpy.ops.quat_ik.bake,
            "a failure for the test",
            chain_name="B2",
            frame_end=frames,
        )
        bake.Bake.solve_steps = solve_steps
        checks.check("... came after the first block was solved", solved_blocks == [0, 1], solved_blocks)


def cost():
    with checks.step("the cost of a long bake in words"):
        runtime.bake_seconds_per_bone_frame = None  # the default speed, before any bake measured one
        text = bake.bake_cost(100_000, 30).text()
        checks.check(
            "the cost of 100,000 frames of 30 bones",
            text == "100,000 frames × 30 bones: about 60 s, 960 MB of keys",
            text,
        )
    scene, _ = make_scene(bake.MEASURED_FROM_BONE_FRAMES // BONES + 1)

    class Dialog:
        """The operator's dialog as ``draw`` sees it (its properties, its methods)."""

        def __init__(self, **values):
            self.armature, self.chains, self.chain_name, self.step, self.cyclic = "", "ALL", "", 1, False
            self.__dict__.update(values)

        def __getattr__(self, name):
            return getattr(operators_bake.QUATIK_OT_bake, name).__get__(self)

    context = bpy.context
    with checks.step("the dialog shows the cost of a long bake only"):
        short = Dialog(frame_start=1, frame_end=BLOCK - 50)._cost_shown(context)
        checks.check("a short bake's dialog says nothing of cost", short is None, short)
        long = Dialog(frame_start=1, frame_end=300_000)._cost_shown(context)
        checks.check(
            "a long bake's dialog says what it costs before it starts",
            long is not None and long.text().startswith("300,000 frames × 3 bones: about"),
            None if long is None else long.text(),
        )
    with checks.step("from Python a long bake prints its cost first"):
        frames = bake.MEASURED_FROM_BONE_FRAMES // BONES + 1  # long enough to measure the speed, 17 blocks
        scene.frame_end = frames
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            returned = bpy.ops.quat_ik.bake(chain_name="B2", frame_start=1, frame_end=frames)
        lines = [line for line in printed.getvalue().splitlines() if "frames × 3 bones" in line]
        checks.check("from Python the bake runs at once", returned == {"FINISHED"}, returned)
        checks.check(
            "... and first prints what it will cost, in blocks",
            len(lines) == 1 and f"{frames:,} frames × 3 bones: about" in lines[0] and "17 block(s)" in lines[0],
            lines,
        )
    with checks.step("a long bake measures the speed later estimates use"):
        measured = runtime.bake_seconds_per_bone_frame
        checks.check(
            "a bake of that size measures the speed later estimates use",
            measured is not None and measured > 0,
            measured,
        )


{"seams": seams, "memory": memory, "stopped": stopped, "cost": cost}[part]()
checks.close()
