"""Busy random arm paths: how often a baked shot jumps or misses where a continuous answer
exists (the figures docs/solver.md quotes for steps 6 and 7 and for the orientation
tolerance), measured on the solver alone (no bpy).

Each path is made by poses: every joint's rotation vector is a sum of sines of random
frequencies (0.5-2 per loop) and phases, scaled by an amplitude and clamped into the limits,
so every goal is reachable and a continuous pose path meets them all. Goals are the
effector's positions (and, for the orientation rows, the tip's rotations too). Each shot is
solved as a bake solves it (``solve_sequence``, tolerance 0.001, 4 restart rounds), and this
counts

* visible jumps: steps of 10° or more between frames that both meet their goals (the pops an
  animator sees), and the paths that have any;
* frames counted missed, though the path that made them meets them;
* the solve time, all shots together.

A second table starts DLS (20 iterations, no restarts) a few degrees from each pose of such
paths (every joint turned about a random axis, clamped) and counts the goals met: poses on
several limits at once, where a solver that cannot slide along them stops short.

Prints a table and writes it to bench/results/busy_paths.md. Run:
``.venv/bin/python bench/busy_paths.py`` (about a minute and a half).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from quat_ik_addon.solver import quaternion as quat  # noqa: E402
from quat_ik_addon.solver.chain import Chain  # noqa: E402
from quat_ik_addon.solver.goals import Goals  # noqa: E402
from quat_ik_addon.solver.rig import reference_chains  # noqa: E402
from quat_ik_addon.solver.rig.spec import load_rig_spec  # noqa: E402
from quat_ik_addon.solver.settings import SolveSettings  # noqa: E402
from quat_ik_addon.solver.shots.sequence import solve_sequence  # noqa: E402
from quat_ik_addon.solver.solve import pose_distance, solve_from  # noqa: E402

SETTINGS = SolveSettings(tolerance=1e-3, restarts=4)  # as the bake solves: the panel's default
VISIBLE = np.radians(10.0)
# (amplitude in radians, frames): a loop over 1,000 frames, and a faster one over 250.
SHOTS = ((0.9, 1000), (0.6, 250))
NEAR_DEGREES = (2.0, 5.0, 10.0)  # how far from a pose that meets the goal DLS starts
NEAR = SolveSettings(tolerance=1e-3, restarts=0, method="dls", max_iterations=20)
NEAR_SEEDS, NEAR_FRAMES = range(6), 400


def busy_path(chain: Chain, seed: int, amplitude: float, frames: int) -> np.ndarray:
    """(frames, n, 4) poses: sines of random frequencies and phases per rotation-vector
    component, clamped into the limits."""
    rng = np.random.default_rng(seed)
    count = 3 * chain.n_bones
    t = np.linspace(0.0, 2.0 * np.pi, frames)[:, None]
    wave = np.sin(t * rng.uniform(0.5, 2.0, count) + rng.uniform(0.0, 2.0 * np.pi, count))
    return chain.clamp_to_limits(quat.from_rotation_vector(amplitude * wave.reshape(frames, chain.n_bones, 3)))


def measure(chain: Chain, seeds: range, with_orientation: bool) -> dict:
    jumps = paths_with_jumps = missed = 0
    largest = 0.0
    seconds = 0.0
    for seed in seeds:
        for amplitude, frames in SHOTS:
            pose = chain.forward_kinematics(busy_path(chain, seed, amplitude, frames))
            goals = Goals(positions=pose.effector, orientations=pose.rotations[:, -1] if with_orientation else None)
            started = time.perf_counter()
            result = solve_sequence(chain, goals, settings=SETTINGS)
            seconds += time.perf_counter() - started
            turns = pose_distance(result.rotations[1:], result.rotations[:-1])
            both = result.converged[1:] & result.converged[:-1]
            visible = turns[both] >= VISIBLE
            jumps += int(visible.sum())
            paths_with_jumps += int(visible.any())
            largest = max(largest, float(np.max(turns[both], initial=0.0)))
            missed += int(np.sum(~result.converged))
    return {
        "paths": len(seeds) * len(SHOTS),
        "jumps": jumps,
        "paths_with_jumps": paths_with_jumps,
        "largest": np.degrees(largest),
        "missed": missed,
        "seconds": seconds,
    }


def near_starts(chain: Chain, with_orientation: bool) -> list[float]:
    """Per ``NEAR_DEGREES``: the share of goals DLS meets from that far off the path's poses."""
    shares = []
    for degrees in NEAR_DEGREES:
        met = 0
        for seed in NEAR_SEEDS:
            truth = busy_path(chain, seed, 0.9, NEAR_FRAMES)
            pose = chain.forward_kinematics(truth)
            goals = Goals(positions=pose.effector, orientations=pose.rotations[:, -1] if with_orientation else None)
            axes = np.random.default_rng(100 + seed).normal(size=(NEAR_FRAMES, chain.n_bones, 3))
            axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
            start = chain.clamp_to_limits(quat.multiply(quat.from_rotation_vector(np.radians(degrees) * axes), truth))
            met += int(np.sum(solve_from(chain, goals, start, settings=NEAR).converged))
        shares.append(met / (len(NEAR_SEEDS) * NEAR_FRAMES))
    return shares


def main() -> None:
    human_arm = Chain.from_rig_spec(load_rig_spec(REPO / "sample_rigs" / "human_arm.rig.json"), "arm.L")
    rows = [
        ("3-bone elliptic (benchmark chain)", reference_chains.elliptic_chain(3), range(20), False),
        ("arm3", reference_chains.arm3(), range(10), True),
        ("5-bone limited", reference_chains.limited_chain(5), range(10), True),
        ("5-bone elliptic", reference_chains.elliptic_chain(5), range(10), True),
        ("demo human_arm", human_arm, range(10), True),
    ]
    lines = [
        "# Busy random arm paths",
        "",
        "Every goal reachable by the pose path that made it (bench/busy_paths.py). Visible jump: a step",
        "of 10° or more between frames that both meet their goals. Tolerance 0.001 (a rotation within",
        "0.001 / reach radians).",
        "",
        "| chain | goals | paths | visible jumps | paths with any | largest step between met frames ° "
        "| frames counted missed | solve s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, chain, seeds, with_orientation in rows:
        figures = measure(chain, seeds, with_orientation)
        goals = "position + orientation" if with_orientation else "position"
        lines.append(
            f"| {name} | {goals} | {figures['paths']} | {figures['jumps']} | {figures['paths_with_jumps']} "
            f"| {figures['largest']:.1f} | {figures['missed']} | {figures['seconds']:.1f} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        f"DLS ({NEAR.max_iterations} iterations, no restarts) started a few degrees from each pose of "
        f"{len(NEAR_SEEDS)} such paths ({NEAR_FRAMES} frames, amplitude 0.9; every joint turned about a "
        "random axis, clamped): the share of goals it meets.",
        "",
        "| chain | " + " | ".join(f"{degrees:g}° off" for degrees in NEAR_DEGREES) + " |",
        "|---|" + "---|" * len(NEAR_DEGREES),
    ]
    for name, chain, _, with_orientation in rows:
        lines.append(
            f"| {name} | " + " | ".join(f"{share:.3f}" for share in near_starts(chain, with_orientation)) + " |"
        )
        print(lines[-1], flush=True)
    out = REPO / "bench" / "results" / "busy_paths.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
