"""Why the Blender benchmark's 3-bone chain jumps: the figures docs/solver.md quotes
("Jumps the bake leaves"), measured on the solver alone (no bpy).

The chain (``reference_chains.elliptic_chain(3)``) follows the benchmark's path
(``benchmark_path``) for one loop, as the bake solves it. Where the target is out of reach the
closest miss changes branch; this measures

* the two branches beside the switch: each followed through the stretch out of reach, one
  forwards from the last frame that reaches before it, one backwards from the first after, no
  joint turning more than ``TURN_CAP`` a frame (``follow``), and how far each misses;
* the cheapest way across between them at a few frames: a string of ``STRING_POSES`` poses
  from one branch to the other, relaxed by the string method (E, Ren & Vanden-Eijnden 2002:
  each pose takes a DLS step towards the goal, then the poses are spaced evenly along the
  string again), and the largest miss left on it (an upper bound of the least possible);
* one branch followed the whole way for ``LAPS`` loops (``follow`` again): the loop it settles
  into, its frames that reach and its worst miss.

Prints a table and writes it to bench/results/branches.md. Run:
``.venv/bin/python bench/branch_barrier.py`` (about a minute).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmark_path import LOOP_FRAMES, target_path  # noqa: E402

from quat_ik_addon.solver import quaternion as quat  # noqa: E402
from quat_ik_addon.solver.chain import Chain  # noqa: E402
from quat_ik_addon.solver.goals import Goals  # noqa: E402
from quat_ik_addon.solver.rig.reference_chains import elliptic_chain  # noqa: E402
from quat_ik_addon.solver.settings import SolveSettings  # noqa: E402
from quat_ik_addon.solver.shots.sequence import solve_sequence  # noqa: E402
from quat_ik_addon.solver.solve import solve_from  # noqa: E402

RESULTS = REPO / "bench" / "results"
TOLERANCE = 1e-3  # as the Blender benchmark bakes
REACHED = 5e-3  # ... and counts a frame reached
TURN_CAP = np.radians(3.0)  # under twice the path's largest step (1.67°) a frame
STRING_POSES = 31
STRING_STEPS = 300
LAPS = 3
FOLLOW = SolveSettings(max_iterations=30, tolerance=TOLERANCE, restarts=0, method="dls")
ONE_STEP = SolveSettings(max_iterations=1, tolerance=1e-6, restarts=0, method="dls")


def misses(chain: Chain, targets: np.ndarray, poses: np.ndarray) -> np.ndarray:
    return np.linalg.norm(chain.forward_kinematics(poses).effector - targets, axis=-1)


def follow(chain: Chain, targets: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Each target solved warm from the pose before (``start`` before the first), the step
    cut back along its geodesic so that no joint turns more than ``TURN_CAP``."""
    poses, pose = np.empty((len(targets), chain.n_bones, 4)), start[None]
    for i, target in enumerate(targets):
        solved = solve_from(chain, Goals.of(target[None]), pose, settings=FOLLOW).rotations
        turn = float(np.max(quat.angle_between(solved[0], pose[0])))
        if turn > TURN_CAP:
            step = quat.multiply(quat.conjugate(pose[0]), solved[0])
            solved = chain.clamp_to_limits(
                quat.multiply(pose[0], quat.slerp_from_identity(step, np.full(chain.n_bones, TURN_CAP / turn)))[None]
            )
        poses[i] = pose[0] = solved[0]
    return poses


def string_barrier(chain: Chain, target: np.ndarray, start: np.ndarray, end: np.ndarray) -> float:
    """The largest miss on a string from ``start`` to ``end`` (poses for ``target``), relaxed."""
    share = np.linspace(0.0, 1.0, STRING_POSES)
    step = np.broadcast_to(quat.multiply(quat.conjugate(start), end), (STRING_POSES, chain.n_bones, 4))
    string = chain.clamp_to_limits(quat.multiply(start, quat.slerp_from_identity(step, share[:, None])))
    inner = Goals.of(np.repeat(target[None], STRING_POSES - 2, axis=0))
    for _ in range(STRING_STEPS):
        string[1:-1] = solve_from(chain, inner, string[1:-1], settings=ONE_STEP).rotations
        # Spaced evenly again, by arc length of the joints' rotation vectors from the start.
        coordinates = quat.rotation_vector(quat.multiply(quat.conjugate(start), string)).reshape(STRING_POSES, -1)
        along = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(coordinates, axis=0), axis=1))))
        along /= along[-1]
        spaced = np.stack([np.interp(share, along, column) for column in coordinates.T], axis=1)
        turned = quat.multiply(start, quat.from_rotation_vector(spaced.reshape(STRING_POSES, chain.n_bones, 3)))
        string[1:-1] = chain.clamp_to_limits(turned[1:-1])
    return float(np.max(misses(chain, np.broadcast_to(target, (STRING_POSES, 3)), string)))


def runs(flags: np.ndarray) -> list[tuple[int, int]]:
    edges = np.diff(np.concatenate(([0], flags.astype(np.int8), [0])))
    return list(zip(np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1, strict=True))


def main() -> None:
    chain = elliptic_chain(3)
    frames = np.arange(1, LOOP_FRAMES + 1)
    targets = target_path(frames)
    baked = solve_sequence(chain, targets, settings=SolveSettings(tolerance=TOLERANCE, restarts=2))
    baked_miss = baked.position_error
    first, last = max(runs(baked_miss > REACHED), key=lambda run: run[1] - run[0])  # the stretch out of reach
    jumps = np.degrees(np.max(quat.angle_between(baked.rotations[1:], baked.rotations[:-1]), axis=1))
    switch = int(np.argmax(jumps[first:last])) + first + 1
    stretch = np.arange(first, last + 1)
    forwards = follow(chain, targets[stretch], baked.rotations[first - 1])
    backwards = follow(chain, targets[stretch[::-1]], baked.rotations[last + 1])[::-1]
    miss_in, miss_out = misses(chain, targets[stretch], forwards), misses(chain, targets[stretch], backwards)
    lines = [
        "# The 3-bone benchmark chain's branches",
        "",
        f"One loop of the benchmark path ({LOOP_FRAMES} frames, frame numbers from 0), solved as the bake does: "
        f"{int(np.sum(baked_miss <= REACHED))} frames reach (tip error ≤ {REACHED:g}); out of reach frames "
        f"{first}–{last}, where the pose jumps {jumps[switch - 1]:.0f}° at frame {switch} between the closest misses.",
        "",
        f"The two branches there, followed through the stretch (no joint turning more than "
        f"{np.degrees(TURN_CAP):.0f}° a frame), and the largest miss on a string between them relaxed at that frame "
        f"({STRING_POSES} poses, {STRING_STEPS} steps):",
        "",
        "| frame | miss, branch in | miss, branch out | turn between ° | miss on the way across |",
        "|---|---|---|---|---|",
    ]
    for frame in range(first + 28, last, 28):
        i = frame - first
        barrier = string_barrier(chain, targets[frame], forwards[i], backwards[i])
        turn = np.degrees(np.max(quat.angle_between(forwards[i], backwards[i])))
        lines.append(f"| {frame} | {miss_in[i]:.3f} | {miss_out[i]:.3f} | {turn:.0f} | {barrier:.2f} |")
    looped = follow(chain, np.tile(targets, (LAPS, 1)), baked.rotations[0])[-LOOP_FRAMES:]
    looped_miss = misses(chain, targets, looped)
    steady = np.degrees(np.max(quat.angle_between(looped[-1], looped[0])))
    lines += [
        "",
        f"One branch followed for {LAPS} loops (no joint turning more than {np.degrees(TURN_CAP):.0f}° a frame), "
        f"its last loop (which closes within {steady:.2f}°): {int(np.sum(looped_miss <= REACHED))} frames reach, "
        f"worst miss {looped_miss.max():.3f}; the bake: {int(np.sum(baked_miss <= REACHED))} frames, "
        f"worst miss {baked_miss.max():.3f}.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "branches.md").write_text(text)


if __name__ == "__main__":
    main()
