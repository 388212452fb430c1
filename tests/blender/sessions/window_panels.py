"""Session for the Blender binary in a real window (xvfb): the sidebar panels draw without errors.

Builds a rig with a chain and a bone with every kind of limit UI (ball with a polygon window),
opens the sidebar on the Quat IK tab, runs the modal bake the Bake button runs, lets Blender
draw a few times, takes a screenshot and quits. Python errors raised while drawing a panel are printed by Blender, not raised, so the
test reads the output for tracebacks. 3.4 cannot choose the sidebar tab from Python, so there
the panels are re-registered into the tab that is showing ("Item").

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import add_chain, addon, empty, straight_rig, submodule

workdir = Path(sys.argv[1])
ob = straight_rig("Arm", 3)
empty("Target", (1.0, 0.5, 2.0))
add_chain(ob, "B2", 3, "Target", mode="LIVE")
bpy.ops.quat_ik.solve()
limits = ob.pose.bones["B1"].quat_ik
limits.joint_type = "BALL"
limits.use_twist_range = True
limits.twist_min, limits.twist_max = math.radians(150.0), math.radians(210.0)  # the "through ±180°" note
ob.data.bones.active = ob.data.bones["B1"]
bpy.ops.quat_ik.window_add(shape="POLYGON")
ob.quat_ik.chains[0].status_message = "A long warning message that the panel has to wrap over several lines of text"

window = bpy.context.window_manager.windows[0]
area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
area.spaces.active.show_region_ui = True
sidebar = next(r for r in area.regions if r.type == "UI")
if (
    "active_panel_category" in sidebar.bl_rna.properties
    and not sidebar.bl_rna.properties["active_panel_category"].is_readonly
):
    sidebar.active_panel_category = "Quat IK"
else:
    package = addon()
    for cls in package._registered_classes():
        if getattr(cls, "bl_category", None) == "Quat IK" and not getattr(cls, "bl_parent_id", None):
            bpy.utils.unregister_class(cls)
            cls.bl_category = "Item"
            bpy.utils.register_class(cls)
    for cls in package._registered_classes():  # children after parents
        if getattr(cls, "bl_parent_id", None):
            bpy.utils.unregister_class(cls)
            bpy.utils.register_class(cls)
for panel_area in window.screen.areas:
    panel_area.tag_redraw()

ticks = [0]


def start_modal_bake():
    """The UI's bake runs modally (progress bar, Esc cancels): start it as the dialog's OK does."""
    with bpy.context.temp_override(window=window, area=area):
        result = bpy.ops.quat_ik.bake("EXEC_DEFAULT", frame_start=1, frame_end=40, interactive=True)
    print(f"MODAL_BAKE_STARTED {result}", flush=True)


def finish():
    ticks[0] += 1
    for panel_area in window.screen.areas:
        panel_area.tag_redraw()
    if ticks[0] == 1:
        start_modal_bake()
    if ticks[0] == 5:  # the bake is done (and cleared any jumps): show some, as a bake that jumped would
        chain = ob.quat_ik.chains[0]
        chain.status_jump_frames, chain.status_largest_jump = "12,30", math.radians(40.0)
    if ticks[0] < 6:
        return 0.5
    if ticks[0] == 6:
        action = ob.animation_data.action if ob.animation_data else None
        keyed = action is not None and len(submodule("compat").all_action_fcurves(action)) > 0
        print(f"MODAL_BAKE_{'DONE' if keyed and bpy.context.scene.frame_current == 1 else 'MISSING'}", flush=True)
        with bpy.context.temp_override(window=window, area=area):
            bpy.ops.screen.screenshot(filepath=str(workdir / "sidebar.png"))
            # The preset menu (single bones and limbs) draws when opened: errors would print here.
            result = bpy.ops.wm.call_menu(name="QUATIK_MT_limit_presets")
        print(f"PRESET_MENU_OPENED {result}", flush=True)
        return 0.5
    if ticks[0] == 7:  # Pose > Inverse Kinematics, where our entries (with Next Pose Jump) are
        with bpy.context.temp_override(window=window, area=area):
            result = bpy.ops.wm.call_menu(name="VIEW3D_MT_pose_ik")
        print(f"POSE_IK_MENU_OPENED {result}", flush=True)
        return 0.5
    print("WINDOW_PANELS_DONE", flush=True)
    bpy.ops.wm.quit_blender()
    return None


bpy.app.timers.register(finish, first_interval=1.0)
