"""A shot's loops on the kernel (``qik_follow``, ``qik_walk_out``, ``qik_fill_between``,
``qik_repair_jumps``, and the probes' ``qik_restart_round``) against their numpy loops in
``sequence`` and ``solve``: the same poses, verdicts and iterations.

Both runs solve every frame on the kernel; only the loops around the solves differ, so the
kernel's loops must land the same keeps in the same order. They do the same arithmetic as the
numpy loops except a blend's start (a product and a partial turn: rounding apart), which can
tip a later choice made by a last bit: such frames are counted and must stay rare.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from random_chains import random_chain

from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.joints import AngleRange
from quat_ik_addon.solver.native import kernel_calls, library, shot_calls
from quat_ik_addon.solver.rig.reference_chains import elliptic_chain
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots.cycles import solve_cycle
from quat_ik_addon.solver.shots.sequence import solve_sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
from benchmark_path import target_path

LIMIT_SLACK = 1e-9  # radians: both keep every limit to this
POSE_MATCH = 1e-9  # the largest |1 - |q·q'|| counted as the same pose
PARTED_SHARE = 0.02  # frames whose poses part ways, over all random shots, at most
BENCH = SolveSettings(max_iterations=64, tolerance=1e-3, restarts=4, method="dls_ccd")

pytestmark = pytest.mark.skipif(library.load()[0] is None, reason="the native kernel did not load here")


@pytest.fixture
def numpy_loops(monkeypatch):
    """Within the fixture's test, ``sequence``'s loops run in numpy (the solves stay on the kernel)."""

    def use(on: bool) -> None:
        if on:
            monkeypatch.setattr(shot_calls, "repair_jumps", lambda *args, **kwargs: False)
            monkeypatch.setattr(shot_calls, "fill_between", lambda *args, **kwargs: False)
            monkeypatch.setattr(shot_calls, "walk_out", lambda *args, **kwargs: False)
            monkeypatch.setattr(shot_calls, "follow", lambda *args, **kwargs: None)
            monkeypatch.setattr(kernel_calls, "restart_round", lambda *args, **kwargs: None)
        else:
            monkeypatch.undo()

    return use


@pytest.fixture
def native_calls(monkeypatch):
    """How often each loop ran on the kernel (a silent fall back to numpy fails the parity tests)."""
    calls = {"repair_jumps": 0, "fill_between": 0, "walk_out": 0, "follow": 0, "restart_round": 0}
    for name in calls:
        module = kernel_calls if name == "restart_round" else shot_calls
        original = getattr(module, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            answer = _original(*args, **kwargs)
            calls[_name] += answer is not None and answer is not False
            return answer

        monkeypatch.setattr(module, name, counted)
    return calls


def _path(rng: np.random.Generator, chain, frames: int) -> np.ndarray:
    """A smooth closed path around the chain's root, partly out of its limits' reach."""
    t = 2.0 * np.pi * np.arange(frames) / frames
    scale = chain.reach * rng.uniform(0.4, 1.0, 3)
    phase = rng.uniform(0.0, 2.0 * np.pi, 3)
    turns = rng.integers(1, 3, 3)
    return chain.rest_offsets[0] + scale * np.sin(turns * t[:, None] + phase)


def _same_pose(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.max(np.abs(np.abs(np.einsum("fbi,fbi->fb", a, b)) - 1.0), axis=1) <= POSE_MATCH


def test_benchmark_shots_match_the_numpy_loops(numpy_loops, native_calls):
    """The Blender benchmark's shots (3, 10 bones; a third of the 3-bone path out of reach): the
    same iterations frame by frame and the same poses."""
    for bones, frames in ((3, 250), (3, 500), (10, 250)):
        chain = elliptic_chain(bones)
        path = target_path(np.arange(1, frames + 1, dtype=float))
        native = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
        numpy_loops(True)
        reference = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
        numpy_loops(False)
        assert np.array_equal(native.iterations, reference.iterations), (bones, frames)
        assert np.array_equal(native.converged, reference.converged), (bones, frames)
        assert np.max(np.abs(native.rotations - reference.rotations)) <= POSE_MATCH, (bones, frames)
    assert all(native_calls.values()), native_calls


def test_random_shots_match_the_numpy_loops(numpy_loops, native_calls):
    """Random chains (every limit shape) following random closed paths, partly out of reach,
    with position, orientation and direction goals: the same verdicts, limits kept by both,
    and the same poses but for rare frames a last bit sent another way."""
    rng = np.random.default_rng(33)
    parted, total, reasons = 0, 0, []
    for problem in range(24):
        chain = random_chain(rng, int(rng.integers(1, 7)))
        frames = int(rng.integers(20, 160))
        positions = _path(rng, chain, frames)
        kind = problem % 3
        if kind == 1:
            turns = chain.forward_kinematics(chain.random_poses(rng, 1)).rotations[0, -1]
            goals = Goals(positions, orientations=np.repeat(turns[None], frames, axis=0))
        elif kind == 2:
            goals = Goals(positions, directions=np.repeat(rng.normal(size=(1, 3)), frames, axis=0))
        else:
            goals = Goals(positions)
        settings = SolveSettings(max_iterations=48, tolerance=1e-3 * chain.reach, restarts=2, seed=problem)
        native = solve_sequence(chain, goals, settings=settings)
        numpy_loops(True)
        reference = solve_sequence(chain, goals, settings=settings)
        numpy_loops(False)
        with library.numpy_only():  # measured by the reference
            assert np.max(chain.limit_violation(native.rotations)) <= LIMIT_SLACK
            assert np.max(chain.limit_violation(reference.rotations)) <= LIMIT_SLACK
        apart = ~_same_pose(native.rotations, reference.rotations) | (native.converged != reference.converged)
        parted += int(np.count_nonzero(apart))
        total += frames
        if apart.any():
            reasons.append(f"problem {problem}: {np.count_nonzero(apart)} of {frames} frames")
    assert all(native_calls.values()), native_calls
    print(f"{parted} of {total} frames parted ways: {reasons}")
    assert parted <= PARTED_SHARE * total, f"{parted} of {total} frames parted ways: {reasons}"


def test_cycles_match_the_numpy_loops(numpy_loops):
    chain = elliptic_chain(3)
    path = target_path(np.arange(1, 251, dtype=float))
    native = solve_cycle(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    numpy_loops(True)
    reference = solve_cycle(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    numpy_loops(False)
    assert np.array_equal(native.converged, reference.converged)
    assert np.all(_same_pose(native.rotations, reference.rotations) | ~native.converged)
    assert np.max(np.abs(native.rotations - reference.rotations)) <= 1e-6


def test_kernel_loops_repeat_to_the_bit():
    """Two runs of one shot on the kernel: the same bits (the loops keep no state between calls)."""
    chain = elliptic_chain(3)
    path = target_path(np.arange(1, 251, dtype=float))
    first = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    again = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    assert np.array_equal(first.rotations, again.rotations)
    assert np.array_equal(first.iterations, again.iterations)


def test_a_loop_the_kernel_refuses_leaves_the_shot_to_numpy(monkeypatch):
    """A kernel loop that does not finish changes nothing; the numpy loop answers alike."""
    chain = elliptic_chain(3)
    path = target_path(np.arange(1, 251, dtype=float))
    expected = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    kernel, _ = library.load()

    class Refusing:
        def __getattr__(self, name):
            if name in ("qik_repair_jumps", "qik_fill_between", "qik_walk_out", "qik_follow", "qik_restart_round"):
                return lambda *args: 1  # QIK_BAD_INPUT
            return getattr(kernel, name)

    monkeypatch.setattr(kernel_calls, "kernel_for", lambda chain, settings=None: Refusing())
    refused = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    assert np.max(np.abs(refused.rotations - expected.rotations)) <= POSE_MATCH
    assert np.array_equal(refused.converged, expected.converged)


def _rejection_rounds(joint, rng: np.random.Generator, count: int, tries: int = 64) -> np.ndarray:
    """Ball joint directions drawn round by round: each row still outside the windows draws a
    new direction, rows in order, until all are inside or ``tries`` rounds have passed."""

    def uniform(n: int) -> np.ndarray:
        v = rng.normal(size=(n, 3))
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    directions = uniform(count)
    pending = ~joint.reach.contains(directions, 0.0)
    for _ in range(tries):
        if not np.any(pending):
            break
        directions[pending] = uniform(int(np.count_nonzero(pending)))
        pending[pending] = ~joint.reach.contains(directions[pending], 0.0)
    directions[pending] = joint.reach.clamp(directions[pending], "closest")
    return directions


def test_ball_joints_sample_what_rejection_rounds_draw():
    """``BallJoint.sample`` replays the rejection rounds on one drawn stream: the same directions to
    the bit, and the generator left where the rounds leave it (rejection past the buffer included)."""
    rng = np.random.default_rng(5)
    joints = 0
    for _ in range(40):
        chain = random_chain(rng, int(rng.integers(1, 6)))
        for joint in chain.limits:
            if getattr(joint, "reach", None) is None:
                continue
            joints += 1
            count = int(rng.integers(1, 300))
            seed = int(rng.integers(1 << 30))
            ours, rounds = np.random.default_rng(seed), np.random.default_rng(seed)
            sampled = joint.sample(ours, count)
            directions = _rejection_rounds(joint, rounds, count)
            twist_range = joint.twist_range or AngleRange(-np.pi, np.pi)
            assert np.array_equal(sampled, joint._join(directions, twist_range.sample(rounds, count)))
            assert ours.uniform() == rounds.uniform()
    assert joints > 20


def test_without_the_kernel_the_numpy_loops_solve_the_shot(native_calls):
    """With the kernel off, every loop falls back to numpy (the path where the kernel cannot load)."""
    chain = elliptic_chain(3)
    path = target_path(np.arange(1, 101, dtype=float))
    with library.numpy_only():
        result = solve_sequence(chain, path, start_rotations=chain.centre_pose(), settings=BENCH)
    assert np.all(np.isfinite(result.rotations))
    assert not any(native_calls.values()), native_calls


def test_tip_twist_carried_along_as_numpy_does():
    """``qik_carry_tip_twist_along`` against ``free_twist``'s carry and range, random chains and
    wandering tips (directions through −Y too): the same poses to rounding."""
    from quat_ik_addon.solver.free_twist import carry_tip_twist_along, within_tip_twist_range

    rng = np.random.default_rng(8)
    for _ in range(40):
        chain = random_chain(rng, int(rng.integers(1, 5)))
        frames = int(rng.integers(1, 60))
        poses = chain.random_poses(rng, frames)
        start = chain.random_poses(rng, 1)[0]
        native = shot_calls.carry_tip_twist_along(chain, poses, start)
        with library.numpy_only():
            reference = within_tip_twist_range(chain, carry_tip_twist_along(poses, start))
        assert native is not None
        assert np.max(np.abs(native - reference)) <= 1e-12
    assert shot_calls.carry_tip_twist_along(chain, poses[:, :-1], start) is None  # a wrong shape: numpy
