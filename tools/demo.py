"""Demo: install the built add-on in a headless Blender and bake every sample rig with it.

Run ``make demo`` (sets up .venv and builds the zip first) or ``.venv/bin/python tools/demo.py``.
Blender's user folders point at a temporary directory, so your own Blender setup is never read
or changed. For each rig in ``sample_rigs/`` it bakes the Quat IK chains (the Bake button's
operator) and, for comparison, Blender's own IK constraint on the same bones and targets, then
writes to ``out/demo/``:

* ``<rig>.blend``: the rig with both bakes (Quat IK's action plays; "Blender IK bake" is kept);
* ``<rig>.png``: target path against both tips' paths, tip error, every joint against its limits;
* ``summary.md`` / ``summary.json``: the table printed at the end; for rigs solved as bodies
  (``rigify_body``) also a table of pin slips, goal errors by priority, limit breaches and joint
  changes, Quat IK beside Blender's IK (``tools/demo_body.py``);
* ``human_arm.bvh``: the baked arm exported with Blender's BVH exporter and checked by reading
  it back with the BVH importer (``tools/demo_bvh.py`` says how).

``--only arm3,leg`` bakes some rigs only; ``--readme-images`` also refreshes the demo plots the
README shows (docs/images/demo_*.png).

Exit status 0 when every step worked, 1 otherwise (after trying the remaining rigs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import asdict
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script, this file's folder is on sys.path, not the repo

from tools.build_extension import DIST_DIR, BuildError, build_extension  # noqa: E402  (needs sys.path above)

OUT_DIR = REPO_ROOT / "out" / "demo"
RIGS_DIR = REPO_ROOT / "sample_rigs"
README_IMAGES = ("arm3",)  # demo plots copied to docs/images/ with --readme-images
BVH_RIG = "human_arm"  # exported to BVH and read back (the first rig baked when it is not)


def say(message: str) -> None:
    print(f"demo: {message}", flush=True)


def bake_one(name: str, rigs_dir: Path, out_dir: Path, module: str) -> tuple:
    """Bake one rig both ways, plot it; returns (RigRun, stats by solver, BodyFigures or None
    for a rig without bodies)."""
    from sample_rigs.make_rigs import RIGS_BY_NAME, make_rig
    from tools.demo_bake import bake_rig
    from tools.demo_body import body_figures, is_body_rig
    from tools.demo_metrics import solver_stats
    from tools.figures import rig_figure

    blend = rigs_dir / f"{name}.blend"
    if not blend.is_file():  # not in this checkout: build it the way the tests do
        say(f"{name}: {blend} missing, generating it into {out_dir / 'rigs'}")
        blend = make_rig(RIGS_BY_NAME[name], out_dir / "rigs")
    run = bake_rig(blend, out_dir, module)
    stats = {
        solver: solver_stats(run.frames, run.chains, run.runs[solver], run.bake_seconds[solver]) for solver in run.runs
    }
    png = rig_figure(run, stats, out_dir / f"{name}.png")
    body = None
    if is_body_rig(_armature_with_chains()):
        body = body_figures(run, stats, module)  # opens the baked file: after everything else of this rig
    ours, theirs = stats["quat_ik"], stats["blender_ik"]
    say(
        f"{name}: {ours.frames} frames; Quat IK {ours.bake_seconds:.2f} s, reached {ours.reached}; "
        f"Blender IK {theirs.bake_seconds:.2f} s, reached {theirs.reached}; wrote {png.name}, {run.baked_blend.name}"
    )
    return run, stats, body


def _armature_with_chains():
    import bpy

    return next(ob for ob in bpy.data.objects if ob.type == "ARMATURE" and len(ob.quat_ik.chains))


def summary_table(results: dict) -> str:
    lines = [
        "| rig | frames | solver | bake s | tip error mm (median / p95 / max) | orientation error ° (max) "
        "| reached | limit violation ° (max, frames) | largest joint jump ° (frame) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, (_run, stats) in results.items():
        for solver, label in (("quat_ik", "Quat IK"), ("blender_ik", "Blender IK")):
            s = stats[solver]
            orientation = "–" if s.orientation_deg is None else f"{s.orientation_deg[1]:.3g}"
            lines.append(
                f"| {name} | {s.frames} | {label} | {s.bake_seconds:.2f} "
                f"| {s.error_mm[0]:.3g} / {s.error_mm[1]:.3g} / {s.error_mm[2]:.3g} | {orientation} "
                f"| {s.reached}/{s.frames} | {s.violation_max_deg:.2g} ({s.frames_violating}) "
                f"| {s.jump_max_deg:.1f} ({s.jump_frame}) |"
            )
    return "\n".join(lines)


def write_summary(out_dir: Path, results: dict, bvh, environment: dict, bodies: dict | None = None) -> str:
    from tools import demo_body
    from tools.demo_metrics import REACHED_ANGLE, REACHED_DISTANCE, VIOLATION_TOLERANCE

    bodies = bodies or {}
    table = summary_table(results)
    for name, figures in bodies.items():
        table += "\n\n" + demo_body.markdown(name, figures)
    notes = [
        f"Blender {environment['blender']}, Python {environment['python']}, {environment['cpus']} CPUs; "
        f"total demo time {environment['seconds']:.0f} s.",
        f"Reached: every chain's tip within {REACHED_DISTANCE * 1e3:g} mm of its target (and its rotation within "
        f"{math.degrees(REACHED_ANGLE):g}° where the chain has an orientation goal). Limit violations are measured "
        f"against Quat IK's limits for both solvers (Blender's IK gets the closest limits it can express); frames "
        f"count when a joint is more than {math.degrees(VIOLATION_TOLERANCE):g}° outside.",
        "Quat IK: the `quat_ik.bake` operator (the Bake button). Blender IK: its IK constraint on the same bones and "
        "targets, baked with `nla.bake` (visual keying) from the rest pose.",
    ]
    if bodies:
        notes.append(
            "Bodies: chains that share bones are solved as one body, goals by priority, pinned bones above "
            "every goal (Quat IK); Blender's IK solves its constraints that share bones as one tree, with no "
            "priorities or pins, its feet reaching for the same targets. A pin's slip is its bone's largest "
            "distance from where the pin holds it over the pin's frames (Blender's: the same bone on the same "
            "frames); 'met' is within 1 mm (and 1°). 'What the animation needs' is the largest turn per frame of "
            "a goal seen from its chain's root joint (the direction to the target and, with an orientation "
            "goal, its rotation, in the root's parent bone's frame)."
        )
    if bvh is not None:
        notes.append(
            f"BVH: `{bvh.path.name}` ({bvh.bones} bones, {bvh.frames} frames) exported and re-imported with Blender's "
            f"bundled BVH add-on: heads and tails within {bvh.position_error * 1e3:.2g} mm, bone rotations within "
            f"{math.degrees(bvh.angle_error):.2g}° of the bake ({'OK' if bvh.ok else 'MISMATCH'})."
        )
    text = "# quat-ik demo\n\n" + table + "\n\n" + "\n\n".join(notes) + "\n"
    (out_dir / "summary.md").write_text(text, encoding="utf-8")
    data = {
        "environment": environment,
        "rigs": {name: {solver: asdict(s) for solver, s in stats.items()} for name, (_run, stats) in results.items()},
        "bvh": None if bvh is None else {**asdict(bvh), "path": str(bvh.path), "ok": bvh.ok},
        "bodies": {name: demo_body.to_json(figures) for name, figures in bodies.items()},
    }
    (out_dir / "summary.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return table + "\n\n" + "\n".join(notes[1:2] + notes[3:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where results go (default: out/demo/)")
    parser.add_argument("--dist-dir", type=Path, default=DIST_DIR, help="where the zip goes (default: dist/)")
    parser.add_argument("--rigs-dir", type=Path, default=RIGS_DIR, help="the sample rigs (default: sample_rigs/)")
    parser.add_argument("--only", default="", help="comma-separated rig names (default: all)")
    parser.add_argument("--readme-images", action="store_true", help="also copy some plots to docs/images/")
    args = parser.parse_args(argv)
    out_dir = args.out_dir.resolve()
    started = time.perf_counter()
    failures: list[str] = []
    results: dict = {}
    bodies: dict = {}
    bvh = None
    try:
        say("building and validating the extension zip")
        zip_path = build_extension(dist_dir=args.dist_dir.resolve())
        say(f"built {zip_path}")
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="quat_ik_demo_blender_user_") as user_dir:
            os.environ["BLENDER_USER_RESOURCES"] = user_dir  # must be set before bpy is imported
            import bpy

            from sample_rigs.make_rigs import RIGS
            from tools.blender_session import install_addon

            say(f"installing it in Blender {bpy.app.version_string} (headless, user folders in {user_dir})")
            module = install_addon(zip_path)
            say(f"enabled {module}")
            known = [rig.name for rig in RIGS]
            names = [n for n in args.only.split(",") if n] or known
            unknown = [n for n in names if n not in known]
            if unknown:
                say(f"FAILED: no sample rig {', '.join(unknown)}; the rigs are {', '.join(known)}")
                return 1
            for name in names:
                say(f"{name}: baking with Quat IK, then with Blender's IK constraint")
                try:
                    run, stats, body = bake_one(name, args.rigs_dir.resolve(), out_dir, module)
                    results[name] = (run, stats)
                    if body is not None:
                        bodies[name] = body
                except Exception:
                    traceback.print_exc()
                    failures.append(f"{name}: baking failed (traceback above)")
            bvh_rig = BVH_RIG if BVH_RIG in results else next(iter(results), None)
            if bvh_rig is not None:
                from tools.demo_bvh import bvh_round_trip

                say(f"{bvh_rig}: exporting the bake to BVH and importing it back")
                try:
                    bvh = bvh_round_trip(out_dir / f"{bvh_rig}.blend", out_dir / f"{bvh_rig}.bvh")
                    if not bvh.ok:
                        failures.append(
                            f"BVH round trip differs: {bvh.position_error:.3g} units, "
                            f"{math.degrees(bvh.angle_error):.3g}° (tolerance in tools/demo_bvh.py)"
                        )
                except Exception:
                    traceback.print_exc()
                    failures.append("BVH round trip failed (traceback above)")
            environment = {
                "blender": bpy.app.version_string,
                "python": sys.version.split()[0],
                "cpus": os.cpu_count(),
                "seconds": time.perf_counter() - started,
            }
        if results:
            summary = write_summary(out_dir, results, bvh, environment, bodies)
            print("\n" + summary + "\n", flush=True)
            say(f"wrote {out_dir / 'summary.md'} and {len(results)} rigs' .blend and .png files")
        if args.readme_images:
            for name in README_IMAGES:
                if (out_dir / f"{name}.png").is_file():
                    shutil.copyfile(out_dir / f"{name}.png", REPO_ROOT / "docs" / "images" / f"demo_{name}.png")
    except BuildError as error:  # already a complete explanation; a traceback would bury it
        say(f"FAILED: {error}")
        return 1
    except Exception:
        traceback.print_exc()
        say("FAILED (see the error above)")
        return 1
    if failures:
        for failure in failures:
            say(f"FAILED: {failure}")
        return 1
    say(f"done in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
