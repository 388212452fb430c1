"""Benchmark the body solver (issue 36): random bodies with 2 to 5 effectors solved as one.

Run by hand from the repository root (never in CI; nothing here asserts a time):

    .venv/bin/python bench/bench_body.py            # every section, about two minutes
    .venv/bin/python bench/bench_body.py --quick    # a smoke run, written to bench/results/quick/

Sections: ``batched`` (per number of effectors, several random bodies of about 20 bones,
N goal sets each solved in one call, half the bodies with a pinned bone) and ``live`` (a
4-effector body, one goal set at a time: cold from rest, and warm from the previous answer with
every joint turned a little, as Live solves while a target is dragged, with and without restarts:
``restarts`` rounds run for rows with any level unmet, ``top_restarts`` only where the pins or the
top level miss). Every section runs on both solver paths (the ``path`` column): the native kernel
(``qik_body_stage``, the stages' iterations in C) and the numpy reference
(``BodySettings(kernel="numpy")``), on the same problems. Prints one table per section and writes
``body.json`` and ``body.md`` (default: bench/results/).

What the columns mean: ``ms_per_row`` is CPU time per goal set; ``pins_held`` the share of rows
whose every pin is within the solver's tolerance (1e-6 × the body's size) and ``pin_err_max``
the largest pin slide over the body's size; ``top_success`` the share of rows meeting their
level-0 goal, which a pose inside the limits meets by construction (reachable alone);
``lower_met`` the share of lower-level goals met (their targets are scattered about reachable
ones, many out of reach together) and ``lower_err_p50``/``lower_err_max`` their misses over the
body's size; ``stretched`` the share of rows that used any stretch; ``violation_max`` the
largest joint-limit breach (radians, by each limit's own measure).
"""

from __future__ import annotations

import os

# "One core": numpy's BLAS must not spread a solve over threads. Set before numpy loads.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

from quat_ik_addon.solver import quaternion as quat  # noqa: E402
from quat_ik_addon.solver.body import BodySettings, Goal, Pin, solve_body  # noqa: E402
from quat_ik_addon.solver.body.reference_bodies import random_body, tip_bones  # noqa: E402
from quat_ik_addon.solver.body.request import BodyOptions, BodyRequest, solve_body_request  # noqa: E402
from quat_ik_addon.solver.defaults import INTERACTIVE_TIME_LIMIT  # noqa: E402
from quat_ik_addon.solver.native import library  # noqa: E402

SEED = 20261128
PULL = 0.3  # spread of the lower levels' targets about reachable ones: many out of reach together
WARM_PERTURBATION = 0.05  # radians: the turn of every joint for a warm (Live) start
SECTIONS = ("batched", "live")
PATHS = {"native": "auto", "numpy": "numpy"}  # the path column, and BodySettings.kernel for it


@dataclass(frozen=True)
class Plan:
    effectors: tuple[int, ...]
    bodies: int  # random bodies per number of effectors
    rows: int  # goal sets per body
    bones: int
    live_rows: int


FULL = Plan(effectors=(2, 3, 4, 5), bodies=4, rows=8, bones=20, live_rows=12)
QUICK = Plan(effectors=(2, 5), bodies=1, rows=3, bones=20, live_rows=3)


def problem(rng: np.random.Generator, effectors: int, rows: int, bones: int, pinned: bool):
    """A random body; level 0 asks the first tip for where a pose inside the limits has it,
    levels 1-2 ask the other tips for points scattered about theirs; with ``pinned``, the
    trunk's second bone is pinned where that pose has it."""
    body = random_body(rng, effectors, n_bones=bones, stretch_share=0.2)
    pose = body.forward_kinematics(body.random_poses(rng, rows))
    goals = []
    for rank, name in enumerate(tip_bones(body)):
        bone = body.index(name)
        tail = pose.points(np.array([bone]), np.array([[0.0, body.lengths[bone], 0.0]]))[:, 0]
        if rank == 0:
            goals.append(Goal(name, position=tail))
        else:
            goals.append(Goal(name, position=tail + rng.normal(0.0, PULL, (rows, 3)), level=1 + rank % 2))
    pins = [Pin(body.bone_names[1], position=pose.heads[:, 1], rotation=pose.rotations[:, 1])] if pinned else []
    return body, goals, pins


def timed(run):
    began = time.process_time()
    answer = run()
    return answer, time.process_time() - began


def summary(body, goals, result) -> dict:
    """The figures of one body's result (see the module docstring)."""
    lower = np.array([goal.level > 0 for goal in goals])
    lower_error = result.position_error[:, lower] / body.size
    lower_met = result.position_error[:, lower] <= result.tolerance
    return {
        "rows": len(result.rotations),
        "pins_held": float(np.mean(result.pins_held)),
        "pin_err_max": float(result.pin_position_error.max(initial=0.0) / body.size),
        "top_success": float(np.mean(result.level_met[:, 0])),
        "lower_met": float(np.mean(lower_met)) if lower.any() else None,
        "lower_err": lower_error.ravel(),
        "stretched": float(np.mean(np.any(result.stretch != 1.0, axis=1))),
        "violation_max": float(body.limit_violation(result.rotations).max()),
        "nan": int(np.count_nonzero(~np.isfinite(result.rotations))),
        "iterations": float(np.mean(result.iterations)),
    }


def run_batched(plan: Plan) -> list[dict]:
    rows = []
    for effectors in plan.effectors:
        for path, kernel in PATHS.items():
            rng = np.random.default_rng([SEED, effectors])  # the same problems on both paths
            settings = BodySettings(kernel=kernel)
            per_body = []
            for b in range(plan.bodies):
                body, goals, pins = problem(rng, effectors, plan.rows, plan.bones, pinned=b % 2 == 1)
                result, seconds = timed(
                    lambda body=body, goals=goals, pins=pins, c=settings: solve_body(body, goals, pins, settings=c)
                )
                per_body.append(
                    summary(body, goals, result) | {"ms_per_row": 1e3 * seconds / plan.rows, "pins": len(pins)}
                )
            rows.append(_batched_row(effectors, path, plan, per_body))
    return rows


def _batched_row(effectors: int, path: str, plan: Plan, per_body: list[dict]) -> dict:
    with_pins = [s for s in per_body if s["pins"]]
    lower = np.concatenate([s["lower_err"] for s in per_body])
    row = {
        "effectors": effectors,
        "path": path,
        "bodies": plan.bodies,
        "bones": plan.bones,
        "N": plan.rows,
        "ms_per_row_p50": float(np.median([s["ms_per_row"] for s in per_body])),
        "ms_per_row_max": float(np.max([s["ms_per_row"] for s in per_body])),
        "pins_held": float(np.mean([s["pins_held"] for s in with_pins])) if with_pins else None,
        "pin_err_max": float(np.max([s["pin_err_max"] for s in with_pins])) if with_pins else None,
        "top_success": float(np.mean([s["top_success"] for s in per_body])),
        "lower_met": float(np.mean([s["lower_met"] for s in per_body])),
        "lower_err_p50": float(np.median(lower)),
        "lower_err_max": float(np.max(lower)),
        "stretched": float(np.mean([s["stretched"] for s in per_body])),
        "violation_max": float(np.max([s["violation_max"] for s in per_body])),
        "iterations": float(np.mean([s["iterations"] for s in per_body])),
        "nan": int(sum(s["nan"] for s in per_body)),
    }
    print("  " + "  ".join(f"{k}={cell(v)}" for k, v in row.items()), flush=True)
    return row


def run_live(plan: Plan) -> list[dict]:
    """A 4-effector body one goal set at a time: cold from rest, warm from a nearby answer. The
    warm starts are drawn once, so both paths start every solve from the same pose."""
    rng = np.random.default_rng([SEED, 4, 1])
    body, goals, pins = problem(rng, 4, plan.live_rows, plan.bones, pinned=True)
    first = solve_body(body, goals, pins)
    row_goals = [[_row_goal(goal, r) for goal in goals] for r in range(plan.live_rows)]
    row_pins = [
        [Pin(p.bone, position=np.asarray(p.position)[r], rotation=np.asarray(p.rotation)[r]) for p in pins]
        for r in range(plan.live_rows)
    ]
    warm_starts = [
        quat.multiply(
            quat.from_rotation_vector(rng.normal(size=(body.n_bones, 3)) * WARM_PERTURBATION / np.sqrt(3.0)),
            first.rotations[r],
        )
        for r in range(plan.live_rows)
    ]
    rows = []
    # (start, restarts, top_restarts); None: the default. Live's natural choice is the third:
    # no rounds for lower levels out of reach, rounds only where the pins or the top level miss.
    # The last: as Live in Blender calls it, through the body pipeline with the interactive time
    # limit (which also gives a start back where the answer is no better than it).
    for start, restarts, top_restarts, via in (
        ("cold", None, None, "solve_body"),
        ("warm", None, None, "solve_body"),
        ("warm", 0, None, "solve_body"),
        ("warm", 0, 0, "solve_body"),
        ("warm", 0, None, "request"),
    ):
        for path, kernel in PATHS.items():
            extra = {} if restarts is None else {"restarts": restarts}
            extra |= {} if top_restarts is None else {"top_restarts": top_restarts}
            settings = BodySettings(kernel=kernel, **extra)
            times, results = [], []
            for r in range(plan.live_rows):
                begin = None if start == "cold" else warm_starts[r]
                if via == "request":
                    options = BodyOptions(settings=settings, time_limit=INTERACTIVE_TIME_LIMIT)
                    result, seconds = timed(
                        lambda g=row_goals[r], p=row_pins[r], s=begin, o=options: solve_body_request(
                            body, BodyRequest(g, p, start=s), o
                        )
                    )
                else:
                    result, seconds = timed(
                        lambda g=row_goals[r], p=row_pins[r], s=begin, c=settings: solve_body(
                            body, g, p, start_rotations=s, settings=c
                        )
                    )
                times.append(seconds)
                results.append(summary(body, goals, result))
            row = {
                "effectors": 4,
                "bones": body.n_bones,
                "start": start,
                "restarts": settings.restarts,
                "top_restarts": settings.top_restarts,
                "path": path,
                "via": via,
                "n": plan.live_rows,
                "ms_p50": 1e3 * float(np.median(times)),
                "ms_p90": 1e3 * float(np.percentile(times, 90)),
                "pins_held": float(np.mean([s["pins_held"] for s in results])),
                "top_success": float(np.mean([s["top_success"] for s in results])),
                "lower_met": float(np.mean([s["lower_met"] for s in results])),
                "violation_max": float(np.max([s["violation_max"] for s in results])),
                "iterations": float(np.mean([s["iterations"] for s in results])),
            }
            print("  " + "  ".join(f"{k}={cell(v)}" for k, v in row.items()), flush=True)
            rows.append(row)
    return rows


def _row_goal(goal: Goal, row: int) -> Goal:
    return Goal(
        goal.effector,
        position=None if goal.position is None else np.asarray(goal.position)[row],
        level=goal.level,
    )


def cell(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value == 0.0:
            return "0"
        if abs(value) < 1e-3:
            return f"{value:.1e}"
        return f"{value:.3g}"
    return "" if value is None else str(value)


def table(rows: list[dict]) -> list[str]:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    return lines + ["| " + " | ".join(cell(row.get(c)) for c in columns) + " |" for row in rows]


def machine_info() -> dict:
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "solver_path": library.load()[1].describe(),
        "load_average_at_start": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N (a smoke run)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    parser.add_argument("--out", type=Path, help="output folder (default bench/results, or bench/results/quick)")
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {SECTIONS}")
    plan = QUICK if args.quick else FULL
    out = args.out or BENCH_DIR / "results" / ("quick" if args.quick else "")
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    results: dict = {"machine": machine_info(), "plan": plan.__dict__, "sections": sections}
    if "batched" in sections:
        print("batched (random bodies, N goal sets per call)", flush=True)
        results["batched"] = run_batched(plan)
    if "live" in sections:
        print("live (one goal set at a time)", flush=True)
        results["live"] = run_live(plan)
    results["total_seconds"] = time.perf_counter() - began
    lines = [f"# quat-ik body solver benchmark ({results['machine']['date']})", ""]
    lines += [", ".join(f"{k}: {v}" for k, v in results["machine"].items() if k != "date"), ""]
    for section in SECTIONS:
        if results.get(section):
            lines += [f"## {section}", "", *table(results[section]), ""]
    lines.append(f"Times are CPU time. Total wall time {results['total_seconds']:.0f} s.")
    print("\n".join(lines))
    (out / "body.md").write_text("\n".join(lines) + "\n")
    (out / "body.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
    return results


if __name__ == "__main__":
    main()
