"""Demo: install the built add-on in a headless Blender (the bpy 5.0 module) and rig an arm with it.

Run ``make demo`` (sets up .venv first) or ``.venv/bin/python tools/demo.py``. Writes
``out/demo/arm3.blend``: a 3-bone armature chain with one Quat IK chain on it, made the way
a user makes it (install the zip, pose mode, "Add Quat IK Chain"), its target animated and
the chain baked to keyframes ("Bake Quat IK"). Blender's user folders
point at a temporary directory, so your own Blender setup is never read or changed.

To grow the demo, add a step function per rig and call it from ``main``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import traceback
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # run as a script, this file's folder is on sys.path, not the repo

from tools.build_extension import DIST_DIR, BuildError, build_extension  # noqa: E402  (needs sys.path above)

OUT_DIR = REPO_ROOT / "out" / "demo"


def say(message: str) -> None:
    print(f"demo: {message}", flush=True)


def rig_arm3(out_dir: Path) -> Path:
    """A 3-bone chain with a Quat IK chain from root to tip, its target swept sideways over
    frames 1-24 and baked to keys; saved as arm3.blend."""
    import bpy

    from tools.blender_session import add_quat_ik_chain, make_bone_chain

    bpy.ops.wm.read_homefile(use_empty=True)  # start from an empty scene
    ob = make_bone_chain("Arm3", 3)
    add_quat_ik_chain(ob, tip_bone="Bone.002", chain_length=3)
    chain = ob.quat_ik.chains[0]
    say(f"added a Quat IK chain on {ob.name}: tip {chain.tip_bone}, {chain.chain_length} bones")

    target = chain.target_object
    for frame, location in ((1, (0.5, 0.0, 2.5)), (24, (1.5, 0.0, 1.5))):
        target.location = location
        target.keyframe_insert("location", frame=frame)
    result = bpy.ops.quat_ik.bake(armature=ob.name, frame_start=1, frame_end=24)
    if result != {"FINISHED"}:
        raise RuntimeError(f"quat_ik.bake returned {result}")
    rotations = []
    for frame in (1, 24):
        bpy.context.scene.frame_set(frame)
        rotations.append(tuple(ob.pose.bones["Bone"].rotation_quaternion))
    if rotations[0] == rotations[1]:
        raise RuntimeError("after baking, the root bone has the same rotation on frames 1 and 24")
    say(f"baked frames 1-24 into action '{ob.animation_data.action.name}'")

    blend_path = out_dir / "arm3.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend_path))
    return blend_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where the .blend files go (default: out/demo/)")
    parser.add_argument("--dist-dir", type=Path, default=DIST_DIR, help="where the zip goes (default: dist/)")
    args = parser.parse_args(argv)
    out_dir = args.out_dir.resolve()
    try:
        say("building and validating the extension zip")
        zip_path = build_extension(dist_dir=args.dist_dir.resolve())
        say(f"built {zip_path}")
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="quat_ik_demo_blender_user_") as user_dir:
            os.environ["BLENDER_USER_RESOURCES"] = user_dir  # must be set before bpy is imported
            import bpy

            from tools.blender_session import install_addon

            say(f"installing it in Blender {bpy.app.version_string} (headless, user folders in {user_dir})")
            module = install_addon(zip_path)
            say(f"enabled {module}")
            blend_path = rig_arm3(out_dir)
            say(f"saved {blend_path}")
    except BuildError as error:  # already a complete explanation; a traceback would bury it
        say(f"FAILED: {error}")
        return 1
    except Exception:
        traceback.print_exc()
        say("FAILED (see the error above)")
        return 1
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
