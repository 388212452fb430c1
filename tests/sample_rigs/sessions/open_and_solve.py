"""Session script (any Blender from 3.4, add-on installed from the zip): open each committed
sample rig as a user would, bake a few of its frames with Quat IK and record, per rig, the
Blender version that saved the file, its chains, and how far each baked tip ends from its
target. Nothing is saved. A rig that fails records its error, so the others still count.

argv: OUT_JSON RIG,RIG,...
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import bpy

from sample_rigs.make_rigs import SAMPLE_RIGS_DIR

SAMPLED_FRAMES = 5  # baked per rig, spread over its animation


def armature():
    return next(ob for ob in bpy.data.objects if ob.type == "ARMATURE" and len(ob.quat_ik.chains))


def open_and_solve(name: str) -> dict:
    blend = SAMPLE_RIGS_DIR / f"{name}.blend"
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene, ob = bpy.context.scene, armature()
    record = {
        "saved_by": list(bpy.data.version),
        "opened_by": list(bpy.app.version),
        "chains": sorted(chain.name for chain in ob.quat_ik.chains),
    }
    first, last = scene.frame_start, scene.frame_end
    step = max(1, (last - first) // (SAMPLED_FRAMES - 1))
    record["bake"] = sorted(bpy.ops.quat_ik.bake(armature=ob.name, frame_start=first, frame_end=last, step=step))
    errors = []
    for frame in range(first, last + 1, step):
        scene.frame_set(frame)
        for chain in ob.quat_ik.chains:
            tip = ob.matrix_world @ ob.pose.bones[chain.tip_bone].tail
            errors.append((tip - chain.target_object.matrix_world.translation).length)
    record["frames"] = len(range(first, last + 1, step))
    record["largest_error"] = max(errors)
    return record


def run() -> None:
    out, names = Path(sys.argv[1]), sys.argv[2].split(",")
    results = {}
    for name in names:
        try:
            results[name] = open_and_solve(name)
        except Exception:  # recorded for the test of this rig; the other rigs go on
            results[name] = {"error": traceback.format_exc()}
        print(f"open and solve {name}: {results[name]}", flush=True)
    out.write_text(json.dumps(results, indent=1))


run()
