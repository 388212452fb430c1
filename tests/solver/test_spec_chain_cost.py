"""Building a chain from a rig spec costs what its bones and their ancestors cost, not the rig:
a 3-bone chain of a 20,000-bone spec built every bone's rest matrix (35 s where the bones hung
in one long line)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.rig import rest_pose
from quat_ik_addon.solver.rig import spec as spec

CHAIN_BONES = 3
TIMED_REPEATS = 5
# A generous bound on the 20,000-bone build's time over the 200-bone build's: with the cost
# following the chain both take about the same; building every bone took ~100x (wide) and
# ~170x (one long line).
SLOWER_AT_MOST = 20.0


def _rig(bones: int, shape: str) -> spec.RigSpec:
    """``bones`` bones; the chain 'arm' is the first three, below the root 'b0'. ``wide``: every
    other bone hangs from the root; ``deep``: every bone hangs from the one before, one long line
    (the chain's tip has 20,000 descendants)."""
    listed = [spec.BoneSpec(name="b0", head=(0.0, 0.0, 0.0), tail=(0.0, 1.0, 0.0))]
    for i in range(1, bones):
        parent = f"b{i - 1}" if shape == "deep" or i <= CHAIN_BONES else "b0"
        head = (0.0, float(i), 0.0) if shape == "deep" else (0.0, 1.0, 0.0)
        tail = (0.01 * (i % 7), head[1] + 1.0, 0.001 * (i % 5))
        listed.append(spec.BoneSpec(name=f"b{i}", head=head, tail=tail, roll_deg=float(i % 90), parent=parent))
    chain = spec.ChainSpec(name="arm", tip=f"b{CHAIN_BONES}", length=CHAIN_BONES)
    return spec.RigSpec(name=f"{shape}{bones}", bones=tuple(listed), chains=(chain,))


def _fastest_build(rig: spec.RigSpec) -> float:
    times = []
    for _ in range(TIMED_REPEATS):
        started = time.perf_counter()
        Chain.from_rig_spec(rig, "arm")
        times.append(time.perf_counter() - started)
    return min(times)


@pytest.mark.parametrize("shape", ["wide", "deep"])
def test_a_chain_of_a_20000_bone_spec_computes_rest_frames_of_its_lineage_only(shape, monkeypatch) -> None:
    built = []
    original = rest_pose.armature_rest_matrices

    def counting(heads, tails, rolls, parents):
        built.append(len(parents))
        return original(heads, tails, rolls, parents)

    monkeypatch.setattr(rest_pose, "armature_rest_matrices", counting)
    rig = _rig(20_000, shape)
    Chain.from_rig_spec(rig, "arm")
    lineage = len(rig._lineage(rig.chain("arm").tip))  # the chain's bones and their ancestors
    assert sum(built) <= lineage == CHAIN_BONES + 1, built


@pytest.mark.parametrize("shape", ["wide", "deep"])
def test_a_chain_of_a_20000_bone_spec_builds_about_as_fast_as_of_a_200_bone_one(shape) -> None:
    small, large = _rig(200, shape), _rig(20_000, shape)
    assert _fastest_build(large) < SLOWER_AT_MOST * _fastest_build(small)


@pytest.mark.parametrize("shape", ["wide", "deep"])
def test_a_chain_built_from_its_lineage_has_the_rest_frames_of_the_whole_rig(shape) -> None:
    rig = _rig(2_000, shape)
    names = rig.chain_bones("arm")
    every_bone = rest_pose.spec_rest_matrices(rig)
    lineage_only = rest_pose.spec_rest_matrices(rig, names)
    assert set(lineage_only) == {"b0", *names}
    for name, matrix in lineage_only.items():
        np.testing.assert_array_equal(matrix, every_bone[name])


def test_a_spec_whose_bones_hang_in_one_20000_bone_line_validates_in_linear_time() -> None:
    """Listed tip first, each bone's walk to the root passes every bone above it: looking each up in
    a list would be quadratic (minutes); the spec's own checks must stay well under a second's work per
    thousand bones."""
    rig = _rig(20_000, "deep")
    reversed_bones = tuple(reversed(rig.bones))
    started = time.perf_counter()
    spec.RigSpec(name="reversed", bones=reversed_bones, chains=rig.chains)
    reversed_time = time.perf_counter() - started
    started = time.perf_counter()
    spec.RigSpec(name="ordered", bones=rig.bones, chains=rig.chains)
    ordered_time = time.perf_counter() - started
    assert reversed_time < SLOWER_AT_MOST * ordered_time
