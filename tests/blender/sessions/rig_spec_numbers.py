"""Session: numbers a rig spec file cannot hold are refused by Import Rig Limits in one line
naming the file, bone and field, with the scene left as it was; and a panel value past what
the spec allows names its field too (issue 35).

A JSON integer too large for a float (a roll of 1 and 400 zeros) is refused, not raised as an
OverflowError traceback; a hinge axis or window centre of [1e200, 0, 0] is refused, not imported
with the bone left outside its limit.

argv: WORKDIR
"""

import copy
import importlib
import json
import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import Checks, addon, make_rig, pose_mode, reset_scene, submodule

workdir = Path(sys.argv[1])
checks = Checks("rig spec numbers: refused where they enter")
spec = importlib.import_module(f"{addon().__name__}.solver.rig.spec")
conversion = submodule("limits.conversion")
ops = bpy.ops.quat_ik

with checks.step("the rig exports"):
    reset_scene()
    ob = make_rig("Rig", [((0, 0, 0), (0, 0, 1)), ((0, 0, 1), (0, 0, 2)), ((0, 0, 2), (0, 0, 2.5))])
    pose_mode(ob, "B2")
    bones = ob.pose.bones
    bones["B1"].quat_ik.joint_type = "HINGE"
    bones["B1"].quat_ik.use_hinge_range = True
    ball = bones["B0"].quat_ik
    ball.joint_type = "BALL"
    cone = ball.windows.add()
    cone.shape = "CONE"
    exported = workdir / "rig.rig.json"
    checks.check("the rig exports", ops.export_rig_limits(filepath=str(exported)) == {"FINISHED"})
    good = json.loads(exported.read_text())

CASES = [
    # (label, path into the file, value, what the one-line error says)
    (
        "a roll of 1 and 400 zeros",
        ("bones", 1, "roll_deg"),
        10**400,
        "bone 'B1': roll_deg: an integer of about 401 digits is too large",
    ),
    ("a head of 1e200", ("bones", 2, "head", 0), 1e200, "bone 'B2': head[0]: 1e+200 is too large"),
    (
        "a hinge axis of [1e200, 0, 0]",
        ("limits", "B1", "axis"),
        [1e200, 0, 0],
        "bone 'B1': limits.axis[0]: 1e+200 is too large",
    ),
    (
        "a cone centre of [1e200, 0, 0]",
        ("limits", "B0", "windows", 0, "center"),
        [1e200, 0, 0],
        "bone 'B0': limits.windows[0].center[0]: 1e+200 is too large",
    ),
    ("a stiffness of NaN", ("limits", "B1", "stiffness"), float("nan"), "bone 'B1': limits.stiffness: must be finite"),
    (
        "a cone of 0°",
        ("limits", "B0", "windows", 0, "half_angle_deg"),
        0,
        "bone 'B0': limits.windows[0].half_angle_deg: must be in (0, 180]",
    ),
]

with checks.step("import refuses numbers a spec cannot hold in one line"):
    for label, path, value, expected in CASES:
        data = copy.deepcopy(good)
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        bad = workdir / f"bad_{len(list(workdir.glob('bad_*')))}.rig.json"
        bad.write_text(json.dumps(data))  # (json writes NaN as NaN, as a hand-edited file may)
        message = ""
        try:
            ops.import_rig_limits(filepath=str(bad))
        except RuntimeError as error:
            message = str(error).strip()
        checks.check(f"import {label}: one line", message.count("\n") == 0 and bool(message), message)
        checks.expect_error(f"import {label}", ops.import_rig_limits, f"{bad}: {expected}", filepath=str(bad))

# The panel: Blender keeps a window centre of 1e30 (single precision holds it), the spec does not.
with checks.step("a panel centre of 1e30 names its field"):
    cone.center = (1e30, 0.0, 0.0)
    try:
        conversion.spec_limit(ball)
        refused = "accepted"
    except spec.RigSpecError as error:
        refused = str(error)
    checks.check("a panel centre of 1e30 names its field", "center[0]: 1e+30 is too large" in refused, refused)

checks.close()
