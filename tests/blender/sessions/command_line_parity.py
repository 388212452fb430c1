"""Session: the panel and the solver's command line give the same answers with the same
defaults, because both solve through the solver's one pipeline (``solver/request.py``).

The sample human arm's chain is reset to the panel's defaults and given a pole; Solve Now from
the neutral pose poses it; the command line solves the sample's rig spec for the same target
and pole (armature space: the chain's root bone has no parent) and must give the same pose
rotations.

argv: WORKDIR
"""

import importlib
import json
import sys
from pathlib import Path

import bpy
import numpy as np

# isort: split
from tests.blender.sessions.common import Checks, addon, empty

REPO = Path(__file__).resolve().parents[3]
checks = Checks("command line and panel")
workdir = Path(sys.argv[1])
bpy.ops.wm.open_mainfile(filepath=str(REPO / "sample_rigs" / "human_arm.blend"))
rig = next(ob for ob in bpy.data.objects if ob.type == "ARMATURE")
chain = rig.quat_ik.chains[0]
package = addon().__name__
request = importlib.import_module(f"{package}.solver.request")
defaults = importlib.import_module(f"{package}.solver.defaults")
cli = importlib.import_module(f"{package}.solver.cli")
SETTINGS = ("iterations", "tolerance", "restarts", "method", "sweep_order", "pole_facing", "orientation_weight")

with checks.step("the panel's defaults are the pipeline's"):
    properties = type(chain).bl_rna.properties
    settings = defaults.DEFAULT_SETTINGS
    checks.check("iterations", properties["iterations"].default == settings.max_iterations)
    checks.near("tolerance", properties["tolerance"].default, settings.tolerance, 1e-9)  # float32
    checks.check("restarts", properties["restarts"].default == settings.restarts)
    checks.check("method: DLS then CCD", properties["method"].default == "COMBINED" and settings.method == "dls_ccd")
    checks.check("sweep order", properties["sweep_order"].default.lower() == settings.order)
    checks.check("pole facing", properties["pole_facing"].default.lower() == request.SolveOptions().pole_facing)
    checks.near("orientation weight", properties["orientation_weight"].default, defaults.ORIENTATION_WEIGHT, 1e-12)
    checks.near("time limit", properties["time_limit"].default, defaults.INTERACTIVE_TIME_LIMIT, 1e-12)

with checks.step("Solve Now and the command line pose the arm alike"):
    for name in SETTINGS:
        chain.property_unset(name)
    chain.orientation_mode = "NONE"
    chain.mode = "MANUAL"
    target = bpy.data.objects[chain.target_object.name]
    target.animation_data_clear()
    target.location = (0.32, -0.25, 1.05)
    pole = empty("Pole", (0.9, 0.4, 1.2))
    chain.pole_object = pole
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    checks.check("Solve Now from the neutral pose", bpy.ops.quat_ik.solve(from_rest=True) == {"FINISHED"})
    bones = ("clavicle", "upper_arm", "forearm", "forearm_twist", "hand")
    panel = np.array([list(rig.pose.bones[name].rotation_quaternion) for name in bones])
    to_armature = np.array(rig.matrix_world.inverted())
    target_armature = (to_armature @ np.append(np.array(target.matrix_world.translation), 1.0))[:3]
    pole_armature = (to_armature @ np.append(np.array(pole.matrix_world.translation), 1.0))[:3]
    (workdir / "targets.json").write_text(
        json.dumps({"positions": [target_armature.tolist()], "poles": [pole_armature.tolist()]})
    )
    out = workdir / "out.json"
    command = ["solve", str(REPO / "sample_rigs" / "human_arm.rig.json"), "--targets", str(workdir / "targets.json")]
    checks.check("the command line ran", cli.main([*command, "-o", str(out)]) == 0)
    document = json.loads(out.read_text())
    checks.check("the same bones", document["bones"] == list(bones), document["bones"])
    line = np.array(document["rotations"][0])


def largest_turn_deg(a, b) -> float:
    """The largest joint angle between two poses (q and -q are one rotation)."""
    return float(np.degrees(2 * np.arccos(np.clip(np.abs(np.sum(a * b, axis=1)), 0.0, 1.0))).max())


with checks.step("the same pose within the tolerance"):
    # Blender keeps rest data and locations in float32 and both solves stop within 1e-4 of the
    # target, so the poses part by a few hundredths of a degree; another bend parts by tens.
    same_deg = 0.1
    checks.check(
        "the same pose rotations", largest_turn_deg(panel, line) < same_deg, f"{largest_turn_deg(panel, line):.3g} deg"
    )
    checks.check("the goal is reached", document["converged"] == [True] and chain.status_converged)
    (workdir / "no_pole.json").write_text(json.dumps({"positions": [target_armature.tolist()]}))
    cli.main(["solve", command[1], "--targets", str(workdir / "no_pole.json"), "-o", str(out)])
    without_pole = np.array(json.loads(out.read_text())["rotations"][0])
    checks.check(
        "without the pole, another bend",
        largest_turn_deg(panel, without_pole) > 10 * same_deg,
        f"{largest_turn_deg(panel, without_pole):.3g} deg",
    )

checks.close()
