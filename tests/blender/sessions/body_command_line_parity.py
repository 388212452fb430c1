"""Session: a body solved by the panel and by ``solve-body`` comes out the same, with the same
defaults, because both make their body settings with ``body_settings_from`` and solve through
``solver/body/request.py``.

The ``rigify_body`` sample with its walk taken off (every bone at rest but what the chains move,
as the command line holds bones outside a body) and its chains reset to the panel's defaults:
Solve Now from the neutral pose poses both arms (one body: they share the spine; the right hand
at position and rotation, priority 0; the left at priority 1) and the left leg (a body of its
own: its foot is pinned). The command line solves the armature's exported rig spec with the same
targets and pin, in armature space, and must give the same pose rotations.

argv: WORKDIR
"""

import importlib
import json
import sys
from dataclasses import replace
from pathlib import Path

import bpy
import numpy as np
from mathutils import Matrix, Quaternion

# isort: split
from tests.blender.sessions.common import Checks, addon

REPO = Path(__file__).resolve().parents[3]
checks = Checks("body: command line and panel")
workdir = Path(sys.argv[1])
bpy.ops.wm.open_mainfile(filepath=str(REPO / "sample_rigs" / "rigify_body.blend"))
scene = bpy.context.scene
rig = next(ob for ob in bpy.data.objects if ob.type == "ARMATURE")
package = addon().__name__
cli = importlib.import_module(f"{package}.solver.cli")
defaults = importlib.import_module(f"{package}.solver.defaults")
body_request = importlib.import_module(f"{package}.solver.body.request")
body_settings = importlib.import_module(f"{package}.solver.body.settings")
chain_options = importlib.import_module(f"{package}.blender.solving.chain_options")
rig_limits = importlib.import_module(f"{package}.blender.operators.rig_limits")
SETTINGS = ("iterations", "tolerance", "restarts", "method", "sweep_order", "time_limit", "orientation_weight")
FRAME = 70  # the left foot stands (its pin holds), the left hand reaches for the door handle

with checks.step("the panel's body settings are the command line's"):
    chains = rig.quat_ik.chains
    for chain in chains:
        for name in SETTINGS:
            chain.property_unset(name)
        chain.mode = "MANUAL"
    panel = body_settings.body_settings_from(chain_options.options_for(chains[0]).settings)
    command_line = cli.body_options(cli._parser().parse_args(["solve-body", "spec.json", "--targets", "t.json"]))
    # The panel's Tolerance is a float32 property: its 1e-4 is 1e-4 to 7 digits.
    checks.near("tolerance", panel.tolerance, command_line.settings.tolerance, 1e-10)
    same = replace(panel, tolerance=command_line.settings.tolerance) == command_line.settings
    checks.check("panel defaults = solve-body's", same, f"{panel} != {command_line.settings}")
    checks.check("= the Python API's", command_line == body_request.BodyOptions())


def armature_space(matrix_world) -> np.ndarray:
    return np.array(rig.matrix_world.inverted() @ matrix_world)


def rotation_of(matrix: np.ndarray) -> list[float]:
    return list(Matrix(matrix[:3, :3].tolist()).to_quaternion().normalized())


def pose_rotations(bones) -> np.ndarray:
    return np.array([list(rig.pose.bones[name].rotation_quaternion) for name in bones])


def largest_turn_deg(a, b) -> float:
    """The largest joint angle between two poses (q and -q are one rotation)."""
    return float(np.degrees(2 * np.arccos(np.clip(np.abs(np.sum(a * b, axis=1)), 0.0, 1.0))).max())


def command_line_rotations(chain_names: str, targets: dict) -> tuple[list[str], np.ndarray, dict]:
    (workdir / "targets.json").write_text(json.dumps(targets))
    out = workdir / "out.json"
    command = [
        "solve-body",
        str(workdir / "rig.json"),
        "--chains",
        chain_names,
        "--targets",
        str(workdir / "targets.json"),
    ]
    checks.check(f"solve-body --chains {chain_names} ran", cli.main([*command, "-o", str(out)]) == 0)
    document = json.loads(out.read_text())
    return document["bones"], np.array(document["rotations"][0]), document


with checks.step("Solve Now and solve-body pose a body alike"):
    scene.frame_set(FRAME)
    # The walk moves the bodies' parents (spine.001 for the arms, the hips for the legs); the
    # command line holds them at rest. Each body's targets and pin are moved with its parent to
    # where they stand from it at rest, and then the walk is taken off.
    to_rest = {
        name: np.array(rig.data.bones[name].matrix_local @ rig.pose.bones[name].matrix.inverted())
        for name in ("spine.001", "spine")
    }
    parent_of = {"arm.R": "spine.001", "arm.L": "spine.001", "leg.L": "spine", "leg.R": "spine"}
    targets = {
        chain.name: to_rest[parent_of[chain.name]] @ armature_space(chain.target_object.matrix_world)
        for chain in chains
    }
    pin = next(pin for pin in rig.quat_ik.pins if pin.bone == "foot.L" and pin.active_at(FRAME))
    pin_held = np.eye(4)
    pin_held[:3, :3] = np.array(Quaternion(pin.rotation).to_matrix())
    pin_held[:3, 3] = pin.location
    pin_held = to_rest["spine"] @ pin_held
    pin.location, pin.rotation = pin_held[:3, 3], rotation_of(pin_held)
    for chain in chains:
        chain.target_object.animation_data_clear()
        chain.target_object.matrix_world = Matrix(np.array(rig.matrix_world) @ targets[chain.name])
    rig.animation_data_clear()
    for bone in rig.pose.bones:
        bone.location, bone.rotation_quaternion, bone.scale = (0, 0, 0), (1, 0, 0, 0), (1, 1, 1)
    bpy.context.view_layer.update()
    (workdir / "rig.json").write_text(rig_limits.armature_rig_spec(rig).dumps())
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="POSE")
    checks.check(
        "Solve Now, every chain, from the neutral pose",
        bpy.ops.quat_ik.solve(chains="ALL", from_rest=True) == {"FINISHED"},
    )

    arms = {
        "goals": {
            "arm.R": {"positions": [targets["arm.R"][:3, 3].tolist()], "orientations": [rotation_of(targets["arm.R"])]},
            "arm.L": {"positions": [targets["arm.L"][:3, 3].tolist()], "level": chains["arm.L"].priority},
        }
    }
    bones, line, document = command_line_rotations("arm.R,arm.L", arms)
    turn = largest_turn_deg(pose_rotations(bones), line)
    # Blender keeps rest data in float32 and both stop within the tolerance: a few hundredths of a
    # degree apart; the other branch of a joint is tens of degrees away.
    same_deg = 0.1
    checks.check("the arms: the same pose rotations", turn < same_deg, f"{turn:.3g} deg over {bones}")
    checks.check("the right hand's goal is met", document["level_met"][0][0], document["position_error"])

    leg = {
        "goals": {
            "leg.L": {"positions": [targets["leg.L"][:3, 3].tolist()], "orientations": [rotation_of(targets["leg.L"])]}
        },
        "pins": [{"bone": "foot.L", "position": list(pin.location), "rotation": list(pin.rotation)}],
    }
    bones, line, document = command_line_rotations("leg.L", leg)
    turn = largest_turn_deg(pose_rotations(bones), line)
    checks.check("the pinned leg: the same pose rotations", turn < same_deg, f"{turn:.3g} deg over {bones}")
    checks.check(
        "the pin's verdict is the panel's",
        document["pins_held"] == [pin.status_held],
        (document["pins_held"], pin.status_held),
    )

checks.close()
