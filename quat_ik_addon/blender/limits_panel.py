"""Sidebar panel for the active pose bone's joint limits (the Quat IK tab).

Enough to set a hinge (axis, range), a ball (cone, elliptic cone or polygon windows, twist
range), fixed or free, and stiffness. Presets, mirroring and drawing windows in the
viewport belong to a later issue and will live here too.
"""

from __future__ import annotations

import bpy


class QUATIK_UL_windows(bpy.types.UIList):
    """Reach windows of a ball joint."""

    bl_idname = "QUATIK_UL_windows"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        layout.prop(item, "shape", text=f"Window {index + 1}", emboss=False)


class QUATIK_UL_polygon_vertices(bpy.types.UIList):
    """Corners of a polygon window as (X, Z) swing angles."""

    bl_idname = "QUATIK_UL_polygon_vertices"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.label(text=f"{index + 1}")
        row.prop(item, "angles", text="")


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
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.prop(limits, "joint_type")
        kind = limits.joint_type
        if kind == "HINGE":
            self._draw_hinge(layout, limits)
        elif kind == "BALL":
            self._draw_ball(layout, limits)
        if kind != "FIXED":
            layout.prop(limits, "stiffness")
        row = layout.row(align=True)
        row.operator("quat_ik.limits_from_blender", text="From IK Limits").source = "IK"
        row.operator("quat_ik.limits_from_blender", text="From Limit Rotation").source = "LIMIT_ROTATION"

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

    @staticmethod
    def _draw_ball(layout, limits) -> None:
        layout.label(text="Reach Windows (none: swing is free)")
        row = layout.row()
        row.template_list("QUATIK_UL_windows", "", limits, "windows", limits, "active_window_index", rows=2)
        col = row.column(align=True)
        col.operator_menu_enum("quat_ik.window_add", "shape", icon="ADD", text="")
        col.operator("quat_ik.window_remove", icon="REMOVE", text="")
        if 0 <= limits.active_window_index < len(limits.windows):
            window = limits.windows[limits.active_window_index]
            box = layout.box()
            box.prop(window, "center")
            if window.shape == "CONE":
                box.prop(window, "half_angle")
            else:
                if window.shape == "ELLIPTIC_CONE":
                    box.prop(window, "half_angles", text="Half-Angles X, Z")
                else:
                    row = box.row()
                    row.template_list(
                        "QUATIK_UL_polygon_vertices", "", window, "vertices", window, "active_vertex_index", rows=4
                    )
                    col = row.column(align=True)
                    col.operator("quat_ik.polygon_vertex_add", icon="ADD", text="")
                    col.operator("quat_ik.polygon_vertex_remove", icon="REMOVE", text="")
                box.prop(window, "use_x_axis")
                if window.use_x_axis:
                    box.prop(window, "x_axis")
        layout.prop(limits, "use_twist_range")
        if limits.use_twist_range:
            col = layout.column(align=True)
            col.prop(limits, "twist_min")
            col.prop(limits, "twist_max")


CLASSES = (QUATIK_UL_windows, QUATIK_UL_polygon_vertices, QUATIK_PT_bone_limits)
