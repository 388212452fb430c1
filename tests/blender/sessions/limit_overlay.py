"""Session: the joint-limit overlay (issue 6).

* which bones are drawn (active bone, the chains through it, pose mode only unless asked,
  nothing for other objects);
* the cached window meshes plus the per-redraw pose meshes equal what
  ``overlay_geometry.limit_overlay`` builds for the same frame, in world space;
* a joint on its limit turns the direction (and outline) to the warning colour;
* the callback never raises (not even in background mode before the GPU works) and does
  nothing when the overlay is off;
* drawn for real into a GPUOffScreen after one Workbench render: window, direction and
  warning colours show up in the pixels;
* after the add-on is disabled the draw handler is gone (``draw_handler_remove`` was
  called with it; the module variable is None).

argv: WORKDIR
"""

import importlib
import math
import sys
from pathlib import Path

import bpy
import numpy as np
from mathutils import Euler, Matrix, Quaternion, Vector

from tests.blender.sessions.common import Checks, addon, pose_mode, reset_scene, submodule
from tests.blender.sessions.limit_rig import make_body

workdir = Path(sys.argv[1])
checks = Checks("joint-limit overlay")
module_name = addon().__name__
draw = submodule("ui.overlays")
geometry = importlib.import_module(f"{module_name}.solver.limits.overlay_geometry")
conversion = submodule("limits.conversion")
runtime = submodule("runtime.state").session
spec = importlib.import_module(f"{module_name}.solver.rig.spec")

with checks.step("the draw handler is registered while the add-on is enabled"):
    checks.check(
        "draw handler registered while the add-on is enabled",
        draw._handle is not None and "REMOVED" not in repr(draw._handle),
        repr(draw._handle),
    )

with checks.step("the overlay is off by default"):
    reset_scene()
    scene = bpy.context.scene
    settings = scene.quat_ik
    checks.check("the overlay is off by default", settings.show_limit_overlay is False)
ob = make_body()
ob.location, ob.rotation_euler, ob.scale = (0.5, -0.3, 0.2), (0.1, 0.2, 0.3), (1.5, 1.5, 1.5)
pb = ob.pose.bones
conversion.write_limit(
    pb["upper_arm.L"].quat_ik,
    spec.BallLimit(
        windows=(
            spec.PolygonWindow(vertices_deg=((-40, -30), (45, -35), (40, 40), (-35, 45)), center=(0.0, 1.0, 0.1)),
            spec.ConeWindow(half_angle_deg=25, center=(0.6, 0.6, -0.5)),
            spec.EllipticConeWindow(half_angles_deg=(20, 10), center=(-0.5, 0.8, 0.3), x_axis=(1, 0, 0.2)),
        ),
        twist_deg=(-50.0, 70.0),
    ),
)
conversion.write_limit(pb["forearm.L"].quat_ik, spec.HingeLimit(axis=(1.0, 0.0, 0.0), range_deg=(0.0, 140.0)))


def drawn_names() -> list[str]:
    return [pose_bone.name for _ob, pose_bone in draw.overlay_bones(bpy.context)]


with checks.step("the active bone and its chain are drawn, in pose mode unless asked"):
    # ---------------------------------------------------------------- which bones
    pose_mode(ob, "upper_arm.L")
    checks.check("off: nothing to draw", drawn_names() == [], drawn_names())
    settings.show_limit_overlay = True
    checks.check("on: the active bone", drawn_names() == ["upper_arm.L"], drawn_names())
    settings.overlay_chain_bones = True
    checks.check("all bones of the chain through it", drawn_names() == ["upper_arm.L", "forearm.L"], drawn_names())
    pose_mode(ob, "spine")
    checks.check("a bone in no chain: just itself", drawn_names() == ["spine"], drawn_names())
    settings.overlay_chain_bones = False
    bpy.ops.object.mode_set(mode="OBJECT")
    checks.check("object mode: nothing", drawn_names() == [], drawn_names())
    settings.overlay_outside_pose_mode = True
    checks.check("object mode when asked: the active bone", drawn_names() == ["spine"], drawn_names())
    bpy.ops.object.mode_set(mode="EDIT")
    checks.check("edit mode: nothing, even when asked", drawn_names() == [], drawn_names())
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_cube_add()
    checks.check("a mesh: nothing", drawn_names() == [], drawn_names())
    bpy.data.objects.remove(bpy.context.active_object)
    settings.overlay_outside_pose_mode = False

with checks.step("the meshes equal limit_overlay's and are cached until the limit changes"):
    # ---------------------------------------------------------------- geometry = limit_overlay
    pose_mode(ob, "upper_arm.L")
    pb["upper_arm.L"].rotation_mode = "YXZ"
    pb["upper_arm.L"].rotation_euler = (0.3, 0.5, -0.2)
    pb["forearm.L"].rotation_quaternion = Quaternion((1, 0, 0), math.radians(60))
    pb["spine"].rotation_quaternion = Quaternion((0.3, 0.2, 1.0), 0.4)  # a posed parent moves the limit frames
    bpy.context.view_layer.update()
    for name in ("upper_arm.L", "forearm.L"):
        pose_bone = pb[name]
        overlay = draw.bone_overlay(ob, pose_bone)
        frame = ob.matrix_world @ pose_bone.matrix @ pose_bone.matrix_basis.inverted()
        q = tuple(pose_bone.rotation_euler.to_quaternion() if name == "upper_arm.L" else pose_bone.rotation_quaternion)
        reference = geometry.limit_overlay(
            conversion.spec_limit(pose_bone.quat_ik), np.array(frame), pose_bone.bone.length, q, **draw.SIZES
        ).meshes
        mine = [m.transformed(np.array(overlay.matrix_world)) for m in (*overlay.static_meshes, *overlay.pose_meshes)]
        same = len(mine) == len(reference) and all(
            a.color_role == b.color_role
            and np.allclose(a.vertices, b.vertices, atol=1e-5)
            and np.array_equal(a.triangles, b.triangles)
            and np.array_equal(a.lines, b.lines)
            for a, b in zip(mine, reference, strict=True)
        )
        checks.check(
            f"{name}: cached + per-redraw meshes equal limit_overlay's, in world space",
            same,
            [m.color_role for m in mine],
        )
    roles = [m.color_role for m in draw.bone_overlay(ob, pb["upper_arm.L"]).static_meshes]
    checks.check("three windows: three cones and three outlines", roles == ["window", "window_outline"] * 3, roles)
    first = draw.bone_overlay(ob, pb["upper_arm.L"])
    pb["upper_arm.L"].rotation_euler = (0.1, -0.4, 0.2)
    second = draw.bone_overlay(ob, pb["upper_arm.L"])
    checks.check("a new pose reuses the cached window meshes", second.static_meshes is first.static_meshes)
    checks.check(
        "...and rebuilds the direction",
        not np.allclose(second.pose_meshes[-1].vertices, first.pose_meshes[-1].vertices),
    )
    pb["upper_arm.L"].quat_ik.twist_max = math.radians(80)
    checks.check(
        "a changed limit rebuilds them", draw.bone_overlay(ob, pb["upper_arm.L"]).static_key != first.static_key
    )
    pb["upper_arm.L"].rotation_euler = (0.0, 0.0, 0.0)

with checks.step("a joint at its limit is drawn in the warning colour"):
    # ---------------------------------------------------------------- at the limit: warning colour
    forearm = pb["forearm.L"]
    forearm.rotation_quaternion = Quaternion((1, 0, 0), math.radians(60))
    inside = draw.bone_overlay(ob, forearm)
    forearm.rotation_quaternion = Quaternion((1, 0, 0), math.radians(140))
    on_limit = draw.bone_overlay(ob, forearm)
    checks.check(
        "hinge inside its range: the direction in its own colour",
        not inside.at_limit and inside.pose_meshes[-1].color_role == "direction",
    )
    checks.check(
        "hinge at the end of its range: the direction in the warning colour",
        on_limit.at_limit and on_limit.pose_meshes[-1].color_role == "warning",
    )
    warning_rgba = (*draw.COLORS["warning"], 1.0)
    colours = [c.color for c in draw.draw_commands([on_limit], settings)]
    checks.check("the warning colour reaches the draw commands", warning_rgba in colours, colours)
    pb["upper_arm.L"].rotation_mode = "QUATERNION"
    pb["upper_arm.L"].rotation_quaternion = Quaternion((0, 0, 1), math.radians(100))
    outside = draw.bone_overlay(ob, pb["upper_arm.L"])
    outline_colours = [
        c.color for c in draw.draw_commands([outside], settings) if c.cache_key is not None and c.primitive == "LINES"
    ]
    checks.check(
        "a swing outside every window turns the outlines to the warning colour",
        outside.swing_at_limit and outline_colours and all(c == warning_rgba for c in outline_colours),
    )
    pb["upper_arm.L"].rotation_quaternion = Quaternion()
    commands = draw.draw_commands([draw.bone_overlay(ob, pb["upper_arm.L"])], settings)
    kinds = [c.primitive for c in commands]
    checks.check("surfaces are drawn before lines", kinds == sorted(kinds, key=lambda k: k != "TRIS"), kinds)
    checks.check(
        "surfaces take the opacity setting",
        all(c.color[3] == settings.overlay_opacity for c in commands if c.primitive == "TRIS"),
    )
    settings.overlay_opacity = 0.0
    checks.check(
        "opacity 0: outlines only", all(c.primitive == "LINES" for c in draw.draw_commands([outside], settings))
    )
    settings.overlay_opacity = 0.3

with checks.step("before the GPU works the callback fails quietly and is reported once"):
    # ---------------------------------------------------------------- never raises; costs nothing when off
    before = dict(draw.stats)
    runtime.reported.clear()
    for _ in range(2):
        draw.draw_callback()  # background mode, nothing rendered yet: the gpu module refuses to draw
    overlay_reports = [entry for entry in runtime.reported if entry[0] == ("overlay",)]
    checks.check(
        "before the GPU works the callback fails quietly (twice), reported once",
        draw.stats["errors"] - before.get("errors", 0) == 2 and len(overlay_reports) == 1,
        overlay_reports,
    )

camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
scene.collection.objects.link(camera)
scene.camera = camera
scene.render.engine = "BLENDER_WORKBENCH"
scene.render.resolution_x = scene.render.resolution_y = 16
scene.render.filepath = str(workdir / "first_render.png")
bpy.ops.render.render(write_still=True)  # after one render the gpu module works in background mode

SIZE = 160
offscreen = __import__("gpu").types.GPUOffScreen(SIZE, SIZE)


def draw_offscreen(target: Vector) -> np.ndarray:
    """Call the draw callback into an offscreen buffer, looking along +Y at ``target``."""
    import gpu

    with offscreen.bind():
        framebuffer = gpu.state.active_framebuffer_get()
        framebuffer.clear(color=(0.0, 0.0, 0.0, 0.0))
        camera = Matrix.Translation(target - Vector((0.0, 3.0, 0.0))) @ Euler((math.pi / 2, 0, 0)).to_matrix().to_4x4()
        with gpu.matrix.push_pop(), gpu.matrix.push_pop_projection():
            gpu.matrix.load_matrix(camera.inverted())
            gpu.matrix.load_projection_matrix(Matrix.Diagonal((1.0, 1.0, -0.1, 1.0)))
            draw.draw_callback()
        pixels = framebuffer.read_color(0, 0, SIZE, SIZE, 4, 0, "FLOAT")
    pixels.dimensions = SIZE * SIZE * 4
    return np.array(pixels, dtype=np.float32).reshape(SIZE, SIZE, 4)


def count(image: np.ndarray, role: str) -> int:
    r, g, b = image[..., 0], image[..., 1], image[..., 2]
    if role == "window":
        return int(np.count_nonzero((b > 0.08) & (b > r + 0.05)))
    if role == "warning":
        return int(np.count_nonzero((r > 0.6) & (g < 0.45) & (b < 0.35)))
    return int(np.count_nonzero((r > 0.8) & (g > 0.8) & (b > 0.8)))  # the white direction line


with checks.step("when off the callback draws and builds nothing"):
    ob.location, ob.rotation_euler, ob.scale = (0, 0, 0), (0, 0, 0), (1, 1, 1)
    pb["spine"].rotation_quaternion = Quaternion()
    bpy.context.view_layer.update()
    joint = ob.matrix_world @ pb["upper_arm.L"].head
    settings.show_limit_overlay, settings.overlay_chain_bones = False, False
    draw._static_cache.clear()
    before = dict(draw.stats)
    image = draw_offscreen(joint)
    checks.check(
        "off: the callback draws nothing and builds nothing",
        draw.stats["drawn"] == before.get("drawn", 0)
        and not draw._static_cache
        and draw.stats["batches_built"] == before.get("batches_built", 0)
        and int(np.count_nonzero(image[..., 3])) == 0,
    )
with checks.step("when on windows and direction show in the pixels, a redraw rebuilds the pose only"):
    settings.show_limit_overlay = True
    errors = draw.stats["errors"]
    image = draw_offscreen(joint)
    checks.check(
        "on: the callback drew without error",
        draw.stats["errors"] == errors and draw.stats["drawn"] > before.get("drawn", 0),
        dict(draw.stats),
    )
    checks.check("window cones show in the pixels", count(image, "window") > 200, count(image, "window"))
    checks.check("the bone direction shows in the pixels", count(image, "direction") > 5, count(image, "direction"))
    checks.check("no warning colour while the joint is inside", count(image, "warning") == 0, count(image, "warning"))
    built = draw.stats["batches_built"]
    draw_offscreen(joint)
    checks.check(
        "a redraw rebuilds only the pose batches (direction, twist arc and marker)",
        draw.stats["batches_built"] - built == 3,
        draw.stats["batches_built"] - built,
    )
with checks.step("a joint outside its limit shows the warning colour in the pixels"):
    pb["upper_arm.L"].rotation_quaternion = Quaternion((0, 0, 1), math.radians(100))
    bpy.context.view_layer.update()
    image = draw_offscreen(joint)
    checks.check(
        "a joint outside its limit shows the warning colour", count(image, "warning") > 20, count(image, "warning")
    )
    pb["upper_arm.L"].rotation_quaternion = Quaternion()
    pose_mode(ob, "forearm.L")
    bpy.context.view_layer.update()
    image = draw_offscreen(ob.matrix_world @ pb["forearm.L"].head)
    checks.check(
        "a hinge at the end of its range shows the warning colour", count(image, "warning") > 5, count(image, "warning")
    )
    checks.check(
        "the hinge fan shows (green)",
        int(np.count_nonzero((image[..., 1] > image[..., 2] + 0.05) & (image[..., 1] > 0.08))) > 200,
    )

real_bone_overlay = draw.bone_overlay


def broken(*_args):
    raise RuntimeError("a bug in the geometry")


with checks.step("a failure inside the callback never escapes it"):
    draw.bone_overlay = broken
    errors = draw.stats["errors"]
    try:
        draw_offscreen(joint)
        raised = ""
    except Exception as error:  # the point: nothing may escape the callback
        raised = repr(error)
    draw.bone_overlay = real_bone_overlay
    checks.check(
        "a failure inside the callback never escapes it", not raised and draw.stats["errors"] == errors + 1, raised
    )
    offscreen.free()

# ---------------------------------------------------------------- disabling removes the handler
from tools.blender_session import uninstall_addon  # noqa: E402  (only now: it imports addon_utils)

handle = draw._handle
removed = []
real_remove = bpy.types.SpaceView3D.draw_handler_remove


def spy_remove(*args):
    removed.append(args)
    return real_remove(*args)


with checks.step("disabling removes the draw handler and what it kept"):
    bpy.types.SpaceView3D.draw_handler_remove = spy_remove
    try:
        uninstall_addon(module_name)
    finally:
        bpy.types.SpaceView3D.draw_handler_remove = real_remove
    checks.check("disabling called draw_handler_remove with our handle", [a[0] for a in removed] == [handle], removed)
    checks.check("the module forgets the handle", draw._handle is None)
    checks.check("Blender marks the handle removed", "RNA_HANDLE_REMOVED" in repr(handle), repr(handle))
    checks.check("no batches or shaders kept", not draw._batch_cache and not draw._shaders)
    checks.check("Scene.quat_ik is gone", not hasattr(bpy.types.Scene, "quat_ik"))
    print("draw handler removed after disabling the add-on")
checks.close()
