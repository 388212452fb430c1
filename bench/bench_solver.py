"""Benchmark quat-ik's solver, and Blender's own IK on the same chains in the same run.

Run by hand from the repository root (never in CI; nothing here asserts a time):

    .venv/bin/python bench/bench_solver.py                 # every section, about 6 minutes
    .venv/bin/python bench/bench_solver.py --quick         # smoke run of every section, small N
    .venv/bin/python bench/bench_solver.py --only latency,blender
    .venv/bin/python bench/bench_solver.py --kernel numpy --only latency,batched

Sections: ``latency`` (one target at a time, Blender's IK one target at a time beside it),
``batched`` (throughput, also with learned start poses), ``blender`` (Blender's IK on the same
targets, in a bpy subprocess) and ``sequence`` (a smooth target path: joint jumps per frame).
Prints the solver path that ran (the native kernel or numpy), one table per section and a
goals table, and writes ``solver.json`` and ``solver.md`` (default: bench/results/;
``solver_numpy.*`` with ``--kernel numpy``, which runs everything on the numpy reference).
bench/README.md says what every figure means.
"""

from __future__ import annotations

import os

# "One core": numpy's BLAS must not spread a solve over threads. Set before numpy loads.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import datetime  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Iterable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from quat_ik_addon.solver import quaternion as quat  # noqa: E402
from quat_ik_addon.solver.chain import Chain  # noqa: E402
from quat_ik_addon.solver.goals import Goals  # noqa: E402
from quat_ik_addon.solver.learned_starts import learn_start_poses  # noqa: E402
from quat_ik_addon.solver.limits.joints import BallJoint, FixedJoint, FreeJoint, HingeJoint  # noqa: E402
from quat_ik_addon.solver.limits.reach_windows import ConeWindow  # noqa: E402
from quat_ik_addon.solver.limits.window_shapes import window_rim  # noqa: E402
from quat_ik_addon.solver.methods.ladder import run_method  # noqa: E402
from quat_ik_addon.solver.native import library  # noqa: E402
from quat_ik_addon.solver.native.packing import unsupported_reason  # noqa: E402
from quat_ik_addon.solver.rig.reference_chains import REFERENCE_CHAINS  # noqa: E402
from quat_ik_addon.solver.settings import SolveSettings  # noqa: E402
from quat_ik_addon.solver.shots.sequence import solve_sequence  # noqa: E402
from quat_ik_addon.solver.solve import pose_distance, solve  # noqa: E402
from quat_ik_addon.solver.start_poses import initial_poses  # noqa: E402

CHAINS = ("arm3", "chain10", "chain30")
METHODS = ("ccd", "dls", "ccd_dls", "dls_ccd")
SEQUENCE_METHODS = ("ccd_dls", "dls_ccd")  # CCD first vs DLS first: they differ most in per-frame motion
SECTIONS = ("latency", "batched", "blender", "sequence")
SEED = 20240301
TOLERANCE = 1e-6  # × chain reach: the success criterion (the solver's default relative tolerance)
LOOSE_TOLERANCE = 1e-3  # × reach: Blender's solver stops once its angle update is below 1e-3
WARM_PERTURBATION = 0.05  # radians: the random turn of every joint for a warm start
STUCK_STRAIGHT = np.radians(1.0)  # an elbow bent less than this after a miss is "stuck straight"
LATENCY_RESTARTS = 3  # the cold-with-restarts latency case: SolveSettings(restarts=3) from rest
KERNELS = ("auto", "numpy")  # --kernel: "numpy" runs everything inside library.numpy_only()
# Issue 33. "*_x_blender": our median time per solve at most this many times Blender's (its
# Standard IK one target at a time, same targets and starts, same run).
GOALS = {
    "arm3_warm_x_blender": 0.4,
    "arm3_cold_restarts_x_blender": 1.0,
    "chain30_warm_x_blender": 1.0,
    "arm3_per_second": 300_000,
    "chain10_per_second": 50_000,
    "arm3_ccd_warm_ms": 0.05,
}


@dataclass(frozen=True)
class Plan:
    """How much each section does. ``*_seconds`` are per-case budgets that keep the run short."""

    latency_solves: int = 200
    latency_seconds: float = 3.0  # a case stops after this (n < 200 is then shown in the table)
    batch_sizes: tuple[int, ...] = (1_000, 10_000)
    batch_pilot: int = 100  # a small run that estimates the time of the sizes after it
    batch_seconds: float = 15.0  # a size whose estimated time exceeds this is skipped
    restarts: tuple[int, ...] = (0, 3)
    learn_samples: int = 300
    learn_candidates: int = 8
    blender_targets: int = 1_000
    sequence_frames: int = 500
    sequence_key_every: int = 25
    sequence_loop_seconds: float = 6.0  # the frame-by-frame loop stops after this
    sequence_chains: tuple[str, ...] = ("arm3", "chain10")
    chains: tuple[str, ...] = CHAINS


FULL = Plan()
QUICK = Plan(
    latency_solves=3,
    latency_seconds=0.3,
    batch_sizes=(30, 100),
    batch_pilot=10,
    batch_seconds=1.0,
    learn_samples=20,
    learn_candidates=2,
    blender_targets=30,
    sequence_frames=30,
    sequence_key_every=10,
    sequence_loop_seconds=0.5,
    sequence_chains=("arm3",),
    chains=("arm3", "chain10"),
)

# Batched results kept for the Blender comparison, which uses the same first targets:
# (chain, method, restarts, N) -> (SolveResult, seconds).
SOLVED: dict[tuple[str, str, int, int], tuple[object, float]] = {}


# ---------------------------------------------------------------- chains, targets, paths


def make_chain(name: str, *, fast_paths: bool = True) -> Chain:
    return REFERENCE_CHAINS[name](use_fast_paths=fast_paths)


def rng_for(*keys: int | str) -> np.random.Generator:
    """A generator fixed by the run's seed and a purpose, so sections never share draws."""
    return np.random.default_rng([SEED, *(sum(map(ord, k)) if isinstance(k, str) else k for k in keys)])


def reachable_targets(chain: Chain, count: int, purpose: str) -> tuple[np.ndarray, np.ndarray]:
    """Random poses inside the limits and their effector positions: reachable by construction."""
    poses = chain.random_poses(rng_for(purpose, chain.n_bones), count)
    return poses, chain.forward_kinematics(poses).effector


def perturbed(chain: Chain, poses: np.ndarray, angle: float, rng: np.random.Generator) -> np.ndarray:
    """Every joint turned by ``angle`` about a random axis, then clamped into its limit."""
    axes = rng.normal(size=(*poses.shape[:-1], 3))
    axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
    turns = quat.from_axis_angle(axes, np.full(poses.shape[:-1], angle))
    return chain.clamp_to_limits(quat.multiply(turns, poses))


def smooth_path(chain: Chain, frames: int, key_every: int, purpose: str) -> tuple[np.ndarray, float]:
    """Poses gliding between random key poses (per-joint slerp with smoothstep easing, so the
    motion stops at each key), clamped into the limits. Returns the poses and how far the
    unclamped interpolation strayed outside the limits (radians)."""
    keys = chain.random_poses(rng_for(purpose, chain.n_bones), frames // key_every + 2)
    index = np.arange(frames)
    start, fraction = index // key_every, (index % key_every) / key_every
    eased = fraction * fraction * (3.0 - 2.0 * fraction)
    relative = quat.canonical(quat.multiply(quat.conjugate(keys[start]), keys[start + 1]))
    raw = quat.multiply(keys[start], quat.slerp_from_identity(relative, eased[:, None]))
    return chain.clamp_to_limits(raw), float(chain.limit_violation(raw).max())


def local_rotations(chain: Chain, armature_rotations: np.ndarray) -> np.ndarray:
    """Pose rotations q_i from posed frames G_i: G_i = G_(i-1)·L_i·q_i (chain.py)."""
    parents = np.concatenate(
        (np.broadcast_to(quat.IDENTITY, armature_rotations[:, :1].shape), armature_rotations[:, :-1]), axis=1
    )
    return quat.canonical(
        quat.multiply(quat.conjugate(quat.multiply(parents, chain.rest_rotations)), armature_rotations)
    )


def frame_jumps(rotations: np.ndarray) -> np.ndarray:
    """Largest joint angle (radians) between each frame and the next: (F - 1,)."""
    return pose_distance(rotations[:-1], rotations[1:])


# ---------------------------------------------------------------- measures


def error_summary(chain: Chain, relative_error: np.ndarray) -> dict:
    """Success rates at 1e-6 and 1e-3 × reach and error percentiles (× reach)."""
    finite = relative_error[np.isfinite(relative_error)]
    summary = {
        "success": float(np.mean(relative_error <= TOLERANCE)),
        "success_1e-3": float(np.mean(relative_error <= LOOSE_TOLERANCE)),
        "nan": int(relative_error.size - finite.size),
    }
    for name, q in (("err_p50", 50), ("err_p99", 99), ("err_max", 100)):
        summary[name] = float(np.percentile(finite, q)) if finite.size else float("nan")
    return summary


def result_summary(chain: Chain, targets: np.ndarray, rotations: np.ndarray, iterations=None) -> dict:
    """Accuracy of poses by forward kinematics, their worst limit violation, mean iterations."""
    relative_error = np.linalg.norm(chain.forward_kinematics(rotations).effector - targets, axis=1) / chain.reach
    summary = error_summary(chain, relative_error)
    summary["violation_max"] = float(np.nan_to_num(chain.limit_violation(rotations), nan=np.inf).max())
    summary["nan"] += int(np.count_nonzero(~np.all(np.isfinite(rotations), axis=(1, 2))))
    if iterations is not None:
        summary["iterations"] = float(np.mean(iterations))
    return summary


# What "seconds" means everywhere: "cpu" is this process's CPU time (one thread: numpy's BLAS is
# held to one), which on an idle machine equals wall time and on a shared one leaves out the time
# other processes held the core; "wall" is elapsed time. Chosen with --clock.
CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def timed(run: Callable[[], object]) -> tuple[object, float]:
    started = clock()
    value = run()
    return value, clock() - started


# ---------------------------------------------------------------- 1. single-target latency


def solve_call(chain: Chain, target: np.ndarray, start, settings: SolveSettings) -> tuple[Callable, Callable]:
    """The whole ``solve()`` call for one target: (timed run, answer's (rotations, iterations))."""

    def run():
        return solve(chain, target, start_rotations=start, settings=settings)

    return run, lambda result: (result.rotations[0], result.iterations[0])


def method_call(chain: Chain, target: np.ndarray, start, settings: SolveSettings) -> tuple[Callable, Callable]:
    """The method alone (``methods.run_method``: the native kernel's one crossing, or the numpy
    sweeps), without solve()'s start handling, tip twist and result: goals and the (1, n, 4)
    start are made outside the timed part."""
    goals, poses = Goals.of(target), initial_poses(chain, start, 1)

    def run():
        return run_method(chain, goals, poses.copy(), settings)  # numpy's sweeps write into the poses

    return run, lambda answer: (answer[0][0], answer[1][0])


CALLS = {"solve": solve_call, "run_method": method_call}


def latency_case(chain: Chain, targets, starts, settings: SolveSettings, plan: Plan, call: str = "solve") -> dict:
    """One solve at a time (first one untimed, as a warm-up), until the count or the budget."""
    make_call = CALLS[call]
    make_call(chain, targets[:1], None if starts is None else starts[0], settings)[0]()
    seconds, rotations, iterations = [], [], []
    begun = clock()
    for row in range(len(targets)):
        run, answer = make_call(chain, targets[row : row + 1], None if starts is None else starts[row], settings)
        result, elapsed = timed(run)
        seconds.append(elapsed)
        pose, count = answer(result)
        rotations.append(pose)
        iterations.append(count)
        if clock() - begun > plan.latency_seconds:
            break
    count = len(seconds)
    ms = 1e3 * np.array(seconds)
    row = {"n": count, "ms_p50": float(np.median(ms)), "ms_p90": float(np.percentile(ms, 90))}
    return row | result_summary(chain, targets[:count], np.array(rotations), iterations)


def latency_targets(chain: Chain, plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """The latency section's targets and warm starts (Blender solves the same ones)."""
    poses, targets = reachable_targets(chain, plan.latency_solves, "latency")
    return targets, perturbed(chain, poses, WARM_PERTURBATION, rng_for("warm", chain.n_bones))


def run_latency(plan: Plan) -> list[dict]:
    rows = []
    progress = ("chain", "method", "call", "fast_paths", "restarts", "start", "n", "ms_p50", "success")
    for name in plan.chains:
        for fast_paths in (True, False):
            chain = make_chain(name, fast_paths=fast_paths)
            targets, warm = latency_targets(chain, plan)
            cases = [(method, "solve", 0, start) for method in METHODS for start in ("cold", "warm")]
            if fast_paths:
                # The default method from rest with restarts, and the quaternion CCD alone.
                cases.append((SolveSettings().method, "solve", LATENCY_RESTARTS, "cold"))
                cases += [("ccd", "run_method", 0, start) for start in ("cold", "warm")]
            else:
                # Blow's fast paths only skip work inside BallJoint.clamp: measured without them
                # for CCD, which clamps every joint of every sweep.
                cases = [case for case in cases if case[0] == "ccd"]
            for method, call, restarts, start in cases:
                row = {"chain": name, "method": method, "call": call, "fast_paths": fast_paths, "restarts": restarts}
                row["start"] = start
                settings = SolveSettings(method=method, restarts=restarts)
                starts = warm if start == "warm" else None
                rows.append(row | latency_case(chain, targets, starts, settings, plan, call))
                print_progress(rows[-1], progress)
    return rows


def blender_latency_rows(plan: Plan, blender: dict) -> list[dict]:
    """Blender's IK one target at a time on the latency targets, from rest and from the warm
    starts (the time of one depsgraph update with the IK constraint, per solve)."""
    rows = []
    for name in plan.chains:
        chain = make_chain(name)
        targets, _ = latency_targets(chain, plan)
        for start, set_name in (("cold", "latency"), ("warm", "latency_warm")):
            ms = 1e3 * blender[f"{name}/{set_name}/seconds"]
            local = local_rotations(chain, blender[f"{name}/{set_name}/bone_rotations"])
            relative_error = np.linalg.norm(blender[f"{name}/{set_name}/tips"] - targets, axis=1) / chain.reach
            row = {"chain": name, "method": "blender", "call": "update", "start": start, "n": len(ms)}
            row |= {"ms_p50": float(np.median(ms)), "ms_p90": float(np.percentile(ms, 90))}
            row |= error_summary(chain, relative_error)
            row["violation_max"] = float(chain.limit_violation(local).max())  # of OUR limits
            rows.append(row)
            print_progress(rows[-1], ("chain", "method", "start", "n", "ms_p50", "success_1e-3"))
    return rows


# ---------------------------------------------------------------- 2. batched throughput


def batched_case(
    chain: Chain, targets: np.ndarray, settings: SolveSettings, plan: Plan, cache_key=None, **solve_kwargs
) -> Iterable[dict]:
    """Rows for the pilot size and each batch size; a size whose time, extrapolated from the last
    run, would pass the budget is reported as skipped with its estimate."""
    last_seconds, last_size = 0.0, 1
    for size in (plan.batch_pilot, *plan.batch_sizes):
        estimate = last_seconds * size / last_size
        if estimate > plan.batch_seconds:
            yield {"N": size, "skipped": f"est. {estimate:.0f} s"}
            continue
        result, seconds = timed(lambda size=size: solve(chain, targets[:size], settings=settings, **solve_kwargs))
        last_seconds, last_size = seconds, size
        if cache_key is not None and size == plan.blender_targets:
            SOLVED[(*cache_key, size)] = (result, seconds)
        row = {"N": size, "seconds": seconds, "per_second": size / seconds}
        row |= result_summary(chain, targets[:size], result.rotations, result.iterations)
        row["restarts_used"] = float(np.mean(result.restarts))
        yield row


def run_batched(plan: Plan) -> tuple[list[dict], list[dict]]:
    """Cold batched solves for every method and restart count, then with learned start poses."""
    rows, learning = [], []
    for name in plan.chains:
        chain = make_chain(name)
        _, targets = reachable_targets(chain, max(plan.batch_sizes), "batched")
        for method in METHODS:
            for restarts in plan.restarts:
                settings = SolveSettings(method=method, restarts=restarts)
                for row in batched_case(chain, targets, settings, plan, cache_key=(name, method, restarts)):
                    rows.append(
                        {"chain": name, "method": method, "fast_paths": True, "restarts": restarts, "starts": "rest"}
                        | row
                    )
                    print_progress(rows[-1], ("chain", "method", "restarts", "N", "per_second", "success", "skipped"))
        # Without Blow's fast paths, where they matter most: CCD on big batches.
        for row in batched_case(make_chain(name, fast_paths=False), targets, SolveSettings(method="ccd"), plan):
            rows.append({"chain": name, "method": "ccd", "fast_paths": False, "restarts": 0, "starts": "rest"} | row)
            print_progress(rows[-1], ("chain", "method", "fast_paths", "N", "per_second", "success", "skipped"))
        learned, seconds = timed(
            lambda chain=chain: learn_start_poses(
                chain, samples=plan.learn_samples, candidates=plan.learn_candidates, seed=SEED
            )
        )
        learning.append(
            {
                "chain": name,
                "samples": plan.learn_samples,
                "candidates": plan.learn_candidates,
                "seconds": seconds,
                "kept_starts": len(learned.start_rotations),
                "coverage": learned.coverage,
                "accuracy": learned.accuracy,
            }
        )
        for method in METHODS:
            settings = SolveSettings(method=method)
            for row in batched_case(chain, targets, settings, plan, learned_starts=learned):
                rows.append(
                    {"chain": name, "method": method, "fast_paths": True, "restarts": 0, "starts": "learned"} | row
                )
                print_progress(rows[-1], ("chain", "method", "starts", "N", "per_second", "success", "skipped"))
    return rows, learning


# ---------------------------------------------------------------- 3. Blender's IK


def swing_limits(windows) -> dict[str, list[float]]:
    """Blender's X/Z IK limits bounding the windows.

    Blender's spherical IK segment (intern/iksolver IK_QSegment.cpp, IK_Math.h) limits the
    swing quaternion's x and z parts, (sin(θ/2)·axis), to a four-quadrant ellipse whose
    semi-axes are sin(ik_min/2) and sin(ik_max/2). A swing toward +Z is a turn about +X, a
    swing toward +X a turn about −Z. The limits take the windows' extremes of those parts, so
    a cone maps exactly, an elliptic cone nearly, a polygon to its bounding quadrant-ellipse.
    """
    for window in windows:
        if isinstance(window, ConeWindow) and not np.allclose(window.center, [0.0, 1.0, 0.0]):
            raise ValueError("Blender's IK limits are about the bone axis: only +Y-centred cones map")
    swing = quat.rotation_from_y(np.concatenate([window_rim(w, 720) for w in windows]))
    limits = {}
    for axis, part in (("x", swing[:, 1]), ("z", swing[:, 3])):
        limits[axis] = [float(-2.0 * np.arcsin(max(-part.min(), 0.0))), float(2.0 * np.arcsin(max(part.max(), 0.0)))]
    return limits


def blender_joint(limit) -> dict:
    """Closest Blender pose-bone IK settings for one of our joint limits."""
    if isinstance(limit, FreeJoint):
        return {}
    if isinstance(limit, FixedJoint):
        return {"lock": ["x", "y", "z"]}
    if isinstance(limit, HingeJoint):
        axis = {0: "x", 1: "y", 2: "z"}[int(np.argmax(np.abs(limit.axis)))]
        if not np.isclose(abs(limit.axis).max(), 1.0):
            raise ValueError("only hinges about a bone axis map to Blender's IK locks")
        sign = float(np.sign(limit.axis.max() + limit.axis.min()))
        joint = {"lock": [a for a in "xyz" if a != axis]}
        if limit.angle_range is not None:
            low, high = sorted((sign * limit.angle_range.minimum, sign * limit.angle_range.maximum))
            joint["limits"] = {axis: [low, high]}
        return joint
    if isinstance(limit, BallJoint):
        limits = swing_limits(limit.windows) if limit.windows else {}
        if limit.twist_range is not None and not limit.twist_range.is_full_circle:
            limits["y"] = [limit.twist_range.minimum, limit.twist_range.maximum]
        return {"limits": limits}
    raise TypeError(f"no Blender equivalent for {type(limit).__name__}")


def inside_blender_limits(joints: list[dict], rotations: np.ndarray, slack: float = 1e-5) -> np.ndarray:
    """Poses (N, n, 4) that Blender's expressed limits allow (IK_Math.h's EllipseClamp), with
    ``slack`` for single precision: Blender's own answers sit on its limits to about 1e-7."""
    inside = np.ones(len(rotations), dtype=bool)
    for i, joint in enumerate(joints):
        q = quat.canonical(rotations[:, i])
        limits = joint.get("limits", {})
        if joint.get("lock"):  # a hinge: only its own axis turns (our samples never leave it)
            (axis,) = [a for a in "xyz" if a not in joint["lock"]]
            angle = quat.twist_about(q, np.eye(3)["xyz".index(axis)])
            low, high = limits.get(axis, (-np.pi, np.pi))
            inside &= (angle >= low - slack) & (angle <= high + slack)
            continue
        _, twist = quat.swing_twist_y(q)
        low, high = limits.get("y", (-np.pi, np.pi))
        inside &= (twist >= low - slack) & (twist <= high + slack)
        if "x" in limits and "z" in limits:
            swing = quat.canonical(quat.multiply(q, quat.from_y_angle(-twist)))
            radii = []
            for part, (low, high) in ((swing[:, 1], limits["x"]), (swing[:, 3], limits["z"])):
                radii.append(np.where(part >= 0.0, np.sin(high / 2.0), -np.sin(low / 2.0)))
            x, z = swing[:, 1], swing[:, 3]
            inside &= (x / np.maximum(radii[0], 1e-12)) ** 2 + (z / np.maximum(radii[1], 1e-12)) ** 2 <= 1.0 + slack
    return inside


def run_blender_reference(
    chains: dict[str, dict[str, np.ndarray]], workdir: Path, starts: dict[str, dict[str, np.ndarray]] | None = None
) -> dict:
    """Blender's IK on every target set, in a fresh bpy process (bench/blender_ik_reference.py);
    ``starts[chain][set]`` (N, n, 4): that set is solved from these poses instead of rest."""
    request = {"chains": []}
    for name, target_sets in chains.items():
        chain = make_chain(name)
        paths, start_paths = {}, {}
        for set_name, targets in target_sets.items():
            paths[set_name] = str(workdir / f"{name}_{set_name}.npy")
            np.save(paths[set_name], targets)
        for set_name, poses in (starts or {}).get(name, {}).items():
            # Blender's bones are built straight along +Y with roll 0: its rest frames are ours
            # only when our rest rotations are identity, and then a pose is rotation_quaternion.
            if not np.allclose(chain.rest_rotations, quat.IDENTITY):
                raise ValueError(f"{name}: start poses map to Blender only for a chain straight along +Y")
            start_paths[set_name] = str(workdir / f"{name}_{set_name}_starts.npy")
            np.save(start_paths[set_name], poses)
        joints = [blender_joint(limit) for limit in chain.limits]
        request["chains"].append(
            {
                "name": name,
                "lengths": chain.lengths.tolist(),
                "joints": joints,
                "target_sets": paths,
                "start_sets": start_paths,
            }
        )
    request["clock"] = "cpu" if clock is CLOCKS["cpu"] else "wall"
    (workdir / "request.json").write_text(json.dumps(request, indent=1))
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(workdir / "blender_user"))
    subprocess.run(
        [
            sys.executable,
            str(BENCH_DIR / "blender_ik_reference.py"),
            str(workdir / "request.json"),
            str(workdir / "out.npz"),
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    with np.load(workdir / "out.npz") as data:
        return {key: data[key] for key in data.files} | {"request": request}


def blender_rows(plan: Plan, blender: dict) -> list[dict]:
    """Blender's IK against ours on the same reachable targets (from rest, one at a time)."""
    rows = []
    for spec in blender["request"]["chains"]:
        name = spec["name"]
        if "reachable" not in spec["target_sets"]:
            continue
        chain = make_chain(name)
        poses, targets = reachable_targets(chain, max(plan.batch_sizes), "batched")
        poses, targets = poses[: plan.blender_targets], targets[: plan.blender_targets]
        allowed = inside_blender_limits(spec["joints"], poses)
        tips = blender[f"{name}/reachable/tips"]
        local = local_rotations(chain, blender[f"{name}/reachable/bone_rotations"])
        relative_error = np.linalg.norm(tips - targets, axis=1) / chain.reach
        ms = 1e3 * blender[f"{name}/reachable/seconds"]
        row = {"chain": name, "solver": "blender", "N": len(targets)}
        row |= {"ms_p50": float(np.median(ms)), "ms_p90": float(np.percentile(ms, 90))}
        row["update_only_ms"] = float(1e3 * np.median(blender[f"{name}/update_only_seconds"]))
        row |= error_summary(chain, relative_error)
        row["violation_max"] = float(chain.limit_violation(local).max())  # of OUR limits
        row["blender_limits_allow"] = float(np.mean(allowed))
        row["success_1e-3_allowed"] = float(np.mean(relative_error[allowed] <= LOOSE_TOLERANCE))
        row |= hinge_stuck(chain, local, relative_error)
        rows.append(row)
        blender_missed = relative_error > LOOSE_TOLERANCE
        for method, restarts in (("ccd_dls", 0), ("dls_ccd", 0), ("dls_ccd", 3)):
            result, seconds = SOLVED.get((name, method, restarts, len(targets))) or timed(
                lambda c=chain, t=targets, m=method, r=restarts: solve(
                    c, t, settings=SolveSettings(method=m, restarts=r)
                )
            )
            ours = {"chain": name, "solver": f"ours {method} r{restarts}", "N": len(targets)}
            ours["batched_ms_per_solve"] = 1e3 * seconds / len(targets)
            ours |= result_summary(chain, targets, result.rotations, result.iterations)
            relative_error = result.position_error / chain.reach
            ours["success_1e-3_allowed"] = float(np.mean(relative_error[allowed] <= LOOSE_TOLERANCE))
            ours["misses_also_blender"] = int(np.count_nonzero((relative_error > LOOSE_TOLERANCE) & blender_missed))
            rows.append(ours | hinge_stuck(chain, result.rotations, relative_error))
    return rows


def hinge_stuck(chain: Chain, rotations: np.ndarray, relative_error: np.ndarray) -> dict:
    """For chains whose hinge range starts at the straight rest pose (arm3's elbow): misses at
    1e-3 × reach, and how many of them left that hinge straight."""
    hinges = [
        i
        for i, limit in enumerate(chain.limits)
        if isinstance(limit, HingeJoint) and limit.angle_range is not None and limit.angle_range.minimum == 0.0
    ]
    if not hinges:
        return {}
    missed = relative_error > LOOSE_TOLERANCE
    straight = quat.angle_between(rotations[:, hinges[0]], quat.IDENTITY) < STUCK_STRAIGHT
    return {
        "misses_1e-3": int(np.count_nonzero(missed)),
        "misses_straight_elbow": int(np.count_nonzero(missed & straight)),
    }


# ---------------------------------------------------------------- 4. smooth path


def sequence_paths(plan: Plan) -> dict[str, dict]:
    paths = {}
    for name in plan.sequence_chains:
        chain = make_chain(name)
        poses, stray = smooth_path(chain, plan.sequence_frames, plan.sequence_key_every, "sequence")
        paths[name] = {
            "poses": poses,
            "targets": chain.forward_kinematics(poses).effector,
            "interpolation_stray": stray,
        }
    return paths


def jump_summary(jumps: np.ndarray, motion: np.ndarray) -> dict:
    """Per-frame largest joint jump; pops are jumps over twice the path's own largest step."""
    return {
        "jump_p50": float(np.median(jumps)),
        "jump_p99": float(np.percentile(jumps, 99)),
        "jump_max": float(jumps.max()),
        "pops": int(np.count_nonzero(jumps > 2.0 * motion.max())),
    }


def warm_loop(chain: Chain, targets: np.ndarray, settings: SolveSettings, budget: float):
    """Frame by frame, each warm from (and restarts preferring) the previous frame's answer,
    until the frames or the time budget run out. Returns poses, iterations and seconds."""
    previous, rotations, iterations = None, [], []
    started = clock()
    for frame in range(len(targets)):
        result = solve(
            chain, targets[frame : frame + 1], start_rotations=previous, reference_rotations=previous, settings=settings
        )
        previous = result.rotations[0]
        rotations.append(previous)
        iterations.append(result.iterations[0])
        if clock() - started > budget:
            break
    return np.array(rotations), np.array(iterations), clock() - started


def sequence_solvers(chain: Chain, targets: np.ndarray, plan: Plan) -> Iterable[tuple[str, Callable]]:
    """(label, run) pairs; each run returns (rotations, iterations, seconds)."""
    for method in SEQUENCE_METHODS:
        settings = SolveSettings(method=method, restarts=3)

        def whole(run=solve_sequence, settings=settings):
            result, seconds = timed(lambda: run(chain, targets, settings=settings))
            return result.rotations, result.iterations, seconds

        yield f"ours solve_sequence {method} r3", whole
        yield f"ours warm loop {method} r3", lambda s=settings: warm_loop(chain, targets, s, plan.sequence_loop_seconds)
        yield f"ours cold batch {method} r3", lambda w=whole: w(run=solve)


def run_sequence(plan: Plan, paths: dict[str, dict], blender: dict | None) -> tuple[list[dict], dict]:
    rows, curves = [], {}
    for name, path in paths.items():
        chain = make_chain(name)
        targets, motion = path["targets"], frame_jumps(path["poses"])
        curves[name] = {"path itself": motion}
        base = {"chain": name, "interpolation_stray": path["interpolation_stray"]}
        rows.append(base | {"solver": "path itself", "frames": len(targets)} | jump_summary(motion, motion))
        for label, run in sequence_solvers(chain, targets, plan):
            rotations, iterations, seconds = run()
            jumps = frame_jumps(rotations)
            curves[name][label] = jumps
            summary = result_summary(chain, targets[: len(rotations)], rotations, iterations)
            row = {
                "solver": label,
                "frames": len(rotations),
                "seconds": seconds,
                "ms_per_frame": 1e3 * seconds / len(rotations),
            }
            rows.append(base | row | jump_summary(jumps, motion) | summary)
            print_progress(rows[-1], ("chain", "solver", "frames", "seconds", "jump_max", "pops", "success"))
        if blender is not None:
            local = local_rotations(chain, blender[f"{name}/path/bone_rotations"])
            jumps = frame_jumps(local)
            curves[name]["blender (from rest every frame)"] = jumps
            relative_error = np.linalg.norm(blender[f"{name}/path/tips"] - targets, axis=1) / chain.reach
            summary = error_summary(chain, relative_error) | {
                "violation_max": float(chain.limit_violation(local).max())
            }
            seconds = float(np.sum(blender[f"{name}/path/seconds"]))
            row = {"solver": "blender (from rest every frame)", "frames": len(targets), "seconds": seconds}
            row["ms_per_frame"] = 1e3 * seconds / len(targets)
            rows.append(base | row | jump_summary(jumps, motion) | summary)
    return rows, curves


def plot_jumps(curves: dict, path: Path) -> str | None:
    """A figure of per-frame joint jumps, if matplotlib is installed (dev dependency group)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(len(curves), 1, figsize=(10, 3.2 * len(curves)), squeeze=False)
    for axis, (name, series) in zip(axes[:, 0], curves.items(), strict=True):
        for label, jumps in series.items():
            axis.plot(np.degrees(jumps), label=label, linewidth=0.8)
        axis.set_title(f"{name}: largest joint jump between consecutive frames")
        axis.set_ylabel("degrees")
        axis.set_yscale("symlog", linthresh=1.0)
        axis.legend(fontsize=7)
    axes[-1, 0].set_xlabel("frame")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path.name


# ---------------------------------------------------------------- 5. goals


def goal_rows(results: dict) -> list[dict]:
    """Issue 33's goals against this run's figures (Blender's from the same run)."""
    latency = results.get("latency", [])

    def ours(chain: str, *, start: str, call: str = "solve", restarts: int = 0) -> list[dict]:
        return [
            r
            for r in latency
            if r["chain"] == chain
            and r["method"] != "blender"
            and r["fast_paths"]
            and r["call"] == call
            and r["restarts"] == restarts
            and r["start"] == start
        ]

    def blender(chain: str, start: str) -> dict | None:
        return next(
            (r for r in latency if r["chain"] == chain and r["method"] == "blender" and r["start"] == start), None
        )

    def warm_goal(chain: str, key: str) -> list[dict]:
        warm = ours(chain, start="warm")
        if not warm:
            return []
        # The fastest method whose answers meet 1e-6 × reach for 99% of the targets.
        best = min([r for r in warm if r["success"] >= 0.99] or warm, key=lambda r: r["ms_p50"])
        default = next((r for r in warm if r["method"] == SolveSettings().method), best)
        return [
            versus_blender(
                f"{chain} warm single solve, solve() call, median",
                GOALS[key],
                best,
                blender(chain, "warm"),
                f"best {best['method']} {best['ms_p50']:.3f} ms (success {best['success']:.1%}); "
                f"default {default['method']} {default['ms_p50']:.3f} ms",
            )
        ]

    rows = warm_goal("arm3", "arm3_warm_x_blender")
    for row in ours("arm3", start="cold", restarts=LATENCY_RESTARTS):
        rows.append(
            versus_blender(
                f"arm3 cold single solve from rest, restarts={LATENCY_RESTARTS}, solve() call, median",
                GOALS["arm3_cold_restarts_x_blender"],
                row,
                blender("arm3", "cold"),
                f"{row['method']} r{LATENCY_RESTARTS} {row['ms_p50']:.3f} ms (success {row['success']:.1%})",
            )
        )
    rows += warm_goal("chain30", "chain30_warm_x_blender")
    for chain, key in (("arm3", "arm3_per_second"), ("chain10", "chain10_per_second")):
        measured = [r for r in results.get("batched", []) if r["chain"] == chain and "per_second" in r]
        if not measured:
            continue
        largest = max(r["N"] for r in measured)
        candidates = [r for r in measured if r["N"] == largest]
        reliable = [r for r in candidates if r["success"] >= 0.99]
        best = max(reliable or candidates, key=lambda r: r["per_second"])
        rows.append(
            goal_row(
                f"{chain} batched throughput, one core, to 1e-6 × reach (success >= 99%)",
                f">= {GOALS[key]:,} solves/s",
                bool(reliable) and best["per_second"] >= GOALS[key],
                f"best N={largest:,} {best['method']} r{best['restarts']} {best['starts']}: "
                f"{best['per_second']:,.0f} solves/s, success {best['success']:.1%}",
            )
        )
    core = ours("arm3", start="warm", call="run_method")
    if core:
        row = core[0]
        rows.append(
            goal_row(
                "arm3 warm quaternion CCD itself (run_method, one target), median",
                f"<= {GOALS['arm3_ccd_warm_ms']} ms",
                row["ms_p50"] <= GOALS["arm3_ccd_warm_ms"],
                f"{row['ms_p50']:.4f} ms (success {row['success']:.1%}, {row['iterations']:.1f} sweeps)",
            )
        )
    return rows


def versus_blender(goal: str, factor: float, row: dict, blender: dict | None, measured: str) -> dict:
    """Our median per solve against ``factor`` × Blender's on the same targets and starts."""
    if blender is None:
        row = goal_row(goal, f"<= {factor:g} × Blender's per-solve median", False, measured + "; Blender not run")
        return row | {"status": "not measured"}
    ratio = row["ms_p50"] / blender["ms_p50"]
    return goal_row(
        goal,
        f"<= {factor:g} × Blender's ({factor * blender['ms_p50']:.3f} ms)",
        ratio <= factor,
        f"{measured}; Blender {blender['start']} {blender['ms_p50']:.3f} ms; ratio {ratio:.2f}",
    )


def goal_row(goal: str, target: str, met: bool, measured: str) -> dict:
    return {"goal": goal, "target": target, "status": "met" if met else "NOT met", "measured": measured}


# ---------------------------------------------------------------- tables and files


def cell(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not np.isfinite(value):
            return str(value)
        if value == 0.0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        if abs(value) < 1e-3:
            return f"{value:.1e}"
        return f"{value:.3g}"
    return "" if value is None else str(value)


def table(rows: list[dict], columns: list[str]) -> list[str]:
    """Markdown table lines of the given columns (missing values left blank)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]
    return lines


TABLES = {
    "latency": [
        "chain",
        "method",
        "call",
        "fast_paths",
        "restarts",
        "start",
        "n",
        "ms_p50",
        "ms_p90",
        "success",
        "success_1e-3",
        "err_p99",
        "err_max",
        "violation_max",
        "iterations",
        "nan",
    ],
    "batched": [
        "chain",
        "method",
        "fast_paths",
        "restarts",
        "starts",
        "N",
        "per_second",
        "seconds",
        "success",
        "success_1e-3",
        "err_p50",
        "err_p99",
        "err_max",
        "violation_max",
        "iterations",
        "restarts_used",
        "nan",
        "skipped",
    ],
    "learning": ["chain", "samples", "candidates", "seconds", "kept_starts", "coverage", "accuracy"],
    "blender": [
        "chain",
        "solver",
        "N",
        "ms_p50",
        "ms_p90",
        "update_only_ms",
        "batched_ms_per_solve",
        "success",
        "success_1e-3",
        "err_p50",
        "err_p99",
        "err_max",
        "violation_max",
        "blender_limits_allow",
        "success_1e-3_allowed",
        "misses_1e-3",
        "misses_straight_elbow",
        "misses_also_blender",
    ],
    "sequence": [
        "chain",
        "solver",
        "frames",
        "seconds",
        "ms_per_frame",
        "jump_p50",
        "jump_p99",
        "jump_max",
        "pops",
        "success",
        "success_1e-3",
        "err_max",
        "violation_max",
        "iterations",
    ],
    "goals": ["goal", "target", "status", "measured"],
}


def report_lines(results: dict) -> list[str]:
    lines = [
        f"# quat-ik solver benchmark ({results['machine']['date']})",
        "",
        f"Solver path: {results['machine']['solver_path']} (--kernel {results['kernel']})",
        "",
        machine_line(results["machine"]),
        "",
    ]
    for section, columns in TABLES.items():
        if results.get(section):
            lines += [f"## {section}", "", *table(results[section], columns), ""]
    if results.get("figure"):
        lines += [f"![per-frame joint jumps]({results['figure']})", ""]
    return lines


def print_progress(row: dict, keys: tuple[str, ...]) -> None:
    print("  " + "  ".join(f"{k}={cell(row[k])}" for k in keys if k in row), flush=True)


def solver_path(chains: Iterable[str]) -> str:
    """The path solves take now: ``library.load()``'s line, and any benchmark chain the loaded
    kernel does not run (its limits unknown to the kernel: numpy for that chain)."""
    _, status = library.load()
    line = status.describe()
    if status.active:
        for name in chains:
            reason = unsupported_reason(make_chain(name))
            if reason is not None:
                line += f"; {name} on numpy ({reason})"
    return line


def machine_info(chains: Iterable[str]) -> dict:
    model = (
        next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            platform.processor(),
        )
        if Path("/proc/cpuinfo").exists()
        else platform.processor()
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu": model,
        "cpu_count": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "git_commit": commit + " (working tree may differ)",
        "solver_digest": solver_digest(),
        "solver_path": solver_path(chains),
        "load_average_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def solver_digest() -> str:
    """A short hash of the solver's sources (the native kernel's C and binding included), to tie
    the figures to the code they measured."""
    digest = hashlib.sha256()
    solver = REPO / "quat_ik_addon" / "solver"
    for path in sorted([*solver.glob("*.py"), *solver.glob("native/*.py"), *solver.glob("native/kernel/*.[ch]")]):
        digest.update(str(path.relative_to(solver)).encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def machine_line(machine: dict) -> str:
    return ", ".join(f"{key}: {value}" for key, value in machine.items() if key not in ("date", "solver_path"))


def to_json(value):
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N in every section (a smoke run)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    parser.add_argument("--out", type=Path, help="output folder (default bench/results, or bench/results/quick)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu", help="what a time is (default: CPU time)")
    parser.add_argument(
        "--kernel",
        choices=KERNELS,
        default="auto",
        help="auto: the native kernel where it loads (else numpy); numpy: every solve on the numpy "
        "reference (library.numpy_only()), results to solver_numpy.*",
    )
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    plan = QUICK if args.quick else FULL
    global clock
    clock = CLOCKS[args.clock]
    out = args.out or BENCH_DIR / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    stem = "solver" if args.kernel == "auto" else f"solver_{args.kernel}"
    with library.numpy_only() if args.kernel == "numpy" else contextlib.nullcontext():
        results = run(plan, sections, args, out, stem)
    lines = [
        *report_lines(results),
        f"Times are {args.clock} time. Total wall time {results['total_seconds']:.0f} s; this process had the CPU "
        f"{results['cpu_share']:.0%} of it (Blender's subprocess not counted).",
    ]
    print("\n".join(lines))
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    (out / f"{stem}.json").write_text(json.dumps(to_json(results), indent=1) + "\n")
    return results


def run(plan: Plan, sections: list[str], args: argparse.Namespace, out: Path, stem: str) -> dict:
    """Every chosen section, on the solver path in force (``--kernel``), and the goals."""
    began, began_cpu = time.perf_counter(), time.process_time()
    results: dict = {"machine": machine_info(plan.chains), "plan": plan.__dict__, "sections": sections}
    results |= {"clock": args.clock, "kernel": args.kernel}
    results["settings"] = {"tolerance_x_reach": TOLERANCE, "warm_perturbation_rad": WARM_PERTURBATION}

    if "latency" in sections:
        print("latency (one target at a time)", flush=True)
        results["latency"] = run_latency(plan)
        note_load(results, "latency")
    if "batched" in sections:
        print("batched", flush=True)
        results["batched"], results["learning"] = run_batched(plan)
        note_load(results, "batched")
    blender = None
    paths = sequence_paths(plan) if "sequence" in sections else {}
    if sections_need_blender(sections):
        print("Blender's IK (bpy subprocess)", flush=True)
        wanted: dict[str, dict[str, np.ndarray]] = {}
        starts: dict[str, dict[str, np.ndarray]] = {}
        if "latency" in sections:  # the latency goals are relative to Blender's time per solve
            for name in plan.chains:
                targets, warm = latency_targets(make_chain(name), plan)
                wanted.setdefault(name, {}).update(latency=targets, latency_warm=targets)
                starts[name] = {"latency_warm": warm}
        if "blender" in sections:
            for name in plan.chains:
                _, targets = reachable_targets(make_chain(name), max(plan.batch_sizes), "batched")
                wanted.setdefault(name, {})["reachable"] = targets[: plan.blender_targets]
        for name, path in paths.items():
            wanted.setdefault(name, {})["path"] = path["targets"]
        with tempfile.TemporaryDirectory(prefix="quat_ik_bench_") as workdir:
            began_blender = time.perf_counter()
            blender = run_blender_reference(wanted, Path(workdir), starts)
        results["machine"]["blender"] = str(blender["blender_version"])
        results["blender_wall_seconds"] = time.perf_counter() - began_blender
        note_load(results, "blender")
        if "latency" in sections:
            results["latency"] += blender_latency_rows(plan, blender)
        if "blender" in sections:
            results["blender"] = blender_rows(plan, blender)
    if "sequence" in sections:
        print("sequence (smooth target path)", flush=True)
        results["sequence"], curves = run_sequence(plan, paths, blender)
        results["figure"] = plot_jumps(curves, out / f"{stem}_sequence.png")
        note_load(results, "sequence")
    results["goals"] = goal_rows(results)
    results["total_seconds"] = time.perf_counter() - began
    # Below 1 (on one thread) when other processes shared the core: wall times are then inflated.
    results["cpu_share"] = (time.process_time() - began_cpu) / results["total_seconds"]
    if hasattr(os, "getloadavg"):  # other work on the machine skews every time above
        results["machine"]["load_average_at_end"] = os.getloadavg()[0]
    at_end = solver_path(plan.chains)  # the path is decided once per process: a change is news
    if at_end != results["machine"]["solver_path"]:
        results["machine"]["solver_path"] += f" at the start, {at_end} at the end"
    return results


def note_load(results: dict, section: str) -> None:
    """The 1-minute load average as a section ends: other work on the machine skews its times."""
    if hasattr(os, "getloadavg"):
        results["machine"].setdefault("load_average_after", {})[section] = round(os.getloadavg()[0], 2)


def sections_need_blender(sections: list[str]) -> bool:
    return any(section in sections for section in ("latency", "blender", "sequence"))


if __name__ == "__main__":
    main()
