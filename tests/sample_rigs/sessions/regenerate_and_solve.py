"""Session script (bpy 5.0, add-on installed from the zip): regenerate the sample rigs with
sample_rigs/make_rigs.py, check each loads with its chains, limits, animated target and muted
Blender IK constraint, solves, and matches the files committed in sample_rigs/.

argv: OUT_DIR [RIG,RIG,...]
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import bpy
import numpy as np

from sample_rigs.blender_build import BLENDER_IK_NAME
from sample_rigs.make_rigs import RIGS, SAMPLE_RIGS_DIR, main
from tests.blender.sessions.common import Checks, submodule

REACHED = 1e-3  # scene units: the tip within 1 mm of its target
SAMPLED_FRAMES = 7  # baked per rig, spread over its animation
SPEC_NUMBERS = 2e-5  # regenerated and committed rig specs agree to this: angles come from Blender's float32
# radians and rest matrices, whose last bit differs between CPUs (one ulp of 100° is 7e-6°)
STORED_NUMBERS = 1e-4  # pose-bone settings are float32 radians: 150° reads back as 150.00001°


def same_json(a, b, tolerance: float = SPEC_NUMBERS) -> bool:
    """Equal structure and strings, numbers within ``tolerance``."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_json(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(same_json(x, y, tolerance) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=0.0, abs_tol=tolerance)
    return a == b


def same_limit(a, b) -> bool:
    return same_json(json.loads(json.dumps(a.to_dict())), json.loads(json.dumps(b.to_dict())), STORED_NUMBERS)


def armature():
    return next(ob for ob in bpy.data.objects if ob.type == "ARMATURE" and len(ob.quat_ik.chains))


def target_path(frames) -> np.ndarray:
    ob, scene = armature(), bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(int(frame))
        out.append([tuple(chain.target_object.matrix_world.translation) for chain in ob.quat_ik.chains])
    return np.array(out)


def check_rig(checks: Checks, name: str, out_dir: Path) -> None:
    from quat_ik_addon.solver.rig.spec import load_rig_spec

    limit_conversion = submodule("limits.conversion")
    spec_path = out_dir / f"{name}.rig.json"
    committed = SAMPLE_RIGS_DIR / f"{name}.rig.json"
    checks.check(
        f"{name}: regenerated rig spec matches the committed {committed.name}",
        same_json(json.loads(spec_path.read_text()), json.loads(committed.read_text())),
        "run sample_rigs/make_rigs.py and commit the result",
    )
    rig = load_rig_spec(spec_path)

    bpy.ops.wm.open_mainfile(filepath=str(out_dir / f"{name}.blend"))
    scene, ob = bpy.context.scene, armature()
    chains = {chain.name: chain for chain in ob.quat_ik.chains}
    checks.check(f"{name}: chains {sorted(chains)}", sorted(chains) == sorted(c.name for c in rig.chains))
    for chain_spec in rig.chains:
        chain = chains[chain_spec.name]
        names = rig.chain_bones(chain_spec.name)
        checks.check(
            f"{name}/{chain.name}: tip {chain.tip_bone}, {chain.chain_length} bones",
            (chain.tip_bone, chain.chain_length) == (chain_spec.tip, len(names)),
        )
        wrong = [
            n for n in names if not same_limit(limit_conversion.spec_limit(ob.pose.bones[n].quat_ik), rig.limit_for(n))
        ]
        checks.check(f"{name}/{chain.name}: pose-bone limits equal the spec's", not wrong, wrong)
        ik = [c for c in ob.pose.bones[chain.tip_bone].constraints if c.name == BLENDER_IK_NAME]
        checks.check(
            f"{name}/{chain.name}: a muted Blender IK constraint over the same bones",
            len(ik) == 1 and ik[0].mute and ik[0].chain_count == len(names) and ik[0].target == chain.target_object,
        )
    frames = np.unique(np.linspace(scene.frame_start, scene.frame_end, SAMPLED_FRAMES).round().astype(int))
    path = target_path(frames)
    checks.check(
        f"{name}: the target moves", float(np.ptp(path, axis=0).max()) > 0.05, f"{np.ptp(path, axis=0).max():.3g}"
    )

    # Solve: bake the sampled frames and read where the tips end up.
    step = int(frames[1] - frames[0])
    result = bpy.ops.quat_ik.bake(armature=ob.name, frame_start=int(frames[0]), frame_end=int(frames[-1]), step=step)
    checks.check(f"{name}: quat_ik.bake finished", result == {"FINISHED"}, result)
    errors = []
    for frame in range(int(frames[0]), int(frames[-1]) + 1, step):
        scene.frame_set(frame)
        for chain in ob.quat_ik.chains:
            tip = ob.matrix_world @ ob.pose.bones[chain.tip_bone].tail
            errors.append((tip - chain.target_object.matrix_world.translation).length)
    checks.check(f"{name}: every sampled frame reached", max(errors) <= REACHED, f"largest error {max(errors):.3g}")

    # The committed .blend is what make_rigs.py makes: it opens, with the same paths.
    committed_blend = SAMPLE_RIGS_DIR / f"{name}.blend"
    bpy.ops.wm.open_mainfile(filepath=str(committed_blend))
    old = target_path(frames)
    checks.check(
        f"{name}: committed {committed_blend.name} has the same chains and target paths",
        sorted(c.name for c in armature().quat_ik.chains) == sorted(chains)
        and old.shape == path.shape
        and float(np.max(np.abs(old - path))) < 1e-5,
        "run sample_rigs/make_rigs.py and commit the result",
    )


out_dir = Path(sys.argv[1])
names = sys.argv[2].split(",") if len(sys.argv) > 2 else [rig.name for rig in RIGS]
checks = Checks("sample rigs: regenerate, load, solve, compare with sample_rigs/")
with checks.step("make_rigs.py regenerates the rigs"):
    checks.check("make_rigs.py exits 0", main(["--out-dir", str(out_dir), "--only", ",".join(names)]) == 0)
with checks.step("every rig loads, solves and matches the committed files"):
    for name in names:
        check_rig(checks, name, out_dir)
checks.close()
