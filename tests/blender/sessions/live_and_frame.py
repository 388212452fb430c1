"""Session: Live mode re-solves when inputs change and never loops, in full while its inputs
move on the native kernel and lightly on numpy (finished once they rest); Per Frame mode follows
frame_set and animation renders; handlers are registered once, survive loading a file and
go away when the add-on is disabled; a failing live chain reports once and keeps its pose.

argv: WORKDIR
"""

import contextlib
import io
import sys
import time
from pathlib import Path

import bpy
import numpy as np

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    addon,
    effector_world,
    empty,
    reset_scene,
    straight_rig,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("live and per-frame modes")
runtime = submodule("runtime.state").session
handlers = submodule("runtime.handlers")
reset_scene()
scene = bpy.context.scene

with checks.step("a Live chain is solved as soon as it is added"):
    ob = straight_rig("Arm", 3)
    target = empty("Target", (1.0, 0.5, 2.0))
    bystander = empty("Bystander", (5, 5, 5))
    result = add_chain(ob, "B2", 3, "Target", mode="LIVE")
    chain = ob.quat_ik.chains[0]
    checks.check("add_chain (Live) finished", result == {"FINISHED"}, result)
    error = (effector_world(ob, "B2") - target.location).length
    checks.check("Live chain is solved as soon as it is added", error < 1e-3, error)


def update() -> None:
    bpy.context.view_layer.update()


with checks.step("an unrelated edit solves nothing"):
    # ---- costs nothing when nothing the chain depends on changed
    update()
    runtime.stats.clear()
    bystander.location.x += 1.0
    update()
    checks.check("handler ran for an unrelated edit", runtime.stats["depsgraph_calls"] >= 1, dict(runtime.stats))
    checks.check("... and did not solve", runtime.stats["solves"] == 0, dict(runtime.stats))

with checks.step("a moved target solves once and the write does not loop"):
    # ---- a moved target re-solves exactly once, and the write does not loop
    runtime.stats.clear()
    target.location = (-0.5, 1.2, 1.5)
    update()
    solves_after_move = runtime.stats["solves"]
    for _ in range(5):
        update()
    checks.check("moving the target solved once", solves_after_move == 1, dict(runtime.stats))
    checks.check("no further solves from our own writes", runtime.stats["solves"] == 1, dict(runtime.stats))
    checks.check("handler calls stay bounded", runtime.stats["depsgraph_calls"] <= 3, dict(runtime.stats))
    error = (effector_world(ob, "B2") - target.location).length
    checks.check("Live chain follows the moved target", error < 1e-3, error)
    checks.check(
        "status says converged",
        chain.status_converged and chain.status_message == "",
        (chain.status_converged, chain.status_message),
    )

with checks.step("moving the target's parent solves again"):
    # A parent moving the target (a parented target) counts as a change too.
    carrier = empty("Carrier", (0, 0, 0))
    target.parent = carrier
    update()
    runtime.stats.clear()
    carrier.location = (0.2, -0.3, 0.1)
    update()
    error = (effector_world(ob, "B2") - target.matrix_world.translation).length
    checks.check(
        "moving the target's parent re-solves",
        runtime.stats["solves"] == 1 and error < 1e-3,
        (dict(runtime.stats), error),
    )

with checks.step("a changed setting solves again, Manual and disabled chains do not follow"):
    # ---- a changed setting re-solves; Manual and disabled chains do not follow
    runtime.stats.clear()
    chain.iterations = 80
    update()
    checks.check("changing a setting re-solves", runtime.stats["solves"] == 1, dict(runtime.stats))
    for mode, enabled in (("MANUAL", True), ("LIVE", False)):
        chain.mode, chain.enabled = mode, enabled
        update()
        before = effector_world(ob, "B2")
        runtime.stats.clear()
        carrier.location.x += 0.3
        update()
        moved = (effector_world(ob, "B2") - before).length
        checks.check(
            f"{mode.lower()}{'' if enabled else ' disabled'} chain ignores a moved target",
            runtime.stats["solves"] == 0 and moved < 1e-9,
            (dict(runtime.stats), moved),
        )
    chain.mode, chain.enabled = "LIVE", True
    update()

with checks.step("a failing Live solve reports once and keeps the pose"):
    # ---- a failing live solve never raises, reports once, keeps the pose
    pose_before = [tuple(pb.rotation_quaternion) for pb in ob.pose.bones]
    chain.target_bone = "NoSuchBone"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for _ in range(3):
            carrier.location.z += 0.1
            update()
    printed = [line for line in out.getvalue().splitlines() if "NoSuchBone" in line]
    checks.check("failure printed once", len(printed) == 1, printed)
    checks.check(
        "failure stored on the chain for the panel", "NoSuchBone" in chain.status_message, chain.status_message
    )
    checks.check("pose left as it was", [tuple(pb.rotation_quaternion) for pb in ob.pose.bones] == pose_before, "")
    chain.target_bone = ""
    update()
    error = (effector_world(ob, "B2") - target.matrix_world.translation).length
    checks.check(
        "fixing the target clears the failure",
        chain.status_message == "" and error < 1e-3,
        (chain.status_message, error),
    )

with checks.step("on the kernel a Live update solves in full while its inputs move"):
    # ---- on the native kernel a Live update solves in full while its inputs move (restarts and
    # all), so nothing is left to finish once they rest
    limited = straight_rig("Limited", 3)
    for pose_bone in limited.pose.bones:
        pose_bone.quat_ik.joint_type = "BALL"
        window = pose_bone.quat_ik.windows.add()
        window.shape, window.half_angle = "CONE", np.radians(15.0)
    far = empty("Far", (1.6, 0.0, 1.2))  # within the chain's length, beyond what its cones allow
    add_chain(limited, "B2", 3, "Far", mode="LIVE")
    limited_chain = limited.quat_ik.chains[0]
    runtime.finish_at_rest = True  # as in a window
    checks.check(
        "the kernel solves the limited chain",
        limited_chain.status_solver == "native kernel",
        limited_chain.status_solver,
    )
    pose_solve = submodule("solving.current_frame")
    time_limit, heavy = pose_solve.MOVING_TIME_LIMIT, pose_solve.HEAVY_WHILE_MOVING
    pose_solve.MOVING_TIME_LIMIT = pose_solve.HEAVY_WHILE_MOVING = 60.0  # (a slow machine's timing is no part of these)
    runtime.stats.clear()
    far.location.x += 0.1
    update()
    checks.check(
        "on the kernel a Live update that misses runs its restarts on the dragged update itself ...",
        not limited_chain.status_converged and limited_chain.status_restarts > 0 and runtime.stats["solves"] == 1,
        (limited_chain.status_converged, limited_chain.status_restarts, dict(runtime.stats)),
    )
    checks.check("... and leaves no full solve for when its inputs rest", limited.name_full not in runtime.resting_due)
    checks.check(
        "... so the resting timer has nothing to run",
        handlers.run_resting(now=time.monotonic() + 1.0) is None and runtime.stats["resting_solves"] == 0,
        dict(runtime.stats),
    )
    far.location.x += 0.05  # dragged on, still out of reach
    update()
    checks.check(
        "dragged on after a miss, the update runs no restarts and leaves its full solve for the rest ...",
        limited_chain.status_restarts == 0 and limited.name_full in runtime.resting_due,
        (limited_chain.status_restarts, list(runtime.resting_due)),
    )
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check(
        "... which runs its restarts once the inputs rest",
        runtime.stats["resting_solves"] == 1 and limited_chain.status_restarts > 0,
        (limited_chain.status_restarts, dict(runtime.stats)),
    )
    for x in (0.9, 0.7, 0.6, 0.5):  # dragged back within the cones' reach
        far.location = (x, 0.0, 2.95)
        update()
    checks.check(
        "a goal dragged back in reach is met on its update",
        limited_chain.status_converged and limited.name_full not in runtime.resting_due,
        (limited_chain.status_error, list(runtime.resting_due)),
    )
with checks.step("on the kernel a heavy or timed-out chain is finished at rest"):
    # A chain whose full solves took longer than HEAVY_WHILE_MOVING solves lightly while it moves,
    # and one whose restarts ran out of MOVING_TIME_LIMIT is finished at rest, as on numpy.
    for what, limit, too_long in (("full solves too long", 60.0, 0.0), ("restarts out of time", 0.0, 60.0)):
        pose_solve.MOVING_TIME_LIMIT, pose_solve.HEAVY_WHILE_MOVING = limit, too_long
        far.location = (1.6, 0.0, 1.2 + len(what) * 1e-3)
        update()  # (a full solve: the one it measures)
        runtime.stats.clear()
        far.location.x += 0.05
        update()
        light = limited_chain.status_restarts == 0 if too_long == 0.0 else limited_chain.status_restarts <= 1
        checks.check(
            f"{what}: the update is short of its full solve, which waits for the inputs to rest",
            light and limited.name_full in runtime.resting_due,
            (limited_chain.status_restarts, list(runtime.resting_due)),
        )
        handlers.run_resting(now=time.monotonic() + 1.0)
        checks.check(f"{what}: ... and runs once they have", runtime.stats["resting_solves"] == 1, dict(runtime.stats))
    pose_solve.MOVING_TIME_LIMIT, pose_solve.HEAVY_WHILE_MOVING = time_limit, heavy
    far.location = (1.6, 0.0, 1.2)
    update()

with checks.step("on numpy a moving Live chain solves lightly, in full once at rest"):
    # ---- on numpy, while its inputs move a Live chain solves lightly; it is finished once they
    # rest (in the UI a timer runs ``run_resting``; here the test calls it)
    preferences = bpy.context.preferences.addons[addon().__name__].preferences
    preferences.native_kernel = False
    runtime.stats.clear()
    far.location.x += 0.1
    update()
    checks.check(
        "... (the chain solves on numpy)", limited_chain.status_solver.startswith("numpy"), limited_chain.status_solver
    )
    checks.check(
        "a Live update that misses runs a few iterations and no restarts ...",
        not limited_chain.status_converged
        and limited_chain.status_restarts == 0
        and 0 < limited_chain.status_iterations <= 8
        and runtime.stats["solves"] == 1,
        (limited_chain.status_converged, limited_chain.status_iterations, limited_chain.status_restarts),
    )
    checks.check("... and leaves the full solve for when its inputs rest", limited.name_full in runtime.resting_due, "")
    missed_by = limited_chain.status_error
    later = handlers.run_resting(now=time.monotonic())
    checks.check(
        "before the inputs have rested nothing runs",
        later is not None and later > 0.0 and runtime.stats["resting_solves"] == 0,
        (later, dict(runtime.stats)),
    )
    later = handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check(
        "once they have, the full solve runs, restarts too (and the timer ends)",
        later is None and runtime.stats["resting_solves"] == 1 and limited_chain.status_restarts > 0,
        (later, dict(runtime.stats), limited_chain.status_restarts),
    )
    checks.check(
        "... never leaving the pose further from the goal",
        limited_chain.status_error <= missed_by + 1e-9,
        (limited_chain.status_error, missed_by),
    )
    runtime.stats.clear()
    for _ in range(3):
        update()
    checks.check("the full solve's write does not solve again", runtime.stats["solves"] == 0, dict(runtime.stats))
with checks.step("no full solve for inputs that moved since"):
    # Inputs that moved after the update: the full solve is not run for them ...
    far.location.z += 0.1
    update()
    missed_at = tuple(far.location)
    far.location.z += 0.1  # moved again, not yet evaluated
    runtime.stats.clear()
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check(
        "no full solve for inputs that have moved since",
        runtime.stats["resting_solves"] == 0 and tuple(far.location) != missed_at,
        dict(runtime.stats),
    )
with checks.step("a goal met while moving leaves nothing to finish"):
    # ... and a goal met while moving leaves nothing to finish (dragged back in reach).
    for x in (0.9, 0.7, 0.6, 0.5):
        far.location = (x, 0.0, 2.95)
        update()
    checks.check(
        "a goal met while moving leaves nothing to finish",
        limited_chain.status_converged and limited.name_full not in runtime.resting_due,
        (limited_chain.status_converged, limited_chain.status_error, list(runtime.resting_due)),
    )
with checks.step("Solve Now after a light update solves in full"):
    # Solve Now is a full solve, also right after a light update that missed.
    far.location = (1.6, 0.0, 1.25)
    update()
    light_restarts = limited_chain.status_restarts
    bpy.context.view_layer.objects.active = limited
    result = bpy.ops.quat_ik.solve()
    checks.check(
        "Solve Now after a light update solves in full",
        result == {"FINISHED"} and light_restarts == 0 and limited_chain.status_restarts > 0,
        (result, light_restarts, limited_chain.status_restarts),
    )
with checks.step("in the background a Live update is a full solve"):
    # Without a timer (the background's default) every Live update is a full solve.
    runtime.finish_at_rest = None
    runtime.resting_due.clear()
    far.location = (1.6, 0.0, 1.3)
    update()
    checks.check(
        "in the background a Live update is a full solve",
        limited_chain.status_restarts > 0 and not runtime.resting_due,
        (limited_chain.status_restarts, list(runtime.resting_due)),
    )
with checks.step("back on the kernel a dragged update solves in full"):
    # Back on the kernel: the full solves numpy took (far longer than HEAVY_WHILE_MOVING) do not
    # make it solve lightly. (Its restarts get all the time they need: a slow machine's timing is
    # no part of this check.)
    preferences.native_kernel = True
    runtime.finish_at_rest = True
    pose_solve.MOVING_TIME_LIMIT = 60.0
    far.location = (1.7, 0.0, 1.3)
    update()
    pose_solve.MOVING_TIME_LIMIT = time_limit
    checks.check(
        "back on the kernel, a dragged update solves in full again (numpy's solve times do not count)",
        limited_chain.status_restarts > 0 and limited.name_full not in runtime.resting_due,
        (limited_chain.status_solver, limited_chain.status_restarts, list(runtime.resting_due)),
    )
    runtime.finish_at_rest = None
    runtime.resting_due.clear()
    bpy.data.objects.remove(limited)
    bpy.data.objects.remove(far)
    bpy.context.view_layer.objects.active = ob
    update()

with checks.step("Per Frame shows the solved pose whatever the order of frames"):
    # ---- per frame: frame_set shows the solved pose, from rest (order of frames does not matter)
    target.parent = None
    target.animation_data_clear()
    path = {1: (1.5, 0.0, 1.0), 10: (0.0, 1.5, 2.0), 20: (-1.2, 0.0, 2.2)}
    for frame, location in path.items():
        target.location = location
        target.keyframe_insert("location", frame=frame)
    chain.mode = "PER_FRAME"
    runtime.stats.clear()
    errors, poses = {}, {}
    for frame in (1, 5, 10, 15, 20, 12, 3):
        scene.frame_set(frame)
        errors[frame] = (effector_world(ob, "B2") - target.matrix_world.translation).length
        checks.near(
            f"per-frame: frame {frame} shows the pose the solve reported", errors[frame], chain.status_error, 1e-6
        )
        poses.setdefault(frame, []).append(np.array([tuple(pb.rotation_quaternion) for pb in ob.pose.bones]))
    checks.check("per-frame: every frame_set reaches the target", max(errors.values()) < 1e-3, errors)
    checks.check("per-frame handler ran on frame changes", runtime.stats["frame_calls"] >= 7, dict(runtime.stats))
    scene.frame_set(10)
    again = np.array([tuple(pb.rotation_quaternion) for pb in ob.pose.bones])
    checks.check(
        "per-frame result does not depend on the previous frame", np.allclose(again, poses[10][0], atol=1e-9), ""
    )

with checks.step("each handler is registered once"):
    # ---- handlers: once each, persistent, survive loading a file
    ours = [getattr(bpy.app.handlers, name) for name, _ in handlers._HANDLERS]
    counts = {
        name: sum(1 for f in getattr(bpy.app.handlers, name) if f.__module__ == handlers.__name__)
        for name, _ in handlers._HANDLERS
    }
    checks.check(
        "each handler registered exactly once",
        all(c >= 1 for c in counts.values())
        and counts["depsgraph_update_post"] == 1
        and counts["frame_change_post"] == 1,
        counts,
    )
with checks.step("handlers survive loading a file and its Live chain follows"):
    blend = workdir / "live.blend"
    chain.mode = "LIVE"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    counts_after = {
        name: sum(1 for f in getattr(bpy.app.handlers, name) if f.__module__ == handlers.__name__)
        for name, _ in handlers._HANDLERS
    }
    checks.check("handlers survive loading files", counts_after == counts, counts_after)
    ob, target = bpy.data.objects["Arm"], bpy.data.objects["Target"]
    target.animation_data_clear()
    runtime.stats.clear()
    target.location = (0.3, -1.2, 1.8)
    update()
    error = (effector_world(ob, "B2") - target.location).length
    checks.check(
        "live chain in the loaded file follows its target",
        runtime.stats["solves"] >= 1 and error < 1e-3,
        (dict(runtime.stats), error),
    )

with checks.step("an animation render shows the per-frame pose"):
    # ---- an animation render shows the per-frame pose
    scene = bpy.context.scene
    ob.quat_ik.chains[0].mode = "PER_FRAME"
    target.location = (1.5, 0.0, 0.8)
    target.keyframe_insert("location", frame=1)
    target.location = (-1.5, 0.0, 0.8)
    target.keyframe_insert("location", frame=3)
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.mesh.primitive_cube_add(size=0.4)
    cube = bpy.context.object
    cube.parent, cube.parent_type, cube.parent_bone = ob, "BONE", "B2"
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    scene.collection.objects.link(camera)
    camera.data.type, camera.data.ortho_scale = "ORTHO", 7.0
    camera.location, camera.rotation_euler = (0, -10, 1.5), (1.5708, 0, 0)
    scene.camera = camera
    scene.render.engine = "BLENDER_WORKBENCH"
    scene.render.resolution_x = scene.render.resolution_y = 48
    scene.render.resolution_percentage = 100
    scene.frame_start, scene.frame_end = 1, 3
    scene.render.filepath = str(workdir / "render_")
    scene.render.image_settings.file_format = "PNG"
    bpy.ops.render.render(animation=True)
    centroids = []
    for frame in (1, 2, 3):
        image = bpy.data.images.load(str(workdir / f"render_{frame:04d}.png"))
        pixels = np.array(image.pixels[:]).reshape(48, 48, 4)[..., :3].mean(axis=2)
        columns = np.nonzero(pixels > pixels.mean() + 0.2)[1]
        centroids.append(float(columns.mean()) if columns.size else float("nan"))
    checks.check(
        "rendered frames follow the moving target (tip swings across)",
        centroids[0] > centroids[1] + 5 > centroids[2] + 10,
        centroids,
    )

with checks.step("disabling removes the handlers, enabling adds each once"):
    # ---- disabling removes the handlers; enabling puts them back once
    package = addon()
    package.unregister()
    left = [
        f
        for name, _ in handlers._HANDLERS
        for f in getattr(bpy.app.handlers, name)
        if f.__module__ == handlers.__name__
    ]
    checks.check("disabling removes every handler", not left, left)
    package.register()
    counts = {
        name: sum(1 for f in getattr(bpy.app.handlers, name) if f.__module__ == handlers.__name__)
        for name, _ in handlers._HANDLERS
    }
    checks.check(
        "re-enabling adds each handler once",
        counts["depsgraph_update_post"] == 1 and counts["frame_change_post"] == 1,
        counts,
    )

checks.close()
