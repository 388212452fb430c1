"""Frame sequences keep to one solution branch; the command line solves a rig spec."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from test_ccd import assert_result_is_honest

import quat_ik_addon
from quat_ik_addon.solver import interrupt
from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.cli import main
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.native import library
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.rig.spec import load_rig_spec
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots import plan as sequence_plan
from quat_ik_addon.solver.shots import pose_jumps, sequence
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import pose_distance, solve

REPO = Path(__file__).resolve().parents[2]
ARM3_SPEC = REPO / "tests" / "solver" / "data" / "arm3.rig.json"


def smooth_pose_path(chain, rng, frames, keys=5):
    """Poses easing between random key poses inside the limits (smoothstep per joint)."""
    key_poses = chain.random_poses(rng, keys)
    t = np.linspace(0, keys - 1, frames)
    index = np.minimum(t.astype(int), keys - 2)
    f = t - index
    f = f * f * (3 - 2 * f)
    start, end = key_poses[index], key_poses[index + 1]
    step = quat.slerp_from_identity(quat.multiply(quat.conjugate(start), end), np.repeat(f[:, None], chain.n_bones, 1))
    return chain.clamp_to_limits(quat.multiply(start, step))


def jump_ratio(chain, rotations, path):
    """Largest per-frame joint jump of a solve, over the generating path's largest."""
    return np.max(pose_distance(rotations[1:], rotations[:-1])) / np.max(pose_distance(path[1:], path[:-1]))


@pytest.mark.parametrize(("name", "smooth_paths_needed"), [("arm3", 7), ("chain10", 8)])
def test_smooth_paths_give_smooth_joints(name, smooth_paths_needed, record_property):
    """Solving a shot follows the motion: joints move at most twice as far per frame as the
    motion that made the targets. On a redundant arm with limits a followed branch can end at
    a limit; the backward repair removes most such jumps, not all (8 fixed paths)."""
    chain = reference_chains.REFERENCE_CHAINS[name]()
    settings = SolveSettings(method="dls", restarts=2)
    ours, cold = [], []
    for seed in range(8):
        path = smooth_pose_path(chain, np.random.default_rng(seed), 150)
        targets = chain.forward_kinematics(path).effector
        result = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
        assert_result_is_honest(chain, result, targets)
        assert result.success_rate >= 0.99
        ours.append(jump_ratio(chain, result.rotations, path))
        # Starting every frame from rest, as Blender's IK does.
        cold.append(jump_ratio(chain, solve(chain, targets, settings=settings).rotations, path))
    record_property("jump_ratios", [round(r, 2) for r in ours])
    print(f"{name}: jump / path motion per path: ours {np.round(ours, 2)}, from rest {np.round(cold, 2)}")
    assert sum(r <= 2.0 for r in ours) >= smooth_paths_needed
    assert sum(r > 2.0 for r in cold) > sum(r > 2.0 for r in ours)


def goal_path(chain, rng, frames, keys=6):
    """Goals along a smooth pose path (so every frame is reachable), and that path."""
    path = smooth_pose_path(chain, rng, frames, keys=keys)
    return chain.forward_kinematics(path).effector, path


def test_followed_frames_step_at_most_a_follow_step(rng):
    chain = reference_chains.limited_chain(10)
    targets, _ = goal_path(chain, rng, 400)
    goals = Goals.of(targets)
    followed = sequence_plan.followed_frames(goals, chain.reach)
    assert followed[0] == 0 and followed[-1] == len(targets) - 1
    gaps = np.diff(followed)
    assert np.all(gaps >= 1) and np.all(gaps <= sequence_plan.MAX_STRIDE)
    moved = np.linalg.norm(np.diff(targets[followed], axis=0), axis=1)
    # A step longer than one frame never moves the goal further than a follow step.
    assert np.all(moved[gaps > 1] <= sequence_plan.FOLLOW_STEP * chain.reach + 1e-12)
    assert len(followed) < len(targets) / 2  # a smooth path is not followed frame by frame


def test_segments_cover_the_shot_both_ways_from_their_pivots(rng):
    chain = reference_chains.limited_chain(10)
    targets, _ = goal_path(chain, rng, 600, keys=12)
    goals = Goals.of(targets)
    followed = sequence_plan.followed_frames(goals, chain.reach)
    pivots, lows, highs = sequence_plan.segments(goals, followed, chain.reach)
    assert len(pivots) >= 3
    # The first segment starts at the first frame; each ends where the next begins.
    assert pivots[0] == lows[0] == 0 and highs[-1] == len(followed) - 1
    np.testing.assert_array_equal(highs[:-1], lows[1:])
    assert np.all(lows[1:] < pivots[1:]) and np.all(pivots < highs)
    travel = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(targets[followed], axis=0), axis=1))))
    assert np.all(np.diff(travel[pivots]) >= sequence_plan.SEGMENT_TRAVEL * chain.reach - 1e-12)
    assert np.all(np.diff(pivots) <= sequence_plan.MAX_PIVOT_STEPS + 1)
    # Halves about as long as each other: each is one batched follow step per frame.
    halves = np.concatenate((highs - pivots, (pivots - lows)[1:]))
    assert halves.max() <= 2 * halves.min() + 1


def test_only_a_short_shot_is_one_segment():
    chain = reference_chains.limited_chain(10)
    for count, one in ((sequence_plan.ONE_PIECE_STEPS, True), (2 * sequence_plan.ONE_PIECE_STEPS, False)):
        # Far apart goals: travel alone would cut even the short shot.
        goals = Goals.of(np.arange(count)[:, None] * np.array([chain.reach, 0.0, 0.0]))
        pivots, lows, highs = sequence_plan.segments(goals, np.arange(count), chain.reach)
        assert (len(pivots) == 1) == one
        assert pivots[0] == lows[0] == 0 and highs[-1] == count - 1


def test_segments_followed_side_by_side_join_smoothly(rng, record_property):
    """A long shot is cut into many segments; the answer still meets every goal and moves
    no faster than twice the motion that made the goals, with few iterations per frame."""
    chain = reference_chains.limited_chain(10)
    targets, path = goal_path(chain, rng, 600, keys=12)
    settings = SolveSettings(method="dls", restarts=2, tolerance=1e-4)
    result = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate == 1.0
    ratio = jump_ratio(chain, result.rotations, path)
    record_property("jump_ratio", round(float(ratio), 3))
    assert ratio <= 2.0
    assert np.mean(result.iterations) < 6.0  # most frames: a warm step or two, or filled in


def test_frames_between_followed_ones_mostly_start_on_their_goal(rng):
    """Followed frames are followed to a coarse tolerance and finished in one batch; the frames
    between start from a cubic through four followed frames, which on a smooth shot already
    meets most of their goals (64% here; slerp between two followed frames met 9%)."""
    chain = reference_chains.limited_chain(10)
    targets, path = goal_path(chain, rng, 600, keys=12)
    settings = SolveSettings(method="dls", tolerance=1e-3 * chain.reach)
    result = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate == 1.0
    followed = sequence_plan.followed_frames(Goals.of(targets), chain.reach)
    between = np.setdiff1d(np.arange(len(targets)), followed)
    assert np.mean(result.iterations[between] == 0) >= 0.5
    assert jump_ratio(chain, result.rotations, path) <= 2.0


def test_refollowing_every_segment_is_one_long_follow(rng, monkeypatch):
    """With every join followed again from the arrival (none spread), the segments add up to
    exactly the single long follow: the side-by-side pass changes speed, not the answer."""
    chain = reference_chains.limited_chain(6)
    targets, path = goal_path(chain, rng, 300, keys=8)
    settings = SolveSettings(method="dls", tolerance=1e-4)
    monkeypatch.setattr(sequence, "REFOLLOW_ANGLE", 0.0)
    monkeypatch.setattr(sequence, "MAX_ROUNDS", 1000)
    segmented = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    monkeypatch.setattr(sequence_plan, "SEGMENT_TRAVEL", np.inf)
    single = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    goals = Goals.of(targets)
    followed = sequence_plan.followed_frames(goals, chain.reach)
    monkeypatch.undo()
    assert len(sequence_plan.segments(goals, followed, chain.reach).pivots) >= 3
    np.testing.assert_allclose(segmented.rotations, single.rotations, atol=1e-9)


def test_long_batches_solved_in_pieces_give_the_same_shot(rng, monkeypatch):
    """A shot's large batches (the frames between followed ones, the finishing pass) are
    solved ``CHUNK_ROWS`` rows at a time to bound memory: the same poses, iterations and
    errors as in one piece, here with a goal out of reach on part of the shot too."""
    chain = reference_chains.limited_chain(6)
    targets, path = goal_path(chain, rng, 400, keys=6)
    targets = targets.copy()
    targets[150:220] *= 2.0 * chain.reach / np.linalg.norm(targets[150:220], axis=1, keepdims=True)
    settings = SolveSettings(method="dls_ccd", restarts=2, tolerance=1e-4)
    whole = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    monkeypatch.setattr(sequence, "CHUNK_ROWS", 7)
    pieces = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    # (Equal up to rounding: small and large batches multiply quaternions by different kernels.
    # Where the goal is out of reach the closest miss is a flat minimum, where rounding moves
    # the pose by up to ~1e-7 and its miss by nothing that shows.)
    met = whole.converged
    np.testing.assert_allclose(pieces.rotations[met], whole.rotations[met], atol=1e-9)
    np.testing.assert_allclose(pieces.rotations, whole.rotations, atol=1e-6)
    np.testing.assert_allclose(pieces.position_error, whole.position_error, atol=1e-9)
    for name in ("iterations", "restarts", "converged"):
        np.testing.assert_array_equal(getattr(pieces, name), getattr(whole, name), err_msg=name)


def test_a_shot_reports_its_progress_and_stops_when_asked(rng):
    """Inside ``interrupt.stoppable`` a shot reports how far it got at each checkpoint, up to
    1, and stops at the next checkpoint once its event is set; outside it runs as ever, and
    another thread's stop does not reach it."""
    chain = reference_chains.limited_chain(6)
    targets, path = goal_path(chain, rng, 200, keys=5)
    settings = SolveSettings(method="dls", tolerance=1e-4)
    seen: list[float] = []
    with interrupt.stoppable(threading.Event(), seen.append):
        reported = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    assert len(seen) >= 5 and seen == sorted(seen) and seen[-1] == 1.0 and seen[0] < 0.5, seen

    stop = threading.Event()
    stop.set()
    seen.clear()
    with pytest.raises(interrupt.Interrupted), interrupt.stoppable(stop, seen.append):
        solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    assert len(seen) == 1, seen  # stopped at the first checkpoint

    stopped_elsewhere = threading.Thread(target=lambda: interrupt.stoppable(stop).__enter__())
    stopped_elsewhere.start()
    stopped_elsewhere.join()
    plain = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    # The same shot, to numpy's last bit (its vector loops, picked by where an array lies in
    # memory, can move values by 2e-16 between two runs in one process, 2 of 4,800 here; up to
    # 1e-12 elsewhere).
    np.testing.assert_allclose(plain.rotations, reported.rotations, rtol=0.0, atol=1e-9)


def test_a_goal_out_of_reach_is_tracked_cheaply_and_left_smoothly(rng):
    """Part of the shot beyond the chain's reach: the pose points at the goal (closest miss)
    without restarts every frame, meets every goal in reach, and stays inside its limits."""
    chain = reference_chains.limited_chain(6)
    targets, path = goal_path(chain, rng, 240, keys=4)
    out = slice(80, 160)
    targets = targets.copy()
    targets[out] *= 2.0 * chain.reach / np.linalg.norm(targets[out], axis=1, keepdims=True)
    settings = SolveSettings(method="dls", restarts=2, tolerance=1e-4)
    result = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    assert_result_is_honest(chain, result, targets)
    inside = np.ones(len(targets), dtype=bool)
    inside[out] = False
    assert np.all(result.converged[inside])
    assert not np.any(result.converged[out])
    # Tracking a miss costs a few iterations a frame (and one settling solve at the end), and
    # no restarts: no start pose brings a goal beyond the chain's length into reach.
    assert np.mean(result.iterations[out]) <= 3 * sequence.MISS_ITERATIONS
    assert not np.any(result.restarts[out])
    # Pointing at the goal: the effector lies on the goal's side of the root.
    direction = targets[out] / np.linalg.norm(targets[out], axis=1, keepdims=True)
    assert np.all(np.einsum("ij,ij->i", result.effector[out], direction) > 0.5 * chain.reach)


def test_a_path_leaving_the_limited_workspace_meets_every_goal_a_pose_meets():
    """The Blender benchmark's 3-bone chain and path: about half the loop lies within reach
    but outside what the limits allow. Followed with restarts only where the goal is missed
    (probes along the stretch, walked out to their neighbours), the shot meets every goal
    that solving each frame cold with restarts meets (restarts are random: one frame in a
    hundred may slip), and misses the others by no more than that does at worst (it switches
    to a clearly closer miss)."""
    chain = reference_chains.elliptic_chain(3)
    t = 2.0 * np.pi * np.arange(250) / 250
    targets = np.stack((1.1 * np.sin(t), 0.8 * np.sin(2.0 * t + 0.4), 2.0 + 0.35 * np.cos(t)), axis=1)
    result = solve_sequence(chain, targets, settings=SolveSettings(max_iterations=64, tolerance=1e-3, restarts=2))
    cold = solve(chain, targets, settings=SolveSettings(max_iterations=64, tolerance=1e-3, restarts=3))
    assert_result_is_honest(chain, result, targets)
    assert 0.3 < np.mean(cold.converged) < 0.7  # the path is what this test is about
    assert np.sum(cold.converged & ~result.converged) <= 0.01 * len(targets)
    assert np.max(result.position_error) <= np.max(cold.position_error) + 1e-3 * chain.reach
    # Restarts stay rare: a probe every few followed frames of a missed stretch, no more.
    assert np.sum(result.restarts > 0) <= 0.1 * len(targets)


@pytest.mark.parametrize("seed", range(3))
def test_a_branch_change_between_frames_that_reach_is_carried_away(seed):
    """The last 20 frames of a shot on another solution branch (followed from a random pose):
    the new branch cannot be carried back 30 frames to meet the old one, so the old branch is
    carried on to the end of the shot instead, and no jump is left."""
    chain = reference_chains.limited_chain(10)
    rng = np.random.default_rng(seed)
    path = smooth_pose_path(chain, rng, 60, keys=3)
    targets = chain.forward_kinematics(path).effector
    settings = SolveSettings(method="dls", tolerance=1e-4)
    old = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    new = solve_sequence(chain, targets[30:], start_rotations=chain.random_poses(rng, 1)[0], settings=settings)
    rotations = np.concatenate((old.rotations[:40], new.rotations[10:]))
    frames = sequence._Frames(chain, Goals.of(targets), settings)
    frames.keep(np.arange(60), rotations, np.concatenate((old.converged[:40], new.converged[10:])))
    assert np.all(frames.met)
    assert list(pose_jumps.jump_positions(frames.rotations, np.arange(60))) == [40]
    sequence._repair_jumps(frames, np.arange(60))
    assert pose_jumps.jump_positions(frames.rotations, np.arange(60)).size == 0
    np.testing.assert_array_equal(frames.rotations[:40], rotations[:40])  # the old branch went on
    assert np.all(frames.met)
    assert np.max(chain.limit_violation(frames.rotations)) < 1e-9


def two_branches_half_way(seed):
    """A 120-frame shot of a very redundant chain (3 ball joints for a position goal): the first
    60 frames followed from the path's own start, the rest from a random pose (another branch).
    Returns the chain, the shot's frames holding those poses, the poses and which met."""
    chain = reference_chains.elliptic_chain(3)
    rng = np.random.default_rng(seed)
    path = smooth_pose_path(chain, rng, 120, keys=3)
    targets = chain.forward_kinematics(path).effector
    settings = SolveSettings(method="dls", tolerance=1e-4)
    old = solve_sequence(chain, targets, start_rotations=path[0], settings=settings)
    new = solve_sequence(chain, targets, start_rotations=chain.random_poses(rng, 1)[0], settings=settings)
    rotations = np.concatenate((old.rotations[:60], new.rotations[60:]))
    met = np.concatenate((old.converged[:60], new.converged[60:]))
    frames = sequence._Frames(chain, Goals.of(targets), settings)
    frames.keep(np.arange(120), rotations, met)
    return chain, frames, rotations, met


@pytest.mark.parametrize("seed", range(6))
def test_a_branch_running_beside_the_old_one_is_blended_in(seed):
    """Half a shot on another branch of a very redundant chain (3 ball joints for a position
    goal): the two branches run side by side and never meet, so no carry removes the jump.
    It is spread over the 30 frames before it instead: no jump is left, the joints turn no
    faster than twice the branch's own motion plus the jump's share, every goal is still met
    where it was, and frames outside the window are untouched."""
    chain, frames, rotations, met = two_branches_half_way(seed)
    every = np.arange(120)
    assert list(pose_jumps.jump_positions(rotations, every)) == [60]
    jump = pose_distance(rotations[60], rotations[59])
    own = np.max(np.delete(pose_distance(rotations[1:], rotations[:-1]), 59))
    assert jump > 5.0 * own  # a jump worth blending: 29-80 degrees on these paths

    sequence._repair_jumps(frames, every)

    assert pose_jumps.jump_positions(frames.rotations, every).size == 0
    assert np.max(pose_distance(frames.rotations[1:], frames.rotations[:-1])) <= 2.0 * (own + jump / 31.0)
    assert np.all(frames.met[met])
    changed = np.nonzero(np.any(frames.rotations != rotations, axis=(1, 2)))[0]
    assert changed.min() >= 60 - sequence.CARRY_FRAMES and changed.max() < 60 + sequence.CARRY_FRAMES
    assert np.max(chain.limit_violation(frames.rotations)) < 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_a_carry_without_a_frame_limit_keeps_one_side_and_the_first_frame(seed):
    """Two branches of a very redundant chain side by side for a whole shot, the pose jumping
    from one to the other half way. Carried without a frame limit, the new branch back may not
    take the shot's first frame and the old branch on reaches the end: the old branch is kept
    to the end (only one side changes, or the jump would just swap sides), every goal met
    before still met."""
    chain, frames, rotations, met = two_branches_half_way(seed)
    every = np.arange(120)
    assert met[59] and met[60] and pose_distance(rotations[60], rotations[59]) >= pose_jumps.VISIBLE_JUMP

    sequence._carry_through(frames, every)

    np.testing.assert_array_equal(frames.rotations[:60], rotations[:60])
    assert np.all(pose_distance(frames.rotations[60:], rotations[60:]) > 0.0)
    assert pose_jumps.visible_jumps(frames.rotations, every)[0].size == 0
    assert np.all(frames.met[met])
    np.testing.assert_array_less(frames.miss(every[frames.met], frames.rotations[frames.met]), 1e-4 * (1.0 + 1e-6))
    assert np.max(chain.limit_violation(frames.rotations)) < 1e-9


def test_the_rigify_left_leg_shot_meets_every_goal():
    """The demo's rigify_human left leg, as its bake sees it (a real rig's limits and path):
    every frame reaches. (DLS keeping joints pressed through rejected steps left one frame
    1 cm short here, and the foot jumping 48° to get back.)"""
    shot = json.loads((REPO / "tests" / "solver" / "data" / "rigify_left_leg_shot.json").read_text())
    spec = Chain.from_rig_spec(load_rig_spec(REPO / "sample_rigs" / "rigify_human.rig.json"), "leg.L")
    rest_rotations, rest_offsets = spec.rest_rotations.copy(), spec.rest_offsets.copy()
    rest_rotations[0], rest_offsets[0] = shot["root_rest_rotation"], shot["root_offset"]
    chain = Chain(spec.bone_names, rest_rotations, rest_offsets, spec.lengths, spec.limits, spec.effector_offset)
    targets = np.array(shot["targets"])
    result = solve_sequence(chain, targets, settings=SolveSettings(tolerance=shot["tolerance"], restarts=2))
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate == 1.0
    assert np.degrees(np.max(pose_distance(result.rotations[1:], result.rotations[:-1]))) < 25.0


def test_a_carry_that_falls_onto_the_old_branch_is_no_join():
    """The demo's human_arm (5 bones, position and orientation goals) where its solutions fold:
    each branch ends one frame past the other, so solving frame j − 1 from the new branch's pose
    at j lands back on the old branch (and the other way round). Carrying the new branch back
    must count that as the carry failing, not as meeting the old branch: the frames stay as
    they were (not overwritten with the fallen-back poses, the jump kept)."""
    shot = json.loads((REPO / "tests" / "solver" / "data" / "human_arm_fold_shot.json").read_text())
    spec = Chain.from_rig_spec(load_rig_spec(REPO / "sample_rigs" / "human_arm.rig.json"), "arm.L")
    rest_rotations, rest_offsets = spec.rest_rotations.copy(), spec.rest_offsets.copy()
    rest_rotations[0], rest_offsets[0] = shot["root_rest_rotation"], shot["root_offset"]
    chain = Chain(spec.bone_names, rest_rotations, rest_offsets, spec.lengths, spec.limits, spec.effector_offset)
    goals = Goals(
        positions=np.array(shot["positions"]),
        orientations=np.array(shot["orientations"]),
        orientation_weight=shot["orientation_weight"],
    )
    rotations = np.array(shot["rotations"])
    every = np.arange(len(rotations))
    frames = sequence._Frames(chain, goals, SolveSettings(tolerance=shot["tolerance"], restarts=2))
    frames.keep(every, rotations, frames.miss(every, rotations) <= shot["tolerance"])
    assert np.all(frames.met)
    (jump,) = pose_jumps.jump_positions(rotations, every)
    assert np.degrees(pose_distance(rotations[jump], rotations[jump - 1])) > 10.0

    for origin, direction in ((jump, -1), (jump - 1, +1)):
        kept, ran_out = sequence._carry(frames, every, np.array([origin]), direction)
        assert not kept[0] and not ran_out
    sequence._carry_through(frames, every)  # nor without a frame limit
    np.testing.assert_array_equal(frames.rotations, rotations)


def wave_pose_path(chain, rng, frames, amplitude, clamped=True):
    """Poses whose rotation vectors' components are sines of random frequencies and phases
    (a loop's worth of busy arm motion), clamped into the limits (many onto several at once)."""
    count = 3 * chain.n_bones
    t = np.linspace(0.0, 2.0 * np.pi, frames)[:, None]
    wave = np.sin(t * rng.uniform(0.5, 2.0, count) + rng.uniform(0.0, 2.0 * np.pi, count))
    poses = quat.from_rotation_vector(amplitude * wave.reshape(frames, chain.n_bones, 3))
    return chain.clamp_to_limits(poses) if clamped else poses


def test_a_branch_that_spans_the_rest_of_the_shot_is_carried_past_a_jump():
    """A busy arm motion (3 ball joints for a position goal, every goal reachable): the followed
    branch ends, and the jump onto another is neither met by a 30-frame carry nor blended. The
    old branch carried on without a frame limit meets every goal to the shot's end: no visible
    jump is left (without that carry, one of 14° at frame 208; ``_carry_through``)."""
    chain = reference_chains.elliptic_chain(3)
    targets = chain.forward_kinematics(wave_pose_path(chain, np.random.default_rng(10), 250, 0.6)).effector
    result = solve_sequence(chain, targets, settings=SolveSettings(tolerance=1e-3, restarts=2))
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate == 1.0
    turns = pose_distance(result.rotations[1:], result.rotations[:-1])
    assert np.max(turns) < pose_jumps.VISIBLE_JUMP


def test_a_third_branch_that_spans_the_shot_replaces_a_jump_no_carry_removes():
    """A busy arm motion whose followed branch ends at a limit, and neither it nor the branch
    it jumps onto (79°) reaches on across the jump. Another branch, found from random poses at
    the jump's frame, meets every goal of the shot: it replaces the stretch (``branch_spans``),
    and no joint turns more than 2° a frame."""
    chain = reference_chains.elliptic_chain(3)
    targets = chain.forward_kinematics(wave_pose_path(chain, np.random.default_rng(16), 1000, 0.9)).effector
    settings = SolveSettings(tolerance=1e-3, restarts=2)
    result = solve_sequence(chain, targets, settings=settings)
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate == 1.0
    assert np.degrees(np.max(pose_distance(result.rotations[1:], result.rotations[:-1]))) < 2.0
    # Seeded: the same shot every time (to numpy's last bit, which its vector loops may move).
    again = solve_sequence(chain, targets, settings=settings)
    np.testing.assert_allclose(again.rotations, result.rotations, rtol=0.0, atol=1e-9)


def test_a_rotation_met_as_closely_as_the_position_counts_as_met():
    """Position and orientation goals made by a busy pose path inside arm3's limits (often on
    them, where DLS converges slowly): every frame counts as met, its rotation within the turn
    that moves a point at the chain's reach by the position tolerance. (A fixed 1e-6 rad would
    count 45 frames as missed at up to 0.016° and run the shot's miss handling for them.)"""
    chain = reference_chains.arm3()
    path = wave_pose_path(chain, np.random.default_rng(2), 1000, 0.9)
    pose = chain.forward_kinematics(path)
    goals = Goals(positions=pose.effector, orientations=pose.rotations[:, -1])
    settings = SolveSettings(tolerance=1e-3, restarts=2)
    result = solve_sequence(chain, goals, settings=settings)
    assert result.success_rate == 1.0
    assert np.max(result.position_error) <= 1e-3
    assert np.max(result.orientation_error) <= 1e-3 / chain.reach
    assert settings.angle_tolerance(1e-3, chain.reach) == 1e-3 / chain.reach
    assert SolveSettings(orientation_tolerance=1e-6).angle_tolerance(1e-3, chain.reach) == 1e-6


def test_the_third_branch_search_never_loses_a_goal_or_adds_a_jump(monkeypatch):
    """Random shots (2-80 frames, goals blending between random reachable poses with jumps
    between them, some scaled out of reach, some with orientation goals) on five chains: step 7
    leaves every goal met that was met before it, no more visible jumps, and every joint
    inside its limits (measured on each shot just before and after the step)."""
    rng = np.random.default_rng(5)
    chains = [
        reference_chains.arm3(),
        reference_chains.limited_chain(4),
        reference_chains.elliptic_chain(3),
        reference_chains.free_chain(3),
        reference_chains.elliptic_chain(2),
    ]
    seen = []

    def measured(frames, followed):
        every = np.arange(frames.goals.count)
        before = frames.met.copy(), len(pose_jumps.visible_jumps(frames.rotations, every)[0])
        original(frames, followed)
        seen.append((before, (frames.met.copy(), len(pose_jumps.visible_jumps(frames.rotations, every)[0]))))
        assert np.max(frames.chain.limit_violation(frames.rotations)) < 1e-9

    original = sequence.span_jumps
    monkeypatch.setattr(sequence, "span_jumps", measured)
    for case in range(30):
        chain = chains[case % len(chains)]
        count = int(rng.integers(2, 80))
        poses = chain.random_poses(rng, 4)[np.sort(rng.integers(0, 4, count))]
        positions = chain.forward_kinematics(poses).effector + rng.normal(scale=0.02 * chain.reach, size=(count, 3))
        if case % 3 == 0:
            positions *= rng.uniform(0.5, 1.6)
        orientations = chain.forward_kinematics(poses).rotations[:, -1] if case % 4 == 1 else None
        solve_sequence(
            chain,
            Goals(positions=positions, orientations=orientations),
            settings=SolveSettings(tolerance=1e-3 * chain.reach, restarts=1),
        )
    assert len(seen) == 30
    for (met_before, jumps_before), (met_after, jumps_after) in seen:
        assert np.all(met_after[met_before])
        assert jumps_after <= jumps_before
    assert sum(after[1] < before[1] for before, after in seen) >= 1  # the step did something


def test_walkers_stepping_onto_one_frame_leave_it_to_the_one_that_meets():
    """Two walkers (one from each side) on frame 7, one on frame 9: on 7 the one that met its
    goal walks on, or of two misses the smaller; a frame with one walker keeps it."""
    steps = np.array([7, 9, 7, 7, 5, 5])
    met = np.array([False, False, True, False, False, False])
    missed_by = np.array([0.1, 0.5, 0.2, 0.05, 0.3, 0.2])
    np.testing.assert_array_equal(
        sequence._best_per_frame(steps, met, missed_by), [False, True, True, False, False, True]
    )


def test_rig_spec_chain_matches_its_rest_pose():
    rig = load_rig_spec(ARM3_SPEC)
    chain = Chain.from_rig_spec(rig, "arm")
    assert chain.bone_names == rig.chain_bones("arm")
    tip = rig.bone(chain.bone_names[-1])
    # At rest the effector is the tip bone's tail.
    np.testing.assert_allclose(chain.forward_kinematics(chain.rest_pose()).effector, tip.tail, atol=1e-9)


def test_command_line_solves_a_rig_spec(tmp_path, rng):
    chain = Chain.from_rig_spec(load_rig_spec(ARM3_SPEC), "arm")
    targets = chain.forward_kinematics(chain.random_poses(rng, 20)).effector
    (tmp_path / "targets.json").write_text(json.dumps(targets.tolist()))
    np.save(tmp_path / "targets.npy", targets)
    for name in ("targets.json", "targets.npy"):
        out = tmp_path / f"{name}.out.json"
        assert main(["solve", str(ARM3_SPEC), "--targets", str(tmp_path / name), "-o", str(out)]) == 0
        document = json.loads(out.read_text())
        assert document["bones"] == list(chain.bone_names)
        rotations = np.array(document["rotations"])
        assert rotations.shape == (20, 3, 4)
        effector = chain.forward_kinematics(rotations).effector
        np.testing.assert_allclose(np.linalg.norm(effector - targets, axis=1), document["position_error"], atol=1e-12)
        assert all(document["converged"])


def test_command_line_runs_as_a_module_and_reports_bad_input(tmp_path):
    (tmp_path / "bad.json").write_text('{"positions": [[0, 1, "x"]]}')
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "quat_ik_addon.solver",
            "solve",
            str(ARM3_SPEC),
            "--targets",
            str(tmp_path / "bad.json"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert run.returncode == 2
    assert "bad.json" in run.stderr and "error:" in run.stderr
    (tmp_path / "ok.json").write_text(json.dumps({"positions": [[0.1, 0.3, 0.2]], "directions": [[0, 0, 1]]}))
    run = subprocess.run(
        [sys.executable, "-m", "quat_ik_addon.solver", "solve", str(ARM3_SPEC), "--targets", str(tmp_path / "ok.json")],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert run.returncode == 0, run.stderr
    assert len(json.loads(run.stdout)["rotations"]) == 1
    missing = main(["solve", str(tmp_path / "nope.json"), "--targets", str(tmp_path / "ok.json")])
    assert missing == 2


ADDON_VERSION = ".".join(map(str, quat_ik_addon.bl_info["version"]))


def run_without_bpy(no_bpy: Path, *arguments: str, environment: dict | None = None) -> subprocess.CompletedProcess:
    """``python <arguments>`` from the repository, with a ``bpy`` that raises first on the path
    (folder ``no_bpy``) and ``QUAT_IK_NATIVE`` only as ``environment`` sets it."""
    no_bpy.mkdir(exist_ok=True)
    (no_bpy / "bpy.py").write_text("raise ImportError('bpy was imported')\n")
    env = {name: value for name, value in os.environ.items() if name != library.ENVIRONMENT_VARIABLE}
    env.update(PYTHONPATH=os.pathsep.join([str(no_bpy), str(REPO)]), **(environment or {}))
    return subprocess.run([sys.executable, *arguments], capture_output=True, text=True, cwd=REPO, env=env, check=False)


def test_command_line_version_prints_the_add_on_version_and_the_solver_path_without_bpy(tmp_path, monkeypatch, request):
    monkeypatch.delenv(library.ENVIRONMENT_VARIABLE, raising=False)  # this process's answer is the automatic one
    request.addfinalizer(library.reset)
    library.reset()
    expected = f"quat-ik {ADDON_VERSION}\nsolver: {library.load()[1].describe()}\n"
    run = run_without_bpy(tmp_path, "-m", "quat_ik_addon.solver", "--version")
    assert run.returncode == 0, run.stderr
    assert run.stdout == expected


def test_command_line_version_names_numpy_and_why_when_the_environment_turns_the_kernel_off(tmp_path):
    run = run_without_bpy(tmp_path, "-m", "quat_ik_addon.solver", "--version", environment={"QUAT_IK_NATIVE": "0"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        f"quat-ik {ADDON_VERSION}",
        "solver: numpy (kernel disabled by QUAT_IK_NATIVE=0)",
    ]


def test_command_line_refuses_complex_targets_unwritable_output_and_a_chain_without_reach(tmp_path, capsys):
    np.save(tmp_path / "complex.npy", np.array([[0.1 + 1j, 0.3, 0.2]]))
    assert main(["solve", str(ARM3_SPEC), "--targets", str(tmp_path / "complex.npy")]) == 2
    assert "complex" in capsys.readouterr().err
    (tmp_path / "ok.json").write_text(json.dumps([[0.1, 0.3, 0.2]]))
    unwritable = tmp_path / "no such folder" / "out.json"
    assert main(["solve", str(ARM3_SPEC), "--targets", str(tmp_path / "ok.json"), "-o", str(unwritable)]) == 2
    assert "cannot write" in capsys.readouterr().err
    spec = json.loads(ARM3_SPEC.read_text())
    chain = spec["chains"][0]
    tip = next(bone for bone in spec["bones"] if bone["name"] == chain["tip"])
    length = float(np.linalg.norm(np.subtract(tip["tail"], tip["head"])))
    spec["chains"] = [{**chain, "length": 1, "effector_offset": [0.0, -length, 0.0]}]
    (tmp_path / "no_reach.json").write_text(json.dumps(spec))
    assert main(["solve", str(tmp_path / "no_reach.json"), "--targets", str(tmp_path / "ok.json")]) == 2
    assert "nothing to reach" in capsys.readouterr().err


def test_visible_jumps_are_the_kept_jumps_a_viewer_sees():
    """A 30° jump is reported with its turn; a 6° one (a jump, but read as fast motion) and a
    sustained fast turn of 8° a frame (no jump) are not; frames a step of 2 apart count per
    frame."""
    angles = np.concatenate((np.radians(0.5) * np.arange(20), np.radians(8.0) * np.arange(1, 11)))
    angles = np.concatenate((angles, angles[-1] + np.radians(0.5) * np.arange(1, 21)))
    angles[40:] += np.radians(30.0)  # the jump into position 40
    angles[12:] += np.radians(6.0)  # a small one into position 12
    rotations = quat.from_axis_angle(np.array([0.0, 0.0, 1.0]), angles)[:, None, :]
    for frame_numbers in (np.arange(50), 1 + 2 * np.arange(50)):
        assert set(pose_jumps.jump_positions(rotations, frame_numbers)) >= {12, 40}
        positions, turns = pose_jumps.visible_jumps(rotations, frame_numbers)
        assert list(positions) == [40]
        np.testing.assert_allclose(np.degrees(turns), [30.5])
    for frames in (1, 2):  # too short to tell a jump from motion
        assert pose_jumps.visible_jumps(rotations[39 : 39 + frames], np.arange(frames))[0].size == 0


def test_a_frame_between_two_misses_that_lands_on_another_branch_tries_again(monkeypatch):
    """Between two frames missing their goals on one branch, a frame whose start lands on
    another branch, where it misses by far more (here a bone's second window, pointing away),
    is solved again from its neighbour's pose and misses as they do."""
    from quat_ik_addon.solver.limits.joints import BallJoint
    from quat_ik_addon.solver.limits.reach_windows import ConeWindow

    windows = (
        ConeWindow(np.array([1.0, 0.0, 0.0]), np.radians(40.0)),
        ConeWindow(np.array([-1.0, 0.0, 0.0]), np.radians(40.0)),
    )
    chain = Chain(("bone",), [[1.0, 0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]], [1.0], (BallJoint(windows),))
    goal = 3.0 * np.array([np.cos(np.radians(70.0)), np.sin(np.radians(70.0)), 0.0])  # out of reach, nearer +x
    frames = sequence._Frames(chain, Goals.of(np.tile(goal, (3, 1))), SolveSettings(tolerance=1e-3))
    closest = solve(chain, goal[None], start_rotations=quat.rotation_from_y(np.array([[1.0, 0.0, 0.0]])))
    frames.keep(np.array([0, 2]), np.repeat(closest.rotations, 2, axis=0), np.zeros(2, dtype=bool))
    away = quat.rotation_from_y(np.array([[-1.0, 0.0, 0.0]]))[:, None]  # inside the other window
    monkeypatch.setattr(sequence, "between_poses", lambda poses, *_: away.copy())
    sequence._fill_between(frames, np.array([0, 2]))
    miss = frames.miss(np.arange(3), frames.rotations)
    assert miss[0] == pytest.approx(closest.position_error[0], abs=1e-9)
    assert miss[1] <= miss[0] + 1e-6
    assert np.max(chain.limit_violation(frames.rotations)) < 1e-9


def test_a_pivot_out_of_reach_is_not_crept_towards():
    """Segment pivots after the first start a segment away from the pivot before: a goal met
    from there is met within the warm budget, and a missed one is left early (its segment's
    following and the settling at the end finish the miss), not crept towards for the whole
    budget. The benchmark's 3-bone chain and path, 1,000 frames: its pivots miss half the time."""
    chain = reference_chains.elliptic_chain(3)
    t = 2.0 * np.pi * np.arange(1000) / 250
    targets = np.stack((1.1 * np.sin(t), 0.8 * np.sin(2.0 * t + 0.4), 2.0 + 0.35 * np.cos(t)), axis=1)
    goals = Goals.of(targets)
    settings = SolveSettings(max_iterations=64, tolerance=1e-3, restarts=2)
    frames = sequence._Frames(chain, goals, settings)
    followed = sequence_plan.followed_frames(goals, chain.reach)
    pivots = followed[sequence_plan.segments(goals, followed, chain.reach).pivots]
    _, met = sequence._solve_starts(frames, pivots, chain.rest_pose())
    later_missed = pivots[1:][~met[1:]]
    assert later_missed.size >= 2  # the path is what this test is about
    # DLS and CCD's finishing sweeps each get the warm budget at most.
    assert np.all(frames.iterations[later_missed] <= 2 * sequence.WARM_ITERATIONS)


def test_command_line_time_limit_keeps_the_answer_and_says_it_ran_out(tmp_path):
    """``--time-limit 0``: no restart round runs, every target still gets a pose inside its
    limits, and the output says the budget ran out; without it, it did not."""
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps([[0.0, -0.3, 0.1], [0.2, -0.25, -0.2], [0.3, 0.2, 0.1]]))  # behind the shoulder
    documents = {}
    for limit in (None, "0"):
        out = tmp_path / f"out_{limit}.json"
        extra = [] if limit is None else ["--time-limit", limit]
        assert (
            main(["solve", str(ARM3_SPEC), "--targets", str(targets), "--restarts", "3", *extra, "-o", str(out)]) == 0
        )
        documents[limit] = json.loads(out.read_text())
    assert documents[None]["out_of_time"] is False and documents["0"]["out_of_time"] is True
    assert all(rounds == 0 for rounds in documents["0"]["restarts"]) and any(documents[None]["restarts"])
    chain = Chain.from_rig_spec(load_rig_spec(ARM3_SPEC), "arm")
    assert np.max(chain.limit_violation(np.array(documents["0"]["rotations"]))) <= 1e-9


def test_command_line_targets_with_a_number_past_float_range_get_one_line(tmp_path, capsys):
    targets = tmp_path / "targets.json"
    targets.write_text("[[1" + "0" * 400 + ", 0, 0]]")
    assert main(["solve", str(ARM3_SPEC), "--targets", str(targets)]) == 2
    error = capsys.readouterr().err
    assert "targets.json" in error and "Traceback" not in error and len(error.strip().splitlines()) == 1
