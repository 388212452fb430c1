"""Build the sample rigs: ``sample_rigs/<name>.blend`` and ``<name>.rig.json``, reproducibly.

    blender -b --factory-startup --python sample_rigs/make_rigs.py    # all seven, into sample_rigs/ (Blender 3.4)
    .venv/bin/python sample_rigs/make_rigs.py --only leg,arm3 --out-dir /tmp/rigs
    blender -b --factory-startup --python sample_rigs/make_rigs.py -- --out-dir /tmp/rigs

Each .blend opens with a Quat IK chain configured (Per Frame mode: scrub the timeline and it
solves), joint limits on the pose bones, a target animated along a path that makes the limits
bite, and a muted "Blender IK (comparison)" constraint with the closest limits Blender's own IK
can express (the demo unmutes it to compare). The .rig.json beside it is the same rig in the
rig-spec format (docs/rig_spec.md): bones, chains, limits.

Runs in any Blender from 3.4. A file saved by a Blender opens in that version and later ones,
so the files committed in sample_rigs/ are saved by the oldest Blender the add-on supports
(``OLDEST_BLENDER``, Debian's 3.4 binary): writing there from another version is refused;
``--out-dir`` writes anywhere from any version. Uses the Quat IK add-on if it is enabled, else
registers it from this checkout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))  # run as a script, only sample_rigs/ is on sys.path

import bpy  # noqa: E402  (after the sys.path line, like every import below)

from sample_rigs import blender_build  # noqa: E402
from sample_rigs.definitions import (  # noqa: E402
    ChainSetup,
    build_arm3,
    build_human_arm,
    build_leg,
    build_rigify_human,
    build_robot5,
    build_tentacle30,
)
from sample_rigs.rigify_body import FRAMES as BODY_FRAMES  # noqa: E402
from sample_rigs.rigify_body import build_rigify_body  # noqa: E402

SAMPLE_RIGS_DIR = Path(__file__).resolve().parent
OLDEST_BLENDER = (3, 4)  # the committed files are saved by this version, so every supported one opens them


@dataclass(frozen=True)
class SampleRig:
    name: str
    frames: int
    build: Callable
    setup: ChainSetup
    summary: str


RIGS = (
    SampleRig("arm3", 200, build_arm3, ChainSetup(), "Blow 2002's 3-segment arm anchored at a block"),
    SampleRig("human_arm", 240, build_human_arm, ChainSetup(), "clavicle, shoulder, elbow, forearm twist, wrist"),
    SampleRig("leg", 192, build_leg, ChainSetup(), "hip, knee, ankle; the foot steps on uneven ground"),
    SampleRig("robot5", 180, build_robot5, ChainSetup(), "5-DoF arm touching a table from given directions"),
    SampleRig("tentacle30", 150, build_tentacle30, ChainSetup(), "30 bones in 12° cones after a fast target"),
    SampleRig("rigify_human", 192, build_rigify_human, ChainSetup(), "Blender's Rigify human metarig, 4 limbs"),
    SampleRig("rigify_body", BODY_FRAMES, build_rigify_body, ChainSetup(), "the metarig walking: bodies and pins"),
)
RIGS_BY_NAME = {rig.name: rig for rig in RIGS}


def ensure_addon() -> None:
    """Register the add-on from this checkout unless some installed copy is enabled."""
    if "quat_ik" in bpy.types.PoseBone.bl_rna.properties:
        return
    import quat_ik_addon

    quat_ik_addon.register()


def make_rig(rig: SampleRig, out_dir: Path) -> Path:
    """Build one rig in a fresh file and save ``<name>.blend`` and ``<name>.rig.json``."""
    blender_build.new_scene(rig.frames)
    spec = rig.build(rig.frames, rig.setup)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{rig.name}.rig.json").write_text(spec.dumps(), encoding="utf-8")
    return blender_build.save(out_dir / f"{rig.name}.blend")


def main(argv: list[str] | None = None) -> int:
    if argv is None:  # after "--" in Blender's command line; a script run by Python has its own
        script = Path(sys.argv[0]).resolve() == Path(__file__).resolve() if sys.argv else False
        argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else sys.argv[1:] if script else []
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=SAMPLE_RIGS_DIR, help="default: sample_rigs/")
    parser.add_argument("--only", default="", help="comma-separated rig names (default: all)")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or [rig.name for rig in RIGS]
    unknown = [n for n in names if n not in RIGS_BY_NAME]
    if unknown:
        parser.error(f"unknown rig(s) {', '.join(unknown)}; rigs: {', '.join(RIGS_BY_NAME)}")
    if args.out_dir.resolve() == SAMPLE_RIGS_DIR and tuple(bpy.app.version[:2]) != OLDEST_BLENDER:
        oldest = ".".join(map(str, OLDEST_BLENDER))
        parser.error(
            f"the files in sample_rigs/ are saved by Blender {oldest}, the oldest supported, so that every "
            f"supported Blender opens them; this is Blender {bpy.app.version_string}. Run "
            "`blender -b --factory-startup --python sample_rigs/make_rigs.py` with Blender "
            f"{oldest}, or write elsewhere with --out-dir"
        )
    ensure_addon()
    for name in names:
        path = make_rig(RIGS_BY_NAME[name], args.out_dir.resolve())
        print(f"make_rigs: saved {path} ({path.stat().st_size / 1024:.0f} KiB)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
