"""Sidebar panels for joint limits (the Quat IK tab), and the Pose > Quat IK Joint Limits menu.

* "Joint Limits": the active pose bone's limit — a hinge (axis, range), a ball (cone,
  elliptic cone or polygon windows with shape presets and an editable corner list, twist
  range), fixed or free, and stiffness — with the anatomical presets
  (``operators/presets.py``), copy, mirror and reset (``operators/limit_tools.py``), fit
  from an action (``operators/fit_limits.py``), the window shapes (``operators/windows.py``).
  An invalid limit says why.
* "Joint Limit Overlay": the viewport drawing's switch and options (``scene.quat_ik``).
* "Rig Limits": import and export of the whole armature's limits as a rig spec file
  (``operators/rig_limits.py``).

The menu puts every tool in Pose mode's header menu, which is also how F3 search finds them.
"""

from __future__ import annotations

import math
import textwrap

import bpy


class QUATIK_UL_windows(bpy.types.UIList):
    """Reach windows of a ball joint."""

    bl_idname = "QUATIK_UL_windows"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        shape = item.bl_rna.properties["shape"].enum_items[item.shape]
        corners = f" ({len(item.vertices)} corners)" if item.shape == "POLYGON" else ""
        layout.label(text=f"{index + 1}. {shape.name}{corners}", icon=shape.icon)


class QUATIK_UL_polygon_vertices(bpy.types.UIList):
    """Corners of a polygon window as swing angles toward the window plane's X and Z axes (degrees)."""

    bl_idname = "QUATIK_UL_polygon_vertices"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        x, z = (math.degrees(a) for a in item.angles)
        layout.label(text=f"{index + 1}.  {x:.1f}°,  {z:.1f}°")


class QUATIK_PT_bone_limits(bpy.types.Panel):
    """Joint limits of the active pose bone, shared by every chain through it"""

    bl_label = "Joint Limits"
    bl_idname = "QUATIK_PT_bone_limits"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Quat IK"

    @classmethod
    def poll(cls, context):
        return context.active_pose_bone is not None

    def draw_header(self, context):
        self.layout.label(text="", icon="CON_ROTLIMIT")

    def draw(self, context):
        layout = self.layout
        pose_bone = context.active_pose_bone
        limits = pose_bone.quat_ik
        layout.label(text=pose_bone.name, icon="BONE_DATA")
        if getattr(pose_bone.id_data, "override_library", None) is not None:
            # An override cannot keep limit changes (``overrides``): shown, not editable.
            layout.label(text="Library override: the limits come with the rig", icon="LIBRARY_DATA_OVERRIDE")
            layout.enabled = False
        layout.use_property_split = True
        layout.use_property_decorate = False
        row = layout.row(align=True)
        row.prop(limits, "joint_type")
        row.menu("QUATIK_MT_limit_presets", text="", icon="PRESET")
        kind = limits.joint_type
        if kind == "HINGE":
            self._draw_hinge(layout, limits)
        elif kind == "BALL":
            self._draw_ball(layout, limits)
        if kind != "FIXED":
            layout.prop(limits, "stiffness")
        _draw_stretch(layout, limits)
        _draw_problem(layout, pose_bone)
        row = layout.row(align=True)
        row.operator("quat_ik.limits_from_blender", text="From IK Limits").source = "IK"
        row.operator("quat_ik.limits_from_blender", text="From Limit Rotation").source = "LIMIT_ROTATION"
        col = layout.column(align=True)
        row = col.row(align=True)
        row.operator("quat_ik.limits_copy_to_selected", text="Copy to Selected", icon="COPYDOWN")
        row.operator("quat_ik.limits_mirror", text="Mirror", icon="MOD_MIRROR")
        row = col.row(align=True)
        row.operator("quat_ik.limits_fit_from_action", text="Fit from Action…", icon="ACTION")
        row.operator("quat_ik.limits_reset", text="Reset", icon="LOOP_BACK")

    @staticmethod
    def _draw_hinge(layout, limits) -> None:
        layout.prop(limits, "hinge_axis")
        if limits.hinge_axis == "CUSTOM":
            layout.prop(limits, "hinge_custom_axis")
        layout.prop(limits, "use_hinge_range")
        if limits.use_hinge_range:
            col = layout.column(align=True)
            col.prop(limits, "hinge_min")
            col.prop(limits, "hinge_max")
            _draw_range_note(col, limits.hinge_min, limits.hinge_max)

    @staticmethod
    def _draw_ball(layout, limits) -> None:
        layout.label(text="Reach Windows")
        row = layout.row()
        row.template_list("QUATIK_UL_windows", "", limits, "windows", limits, "active_window_index", rows=2)
        if not limits.windows:
            layout.label(text="No window: the bone may point anywhere", icon="INFO")
        col = row.column(align=True)
        col.operator_menu_enum("quat_ik.window_add", "shape", icon="ADD", text="")
        col.operator("quat_ik.window_remove", icon="REMOVE", text="")
        col.separator()
        col.operator_menu_enum("quat_ik.window_shape_preset", "shape", icon="PRESET", text="")
        if 0 <= limits.active_window_index < len(limits.windows):
            window = limits.windows[limits.active_window_index]
            box = layout.box()
            box.prop(window, "center")
            if window.shape == "CONE":
                box.prop(window, "half_angle")
                box.operator("quat_ik.window_to_polygon", text="To Polygon", icon="MESH_DATA")
            else:
                if window.shape == "ELLIPTIC_CONE":
                    box.prop(window, "half_angles", text="Half-Angles X, Z")
                    box.operator("quat_ik.window_to_polygon", text="To Polygon", icon="MESH_DATA")
                else:
                    box.label(text="Corners (swing toward X, Z)")
                    row = box.row()
                    row.template_list(
                        "QUATIK_UL_polygon_vertices", "", window, "vertices", window, "active_vertex_index", rows=4
                    )
                    col = row.column(align=True)
                    col.operator("quat_ik.polygon_vertex_add", icon="ADD", text="")
                    col.operator("quat_ik.polygon_vertex_remove", icon="REMOVE", text="")
                    col.separator()
                    col.operator("quat_ik.polygon_make_convex", icon="MESH_DATA", text="")
                    col.operator("quat_ik.polygon_split_convex", icon="MOD_EXPLODE", text="")
                    if 0 <= window.active_vertex_index < len(window.vertices):
                        corner = window.vertices[window.active_vertex_index]
                        col = box.column(align=True)
                        col.prop(corner, "angles", index=0, text=f"Corner {window.active_vertex_index + 1} X")
                        col.prop(corner, "angles", index=1, text="Z")
                box.prop(window, "use_x_axis")
                if window.use_x_axis:
                    box.prop(window, "x_axis")
        layout.prop(limits, "use_twist_range")
        if limits.use_twist_range:
            col = layout.column(align=True)
            col.prop(limits, "twist_min")
            col.prop(limits, "twist_max")
            _draw_range_note(col, limits.twist_min, limits.twist_max)
            if limits.use_twist_reference or tuple(limits.twist_reference) != (1.0, 0.0, 0.0, 0.0):  # a fitted preset
                col.prop(limits, "use_twist_reference")


def _draw_range_note(layout, minimum: float, maximum: float) -> None:
    """Say so when a range runs round the back of the circle (Min 150°, Max 210°)."""
    through = minimum < math.pi < maximum or minimum < -math.pi < maximum
    if through and maximum - minimum < 2.0 * math.pi:
        layout.label(text=f"Runs through ±180° ({math.degrees(maximum - minimum):.0f}° wide)", icon="INFO")


def _draw_stretch(layout, limits) -> None:
    """Stretch: used when the bone's chain is solved as a body (``solving/body_jobs.py``)."""
    layout.prop(limits, "use_stretch")
    if limits.use_stretch:
        col = layout.column(align=True)
        col.prop(limits, "stretch_min")
        col.prop(limits, "stretch_max")
        col.prop(limits, "stretch_stiffness")


def _draw_problem(layout, pose_bone) -> None:
    """Say why the bone's limits are invalid (the solver and the overlay cannot use them).
    Valid settings are checked once per distinct value: the panel redraws on every update."""
    from ..limits.conversion import cached_spec_limit

    try:
        cached_spec_limit(pose_bone.quat_ik)
    except ValueError as error:
        box = layout.box()
        box.alert = True
        for i, line in enumerate(_wrap(str(error), 44)):
            box.label(text=line, icon="ERROR" if i == 0 else "BLANK1")
        if "not convex" in str(error):  # a dented polygon: its hull, or convex pieces of it
            row = box.row(align=True)
            row.operator("quat_ik.polygon_make_convex", text="Make Convex")
            row.operator("quat_ik.polygon_split_convex", text="Split")


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, broken between words (panel labels do not wrap)."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


class QUATIK_PT_limit_overlay(bpy.types.Panel):
    """Draw joint limits in the viewport"""

    bl_label = "Joint Limit Overlay"
    bl_idname = "QUATIK_PT_limit_overlay"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Quat IK"

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "ARMATURE" and getattr(context.scene, "quat_ik", None) is not None

    def draw_header(self, context):
        self.layout.prop(context.scene.quat_ik, "show_limit_overlay", text="")

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        settings = context.scene.quat_ik
        col = layout.column()
        col.active = settings.show_limit_overlay
        col.prop(settings, "overlay_opacity")
        col.prop(settings, "overlay_chain_bones", text="Whole Chain")
        col.prop(settings, "overlay_outside_pose_mode", text="Object Mode")
        col.prop(settings, "overlay_in_front")


class QUATIK_PT_rig_limits(bpy.types.Panel):
    """Every bone's joint limits at once: import and export as a rig spec file"""

    bl_label = "Rig Limits"
    bl_idname = "QUATIK_PT_rig_limits"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Quat IK"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        ob = context.active_object
        return ob is not None and ob.type == "ARMATURE"

    def draw(self, context):
        row = self.layout.row(align=True)
        row.operator("quat_ik.import_rig_limits", text="Import…", icon="IMPORT")
        row.operator("quat_ik.export_rig_limits", text="Export…", icon="EXPORT")


class QUATIK_MT_limit_presets(bpy.types.Menu):
    """Anatomical joint limits for the active bone, fitted to its rest pose or current pose (Adjust Last Operation); right-side bones get the mirror image"""

    bl_idname = "QUATIK_MT_limit_presets"
    bl_label = "Joint Limit Presets"

    def draw(self, context):
        from ..operators.presets import LIMBS, preset_enum_items

        layout = self.layout
        layout.operator_context = "EXEC_REGION_WIN"
        for identifier, label, _description, _number in preset_enum_items(None, context):
            layout.operator("quat_ik.apply_limit_preset", text=label).preset = identifier
        layout.separator()
        layout.label(text="Selected Bones, Root to Tip")
        for identifier, (label, _description, _names, _each) in LIMBS.items():
            layout.operator("quat_ik.apply_limb_presets", text=label).limb = identifier


class QUATIK_MT_joint_limits(bpy.types.Menu):
    """Quat IK joint-limit tools for the selected bones"""

    bl_idname = "QUATIK_MT_joint_limits"
    bl_label = "Quat IK Joint Limits"

    def draw(self, context):
        layout = self.layout
        layout.menu("QUATIK_MT_limit_presets", icon="PRESET")
        layout.operator_menu_enum("quat_ik.window_shape_preset", "shape", text="Reach Window Shape")
        layout.operator("quat_ik.window_to_polygon")
        layout.operator("quat_ik.polygon_make_convex")
        layout.operator("quat_ik.polygon_split_convex")
        layout.separator()
        layout.operator("quat_ik.limits_copy_to_selected")
        layout.operator("quat_ik.limits_mirror")
        layout.operator("quat_ik.limits_reset")
        layout.operator("quat_ik.limits_fit_from_action", text="Fit Joint Limits from Action…")
        layout.separator()
        layout.operator("quat_ik.import_rig_limits", text="Import Rig Limits…")
        layout.operator("quat_ik.export_rig_limits", text="Export Rig Limits…")
        settings = getattr(context.scene, "quat_ik", None)
        if settings is not None:
            layout.separator()
            layout.prop(settings, "show_limit_overlay")


def draw_pose_menu(self, context):
    """Entry in the Pose menu (Pose Mode header)."""
    self.layout.separator()
    self.layout.menu("QUATIK_MT_joint_limits")


CLASSES = (
    QUATIK_UL_windows,
    QUATIK_UL_polygon_vertices,
    QUATIK_MT_limit_presets,
    QUATIK_MT_joint_limits,
    QUATIK_PT_bone_limits,
    QUATIK_PT_limit_overlay,
    QUATIK_PT_rig_limits,
)
