"""Quat IK against Blender's own IK constraint, in the same bpy session on the same chains.

For chains of 3, 10 and 30 bones following a smooth target path for 250, 1,000 and 10,000
frames, it measures:

* bake time: ``quat_ik.bake`` vs ``nla.bake`` (visual keying) of Blender's IK constraint, in
  CPU time of this process (``time.process_time``: on a shared machine it leaves out the time
  other processes held the core; ``--clock wall`` times elapsed time instead);
* live re-solve latency: one depsgraph update after moving the target, mean and largest over
  12 steps along the path (for Quat IK as in the UI, where updates solve lightly and the
  target at rest gets one full solve, timed too, and as in the background, where every update
  is a full solve; and an update that changes nothing the chain depends on);
* tip error, limit violations and the largest frame-to-frame joint jump, all computed from the
  baked keys of every frame by forward kinematics (``solver.chain``), so both solvers are
  measured by the same code;
* the wrap: every case is whole laps of the closed path, so a looping playback turns each
  joint from the last frame's pose into the first's; measured for both bakes, and for one lap
  Quat IK also bakes with *Cyclic* (``solver.shots.cycles``);
* Live on a character: the sample rig ``rigify_human`` (four chains with polygon windows, and
  Blender's IK constraint on the same bones and targets), one depsgraph update after one
  hand's target moved and after the whole character moved; and Per Frame playback of its own
  animation, the first time and again.

Both get the same limits: each joint a ball whose swing lies in an elliptic cone (50° toward
local X, 35° toward local Z) with twist within ±30°. Blender's IK expresses this as Z limits
±50°, X limits ±35° and Y limits ±30° (its X/Z limits make an elliptic swing cone).

A bake under ``REPEAT_UNDER`` seconds runs ``REPEATS`` times and the fastest counts, for both
solvers alike (single timings of a 30 ms bake vary by 10-20% from run to run here).
A case whose predicted time exceeds ``--budget`` seconds is not run but extrapolated from the
largest measured frame count (labelled "extrapolated"); a 25-frame pilot bake per chain length
seeds the prediction. The solver path Quat IK took in this bpy session (the native kernel, or
numpy and why: ``library.load()``) is printed first and recorded. Results: bench/results/blender.json
and .md, written by a full run only (``--quick``, ``--bones``, ``--frames`` or ``--live`` print the
table). ``--live`` measures Live alone: the 250-frame cases (their bakes, which the Live steps
follow as in a full run) and Live on the character, in about ten seconds.
Run: ``.venv/bin/python bench/bench_blender.py [--quick | --live]``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import bpy  # noqa: E402
import numpy as np  # noqa: E402
from benchmark_path import LOOP_FRAMES, target_path  # noqa: E402

import quat_ik_addon  # noqa: E402

RESULTS = REPO / "bench" / "results"
CHAIN_LENGTH = 3.0  # total length of every chain
SWING_X, SWING_Z, TWIST = math.radians(50.0), math.radians(35.0), math.radians(30.0)
BONE_COUNTS = (3, 10, 30)
FRAME_COUNTS = (250, 1000, 10000)
PILOT_FRAMES = 25  # a short bake per chain length first, to predict the long ones
REPEATS = 3  # bakes of a case taking under REPEAT_UNDER seconds; the fastest counts
REPEAT_UNDER = 2.0
QUAT_IK_TOLERANCE = 1e-3
REACHED = 5e-3  # a frame "reaches" within this tip error (Blender's IK stops within 0.002 here)
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
bake_clock = CLOCKS["cpu"]  # chosen with --clock


# ---------------------------------------------------------------- scene


def build_scene(n_bones: int, n_frames: int):
    bpy.ops.wm.read_homefile(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, n_frames
    armature = bpy.data.armatures.new("Chain")
    ob = bpy.data.objects.new("Chain", armature)
    scene.collection.objects.link(ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    parent, length = None, CHAIN_LENGTH / n_bones
    for i in range(n_bones):
        bone = armature.edit_bones.new(f"B{i:02d}")
        bone.head, bone.tail = (0.0, 0.0, i * length), (0.0, 0.0, (i + 1) * length)
        bone.parent, bone.use_connect = parent, parent is not None
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")

    target = bpy.data.objects.new("Target", None)
    scene.collection.objects.link(target)
    frames = np.arange(1, n_frames + 1, dtype=float)
    path = target_path(frames)
    target.animation_data_create()
    action = bpy.data.actions.new("TargetPath")
    quat_ik_addon.blender.compat.assign_action(target, action)
    fcurves, _groups = quat_ik_addon.blender.compat.action_channels(action, target)
    for axis in range(3):
        fcurve = fcurves.new("location", index=axis)
        fcurve.keyframe_points.add(n_frames)
        fcurve.keyframe_points.foreach_set("co", np.stack((frames, path[:, axis]), axis=1).ravel())
        fcurve.keyframe_points.foreach_set("interpolation", np.ones(n_frames, dtype=np.int32))  # LINEAR
        fcurve.update()

    # Joint limits, ours on the pose bones and Blender's IK limits.
    for pose_bone in ob.pose.bones:
        limits = pose_bone.quat_ik
        limits.joint_type = "BALL"
        window = limits.windows.add()
        window.shape = "ELLIPTIC_CONE"
        window.half_angles = (SWING_X, SWING_Z)
        limits.use_twist_range = True
        limits.twist_min, limits.twist_max = -TWIST, TWIST
        pose_bone.use_ik_limit_z, pose_bone.ik_min_z, pose_bone.ik_max_z = True, -SWING_X, SWING_X
        pose_bone.use_ik_limit_x, pose_bone.ik_min_x, pose_bone.ik_max_x = True, -SWING_Z, SWING_Z
        pose_bone.use_ik_limit_y, pose_bone.ik_min_y, pose_bone.ik_max_y = True, -TWIST, TWIST

    bpy.ops.object.mode_set(mode="POSE")
    tip = ob.pose.bones[f"B{n_bones - 1:02d}"]
    ob.data.bones.active = tip.bone
    # Tolerance 1e-3: Blender's IK stops at about that accuracy too (its tip errors here).
    bpy.ops.quat_ik.add_chain(chain_length=n_bones, target="Target", mode="MANUAL", tolerance=QUAT_IK_TOLERANCE)
    constraint = tip.constraints.new("IK")
    constraint.target, constraint.chain_count = target, n_bones
    constraint.mute = True
    for pose_bone in ob.pose.bones:
        (pose_bone if "select" in pose_bone.bl_rna.properties else pose_bone.bone).select = True
    return scene, ob, target, constraint, path


# ---------------------------------------------------------------- measuring keys


def baked_rotations(ob, action, n_frames: int) -> np.ndarray:
    """(F, n, 4) rotation_quaternion keys of every chain bone, from the action's curves."""
    compat = quat_ik_addon.blender.compat
    curves = {(fc.data_path, fc.array_index): fc for fc in compat.all_action_fcurves(action)}
    out = np.zeros((n_frames, len(ob.pose.bones), 4))
    for b, pose_bone in enumerate(ob.pose.bones):
        for c in range(4):
            fcurve = curves[(f'pose.bones["{pose_bone.name}"].rotation_quaternion', c)]
            co = np.zeros(2 * len(fcurve.keyframe_points), dtype=np.float32)
            fcurve.keyframe_points.foreach_get("co", co)
            frames, values = co[0::2], co[1::2]
            out[:, b, c] = np.interp(np.arange(1, n_frames + 1), frames, values)
    return out


def quality(ob, chain_props, rotations: np.ndarray, path: np.ndarray) -> dict:
    from quat_ik_addon.blender.rig import reader as rig_reader
    from quat_ik_addon.solver import quaternion as quat

    rig = rig_reader.read_chain_rig(ob, chain_props)
    rotations = quat.normalize(rotations)
    tip = rig.chain.forward_kinematics(rotations).effector
    error = np.linalg.norm(tip - path, axis=1)
    violation = np.degrees(rig.chain.limit_violation(rotations))
    jumps = np.degrees(np.max(quat.angle_between(rotations[1:], rotations[:-1]), axis=1))
    reached = error <= REACHED
    reaching_jumps = jumps[reached[1:] & reached[:-1]]
    base = np.zeros(3)
    a, b = path[1:] - base, path[:-1] - base
    cos = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    path_step = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    return {
        "reached_mask": reached,  # (popped by run_case: compared between the two solvers, not saved)
        "frames_reached": int(np.sum(reached)),
        "tip_error_mean": float(np.mean(error)),
        "tip_error_max": float(np.max(error)),
        "limit_violation_max_deg": float(np.max(violation)),
        "frames_violating_over_0.5deg": int(np.sum(np.max(violation, axis=1) > 0.5)),
        "largest_joint_jump_deg": float(np.max(jumps)),
        "largest_reaching_jump_deg": float(np.max(reaching_jumps, initial=0.0)),
        "largest_path_step_deg": float(np.max(path_step)),
        "jump_to_path_ratio": float(np.max(jumps) / max(np.max(path_step), 1e-12)),
        # Every case is whole laps of the path: the turn a looping playback shows where it wraps.
        "wrap_deg": float(np.degrees(np.max(quat.angle_between(rotations[-1], rotations[0])))),
    }


# ---------------------------------------------------------------- the two bakes


last_bake_wall = [0.0]  # the last bake's wall time, beside its time by ``bake_clock``


def _timed_bake(run) -> tuple[float, object]:
    """Seconds by ``bake_clock`` a bake operator takes (its wall time into ``last_bake_wall``)."""
    started, wall = bake_clock(), time.perf_counter()
    result = run()
    elapsed = bake_clock() - started
    last_bake_wall[0] = time.perf_counter() - wall
    assert result == {"FINISHED"}, result
    return elapsed


def bake_ours(scene, ob, n_frames: int, cyclic: bool = False) -> tuple[float, object]:
    from quat_ik_addon.blender.runtime.state import session as runtime

    runtime.last_bake_seconds.clear()
    ob.animation_data_clear()
    chain = ob.quat_ik.chains[0]
    chain.mode = "MANUAL"
    elapsed = _timed_bake(
        lambda: bpy.ops.quat_ik.bake(frame_start=1, frame_end=n_frames, destination="NEW_ACTION", cyclic=cyclic)
    )
    return elapsed, ob.animation_data.action


def bake_blender(scene, ob, constraint, n_frames: int) -> tuple[float, object]:
    ob.animation_data_clear()
    constraint.mute = False
    elapsed = _timed_bake(
        lambda: bpy.ops.nla.bake(
            frame_start=1, frame_end=n_frames, only_selected=True, visual_keying=True, bake_types={"POSE"}
        )
    )
    constraint.mute = True
    return elapsed, ob.animation_data.action


def live_latency(scene, ob, target, constraint, *, ours: bool, steps: int = 12) -> dict:
    """Seconds per depsgraph update after moving the target along the path (mean and largest
    over ``steps``). Ours as in the UI, where a Live update solves lightly and the target
    rests (``rest_solve_s``: the full solve, restarts and all, once the drag stops half a loop
    on), and as in the background, where every update is a full solve."""
    from quat_ik_addon.blender.runtime import handlers
    from quat_ik_addon.blender.runtime.state import session as runtime

    ob.animation_data_clear()
    target.animation_data_clear()
    chain = ob.quat_ik.chains[0]
    chain.mode = "LIVE" if ours else "MANUAL"
    constraint.mute = ours
    layer = bpy.context.view_layer
    bystander = bpy.data.objects.new("Bystander", None)
    scene.collection.objects.link(bystander)
    path = target_path(np.linspace(1, LOOP_FRAMES, steps + 1))

    def drag() -> tuple[float, float]:
        target.location = path[0]
        layer.update()
        gc.collect()  # the bakes before leave garbage: a collection inside the drag is not the update's
        times = []
        for location in path[1:]:
            started = time.perf_counter()
            target.location = location
            layer.update()
            times.append(time.perf_counter() - started)
        return float(np.mean(times)), float(np.max(times))

    record: dict = {}
    if ours:
        runtime.finish_at_rest = False
        record["per_update_background_s"], record["max_update_background_s"] = drag()
        runtime.finish_at_rest = True
    runtime.stats.clear()
    record["per_update_s"], record["max_update_s"] = drag()
    record["solves"] = runtime.stats["solves"] if ours else None
    if ours:
        # The drag stops half a loop on (where the 3-bone chain's limits cannot reach): the
        # full solve the timer then runs.
        target.location = target_path(np.array([1.0 + LOOP_FRAMES / 2]))[0]
        layer.update()
        started = time.perf_counter()
        handlers.run_resting(now=time.monotonic() + 1.0)
        record["rest_solve_s"] = time.perf_counter() - started
        record["rest_solves"] = runtime.stats["resting_solves"]
        runtime.finish_at_rest = None
    started = time.perf_counter()
    for i in range(steps):
        bystander.location.x = i * 0.01
        layer.update()
    record["unrelated_update_s"] = (time.perf_counter() - started) / steps
    chain.mode = "MANUAL"
    constraint.mute = True
    return record


# A drag on the character: one second of updates at 60 Hz (what a mouse drag gives the
# viewport), over the same distance whatever the count (12 cm, 6 cm and 4.8 cm along x, y, z).
CHARACTER_DRAG_STEPS = 60
CHARACTER_DRAG = (0.12, -0.06, 0.048)


def character_live(steps: int = CHARACTER_DRAG_STEPS) -> dict:
    """Live on a character: the sample rig ``rigify_human`` (four chains with polygon windows,
    each with a muted Blender IK constraint on the same bones and targets). Seconds per
    depsgraph update (mean, median, largest) over a drag of ``steps`` updates when one hand's
    target is dragged and when the whole character is moved (every chain's inputs change), for
    Quat IK as in the UI and for Blender's IK. The first updates of a drag cost more for both
    (2-3x the median here): a drag of a second's updates weighs them as a user's does."""
    from quat_ik_addon.blender.runtime.state import session as runtime
    from sample_rigs.blender_build import BLENDER_IK_NAME

    bpy.ops.wm.open_mainfile(filepath=str(REPO / "sample_rigs" / "rigify_human.blend"))
    ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    for other in bpy.data.objects:
        other.animation_data_clear()
    constraints = [c for pb in ob.pose.bones for c in pb.constraints if c.type == "IK" and c.name == BLENDER_IK_NAME]
    hand = next(c for c in ob.quat_ik.chains if c.name.startswith("arm")).target_object
    layer = bpy.context.view_layer

    def drag(moved) -> tuple[float, float, float]:
        start = moved.location.copy()
        layer.update()
        gc.collect()
        times = []
        for i in range(1, steps + 1):
            started = time.perf_counter()
            moved.location = start + type(start)(np.multiply(CHARACTER_DRAG, i / steps))
            layer.update()
            times.append(time.perf_counter() - started)
        moved.location = start
        layer.update()
        return float(np.mean(times)), float(np.median(times)), float(np.max(times))

    record: dict = {"rig": "rigify_human", "chains": len(ob.quat_ik.chains), "steps": steps}
    for who in ("quat_ik", "blender_ik"):
        ours = who == "quat_ik"
        for chain in ob.quat_ik.chains:
            chain.mode, chain.enabled = "LIVE", ours
        for constraint in constraints:
            constraint.mute = ours
        runtime.finish_at_rest = True
        layer.update()  # the switch itself (a settings change solves every chain)
        runtime.stats.clear()
        hand_times = drag(hand)
        solved = runtime.stats["chains_solved"] / (steps + 1)  # the drag's steps and the move back
        handler_before = runtime.stats["depsgraph_seconds"]
        record[who] = {"hand_target": hand_times, "character": drag(ob)}
        if ours:
            record[who]["chains_solved_per_hand_update"] = solved
            # Quat IK's own share of a character update (its depsgraph handler), per update.
            record[who]["character_handler_s"] = (runtime.stats["depsgraph_seconds"] - handler_before) / steps
        runtime.finish_at_rest = None
    return record


def character_playback() -> dict:
    """Per Frame playback of the sample rig ``rigify_human``'s own animation (its targets'
    keys): seconds per ``frame_set`` (mean, largest) over its frame range, for Quat IK's Per
    Frame chains the first time (every frame solved) and again (answered from memory), and
    for Blender's IK constraint on the same bones and targets."""
    from quat_ik_addon.blender.solving import cache as solve_cache
    from sample_rigs.blender_build import BLENDER_IK_NAME

    bpy.ops.wm.open_mainfile(filepath=str(REPO / "sample_rigs" / "rigify_human.blend"))
    scene = bpy.context.scene
    ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    constraints = [c for pb in ob.pose.bones for c in pb.constraints if c.type == "IK" and c.name == BLENDER_IK_NAME]
    frames = range(scene.frame_start, scene.frame_end + 1)

    def play() -> tuple[float, float]:
        scene.frame_set(scene.frame_end)
        gc.collect()
        times = []
        for frame in frames:
            started = time.perf_counter()
            scene.frame_set(frame)
            times.append(time.perf_counter() - started)
        return float(np.mean(times)), float(np.max(times))

    record: dict = {"rig": "rigify_human", "chains": len(ob.quat_ik.chains), "frames": len(frames)}
    for chain in ob.quat_ik.chains:
        chain.mode, chain.enabled = "PER_FRAME", True
    solve_cache.clear()
    record["quat_ik"] = {"first": play(), "again": play()}
    for chain in ob.quat_ik.chains:
        chain.enabled = False
    for constraint in constraints:
        constraint.mute = False
    play()  # Blender evaluates its IK from the previous frame's pose: one pass to settle
    record["blender_ik"] = {"again": play()}
    return record


# ---------------------------------------------------------------- driver


def run_case(n_bones: int, n_frames: int, *, budget: float, last: dict) -> dict:
    """One chain length and frame count. ``last[who] = (frames, seconds)`` of the largest
    bake measured so far for this chain length; updated here."""
    record: dict = {"bones": n_bones, "frames": n_frames}
    scene, ob, target, constraint, path = build_scene(n_bones, n_frames)
    chain = ob.quat_ik.chains[0]
    bakes = {
        "quat_ik": lambda: bake_ours(scene, ob, n_frames),
        "blender_ik": lambda: bake_blender(scene, ob, constraint, n_frames),
    }
    reached: dict = {}
    for who, bake in bakes.items():
        if who in last:
            frames, seconds = last[who]
            predicted = seconds * n_frames / frames
            if predicted > budget:
                record[who] = {
                    "bake_s": predicted,
                    "extrapolated": True,
                    "note": f"{who} {n_bones} bones {n_frames} frames: predicted {predicted:.0f} s > budget "
                    f"{budget:.0f} s, extrapolated linearly from {frames} frames ({seconds:.2f} s)",
                }
                print(
                    f"  {who:10s} {n_bones:2d} bones {n_frames:5d} frames: extrapolated {predicted:7.2f} s", flush=True
                )
                continue
        from quat_ik_addon.blender.runtime.state import session as runtime

        elapsed, action = bake()
        steps, wall = dict(runtime.last_bake_seconds), last_bake_wall[0]
        for _ in range(REPEATS - 1 if elapsed < REPEAT_UNDER else 0):
            again, action = bake()
            wall = min(wall, last_bake_wall[0])
            if again < elapsed:
                elapsed, steps = again, dict(runtime.last_bake_seconds)
        last[who] = (n_frames, elapsed)
        rotations = baked_rotations(ob, action, n_frames)
        record[who] = {
            "bake_s": elapsed,
            "bake_wall_s": wall,  # the fastest wall time (Blender's bake may run threads)
            "extrapolated": False,
            **quality(ob, chain, rotations, path),
        }
        reached[who] = record[who].pop("reached_mask")
        if who == "quat_ik":
            record[who]["steps_s"] = steps
        print(f"  {who:10s} {n_bones:2d} bones {n_frames:5d} frames: bake {elapsed:7.2f} s", flush=True)
    if len(reached) == 2:  # "reach on the targets Blender's IK misses" and not the other way round
        record["blender_reaches_quat_ik_misses"] = int(np.sum(reached["blender_ik"] & ~reached["quat_ik"]))
        record["quat_ik_reaches_blender_misses"] = int(np.sum(reached["quat_ik"] & ~reached["blender_ik"]))
    if n_frames == LOOP_FRAMES:  # one lap: baked as a cycle too
        elapsed, action = bake_ours(scene, ob, n_frames, cyclic=True)
        rotations = baked_rotations(ob, action, n_frames)
        record["quat_ik_cyclic"] = {"bake_s": elapsed, **quality(ob, chain, rotations, path)}
        record["quat_ik_cyclic"].pop("reached_mask")
        print(f"  quat_ik cyclic {n_bones:2d} bones {n_frames:5d} frames: bake {elapsed:7.2f} s", flush=True)
    if n_frames == min(FRAME_COUNTS):
        record["quat_ik"]["live"] = live_latency(scene, ob, target, constraint, ours=True)
        record["blender_ik"]["live"] = live_latency(scene, ob, target, constraint, ours=False)
    record["speedup"] = record["blender_ik"]["bake_s"] / record["quat_ik"]["bake_s"]
    return record


def markdown(results: dict) -> str:
    lines = [
        "# Quat IK vs Blender IK",
        "",
        f"Blender {results['blender']} (bpy module), Python {results['python']}, {results['machine']}.",
        "",
        f"Solver path: {results['solver_path']}.",
        f"Chains of 3, 10 and 30 bones (total length {CHAIN_LENGTH}), same limits for both "
        "(elliptic swing cone 50° × 35°, twist ±30°), target path looping every "
        f"{LOOP_FRAMES} frames; Quat IK tolerance {QUAT_IK_TOLERANCE}. Errors in Blender units, angles in degrees. "
        "Speed-up = Blender bake time / Quat IK bake time (>1: Quat IK faster).",
        "",
        f"Bake times in {'CPU time of the process' if results.get('bake_clock', 'wall') == 'cpu' else 'wall time'}. "
        f"Bakes under {REPEAT_UNDER:g} s: fastest of {REPEATS}. A frame reaches when its tip error is at most "
        f"{REACHED:g}; the jump between reaching frames is the largest joint turn from one such frame to the next.",
        "",
        "| bones | frames | Quat IK bake ms | Blender bake ms | speed-up | wall ms, speed-up (ours / Blender) "
        "| tip err max (ours / Blender) "
        "| limit violation max ° (ours / Blender) | largest joint jump ° (ours / Blender) "
        "| between reaching frames ° (ours / Blender) | largest path step ° "
        "| frames reached (ours / Blender) | reached by Blender only / by Quat IK only |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for case in results["cases"]:
        ours, theirs = case["quat_ik"], case["blender_ik"]

        def fmt(entry, key, spec=".3g"):
            return "–" if key not in entry else format(entry[key], spec)

        mark = lambda e: " (extrap.)" if e.get("extrapolated") else ""  # noqa: E731

        def wall(ours, theirs) -> str:
            if "bake_wall_s" not in ours or "bake_wall_s" not in theirs:
                return "–"
            return (
                f"{1e3 * ours['bake_wall_s']:.1f} / {1e3 * theirs['bake_wall_s']:.1f}, "
                f"{theirs['bake_wall_s'] / ours['bake_wall_s']:.2f}"
            )

        lines.append(
            f"| {case['bones']} | {case['frames']} | {1e3 * ours['bake_s']:.1f}{mark(ours)} "
            f"| {1e3 * theirs['bake_s']:.1f}{mark(theirs)} "
            f"| {case['speedup']:.2f} | {wall(ours, theirs)} "
            f"| {fmt(ours, 'tip_error_max')} / {fmt(theirs, 'tip_error_max')} "
            f"| {fmt(ours, 'limit_violation_max_deg')} / {fmt(theirs, 'limit_violation_max_deg')} "
            f"| {fmt(ours, 'largest_joint_jump_deg')} / {fmt(theirs, 'largest_joint_jump_deg')} "
            f"| {fmt(ours, 'largest_reaching_jump_deg')} / {fmt(theirs, 'largest_reaching_jump_deg')} "
            f"| {fmt(ours, 'largest_path_step_deg', '.3g') if 'largest_path_step_deg' in ours else fmt(theirs, 'largest_path_step_deg')} "
            f"| {fmt(ours, 'frames_reached', 'd')} / {fmt(theirs, 'frames_reached', 'd')} "
            f"| {fmt(case, 'blender_reaches_quat_ik_misses', 'd')} / {fmt(case, 'quat_ik_reaches_blender_misses', 'd')} |"
        )
    lines += [
        "",
        "Live re-solve latency per depsgraph update (ms, mean / largest), the target moved along the path in "
        "12 steps, 250-frame scenes. Quat IK as in the UI, where an update runs a few iterations and no restarts "
        "and a chain left short of its target is solved in full once the target rests (*at rest*: that solve, "
        "the drag stopped half a loop on), and as in the background, where every update is a full solve:",
        "",
    ]
    lines += [
        "| bones | Quat IK, target moved (UI) | Quat IK at rest | Quat IK, target moved (background) "
        "| Quat IK, unrelated edit | Blender IK, target moved |",
        "|---|---|---|---|---|---|",
    ]
    for case in results["cases"]:
        if "live" in case["quat_ik"]:
            ours, theirs = case["quat_ik"]["live"], case["blender_ik"]["live"]
            lines.append(
                f"| {case['bones']} | {1e3 * ours['per_update_s']:.2f} / {1e3 * ours['max_update_s']:.1f} "
                f"| {1e3 * ours['rest_solve_s']:.1f} "
                f"| {1e3 * ours['per_update_background_s']:.2f} / {1e3 * ours['max_update_background_s']:.1f} "
                f"| {1e3 * ours['unrelated_update_s']:.3f} "
                f"| {1e3 * theirs['per_update_s']:.2f} / {1e3 * theirs['max_update_s']:.2f} |"
            )
    lines += [
        "",
        f"Loops: the path closes every {LOOP_FRAMES} frames, so a baked lap played in a loop turns each joint from "
        "the last frame's pose into the first's where it wraps (the largest such turn, beside the path's own "
        "largest step). Quat IK plainly and with the bake's *Cyclic* option (one bake, ms), Blender's IK:",
        "",
        "| bones | largest path step ° | wrap ° Quat IK | wrap ° Quat IK Cyclic (bake ms, tip err max) | wrap ° Blender IK |",
        "|---|---|---|---|---|",
    ]
    for case in results["cases"]:
        if "quat_ik_cyclic" in case:
            ours, looped, theirs = case["quat_ik"], case["quat_ik_cyclic"], case["blender_ik"]
            lines.append(
                f"| {case['bones']} | {ours['largest_path_step_deg']:.3g} | {ours['wrap_deg']:.3g} "
                f"| {looped['wrap_deg']:.3g} ({1e3 * looped['bake_s']:.1f}, {looped['tip_error_max']:.3g}) "
                f"| {theirs['wrap_deg']:.3g} |"
            )
    character = results.get("character_live")
    if character:
        ours, theirs = character["quat_ik"], character["blender_ik"]

        def pair(entry):
            return " / ".join(f"{1e3 * value:.2f}" for value in entry)

        lines += [
            "",
            f"Live on a character: the sample rig `{character['rig']}` ({character['chains']} chains, polygon windows), "
            f"ms per depsgraph update over a drag of {character['steps']} updates, mean / median / largest "
            "(Quat IK as in the UI):",
            "",
            "| edit | Quat IK | Blender IK |",
            "|---|---|---|",
            f"| one hand's target dragged | {pair(ours['hand_target'])} | {pair(theirs['hand_target'])} |",
            f"| the whole character moved (every chain's inputs change) | {pair(ours['character'])} "
            f"| {pair(theirs['character'])} |",
        ]
        if "character_handler_s" in ours:
            lines += [
                "",
                f"Of a whole-character update, Quat IK's own handler (reading the rig, solving the "
                f"{character['chains']} chains, writing the pose) took {1e3 * ours['character_handler_s']:.2f} ms on "
                "average; the rest is Blender evaluating the rig before the handler and again after its writes.",
            ]
    playback = results.get("character_playback")
    if playback:
        ours, theirs = playback["quat_ik"], playback["blender_ik"]
        lines += [
            "",
            f"Per Frame playback on the same character: its own animation ({playback['frames']} frames), ms per "
            "frame change, mean / largest; Quat IK solves every frame the first time and answers from memory after:",
            "",
            "| Quat IK, first time | Quat IK, again | Blender IK |",
            "|---|---|---|",
            f"| {1e3 * ours['first'][0]:.2f} / {1e3 * ours['first'][1]:.1f} "
            f"| {1e3 * ours['again'][0]:.2f} / {1e3 * ours['again'][1]:.1f} "
            f"| {1e3 * theirs['again'][0]:.2f} / {1e3 * theirs['again'][1]:.1f} |",
        ]
    notes = [case[w]["note"] for case in results["cases"] for w in ("quat_ik", "blender_ik") if case[w].get("note")]
    if notes:
        lines += ["", "Extrapolated cases:", ""] + [f"* {note}" for note in notes]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 and 10 bones, 250 and 1000 frames only")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds a single bake may be predicted to take")
    parser.add_argument("--bones", type=int, nargs="+", choices=BONE_COUNTS, help="only these chain lengths")
    parser.add_argument("--frames", type=int, nargs="+", choices=FRAME_COUNTS, help="only these frame counts")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="bake time: process CPU time or wall")
    parser.add_argument("--live", action="store_true", help="Live latency only: the 250-frame cases and the character")
    args = parser.parse_args()
    global bake_clock
    bake_clock = CLOCKS[args.clock]
    full_run = not (args.quick or args.bones or args.frames or args.live)
    quat_ik_addon.register()
    from quat_ik_addon.solver.native import library

    # Quat IK solves in this process: the path its solves take here, as the add-on decided it.
    solver_path = library.load()[1].describe()
    print(f"solver path: {solver_path}", flush=True)
    bones = args.bones or ((3, 10) if args.quick else BONE_COUNTS)
    frames = args.frames or (FRAME_COUNTS[:2] if args.quick else FRAME_COUNTS[:1] if args.live else FRAME_COUNTS)
    results = {
        "blender": bpy.app.version_string,
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {platform.processor() or 'cpu'}",
        "solver_path": solver_path,
        "bake_clock": args.clock,
        "cases": [],
    }
    for n_bones in bones:
        last: dict = {}
        scene, ob, _target, constraint, _path = build_scene(n_bones, PILOT_FRAMES)
        last["quat_ik"] = (PILOT_FRAMES, bake_ours(scene, ob, PILOT_FRAMES)[0])
        last["blender_ik"] = (PILOT_FRAMES, bake_blender(scene, ob, constraint, PILOT_FRAMES)[0])
        for who, (frames_done, seconds) in last.items():
            print(f"  {who:10s} {n_bones:2d} bones {frames_done:5d} frames (pilot): {seconds:7.2f} s", flush=True)
        for n_frames in frames:
            results["cases"].append(run_case(n_bones, n_frames, budget=args.budget, last=last))
    if full_run or args.live:
        results["character_live"] = character_live()
    if full_run:
        results["character_playback"] = character_playback()
    at_end = library.load()[1].describe()  # decided once per process: a change is news
    if at_end != solver_path:
        results["solver_path"] += f" at the start, {at_end} at the end"
    table = markdown(results)
    if full_run:  # the committed figures come from full runs only
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "blender.json").write_text(json.dumps(results, indent=2) + "\n")
        (RESULTS / "blender.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
