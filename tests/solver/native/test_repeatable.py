"""The same request solved twice in one process gives the same poses to the bit on the kernel,
wherever its arrays lie in memory (numpy's SIMD loops pick their path by alignment, so on numpy
two solves of one input may part in the last bits)."""

from __future__ import annotations

import numpy as np

from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import solve


def misaligned(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` starting 8 bytes past a 64-byte boundary."""
    buffer = np.empty(values.size + 16)
    start = (-(buffer.ctypes.data // 8) % 8 + 1) % 8
    copy = buffer[start : start + values.size].reshape(values.shape)
    copy[...] = values
    return copy


def test_a_batch_solved_twice_is_the_same_to_the_bit(kernel):
    chain = reference_chains.limited_chain(10)
    rng = np.random.default_rng(5)
    targets = rng.normal(size=(200, 3)) * 0.7
    settings = SolveSettings(restarts=3)
    first = solve(chain, targets, settings=settings)
    second = solve(chain, misaligned(targets), settings=settings)
    assert np.array_equal(first.rotations, second.rotations)
    assert np.array_equal(first.position_error, second.position_error)


def test_one_target_at_a_time_is_the_same_to_the_bit(kernel):
    chain = reference_chains.arm3()
    rng = np.random.default_rng(6)
    targets = rng.normal(size=(40, 3)) * 0.5
    settings = SolveSettings(restarts=3)
    for target in targets:
        first = solve(chain, target[None], settings=settings)
        second = solve(chain, misaligned(target[None]), settings=settings)
        assert np.array_equal(first.rotations, second.rotations), target


def test_a_shot_solved_twice_is_the_same_to_the_bit(kernel):
    chain = reference_chains.elliptic_chain(3)
    t = np.linspace(0.0, 2.0 * np.pi, 160)
    path = np.stack((1.1 * np.sin(t), 0.8 * np.sin(2.0 * t), 2.0 + 0.35 * np.cos(t)), axis=1)
    settings = SolveSettings(tolerance=1e-3, restarts=4)
    first = solve_sequence(chain, path, settings=settings)
    second = solve_sequence(chain, misaligned(path), settings=settings)
    assert np.array_equal(first.rotations, second.rotations)
