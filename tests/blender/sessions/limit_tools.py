"""Session: joint-limit tools (issue 6): window shape presets, polygon helpers, reset, the
anatomical presets, copy to selected, mirroring, rig-spec import/export, limits fitted from
an action — each happy path and its error paths (clear message, scene unchanged).

The overlay's own checks live in ``limit_overlay.py``.

argv: WORKDIR
"""

import importlib
import json
import math
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Euler, Quaternion

from tests.blender.sessions.common import (
    Checks,
    addon,
    pose_mode,
    reset_scene,
    submodule,
)
from tests.blender.sessions.limit_rig import make_body, select_bones, spec_dicts_close

workdir = Path(sys.argv[1])
checks = Checks("joint-limit tools")
package = addon().__name__
conversion = submodule("limits.conversion")
spec = importlib.import_module(f"{package}.solver.rig.spec")
presets = importlib.import_module(f"{package}.solver.limits.presets")
mirroring = importlib.import_module(f"{package}.solver.limits.mirroring")
spec_chain = importlib.import_module(f"{package}.solver.rig.spec_chain")
ops = bpy.ops.quat_ik


expect_error = checks.expect_error


def limit_of(bone: str):
    return conversion.spec_limit(ob.pose.bones[bone].quat_ik)


def corners_deg(window) -> np.ndarray:
    return np.degrees([tuple(v.angles) for v in window.vertices])


reset_scene()
ob = make_body()
pb = ob.pose.bones

with checks.step("the window presets make cones, ellipses, rectangles and regular polygons"):
    # ---------------------------------------------------------------- window shape presets
    pose_mode(ob, "upper_arm.L")
    select_bones(ob, ["upper_arm.L"])
    result = ops.window_shape_preset(shape="CONE", half_angle=math.radians(40))
    limits = pb["upper_arm.L"].quat_ik
    checks.check("cone preset: a free joint becomes a ball", result == {"FINISHED"} and limits.joint_type == "BALL")
    window = limits.windows[0]
    checks.check("cone preset: one exact cone", len(limits.windows) == 1 and window.shape == "CONE", window.shape)
    checks.near("cone preset: half-angle 40°", math.degrees(window.half_angle), 40.0, 1e-4)
    window.center = (0.0, 1.0, 0.3)
    ops.window_shape_preset(shape="ELLIPTIC_CONE", half_angles=(math.radians(50), math.radians(20)), target="NEW")
    ellipse = limits.windows[1]
    checks.check(
        "elliptical preset adds a window and selects it",
        len(limits.windows) == 2 and limits.active_window_index == 1 and ellipse.shape == "ELLIPTIC_CONE",
    )
    checks.check(
        "elliptical preset: half-angles 50°, 20°",
        np.allclose(np.degrees(tuple(ellipse.half_angles)), (50, 20), atol=1e-4),
        tuple(ellipse.half_angles),
    )
    limits.active_window_index = 0
    ops.window_shape_preset(shape="RECTANGLE", x_range=(math.radians(-20), math.radians(35)), z_range=(-0.5, 0.5))
    rect = limits.windows[0]
    checks.check("rectangle preset replaces the selected window", rect.shape == "POLYGON" and len(limits.windows) == 2)
    checks.check(
        "rectangle corners are the ranges (degrees)",
        np.allclose(corners_deg(rect), [(-20, -28.6479), (35, -28.6479), (35, 28.6479), (-20, 28.6479)], atol=1e-3),
        corners_deg(rect).round(3).tolist(),
    )
    checks.check("replacing keeps the window's centre", np.allclose(tuple(rect.center), (0, 1, 0.3), atol=1e-6))
    ops.window_shape_preset(shape="REGULAR_POLYGON", half_angle=math.radians(30), sides=5, rotation=math.radians(18))
    pentagon = limits.windows[0]
    radii = np.hypot(*np.tan(np.radians(corners_deg(pentagon))).T)
    checks.check(
        "regular polygon: 5 corners on the 30° cone",
        len(pentagon.vertices) == 5 and np.allclose(radii, math.tan(math.radians(30)), atol=1e-5),
        radii,
    )
with checks.step("every preset shape is a valid limit, a backwards range is refused"):
    checks.check("every preset shape is a valid limit", isinstance(limit_of("upper_arm.L"), spec.BallLimit))
    expect_error(
        "rectangle with min above max",
        ops.window_shape_preset,
        "X Range: the first angle must be below the second",
        shape="RECTANGLE",
        x_range=(math.radians(30), math.radians(-30)),
    )

with checks.step("an ellipse becomes a polygon on it, a cone wider than 90° is refused"):
    # ---------------------------------------------------------------- cone to polygon, make convex
    limits.active_window_index = 1
    result = ops.window_to_polygon(sides=12)
    checks.check(
        "ellipse to polygon: 12 corners",
        result == {"FINISHED"} and limits.windows[1].shape == "POLYGON" and len(limits.windows[1].vertices) == 12,
    )
    tips = np.tan(np.radians(corners_deg(limits.windows[1])))
    checks.check(
        "its corners lie on the ellipse",
        np.allclose(
            (tips[:, 0] / math.tan(math.radians(50))) ** 2 + (tips[:, 1] / math.tan(math.radians(20))) ** 2,
            1,
            atol=1e-4,
        ),
    )
    expect_error("to polygon on a polygon (poll)", ops.window_to_polygon, "cone")
    ops.window_shape_preset(shape="CONE", half_angle=math.radians(120), target="NEW")
    expect_error("a cone wider than 90° as a polygon", ops.window_to_polygon, "reaches past its window plane")
    ops.window_remove()

with checks.step("a dented polygon is split or made convex, a crossed one refused"):
    limits.active_window_index = 0
    square = limits.windows[0]
    square.vertices.clear()
    for corner in ((-30, -30), (30, -30), (5, 0), (30, 30), (-30, 30)):  # (5, 0) makes it concave
        square.vertices.add().angles = np.radians(corner)
    problem = ""
    try:
        limit_of("upper_arm.L")
    except spec.RigSpecError as error:
        problem = str(error)
    checks.check("a concave polygon is refused by the rig spec", "window 1" in problem, problem)
    count = len(limits.windows)
    result = ops.polygon_split_convex()
    pieces = [corners_deg(limits.windows[i]).round(3).tolist() for i in (0, 1)]
    checks.check(
        "split: the dented polygon becomes two convex windows, the second right after it",
        result == {"FINISHED"}
        and len(limits.windows) == count + 1
        and isinstance(limit_of("upper_arm.L"), spec.BallLimit),
        pieces,
    )
    checks.check(
        "... which together keep every corner",
        {tuple(c) for piece in pieces for c in piece} == {(-30, -30), (30, -30), (5, 0), (30, 30), (-30, 30)},
        pieces,
    )
    checks.check("split on a convex polygon changes nothing", ops.polygon_split_convex() == {"CANCELLED"})
    limits.windows.remove(1)
    square.vertices.clear()
    for corner in ((-30, -30), (30, 30), (30, -30), (-30, 30)):  # a bow-tie
        square.vertices.add().angles = np.radians(corner)
    expect_error("split a polygon that crosses itself", ops.polygon_split_convex, "crosses itself")
    square.vertices.clear()
    for corner in ((-30, -30), (30, -30), (5, 0), (30, 30), (-30, 30)):
        square.vertices.add().angles = np.radians(corner)
    result = ops.polygon_make_convex()
    checks.check(
        "make convex drops the inner corner",
        result == {"FINISHED"} and len(square.vertices) == 4 and isinstance(limit_of("upper_arm.L"), spec.BallLimit),
        corners_deg(square).round(3).tolist(),
    )
    square.vertices.clear()
    for corner in ((-30, 0), (0, 0), (30, 0)):
        square.vertices.add().angles = np.radians(corner)
    expect_error("make convex on corners in a line", ops.polygon_make_convex, "one line")

with checks.step("reset makes a free joint without windows"):
    # ---------------------------------------------------------------- reset
    ops.limits_reset()
    checks.check(
        "reset: a free joint without windows",
        limits.joint_type == "FREE" and len(limits.windows) == 0 and limit_of("upper_arm.L") == spec.FreeLimit(),
    )
    bpy.ops.object.mode_set(mode="OBJECT")
    expect_error("reset outside pose mode (poll)", ops.limits_reset, "pose mode")
    pose_mode(ob, "upper_arm.L")

with checks.step("each anatomical preset applies as written"):
    # ---------------------------------------------------------------- anatomical presets
    preset_bones = {"hinge": "forearm.L", "ball": "upper_arm.L"}
    for name in presets.preset_names():
        info = presets.preset_info(name)
        bone = preset_bones[info.kind]
        pose_mode(ob, bone)
        result = ops.apply_limit_preset(preset=name, fit="AS_WRITTEN")
        got, want = limit_of(bone), presets.load_preset(name)
        same = result == {"FINISHED"} and spec_dicts_close(got.to_dict(), want.to_dict(), 1e-4)
        checks.check(f"preset {name} on {bone}", same, "" if same else (got, want))
with checks.step("a preset on a right-side bone is mirrored unless kept as is"):
    pose_mode(ob, "upper_arm.R")
    ops.apply_limit_preset(preset="shoulder", fit="AS_WRITTEN")
    checks.check(
        "shoulder preset on a right-side bone is mirrored",
        spec_dicts_close(
            limit_of("upper_arm.R").to_dict(),
            mirroring.mirror_limit_exact(presets.load_preset("shoulder")).to_dict(),
            1e-4,
        ),
    )
    ops.apply_limit_preset(preset="shoulder", side="LEFT", fit="AS_WRITTEN")
    checks.check(
        "side 'As Is' keeps the left-side numbers",
        spec_dicts_close(limit_of("upper_arm.R").to_dict(), presets.load_preset("shoulder").to_dict(), 1e-4),
    )
with checks.step("a preset fitted to the rest pose turns with the roll and mirrors to the right"):
    for bone in ("upper_arm.L", "upper_arm.R"):  # fitted to the rest pose (the default)
        pose_mode(ob, bone)
        ops.apply_limit_preset(preset="shoulder")
    fitted_left = limit_of("upper_arm.L")
    checks.check(
        "fitted to the rest pose, the preset is turned to the bone's roll",
        not spec_dicts_close(fitted_left.to_dict(), presets.load_preset("shoulder").to_dict(), 1e-3),
    )
    checks.check(
        "... and the symmetrized right arm gets the left's mirror image",
        spec_dicts_close(limit_of("upper_arm.R").to_dict(), mirroring.mirror_limit_exact(fitted_left).to_dict(), 2e-3),
        limit_of("upper_arm.R").twist_deg,
    )
with checks.step("a preset keeps the bone's stiffness and needs pose mode"):
    pb["spine"].quat_ik.stiffness = 0.3
    pose_mode(ob, "spine")
    ops.apply_limit_preset(preset="spine_segment")
    checks.near("a preset keeps the bone's stiffness", pb["spine"].quat_ik.stiffness, 0.3, 1e-6)
    bpy.ops.object.mode_set(mode="OBJECT")
    expect_error("preset outside pose mode (poll)", ops.apply_limit_preset, "pose mode", preset="elbow")

with checks.step("copy to selected gives every selected bone the same limit"):
    # ---------------------------------------------------------------- copy to selected
    pose_mode(ob, "forearm.L")
    ops.apply_limit_preset(preset="wrist")
    pb["forearm.L"].quat_ik.stiffness = 0.2
    select_bones(ob, ["forearm.L", "spine", "forearm.R"])
    result = ops.limits_copy_to_selected()
    source = conversion.spec_limit(pb["forearm.L"].quat_ik)
    checks.check(
        "copy to selected: both targets get the same limit",
        result == {"FINISHED"} and limit_of("spine") == source and limit_of("forearm.R") == source,
    )
    select_bones(ob, ["forearm.L"])
    expect_error("copy with nothing else selected", ops.limits_copy_to_selected, "select the bones to copy to")

with checks.step("mirror gives the other side the mirrored geometry"):
    # ---------------------------------------------------------------- mirror
    pose_mode(ob, "upper_arm.L")
    ua = pb["upper_arm.L"].quat_ik
    conversion.write_limit(
        ua,
        spec.BallLimit(
            windows=(
                spec.PolygonWindow(
                    vertices_deg=((-30, -20), (40, -25), (35, 30), (-25, 40)),
                    center=(0.2, 1.0, 0.1),
                    x_axis=(1, 0.1, 0),
                ),
                spec.EllipticConeWindow(half_angles_deg=(30, 15), center=(0, 0.6, 0.8)),
                spec.ConeWindow(half_angle_deg=25, center=(-0.5, 0.5, 0.5)),
            ),
            twist_deg=(-40.0, 65.0),
            stiffness=0.1,
        ),
    )
    conversion.write_limit(pb["forearm.L"].quat_ik, spec.HingeLimit(axis=(1.0, 0.1, 0.2), range_deg=(5.0, 140.0)))
    select_bones(ob, ["upper_arm.L", "forearm.L"])
    result = ops.limits_mirror()
    checks.check("mirror finished", result == {"FINISHED"}, result)
    rest = {name: np.array(ob.data.bones[name].matrix_local.to_3x3()) for name in ob.data.bones.keys()}
    for left in ("upper_arm.L", "forearm.L"):
        right = left.replace(".L", ".R")
        expected = mirroring.mirror_limit(limit_of(left), rest[left], rest[right])
        same = spec_dicts_close(limit_of(right).to_dict(), expected.to_dict(), 1e-5)
        checks.check(
            f"mirror {left} -> {right}: the mirrored geometry", same, "" if same else (limit_of(right), expected)
        )
        exact = mirroring.mirror_limit_exact(limit_of(left))
        checks.check(
            f"{right}: on a symmetrized rig only signs change",
            spec_dicts_close(limit_of(right).to_dict(), exact.to_dict(), 1e-4),
        )
with checks.step("poses inside a limit, mirrored, are inside its mirror"):
    # Behaviour: poses inside the left limit, mirrored across X = 0, are inside the right one.
    rng = np.random.default_rng(6)
    for left in ("upper_arm.L", "forearm.L"):
        right = left.replace(".L", ".R")
        left_solver = spec_chain.solver_limit(limit_of(left))
        right_solver = spec_chain.solver_limit(limit_of(right))
        inside = left_solver.sample(rng, 300)
        mirrored = mirroring.mirror_pose_rotation(inside, rest[left], rest[right])
        worst = float(np.max(right_solver.violation(mirrored)))
        checks.check(f"{left}'s poses, mirrored, are inside {right}'s limit", worst < 1e-4, f"worst {worst:.2e} rad")
        wild = np.array([tuple(Euler(rng.uniform(-2.5, 2.5, 3)).to_quaternion()) for _ in range(300)])
        agree = np.abs(
            left_solver.violation(wild)
            - right_solver.violation(mirroring.mirror_pose_rotation(wild, rest[left], rest[right]))
        )
        checks.check(
            f"{left} vs {right}: outside poses are outside by the same angle",
            float(np.max(agree)) < 1e-3,
            float(np.max(agree)),
        )
with checks.step("mirror refuses a bone without a side or counterpart, mirrors Left/Right names"):
    select_bones(ob, ["spine"])
    pose_mode(ob, "spine")
    expect_error("mirror a bone without a side", ops.limits_mirror, "has no side")
    pose_mode(ob, "hand.L")
    select_bones(ob, ["hand.L"])
    expect_error("mirror without a counterpart bone", ops.limits_mirror, "there is no bone 'hand.R'")
    pose_mode(ob, "upper_arm.L")
    select_bones(ob, ["upper_arm.L", "upper_arm.R"])
    expect_error("mirror with both sides selected", ops.limits_mirror, "select one side")
    pose_mode(ob, "Left_toe")
    select_bones(ob, ["Left_toe"])
    result = ops.limits_mirror()
    checks.check("Left/Right names mirror too (Left_toe -> Right_toe)", result == {"FINISHED"}, result)

with checks.step("export writes every bone's limits as typed"):
    # ---------------------------------------------------------------- export and import
    pose_mode(ob, "upper_arm.L")
    file_a = workdir / "body_a.rig.json"
    result = ops.export_rig_limits(filepath=str(file_a))
    exported = spec.load_rig_spec(file_a)
    checks.check(
        "export writes a valid rig spec with every bone",
        result == {"FINISHED"} and set(exported.bone_names) == set(ob.data.bones.keys()),
        exported.bone_names,
    )
    checks.check("export: the chain is there", [c.name for c in exported.chains] == ["Arm.L"], exported.chains)
    checks.check(
        "export: limits equal the bones' settings",
        all(spec_dicts_close(exported.limits[n].to_dict(), limit_of(n).to_dict(), 1e-5) for n in exported.limits),
    )
    checks.check("export: free bones without stiffness are left out", "hand.L" not in exported.limits)
    checks.check(
        "export: numbers are written as typed (30 stays 30)",
        exported.limits["upper_arm.L"].windows[0].vertices_deg[0] == (-30.0, -20.0),
        exported.limits["upper_arm.L"].windows[0].vertices_deg[0],
    )

with checks.step("import sets the file's limits and exports the same file back"):
    data = exported.to_dict()
    data["limits"] = {
        "upper_arm.L": {
            "type": "ball",
            "windows": [
                {
                    "shape": "polygon",
                    "center": [0.1, 1.0, 0.2],
                    "x_axis": [1.0, 0.0, 0.1],
                    "vertices_deg": [[-30.0, -20.0], [35.0, -25.0], [40.0, 30.0], [-25.5, 35.0]],
                },
                {"shape": "cone", "center": [0.0, 0.5, 0.5], "half_angle_deg": 60.5},
                {"shape": "elliptic_cone", "center": [0.0, 1.0, 0.0], "half_angles_deg": [40.0, 25.5]},
            ],
            "twist_deg": [-45.5, 60.0],
            "stiffness": 0.25,
        },
        "forearm.L": {"type": "hinge", "axis": [1.0, 0.0, 0.0], "range_deg": [0.0, 145.0], "stiffness": 0.0},
        "forearm.R": {"type": "hinge", "axis": [-1.0, 0.2, 0.0], "range_deg": [-10.0, 120.25], "stiffness": 0.0},
        "upper_arm.R": {"type": "fixed"},
        "spine": {"type": "free", "stiffness": 0.5},
    }
    file_b = workdir / "body_b.rig.json"
    file_b.write_text(json.dumps(data, indent=2))
    result = ops.import_rig_limits(filepath=str(file_b))
    checks.check("import finished", result == {"FINISHED"}, result)
    checks.check(
        "import: a bone the file leaves out becomes free",
        pb["Left_toe"].quat_ik.joint_type == "FREE" and limit_of("Left_toe") == spec.FreeLimit(),
    )
    checks.check("import: hinge about -X+... is a custom axis", pb["forearm.R"].quat_ik.hinge_axis == "CUSTOM")
    checks.check("import: hinge about +X is the X axis", pb["forearm.L"].quat_ik.hinge_axis == "X")
    file_c = workdir / "body_c.rig.json"
    ops.export_rig_limits(filepath=str(file_c))
    round_trip_b, round_trip_c = spec.load_rig_spec(file_b).to_dict(), spec.load_rig_spec(file_c).to_dict()
    checks.check(
        "import -> export gives the file back (exactly)",
        round_trip_b == round_trip_c,
        "" if round_trip_b == round_trip_c else (round_trip_b["limits"], round_trip_c["limits"]),
    )

with checks.step("import onto a bone whose rest differs imports with a warning"):
    moved = json.loads(file_b.read_text())
    next(b for b in moved["bones"] if b["name"] == "forearm.L")["roll_deg"] += 30.0
    (workdir / "moved.rig.json").write_text(json.dumps(moved))
    result = ops.import_rig_limits(filepath=str(workdir / "moved.rig.json"))
    checks.check("import onto a bone whose rest differs still imports (with a warning)", result == {"FINISHED"}, result)

with checks.step("import with Keep Unlisted leaves other bones alone"):
    pb["Left_toe"].quat_ik.joint_type = "FIXED"
    ops.import_rig_limits(filepath=str(file_b), keep_unlisted=True)
    checks.check("import with Keep Unlisted leaves other bones alone", pb["Left_toe"].quat_ik.joint_type == "FIXED")

with checks.step("import refuses bad ranges, concave windows, broken JSON, unknown bones and missing files"):
    bad = json.loads(file_b.read_text())
    bad["limits"]["forearm.L"]["range_deg"] = [170.0, 10.0]
    (workdir / "bad_range.rig.json").write_text(json.dumps(bad))
    expect_error(
        "import a file with a bad range",
        ops.import_rig_limits,
        "bone 'forearm.L': limits.range_deg: min 170 > max 10",
        filepath=str(workdir / "bad_range.rig.json"),
    )
    bad = json.loads(file_b.read_text())
    bad["limits"]["upper_arm.L"]["windows"][0]["vertices_deg"][2] = [0.0, 0.0]
    (workdir / "bad_polygon.rig.json").write_text(json.dumps(bad))
    expect_error(
        "import a concave window",
        ops.import_rig_limits,
        "bone 'upper_arm.L': limits.windows[0].vertices_deg",
        filepath=str(workdir / "bad_polygon.rig.json"),
    )
    (workdir / "broken.rig.json").write_text('{"format": "quat_ik.rig_spec", "version": 1,')
    expect_error("import broken JSON", ops.import_rig_limits, "invalid JSON", filepath=str(workdir / "broken.rig.json"))
    ghost = json.loads(file_b.read_text())
    ghost["bones"].append({"name": "ghost", "parent": None, "head": [0, 0, 0], "tail": [0, 1, 0], "roll_deg": 0})
    ghost["limits"]["ghost"] = {"type": "fixed"}
    (workdir / "ghost.rig.json").write_text(json.dumps(ghost))
    expect_error(
        "import limits for a bone the rig lacks",
        ops.import_rig_limits,
        "no bone 'ghost'",
        filepath=str(workdir / "ghost.rig.json"),
    )
    expect_error("import a missing file", ops.import_rig_limits, "cannot read", filepath=str(workdir / "nowhere.json"))

with checks.step("an export with an invalid limit fails and writes no file"):
    square = pb["spine"].quat_ik
    square.joint_type = "BALL"
    square.windows.clear()
    window = square.windows.add()
    window.shape = "POLYGON"
    for corner in ((-30, -30), (30, -30), (5, 0), (30, 30), (-30, 30)):
        window.vertices.add().angles = np.radians(corner)
    file_d = workdir / "never.rig.json"
    expect_error("export with an invalid limit", ops.export_rig_limits, "bone 'spine'", filepath=str(file_d))
    checks.check("a failed export writes no file", not file_d.exists())
    conversion.reset_limits(square)

with checks.step("fitting refuses a missing action, no rotation keys and too few frames"):
    # ---------------------------------------------------------------- fit from an action
    pose_mode(ob, "upper_arm.L")
    select_bones(ob, ["upper_arm.L", "forearm.L"])
    expect_error("fit without an action", ops.limits_fit_from_action, "has no action")
    for frame in range(1, 6):
        pb["spine"].location = (0.0, 0.0, 0.01 * frame)
        pb["spine"].keyframe_insert("location", frame=frame)
    expect_error("fit an action without rotation keys", ops.limits_fit_from_action, "no rotation keys")
    upper, forearm = pb["upper_arm.L"], pb["forearm.L"]
    upper.rotation_mode = "XYZ"
    forearm.rotation_mode = "QUATERNION"
    keyed_upper, keyed_forearm = [], []
    for frame in range(1, 41):
        t = frame / 40 * 2 * math.pi
        euler = (0.6 * math.sin(t), 0.3 * math.sin(2 * t), 0.4 * math.cos(1.3 * t))
        upper.rotation_euler = euler
        upper.keyframe_insert("rotation_euler", frame=frame)
        keyed_upper.append(tuple(Euler(euler, "XYZ").to_quaternion()))
        angle = 1.0 + math.sin(t)
        forearm.rotation_quaternion = Quaternion((1, 0, 0), angle)
        forearm.keyframe_insert("rotation_quaternion", frame=frame)
        keyed_forearm.append(tuple(Quaternion((1, 0, 0), angle)))
    action = ob.animation_data.action
    expect_error(
        "fit over too few frames",
        ops.limits_fit_from_action,
        "too few frames",
        use_action_range=False,
        frame_start=3,
        frame_end=4,
    )
    expect_error("fit an unknown action", ops.limits_fit_from_action, "no action 'Ghost'", action_name="Ghost")
with checks.step("fitting an action makes a ball and a hinge that hold every keyed pose"):
    upper.quat_ik.stiffness = 0.15
    result = ops.limits_fit_from_action(margin=math.radians(2.0), max_vertices=8)
    checks.check("fit finished", result == {"FINISHED"}, result)
    fitted_upper, fitted_forearm = limit_of("upper_arm.L"), limit_of("forearm.L")
    checks.check(
        "fit: the swinging bone is a ball", isinstance(fitted_upper, spec.BallLimit), type(fitted_upper).__name__
    )
    checks.check(
        "fit: the bone turning about X is a hinge", isinstance(fitted_forearm, spec.HingeLimit), fitted_forearm
    )
    checks.check(
        "fit: windows have at most 8 corners",
        all(len(getattr(w, "vertices_deg", ())) <= 8 for w in fitted_upper.windows),
    )
    checks.near("fit keeps the bone's stiffness", fitted_upper.stiffness, 0.15, 1e-6)
    for name, keyed, limit in (
        ("upper_arm.L", keyed_upper, fitted_upper),
        ("forearm.L", keyed_forearm, fitted_forearm),
    ):
        worst = float(np.max(spec_chain.solver_limit(limit).violation(np.array(keyed))))
        checks.check(f"fit: every keyed pose of {name} is inside its limit", worst <= 1e-7, f"worst {worst:.2e} rad")
    checks.check(
        "fit: the hinge axis is X and its range covers 0..2 rad",
        np.allclose(fitted_forearm.axis, (1, 0, 0), atol=1e-4)
        and fitted_forearm.range_deg[0] <= 0.0 + 1e-6
        and fitted_forearm.range_deg[1] >= math.degrees(2.0) - 1e-6,
        fitted_forearm,
    )
with checks.step("fitting with kind Ball on the active bone leaves the other bone's limit"):
    ops.limits_fit_from_action(kind="BALL", only_active=True, action_name=action.name)
    checks.check("fit with kind Ball on the active bone only", isinstance(limit_of("upper_arm.L"), spec.BallLimit))
    checks.check("...leaves the other bone's fitted hinge", isinstance(limit_of("forearm.L"), spec.HingeLimit))

checks.close()
