"""Session: Debian's Blender 3.4 in a real window (xvfb), with the rig from ``build_rig.py``
opened from the command line and the add-on installed by the bootstrap.

What a user does, in order, driven by one generator that a ``bpy.app.timers`` callback steps
through (each ``yield`` hands control back to Blender for that many seconds so it handles
events and redraws):

1. Maximize the 3D View (Ctrl+Space), show the sidebar, frame the rig, switch the sidebar to
   the "Quat IK" tab by scrolling the mouse wheel over the tab strip (Blender 3.4 has no
   Python API for the active tab; the window is started with ``--enable-event-simulate``).
2. Screenshots of the 3D View (``screen.screenshot_area``): the chain's tip active (the
   chains panel with the chain selected), then the ball joint with a polygon window active
   (the limits editor, and the limit overlay when there is one), then the hinge.
3. Disable the add-on and take the same screenshots again, for the test to compare pixels;
   enable it again.
4. Undo as a user meets it: an operator run with an undo push (``'EXEC_DEFAULT', True``, as
   the UI runs it), then Ctrl+Z pressed over the viewport; for "add chain", "edit a limit"
   (``quat_ik.limits_from_blender``) and "bake" (the modal bake the Bake button runs), then
   for every other operator that changes chains, limits or the pose (``undo_every_operator``,
   which puts back by hand what its cases' preparations changed).
   Each compares ``scene_snapshot()`` (chains, limits, pose, keys, frame) before, after the
   operator and after Ctrl+Z.
5. Blender's rotate tool on a bone with locked quaternion and axis-angle channels (4D and
   not): where it leaves the rotation is what the add-on's locks allow there.
6. (After the bakes cancelled with Esc) Tab, Symmetrize, Tab on a new rig: the copied joint
   limits get their mirror image; Ctrl+Z, Ctrl+Shift+Z. Then a chain's target empty deleted
   (X): the chain lets it go and says so; Ctrl+Z, Ctrl+Shift+Z.
7. (Last) Join an armature with a chain into the rig, Ctrl+Z and Ctrl+Shift+Z: the joined
   chain comes, goes and comes back.

Between 3 and 4, the Live chain's target is moved out of its limits' reach, on each solver
path: on numpy the update runs no restarts, and the add-on's timer solves the chain in full once
the target has rested; on the native kernel the update solves it in full.

Before the screenshots the sidebar is widened (its left edge dragged, as a user does) to
``SIDEBAR_WIDTH`` pixels, and while each screenshot's panels draw, their layouts are recorded
(``UILayout.introspect()``) with the width each text needs (``blf``), so a test can check no
label is cut short.

Everything measured goes to ``OUT_DIR/results.json``, written again after every step (and every
undo case): if the session is stopped part way, the steps it finished still count. Each step
prints ``window session: begin NAME`` and ``done NAME``, so the test knows which step was
running when a session went silent. Python errors raised while Blender draws a panel are
printed, not raised: the test scans the output.

argv: OUT_DIR
"""

from __future__ import annotations

import json
import math
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import bpy
import numpy as np
from mathutils import Euler, Vector

from tests.blender.sessions.common import addon, scene_snapshot, snapshot_difference, submodule

OUT_DIR = Path(sys.argv[1])
QUAT_IK_TAB_PANEL = "QUATIK_PT_chains"  # drawn only while the sidebar shows the Quat IK tab
DONE_MARKER = "WINDOW_SESSION_DONE"
ADDON_MODULE = addon().__name__  # "quat_ik": a legacy add-on in 3.4
BAKED_CHAINS = 12  # chains the cancelled bake solves (Esc comes after the second)
LONG_SHOT = 4000  # frames of the one chain whose solve Esc stops half way
UNDO_MARKER = "quat_ik_window_test"  # a scene custom property; undo restores it like any data

# The sidebar's width for the screenshots, in pixels (tab strip included): wide enough that no
# label of the add-on's panels is cut short (test_window_ui checks it from the recorded layouts).
SIDEBAR_WIDTH = 400

results: dict = {
    "shots": {},
    "undo": {},
    "panels_drawn": {},
    "overlay_toggle": None,
    "layouts": {},
    "steps_done": [],
    "running": None,
}
panel_draws: Counter = Counter()
record_layouts: dict | None = None  # panel name -> its introspected layout, while a screenshot is set up


def save_results() -> None:
    """Write results.json whole or not at all (the session may be stopped at any moment)."""
    partial = OUT_DIR / "results.json.partial"
    partial.write_text(json.dumps(results, indent=1, default=str))
    partial.replace(OUT_DIR / "results.json")


# ---------------------------------------------------------------- window, area, regions


def window():
    return bpy.context.window_manager.windows[0]


def view3d_area():
    return next(a for a in window().screen.areas if a.type == "VIEW_3D")


def region(area, kind: str):
    return next((r for r in area.regions if r.type == kind and r.width > 1), None)


def override():
    area = view3d_area()
    return bpy.context.temp_override(window=window(), area=area, region=region(area, "WINDOW"))


def simulate(kind: str, value: str = "PRESS", *, x: int, y: int, ctrl: bool = False) -> None:
    """One input event, as if from the keyboard or mouse (needs --enable-event-simulate)."""
    window().event_simulate(type=kind, value=value, x=x, y=y, ctrl=ctrl)


def rest_the_mouse() -> None:
    """Park the pointer over empty viewport, away from buttons (no hover highlight, no tooltip)."""
    area = view3d_area()
    tools = region(area, "TOOLS")
    left = tools.x + tools.width if tools else area.x
    simulate("MOUSEMOVE", "NOTHING", x=left + 40, y=area.y + 60)


def region_rects(area) -> dict:
    """Each region as (left, top, width, height) in pixels of the area screenshot (top-left origin)."""
    rects = {}
    for r in area.regions:
        if r.width > 1 and r.height > 1:
            rects[r.type] = (r.x - area.x, area.height - (r.y - area.y) - r.height, r.width, r.height)
    return rects


def shot(name: str) -> None:
    area = view3d_area()
    path = OUT_DIR / f"{name}.png"
    with bpy.context.temp_override(window=window(), area=area):
        bpy.ops.screen.screenshot_area(filepath=str(path))
    results["shots"][name] = {"path": str(path), "size": (area.width, area.height), "regions": region_rects(area)}
    print(f"screenshot {name}: {path}", flush=True)


def redraw_all() -> None:
    for area in window().screen.areas:
        area.tag_redraw()


def wait_until(condition, seconds: float):
    """Yield to Blender until ``condition()`` holds or ``seconds`` pass (a busy CI machine
    can take a while to handle an event or finish a modal operator)."""
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        yield 0.1


# ---------------------------------------------------------------- the add-on's side


def counting(name: str, original):
    # Exactly (self, context): Blender 3.4 sizes the call from the function's argument count,
    # and extra defaulted arguments (the usual loop-variable trick) crash it.
    def draw(self, context):
        panel_draws[name] += 1
        drawn = original(self, context)
        if record_layouts is not None and name not in record_layouts:
            record_layouts[name] = measured(self.layout.introspect())
        return drawn

    return draw


def text_width(text: str) -> float:
    """Pixels ``text`` takes in the UI's widget font at this window's scale (Blender 3.4's blf)."""
    import blf

    preferences = bpy.context.preferences
    blf.size(0, preferences.ui_styles[0].widget.points * preferences.system.dpi / 72.0)
    return blf.dimensions(0, text)[0]


def measured(items):
    """``UILayout.introspect()``'s tree with each button's text width added (``text_px``)."""
    if isinstance(items, list):
        return [measured(item) for item in items]
    item = dict(items)
    if "items" in item:
        item["items"] = measured(item["items"])
    elif item.get("draw_string"):
        item["text_px"] = text_width(item["draw_string"])
    return item


def spy_on_panels() -> None:
    """Count every draw of the add-on's panels (which tab is showing, which panels drew)."""
    for cls in addon()._registered_classes():
        if issubclass(cls, bpy.types.Panel):
            cls.draw = counting(cls.__name__, cls.draw)


def overlay_toggle():
    """(owner, property name) of the add-on's joint-limit overlay switch, or None without one.

    It is ``scene.quat_ik.show_limit_overlay`` (limits_properties.py); change this one place
    if it moves.
    """
    settings = getattr(bpy.context.scene, "quat_ik", None)
    if settings is not None and "show_limit_overlay" in settings.bl_rna.properties:
        return settings, "show_limit_overlay"
    return None


def set_overlay(on: bool) -> None:
    found = overlay_toggle()
    if found is not None:
        owner, name = found
        setattr(owner, name, on)
        results["overlay_toggle"] = f"{type(owner).__name__}.{name}"


def make_active(bone_name: str) -> None:
    ob = bpy.data.objects["Rig"]
    bpy.context.view_layer.objects.active = ob
    for bone in ob.data.bones:
        bone.select = bone.name == bone_name
    ob.data.bones.active = ob.data.bones[bone_name]


# ---------------------------------------------------------------- steps


def step(text: str) -> None:
    print(f"window session: {text}", flush=True)


def named(name: str, steps):
    """Run one step of the session, saying when it begins and ends, and save what it measured."""
    started = time.monotonic()
    results["running"] = name
    step(f"begin {name}")
    save_results()
    yield from steps
    results["steps_done"].append(name)
    results["running"] = None
    step(f"done {name} ({time.monotonic() - started:.1f} s)")
    save_results()


def set_up_window():
    step("maximize the 3D View")
    with bpy.context.temp_override(window=window(), area=view3d_area()):
        bpy.ops.screen.screen_full_area()  # Ctrl+Space: the 3D View fills the window
    yield 0.3
    step("sidebar and view")
    space = view3d_area().spaces.active
    space.show_region_ui = True
    space.show_region_toolbar = True
    view = space.region_3d
    view.view_perspective = "PERSP"
    view.view_location = Vector((1.0, 0.4, 1.6))
    view.view_rotation = Euler((math.radians(40.0), 0.0, math.radians(15.0))).to_quaternion()
    view.view_distance = 3.0
    spy_on_panels()
    redraw_all()
    yield 0.5


def widen_sidebar(width: int):
    """Drag the sidebar's left edge (where the panels start: an overlapping sidebar's edge
    zone sits a few pixels inside it) until the sidebar is ``width`` pixels wide."""
    for _attempt in range(8):
        sidebar = region(view3d_area(), "UI")
        missing = width - sidebar.width
        if abs(missing) <= 2:
            break
        x, y = sidebar.x + 8, sidebar.y + sidebar.height - 60
        simulate("MOUSEMOVE", "NOTHING", x=x + 40, y=y)
        yield 0.1
        simulate("MOUSEMOVE", "NOTHING", x=x, y=y)
        yield 0.2
        simulate("LEFTMOUSE", "PRESS", x=x, y=y)
        yield 0.1
        for k in range(1, 11):
            simulate("MOUSEMOVE", "NOTHING", x=x - round(missing * k / 10), y=y)
            yield 0.05
        simulate("LEFTMOUSE", "RELEASE", x=x - missing, y=y)
        yield 0.3
    sidebar = region(view3d_area(), "UI")
    results["sidebar"] = {"width": sidebar.width, "wanted": width, "dpi": bpy.context.preferences.system.dpi}
    if abs(sidebar.width - width) > 2:
        raise RuntimeError(f"the sidebar is {sidebar.width} px wide after dragging its edge, not {width}")
    rest_the_mouse()


def click_first_panel_header():
    """Click the header of the sidebar's first panel (collapse or expand it), as a user does."""
    sidebar = region(view3d_area(), "UI")
    x, y = sidebar.x + sidebar.width // 3, sidebar.y + sidebar.height - 16
    simulate("MOUSEMOVE", "NOTHING", x=x, y=y)
    simulate("LEFTMOUSE", "PRESS", x=x, y=y)
    simulate("LEFTMOUSE", "RELEASE", x=x, y=y)
    yield 0.3
    rest_the_mouse()


def open_quat_ik_tab():
    """Scroll the sidebar's tab strip until the Quat IK tab shows, as a user would click it."""
    for _attempt in range(12):
        panel_draws.clear()
        redraw_all()
        yield 0.4
        if panel_draws[QUAT_IK_TAB_PANEL]:
            rest_the_mouse()
            return
        sidebar = region(view3d_area(), "UI")
        x, y = sidebar.x + sidebar.width - 8, sidebar.y + sidebar.height // 2  # over the tab strip
        simulate("MOUSEMOVE", "NOTHING", x=x, y=y)
        simulate("WHEELDOWNMOUSE", x=x, y=y)
    raise RuntimeError("the sidebar never showed the Quat IK tab")


def screenshots(suffix: str = ""):
    """The three states the README shows; ``suffix`` names the add-on-disabled copies.

    The chains panel is open for the first and collapsed (a click on its header) for the
    limits editor below it, so the whole editor fits in the window. With the add-on on, each
    panel's layout is recorded as it draws for the screenshot.
    """
    global record_layouts
    for name, bone in (("panel_chain", "Hand"), ("limits_ball_polygon", "UpperArm"), ("limits_hinge", "Forearm")):
        if name == "limits_ball_polygon" and not suffix:
            yield from click_first_panel_header()
        make_active(bone)
        panel_draws.clear()
        redraw_all()
        if not suffix:
            yield from wait_until(lambda: panel_draws["QUATIK_PT_bone_limits"] > 0, 30.0)
        yield 0.5  # more redraws settle; no tooltip: the pointer rests on empty viewport
        record_layouts = {} if not suffix else None
        redraw_all()
        yield 0.5
        if record_layouts is not None:
            results["layouts"][name] = record_layouts
            record_layouts = None
        results["panels_drawn"][name + suffix] = sorted(panel_draws)
        shot(name + suffix)


def press_ctrl_z(changed_from: dict):
    area = view3d_area()
    x, y = area.x + area.width // 3, area.y + area.height // 2
    simulate("MOUSEMOVE", "NOTHING", x=x, y=y)
    simulate("Z", "PRESS", x=x, y=y, ctrl=True)
    simulate("Z", "RELEASE", x=x, y=y, ctrl=True)
    yield from wait_until(lambda: state() != changed_from, 10.0)
    yield 0.5  # and let the handlers settle


def state() -> dict:
    """``scene_snapshot()`` plus the marker ``undo_case`` leaves in the step before the operator."""
    return {**scene_snapshot(), "marker": bpy.context.scene.get(UNDO_MARKER)}


def undo_case(name: str, prepare, run, finished=lambda: True):
    """Snapshot, run an undoable operator, snapshot, Ctrl+Z, snapshot; record the differences.

    The Python edits of ``prepare`` (and a marker naming this case) become an undo step of
    their own, as a user's clicks would. Ctrl+Z must land exactly there: an operator that
    pushed no undo step would make Ctrl+Z go one step further back, and lose the marker.
    """
    prepare()
    bpy.context.scene[UNDO_MARKER] = f"before {name}"
    with override():
        bpy.ops.ed.undo_push(message=f"before {name}")
        undo_possible = bpy.ops.ed.undo.poll()
    yield 0.3
    before = state()
    with override():
        returned = run()
    yield from wait_until(finished, 20.0)  # a modal operator finishes later
    yield 0.3
    after = state()
    yield from press_ctrl_z(after)
    undone = state()
    results["undo"][name] = {
        "returned": sorted(returned),
        "undo_poll": undo_possible,
        "operator_changed": snapshot_difference(before, after),
        "left_after_undo": snapshot_difference(before, undone),
    }
    print(f"undo {name}: {results['undo'][name]}", flush=True)
    save_results()


def undo_cases():
    def add_chain():
        return bpy.ops.quat_ik.add_chain(
            "EXEC_DEFAULT", True, chain_name="Elbow", chain_length=2, target="Target", mode="LIVE"
        )

    yield from undo_case("add_chain", lambda: make_active("Forearm"), add_chain)

    def limits_from_ik_settings():
        make_active("Forearm")
        forearm = bpy.data.objects["Rig"].pose.bones["Forearm"]
        forearm.lock_ik_x = forearm.lock_ik_y = True
        forearm.use_ik_limit_z = True
        forearm.ik_min_z, forearm.ik_max_z = 0.0, math.radians(30.0)  # narrower than the pose: it moves

    def convert_limits():
        return bpy.ops.quat_ik.limits_from_blender("EXEC_DEFAULT", True, source="IK", only_active=True)

    yield from undo_case("edit_limit", limits_from_ik_settings, convert_limits)

    def keys_before_bake():
        ob = bpy.data.objects["Rig"]
        ob.quat_ik.chains["Arm"].mode = "MANUAL"  # the keys, not a live solve, hold the pose
        scene = bpy.context.scene
        scene.frame_set(1)
        for frame, turn in ((1, 0.0), (24, 0.4)):
            for pose_bone in ob.pose.bones:
                pose_bone.rotation_quaternion = Euler((turn, 0.0, turn)).to_quaternion()
                pose_bone.keyframe_insert("rotation_quaternion", frame=frame, group=pose_bone.name)
        scene.frame_set(1)

    def modal_bake():
        # What the Bake dialog's OK runs: the modal bake with a progress bar.
        return bpy.ops.quat_ik.bake("EXEC_DEFAULT", True, frame_start=1, frame_end=24, interactive=True)

    def bake_finished():
        action = bpy.data.objects["Rig"].animation_data.action
        curves = submodule("compat").all_action_fcurves(action) if action is not None else []
        return any(len(fc.keyframe_points) == 24 for fc in curves)

    yield from undo_case("bake", keys_before_bake, modal_bake, bake_finished)


def undo_every_operator():
    """Every operator that changes chains, limits or the pose, each run as the UI runs it and
    undone with Ctrl+Z (``undo_case``): Ctrl+Z must bring back exactly the state before."""

    def rig():  # looked up each time: Ctrl+Z replaces the data Python held
        return bpy.data.objects["Rig"]

    def active(bone: str, window: int | None = None):
        def prepare():
            make_active(bone)
            if window is not None:
                rig().pose.bones[bone].quat_ik.active_window_index = window

        return prepare

    def dented():
        set_overlay(False)  # a dented window cannot be drawn (the overlay says so, each redraw)
        make_active("UpperArm")
        limits = rig().pose.bones["UpperArm"].quat_ik
        window = limits.windows[limits.active_window_index]
        window.shape = "POLYGON"
        window.vertices.clear()
        for corner in ((0.6, 0.6), (0.0, 0.15), (-0.6, 0.6), (-0.6, -0.6), (0.6, -0.6)):
            window.vertices.add().angles = corner

    def with_ik_constraint():
        make_active("Forearm")  # (the Hand ends a chain already)
        constraint = rig().pose.bones["Forearm"].constraints.new("IK")
        constraint.target, constraint.chain_count = bpy.data.objects["Target"], 2

    def with_second_chain():
        make_active("Forearm")
        settings = rig().quat_ik
        chain = settings.chains.add()
        chain.name, chain.tip_bone, chain.chain_length, chain.mode = "Elbow", "Forearm", 2, "MANUAL"
        chain.target_object = bpy.data.objects["Target"]
        settings.active_chain_index = len(settings.chains) - 1

    def with_wrist_above_elbow():
        # A wrist chain listed above the elbow chain that moves its root: sorting swaps them.
        make_active("Hand")
        settings = rig().quat_ik
        for name, tip, length in (("Wrist", "Hand", 1), ("Wrist Arm", "Forearm", 2)):
            chain = settings.chains.add()
            chain.name, chain.tip_bone, chain.chain_length, chain.mode = name, tip, length, "MANUAL"
            chain.target_object = bpy.data.objects["Target"]
        settings.active_chain_index = len(settings.chains) - 2

    def select_hand_too():
        make_active("UpperArm")
        rig().data.bones["Hand"].select = True

    def hand_chain():
        chains = rig().quat_ik.chains
        return next(i for i, chain in enumerate(chains) if chain.tip_bone == "Hand")

    def arm_chain(prepare_more=None):
        def prepare():
            make_active("Hand")
            rig().quat_ik.active_chain_index = hand_chain()
            if prepare_more is not None:
                prepare_more()

        return prepare

    def target_out_of_reach():
        chain = rig().quat_ik.chains[hand_chain()]
        chain.target_object.location = (4.0, -3.0, 5.0)  # the tip stops short: snapping moves it

    def posed_by_hand():
        rig().quat_ik.chains[hand_chain()].mode = "MANUAL"
        rig().pose.bones["UpperArm"].rotation_quaternion = Euler((0.5, 0.2, -0.4)).to_quaternion()

    def run(name: str, **options):
        return lambda: getattr(bpy.ops.quat_ik, name)("EXEC_DEFAULT", True, **options)

    cases = (
        ("window_add", active("UpperArm"), run("window_add", shape="ELLIPTIC_CONE")),
        ("window_remove", active("UpperArm", 0), run("window_remove")),
        ("window_to_polygon", active("Hand", 0), run("window_to_polygon", sides=8)),
        ("polygon_vertex_add", active("UpperArm", 0), run("polygon_vertex_add")),
        ("polygon_vertex_remove", active("UpperArm", 0), run("polygon_vertex_remove")),
        ("window_shape_preset", active("Hand", 0), run("window_shape_preset", shape="ELLIPTIC_CONE")),
        ("limits_reset", active("Forearm"), run("limits_reset")),
        ("limits_copy_to_selected", select_hand_too, run("limits_copy_to_selected")),
        ("apply_limit_preset", active("Forearm"), run("apply_limit_preset", preset="elbow")),
        ("limits_fit_from_action", active("Forearm"), run("limits_fit_from_action")),
        ("from_ik_constraint", with_ik_constraint, run("from_ik_constraint")),
        ("move_chain", with_second_chain, run("move_chain", direction="UP")),
        ("sort_chains", with_wrist_above_elbow, run("sort_chains")),
        ("remove_chain", arm_chain(), run("remove_chain")),
        ("snap_target", arm_chain(target_out_of_reach), run("snap_target")),
        ("add_pole", arm_chain(), run("add_pole")),
        ("solve", arm_chain(posed_by_hand), run("solve", chains="ACTIVE", from_rest=True)),
        # Last: the dented window they start from leaves the chain unsolvable until put back.
        ("polygon_make_convex", dented, run("polygon_make_convex")),
        ("polygon_split_convex", dented, run("polygon_split_convex")),
    )
    # What the cases' preparations change (not undone: each case's Ctrl+Z stops before the
    # operator), put back afterwards for the steps that follow.
    window = rig().pose.bones["UpperArm"].quat_ik.windows[0]
    kept = {
        "window": (window.shape, [tuple(vertex.angles) for vertex in window.vertices]),
        "target": tuple(bpy.data.objects["Target"].location),
        "chains": [chain.name for chain in rig().quat_ik.chains],
        "modes": {chain.name: chain.mode for chain in rig().quat_ik.chains},
        "upper_arm": tuple(rig().pose.bones["UpperArm"].rotation_quaternion),
    }
    for name, prepare, operator in cases:
        try:
            yield from undo_case(f"every:{name}", prepare, operator)
        except RuntimeError as error:  # the operator refused: recorded, the test says which
            results["undo"][f"every:{name}"] = {"refused": str(error)}
    window = rig().pose.bones["UpperArm"].quat_ik.windows[0]
    window.shape = kept["window"][0]
    window.vertices.clear()
    for corner in kept["window"][1]:
        window.vertices.add().angles = corner
    bpy.data.objects["Target"].location = kept["target"]
    for constraint in [c for c in rig().pose.bones["Forearm"].constraints if c.type == "IK"]:
        rig().pose.bones["Forearm"].constraints.remove(constraint)
    chains = rig().quat_ik.chains
    for index in reversed(range(len(chains))):
        if chains[index].name not in kept["chains"]:
            chains.remove(index)
    for chain in chains:
        chain.mode = kept["modes"][chain.name]
    rig().quat_ik.active_chain_index = 0
    rig().pose.bones["UpperArm"].rotation_quaternion = kept["upper_arm"]
    set_overlay(True)
    yield 0.5


# Lock settings for the rotate tool: (rotation mode, X/Y/Z locked, W locked, 4D, start).
TURNED = (0.9, 0.3, -0.2, 0.25)
# Its XYZ Euler triple with the middle angle within ±90° is not the smaller: Blender locks the other.
FAR_TURNED = tuple(Euler((2.8, 0.3, 2.9), "XYZ").to_quaternion())
TOOL_LOCKS = [
    ("QUATERNION", (True, False, False), False, False, TURNED),  # not 4D: Blender locks the XYZ Euler X
    ("QUATERNION", (True, False, False), False, False, FAR_TURNED),
    ("AXIS_ANGLE", (True, True, False), False, False, TURNED),
    ("QUATERNION", (True, False, True), False, True, TURNED),  # 4D: raw x and z
    ("QUATERNION", (True, True, True), False, True, TURNED),  # 4D, W free: a hinge about the held axis
    ("AXIS_ANGLE", (False, False, False), True, True, TURNED),  # 4D: the angle
    ("AXIS_ANGLE", (False, True, False), True, True, TURNED),
]


def rotate_tool_locks():
    """Rotate the hand with Blender's own rotate tool under each lock setting and measure how
    far the result is outside what the add-on allows there (``locks.apply_partial_locks``);
    the tool's result without the locks shows the measure can fail."""
    locks, rotation_modes = submodule("rig.locks"), submodule("rig.rotation_modes")
    free_joint = sys.modules[f"{ADDON_MODULE}.solver.limits.joints"].FreeJoint()
    pose_bone = bpy.data.objects["Rig"].pose.bones["Hand"]
    make_active("Hand")
    results["rotate_tool_locks"] = []
    for mode, locked, lock_w, four_d, start in TOOL_LOCKS:
        ends = []
        for use_locks in (True, False):
            pose_bone.rotation_mode = "QUATERNION"
            pose_bone.rotation_quaternion = start
            pose_bone.rotation_mode = mode  # Blender converts the rotation into the new mode
            pose_bone.lock_rotation, pose_bone.lock_rotation_w = locked, lock_w
            pose_bone.lock_rotations_4d = four_d
            joint = locks.apply_partial_locks(pose_bone, free_joint)
            if not use_locks:
                pose_bone.lock_rotation, pose_bone.lock_rotation_w = (False,) * 3, False
            with override():
                for axis, angle in (("X", 0.4), ("Y", 0.3), ("Z", 0.5)):
                    bpy.ops.transform.rotate(value=angle, orient_axis=axis, orient_type="GLOBAL")
            ends.append(tuple(rotation_modes.current_quaternion(pose_bone)))
        with_locks, without = np.array(ends[0]), np.array(ends[1])
        moved = float(
            np.degrees(2.0 * np.arccos(min(1.0, abs(float(np.dot(with_locks, start / np.linalg.norm(start)))))))
        )
        results["rotate_tool_locks"].append(
            {
                "setting": [mode, locked, lock_w, four_d, start],
                "tool_outside_deg": float(np.degrees(joint.violation(with_locks[None])[0])),
                "free_outside_deg": float(np.degrees(joint.violation(without[None])[0])),
                "moved_deg": moved,
            }
        )
        if getattr(joint, "smallest", False):  # Blender's Euler triple rule, against the other one
            # The locked angles set in the triple whose middle angle is within ±90° instead.
            euler_math = __import__(f"{ADDON_MODULE}.solver.euler_angles", fromlist=["euler_angles"])
            first = euler_math.quaternion_to_euler(with_locks[None], joint.order)
            held_axes = np.array(joint.locked)
            first[:, held_axes] = np.asarray(joint.values)[held_axes]
            other_rule = euler_math.euler_to_quaternion(first, joint.order)[0]
            results["rotate_tool_locks"][-1]["other_triple_outside_deg"] = float(
                np.degrees(2.0 * np.arccos(min(1.0, abs(float(np.dot(other_rule, with_locks))))))
            )
    pose_bone.lock_rotation, pose_bone.lock_rotation_w = (False,) * 3, False
    pose_bone.rotation_mode = "QUATERNION"
    pose_bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    yield 0.2


def live_rest():
    """Drag the Live chain's target where its limits cannot reach, on each solver path. On
    numpy the update runs no restarts and leaves the full solve waiting; once the target rests,
    the add-on's timer runs it. On the native kernel the update itself solves in full (restarts
    and all) and nothing is left waiting."""
    library = sys.modules[f"{ADDON_MODULE}.solver.native.library"]
    results["live_rest"] = {}
    for path in ("numpy", "native"):
        library.set_preference(path == "native")
        try:
            yield from drag_out_of_reach(path)
        finally:
            library.set_preference(True)
    chain = bpy.data.objects["Rig"].quat_ik.chains["Arm"]
    # Solved once more where it already reaches, so its status reads as after an undo (which
    # forgets what was solved: the first update after one solves again, in no iteration).
    chain.iterations = chain.iterations
    yield 0.5
    bpy.ops.ed.undo_push(message="Live rest test")  # Ctrl+Z in the undo cases comes back here


def drag_out_of_reach(path: str):
    ob, target = bpy.data.objects["Rig"], bpy.data.objects["Target"]
    chain = ob.quat_ik.chains["Arm"]
    runtime = submodule("runtime.state").session
    seen = []

    def watch(_scene, _depsgraph=None):  # runs after the add-on's handler
        seen.append((chain.status_restarts, chain.status_converged, ob.name_full in runtime.resting_due))

    bpy.app.handlers.depsgraph_update_post.append(watch)
    rested_before = runtime.stats["resting_solves"]
    home = tuple(target.location)
    target.location = (-1.0, 0.0, 1.5)  # behind the shoulder: no window lets the arm point there
    if path == "numpy":
        yield from wait_until(lambda: runtime.stats["resting_solves"] > rested_before, 30.0)
    else:  # nothing should wait: give a resting solve time to happen if one were due
        yield from wait_until(lambda: bool(seen), 30.0)
        yield 1.0
    bpy.app.handlers.depsgraph_update_post.remove(watch)
    results["live_rest"][path] = {
        "first_update": seen[0] if seen else None,
        "resting_solves": runtime.stats["resting_solves"] - rested_before,
        "restarts_after_rest": chain.status_restarts,
        "waiting_after_rest": ob.name_full in runtime.resting_due,
    }
    print(f"live rest on {path}: {results['live_rest'][path]}", flush=True)
    target.location = home
    yield 0.5


def key_target(frames, place_at) -> None:
    """Key the target at ``frames`` where ``place_at(frame, home)`` puts it, then back home at frame 1."""
    target = bpy.data.objects["Target"]
    home = tuple(target.location)
    for frame in frames:
        target.location = place_at(frame, home)
        target.keyframe_insert("location", frame=frame)
    target.location = home
    bpy.context.scene.frame_set(1)


def watch_bake(press_esc_when, seconds: float = 60.0):
    """Poll the running modal bake's progress every event loop until it ends (or ``seconds``
    pass), pressing Esc over the viewport once ``press_esc_when(phase, fraction)`` holds.
    Returns the (phase, fraction) steps seen and whether Esc was pressed."""
    runtime = submodule("runtime.state").session
    seen, pressed, polls = [], False, set()
    for _ in range(int(seconds / 0.003)):
        progress = dict(runtime.bake_progress)
        if not progress:
            break
        if not seen or seen[-1] != (progress["phase"], progress["fraction"]):
            seen.append((progress["phase"], progress["fraction"]))
            polls.add((progress["phase"], round(progress.get("poll_s", 0.0), 3)))
        if not pressed and press_esc_when(progress["phase"], progress["fraction"]):
            area = view3d_area()
            simulate("ESC", "PRESS", x=area.x + area.width // 2, y=area.y + area.height // 2)
            simulate("ESC", "RELEASE", x=area.x + area.width // 2, y=area.y + area.height // 2)
            pressed = True
        yield 0.0
    yield 0.3
    results.setdefault("bake_polls", []).extend(sorted(polls))
    return seen, pressed


def cancel_bake_while_solving():
    """The modal bake of many chains: Blender gets control back after each chain is solved
    (the progress moves chain by chain), and Esc pressed while it solves cancels it with the
    scene as it was."""
    ob = bpy.data.objects["Rig"]
    ob.quat_ik.chains["Arm"].mode = "MANUAL"
    make_active("Hand")
    with override():
        for i in range(BAKED_CHAINS - 1):
            bpy.ops.quat_ik.add_chain(chain_name=f"Arm {i}", chain_length=3, target="Target", mode="MANUAL")
    # The target circles in reach, so every frame solves.
    key_target(
        range(1, 241, 20), lambda f, home: (home[0], home[1] + 0.3 * math.sin(f / 20), home[2] + 0.3 * math.cos(f / 20))
    )
    yield 0.3
    runtime = submodule("runtime.state").session
    before = state()
    with override():
        returned = bpy.ops.quat_ik.bake("EXEC_DEFAULT", True, frame_start=1, frame_end=240, interactive=True)
    seen, _pressed = yield from watch_bake(lambda phase, done: phase == "solve" and 2.0 / BAKED_CHAINS <= done < 1.0)
    results["cancel_bake"] = {
        "returned": sorted(returned),
        "seen": seen,
        "running_after": dict(runtime.bake_progress),
        "changed": snapshot_difference(before, state()),
    }
    print(f"cancel bake: {results['cancel_bake']}", flush=True)

    # A bug inside the bake (here: solving raises) ends it with nothing changed and no
    # progress bar or timer left running.
    bake_module = submodule("bake.bake")
    solve_steps = bake_module.Bake.solve_steps

    def broken(_job, _threaded=False):
        raise RuntimeError("solver bug for the test")
        yield  # (a generator, as the real one)

    bake_module.Bake.solve_steps = broken
    try:
        before = state()
        with override():
            returned = bpy.ops.quat_ik.bake("EXEC_DEFAULT", True, frame_start=1, frame_end=240, interactive=True)
        yield from wait_until(lambda: not runtime.bake_progress, 20.0)
        yield 0.3
    finally:
        bake_module.Bake.solve_steps = solve_steps
    results["failed_bake"] = {
        "returned": sorted(returned),
        "running_after": dict(runtime.bake_progress),
        "changed": snapshot_difference(before, state()),
    }
    print(f"failed bake: {results['failed_bake']}", flush=True)


def stop_a_long_solve():
    """One chain over a long shot whose target keeps leaving what the limits reach (behind
    the shoulder): the bake solves it in a worker thread, so the window stays live and the
    progress moves within the chain; Esc stops the solve at its next step, and the scene is
    as it was, with no thread left running. The solve runs on numpy here: the native kernel
    finishes this shot before the window could show it half way (Esc is checked between the
    solver's steps alike on both paths)."""
    import threading

    key_target(range(1, LONG_SHOT + 1, 40), lambda f, home: (-1.0, 0.2 * math.sin(f), 1.5) if (f // 40) % 2 else home)
    yield 0.3
    runtime = submodule("runtime.state").session
    library = sys.modules[f"{addon().__name__}.solver.native.library"]
    before = state()
    library.set_preference(False)
    try:
        with override():
            returned = bpy.ops.quat_ik.bake(
                "EXEC_DEFAULT", True, chain_name="Arm", frame_start=1, frame_end=LONG_SHOT, interactive=True
            )
        seen, pressed = yield from watch_bake(lambda phase, done: phase == "solve" and 0.0 < done < 1.0)
    finally:
        library.set_preference(True)
    results["stop_long_solve"] = {
        "returned": sorted(returned),
        "seen": seen,
        "esc_pressed": pressed,
        "running_after": dict(runtime.bake_progress),
        "threads_after": [thread.name for thread in threading.enumerate()],
        "changed": snapshot_difference(before, state()),
    }
    print(f"stop long solve: {results['stop_long_solve']}", flush=True)


def undo_then_redo(record: dict, read, **after_undo):
    """Ctrl+Z, then Ctrl+Shift+Z (through the API, in the window): ``read()`` after each goes to
    ``record`` as "undone" and "redone", and each of ``after_undo``'s readings after the undo."""
    with override():
        bpy.ops.ed.undo()
    yield 0.5
    record["undone"] = read()
    record.update({name: reading() for name, reading in after_undo.items()})
    with override():
        bpy.ops.ed.redo()
    yield 0.5
    record["redone"] = read()


def symmetrize_limits():
    """Tab, Symmetrize, Tab, as a user runs them: the joint limits Symmetrize copied to the
    right side get their mirror image (reported in the window); then Ctrl+Z and Ctrl+Shift+Z."""
    from tests.blender.sessions.common import make_rig

    def twists() -> dict:
        limits = submodule("limits.conversion")
        return {
            bone.name: [round(angle, 3) for angle in limits.spec_limit(bone.quat_ik).twist_deg]
            for bone in bpy.data.objects["SymRig"].pose.bones
        }

    with override():
        bpy.ops.object.mode_set(mode="OBJECT")
    rig = make_rig("SymRig", [((0.2, -2.0, 1.5), (0.9, -2.0, 1.7))])
    rig.data.bones["B0"].name = "upper.L"
    limits = rig.pose.bones["upper.L"].quat_ik
    limits.joint_type, limits.use_twist_range = "BALL", True
    limits.twist_min, limits.twist_max = math.radians(-20.0), math.radians(45.0)
    stats = submodule("runtime.state").session.stats
    reported_before = stats["news_reported"]
    with override():
        bpy.ops.object.mode_set("EXEC_DEFAULT", True, mode="OBJECT")
        bpy.ops.object.mode_set("EXEC_DEFAULT", True, mode="EDIT")
    yield 0.3
    for bone in rig.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = True
    with override():
        bpy.ops.armature.symmetrize("EXEC_DEFAULT", True)
    yield 0.3
    with override():
        bpy.ops.object.mode_set("EXEC_DEFAULT", True, mode="OBJECT")
    yield from wait_until(lambda: stats["news_reported"] > reported_before, 5.0)
    mirrored, _problem = submodule("operators.limit_tools").mirrored_limit(rig.pose.bones["upper.L"], "upper.R")
    record = {"expected_right": [round(angle, 3) for angle in mirrored.twist_deg], "symmetrized": twists()}
    record["news_reported"] = stats["news_reported"] - reported_before
    yield from undo_then_redo(record, lambda: twists() if bpy.data.objects["SymRig"].mode != "EDIT" else "edit mode")
    results["symmetrize"] = record
    print(f"symmetrize: {record}", flush=True)


def delete_target_undo():
    """Delete a chain's target empty (X, as the Delete operator runs): the chain lets it go, as a
    Blender constraint does, so it is not kept for ever; Ctrl+Z brings both back, Ctrl+Shift+Z
    deletes it again. Uses the rig ``symmetrize_limits`` made."""
    rig = bpy.data.objects["SymRig"]
    doomed = bpy.data.objects.new("Doomed", None)
    bpy.context.scene.collection.objects.link(doomed)
    chain = rig.quat_ik.chains.add()
    chain.name, chain.tip_bone, chain.chain_length, chain.target_object = "SymArm", "upper.L", 1, doomed
    with override():
        bpy.ops.object.mode_set(mode="OBJECT")
        bpy.ops.ed.undo_push(message="before delete")
    yield 0.3

    def target() -> list:
        chain = bpy.data.objects["SymRig"].quat_ik.chains["SymArm"]
        held = chain.target_object
        return [held.name if held else None, held.users_collection != () if held else None]

    record = {"before": target()}
    stats = submodule("runtime.state").session.stats
    reported_before = stats["news_reported"]
    for ob in bpy.data.objects:
        ob.select_set(ob.name == "Doomed")
    with override():
        record["returned"] = sorted(bpy.ops.object.delete("EXEC_DEFAULT", True))
    yield from wait_until(lambda: stats["news_reported"] > reported_before, 5.0)
    record["news_reported"] = stats["news_reported"] - reported_before
    record["deleted"] = target()
    record["users_after_delete"] = bpy.data.objects["Doomed"].users if "Doomed" in bpy.data.objects else None
    yield from undo_then_redo(record, target)
    results["delete_target"] = record
    print(f"delete target: {record}", flush=True)


def join_undo_redo():
    """Join a second armature with a chain into the rig (Ctrl+J), then undo and redo (as
    Ctrl+Z and Ctrl+Shift+Z run them): the joined chain is listed after the join, gone with the undo (both
    armatures back as they were), listed again after the redo (the step Join pushed is the
    one before the add-on listed it). Last in the session: it leaves the rig joined."""
    from tests.blender.sessions.common import make_rig

    def chains() -> list[str]:
        return sorted(chain.name for chain in bpy.data.objects["Rig"].quat_ik.chains)

    with override():
        bpy.ops.object.mode_set(mode="OBJECT")
    other = make_rig("Other", [((0.0, 1.0, 1.5), (0.9, 1.0, 1.5)), ((0.9, 1.0, 1.5), (1.7, 1.0, 1.5))])
    chain = other.quat_ik.chains.add()
    chain.name, chain.tip_bone, chain.chain_length, chain.target_object = (
        "OtherArm",
        "B1",
        2,
        bpy.data.objects["Target"],
    )
    with override():
        bpy.ops.object.mode_set(mode="OBJECT")
    rig = bpy.data.objects["Rig"]
    for ob in bpy.data.objects:
        ob.select_set(ob in (rig, other))
    bpy.context.view_layer.objects.active = rig
    bpy.context.scene[UNDO_MARKER] = "before join"
    with override():
        bpy.ops.ed.undo_push(message="before join")
    yield 0.3
    before, listed = state(), chains()
    stats = submodule("runtime.state").session.stats
    reported_before = stats["news_reported"]
    with override():
        returned = bpy.ops.object.join("EXEC_DEFAULT", True)
    yield from wait_until(lambda: stats["news_reported"] > reported_before, 5.0)
    yield 0.3
    record = {"returned": sorted(returned), "before": listed, "joined": chains()}
    record["news_reported"] = stats["news_reported"] - reported_before  # the status bar's line
    yield from undo_then_redo(
        record,
        chains,
        left_after_undo=lambda: snapshot_difference(before, state()),
        other_back=lambda: "Other" in bpy.data.objects and bool(bpy.data.objects["Other"].users_collection),
    )
    results["join"] = record
    print(f"join: {record}", flush=True)


def set_addon_enabled(enabled: bool):
    operator = bpy.ops.preferences.addon_enable if enabled else bpy.ops.preferences.addon_disable
    results["enabled" if enabled else "disabled"] = sorted(operator(module=ADDON_MODULE))
    redraw_all()
    yield 0.5


def overlay_on():
    set_overlay(True)
    yield 0.0


def disabled_screenshots():
    yield from set_addon_enabled(False)
    rest_the_mouse()
    yield from screenshots("_disabled")
    yield from set_addon_enabled(True)


def session():
    """Every step, in order; ``named`` records each one as done (tests/window/conftest.py maps
    the results each test reads to the step that makes them)."""
    yield from named("set_up_window", set_up_window())
    yield from named("widen_sidebar", widen_sidebar(SIDEBAR_WIDTH))
    yield from named("open_quat_ik_tab", open_quat_ik_tab())
    yield from named("overlay_on", overlay_on())
    yield from named("screenshots", screenshots())
    yield from named("disabled_screenshots", disabled_screenshots())
    yield from named("live_rest", live_rest())
    yield from named("undo_cases", undo_cases())
    yield from named("undo_every_operator", undo_every_operator())
    yield from named("rotate_tool_locks", rotate_tool_locks())
    yield from named("cancel_bake_while_solving", cancel_bake_while_solving())
    yield from named("stop_a_long_solve", stop_a_long_solve())
    yield from named("symmetrize_limits", symmetrize_limits())
    yield from named("delete_target_undo", delete_target_undo())
    yield from named("join_undo_redo", join_undo_redo())


steps = session()


def tick():
    try:
        return next(steps)
    except StopIteration:
        pass
    except Exception:
        traceback.print_exc()
        results["error"] = traceback.format_exc()
    save_results()
    print(DONE_MARKER, flush=True)
    bpy.ops.wm.quit_blender()
    return None


bpy.app.timers.register(tick, first_interval=1.0)
