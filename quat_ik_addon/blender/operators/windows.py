"""Operators that shape the active bone's reach windows: ready-made shapes, a cone turned into
an editable polygon, and a polygon with a dent made convex (its hull) or split into convex
windows whose union is exactly its shape (``solver/limits/window_split.py``).
"""

from __future__ import annotations

import math

import bpy
import numpy as np
from bpy.props import EnumProperty, FloatProperty, FloatVectorProperty, IntProperty

from .. import compat
from ..limits.conversion import stored_degrees, write_window
from ..runtime.state import session
from .limit_tools import active_window, editable_armature, poll_pose_bone

WINDOW_PRESETS = (
    ("CONE", "Circular Cone", "An exact circular cone: the same swing limit in every direction", "MESH_CONE", 0),
    (
        "ELLIPTIC_CONE",
        "Elliptical Cone",
        "An exact elliptical cone: separate swing limits toward X and toward Z",
        "MESH_CIRCLE",
        1,
    ),
    ("RECTANGLE", "Rectangle", "A polygon of four corners: a swing range toward X and one toward Z", "MESH_PLANE", 2),
    (
        "REGULAR_POLYGON",
        "Regular Polygon",
        "A regular N-gon around the window's centre, each corner editable afterwards",
        "MESH_DATA",
        3,
    ),
)

FITS = (
    ("INSCRIBED", "Inscribed", "Corners on the circle or ellipse: the polygon allows a little less"),
    ("CIRCUMSCRIBED", "Circumscribed", "Edges touching the circle or ellipse: the polygon allows a little more"),
)


class QUATIK_OT_window_shape_preset(bpy.types.Operator):
    """Make the active reach window (or a new one) a ready-made shape"""

    bl_idname = "quat_ik.window_shape_preset"
    bl_label = "Reach Window Shape Preset"
    bl_description = (
        "Set the selected reach window (or a new one) to a circular cone, an elliptical cone, "
        "a rectangle or a regular polygon, keeping its centre"
    )
    bl_options = {"REGISTER", "UNDO"}

    shape: EnumProperty(name="Shape", description="Shape of the window", items=WINDOW_PRESETS)
    target: EnumProperty(
        name="Window",
        description="Which window takes the shape",
        items=(
            ("ACTIVE", "Selected Window", "Replace the selected window (a new one when there is none)"),
            ("NEW", "New Window", "Add a new window"),
        ),
    )
    half_angle: FloatProperty(
        name="Half-Angle",
        description="Largest swing from the centre, in every direction (circular cone, regular polygon)",
        subtype="ANGLE",
        default=math.radians(45.0),
        min=math.radians(0.1),
        max=math.pi,
    )
    half_angles: FloatVectorProperty(
        name="Half-Angles",
        description="Largest swing toward the window plane's X axis and toward its Z axis (elliptical cone)",
        size=2,
        unit="ROTATION",
        default=(math.radians(45.0), math.radians(30.0)),
        min=math.radians(0.1),
        max=math.radians(89.9),
    )
    x_range: FloatVectorProperty(
        name="X Range",
        description="Smallest and largest swing toward the window plane's X axis (rectangle)",
        size=2,
        unit="ROTATION",
        default=(math.radians(-30.0), math.radians(30.0)),
        min=math.radians(-89.9),
        max=math.radians(89.9),
    )
    z_range: FloatVectorProperty(
        name="Z Range",
        description="Smallest and largest swing toward the window plane's Z axis (rectangle)",
        size=2,
        unit="ROTATION",
        default=(math.radians(-30.0), math.radians(30.0)),
        min=math.radians(-89.9),
        max=math.radians(89.9),
    )
    sides: IntProperty(name="Sides", description="Corners of the regular polygon", default=6, min=3, max=64)
    rotation: FloatProperty(
        name="Rotation",
        description="Where the first corner sits, counter-clockwise from the plane's X axis toward Z",
        subtype="ANGLE",
        default=0.0,
    )
    fit: EnumProperty(name="Fit", description="How the polygon follows its circle", items=FITS)

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop(self, "shape")
        layout.prop(self, "target")
        if self.shape in ("CONE", "REGULAR_POLYGON"):
            layout.prop(self, "half_angle")
        if self.shape == "ELLIPTIC_CONE":
            layout.prop(self, "half_angles", text="Half-Angles X, Z")
        if self.shape == "RECTANGLE":
            layout.prop(self, "x_range")
            layout.prop(self, "z_range")
        if self.shape == "REGULAR_POLYGON":
            layout.prop(self, "sides")
            layout.prop(self, "rotation")
            layout.prop(self, "fit")

    def execute(self, context):
        from ...solver.limits import window_shapes as shapes
        from ...solver.rig import spec as spec

        pose_bone = context.active_pose_bone
        if not editable_armature(self, pose_bone.id_data):
            return {"CANCELLED"}
        limits = pose_bone.quat_ik
        existing = active_window(context) if limits.joint_type == "BALL" and self.target == "ACTIVE" else None
        center = tuple(existing.center) if existing is not None else (0.0, 1.0, 0.0)
        x_axis = tuple(existing.x_axis) if existing is not None and existing.use_x_axis else None
        deg = math.degrees
        if self.shape == "RECTANGLE":
            for label, (low, high) in (("X Range", self.x_range), ("Z Range", self.z_range)):
                if not low < high:
                    self.report(
                        {"ERROR"},
                        f"{label}: the first angle must be below the second, got {deg(low):g}° and {deg(high):g}°",
                    )
                    return {"CANCELLED"}
        try:
            if self.shape == "CONE":
                window = shapes.cone_window(stored_degrees(self.half_angle, 180.0), center)
            elif self.shape == "ELLIPTIC_CONE":
                halves = [stored_degrees(a, 90.0, open_bound=True) for a in self.half_angles]
                window = shapes.elliptic_cone_window(halves, center, x_axis)
            elif self.shape == "RECTANGLE":
                window = shapes.rectangle_window(
                    [deg(a) for a in self.x_range], [deg(a) for a in self.z_range], center, x_axis
                )
            else:
                window = shapes.regular_polygon_window(
                    deg(self.half_angle), self.sides, deg(self.rotation), center, x_axis, self.fit.lower()
                )
        except (ValueError, spec.RigSpecError) as error:
            self.report({"ERROR"}, f"Cannot make that window: {error}")
            return {"CANCELLED"}
        if limits.joint_type != "BALL":
            limits.joint_type = "BALL"  # the new window is added to any kept from an earlier ball setup
        if existing is None:
            target = limits.windows.add()
            limits.active_window_index = len(limits.windows) - 1
        else:
            target = existing
        write_window(target, window)
        session.bump()
        return {"FINISHED"}


class QUATIK_OT_window_to_polygon(bpy.types.Operator):
    """Turn the selected cone or elliptical cone into a polygon whose corners you can edit"""

    bl_idname = "quat_ik.window_to_polygon"
    bl_label = "Reach Window to Polygon"
    bl_description = "Replace the selected cone or elliptical cone by a polygon of the same shape, corner by corner"
    bl_options = {"REGISTER", "UNDO"}

    sides: IntProperty(name="Sides", description="Corners of the polygon", default=16, min=3, max=64)
    fit: EnumProperty(name="Fit", description="How the polygon follows the cone", items=FITS)

    @classmethod
    def poll(cls, context):
        window = active_window(context)
        if window is None or window.shape == "POLYGON":
            compat.poll_message(cls, "Select a cone or elliptical cone window")
            return False
        return True

    def execute(self, context):
        from ...solver.limits.window_shapes import window_as_polygon
        from ...solver.rig import spec as spec
        from ..limits.conversion import window_spec

        window = active_window(context)
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        try:
            polygon = window_as_polygon(window_spec(window), self.sides, self.fit.lower())
        except (ValueError, spec.RigSpecError) as error:
            self.report({"ERROR"}, f"Cannot make a polygon of this window: {error}")
            return {"CANCELLED"}
        write_window(window, polygon)
        session.bump()
        return {"FINISHED"}


class _PolygonTool:
    """The poll both polygon tools share: a polygon window with at least three corners."""

    @classmethod
    def poll(cls, context):
        window = active_window(context)
        if window is None or window.shape != "POLYGON" or len(window.vertices) < 3:
            compat.poll_message(cls, "Select a polygon window with at least three corners")
            return False
        return True


class QUATIK_OT_polygon_make_convex(_PolygonTool, bpy.types.Operator):
    """Drop the corners that make the selected polygon window concave"""

    bl_idname = "quat_ik.polygon_make_convex"
    bl_label = "Make Polygon Convex"
    bl_description = (
        "Keep only the corners on the convex hull of the selected polygon window (a reach window must be convex), "
        "in counter-clockwise order"
    )
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from ...solver.limits.window_shapes import convex_hull_2d

        window = active_window(context)
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        corners = [tuple(v.angles) for v in window.vertices]
        wrong = [i + 1 for i, corner in enumerate(corners) if not all(abs(a) < 0.5 * math.pi for a in corner)]
        if wrong:  # NaN, or 90° and more: no point on the window's plane
            listed = ", ".join(map(str, wrong))
            self.report({"ERROR"}, f"Corner(s) {listed} must swing less than 90° each way: fix them first")
            return {"CANCELLED"}
        hull = convex_hull_2d(np.tan(np.array(corners, dtype=np.float64)))
        if len(hull) < 3:
            self.report({"ERROR"}, "The corners lie on one line: there is no polygon to keep")
            return {"CANCELLED"}
        window.vertices.clear()
        for index in hull:
            window.vertices.add().angles = corners[int(index)]
        window.active_vertex_index = 0
        session.bump()
        self.report({"INFO"}, f"Kept {len(hull)} of {len(corners)} corners")
        return {"FINISHED"}


class QUATIK_OT_polygon_split_convex(_PolygonTool, bpy.types.Operator):
    """Split the selected polygon window, dents and all, into convex windows"""

    bl_idname = "quat_ik.polygon_split_convex"
    bl_label = "Split Polygon into Convex Windows"
    bl_description = (
        "Replace the selected polygon window, which has a dent (a reach window must be convex), by convex "
        "windows whose union is exactly its shape"
    )
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context):
        from ...solver.limits.window_split import split_polygon_window
        from ...solver.rig import spec as spec

        pose_bone = context.active_pose_bone
        limits, window = pose_bone.quat_ik, active_window(context)
        if not editable_armature(self, pose_bone.id_data):
            return {"CANCELLED"}
        corners = [tuple(math.degrees(a) for a in v.angles) for v in window.vertices]
        x_axis = tuple(window.x_axis) if window.use_x_axis else None
        try:
            pieces = split_polygon_window(corners, tuple(window.center), x_axis)
        except (ValueError, spec.RigSpecError) as error:
            self.report({"ERROR"}, f"Cannot split this polygon: {error}")
            return {"CANCELLED"}
        if len(pieces) == 1:
            self.report({"INFO"}, "The polygon is convex already: nothing to split")
            return {"CANCELLED"}
        index = limits.active_window_index
        write_window(window, pieces[0])
        for piece in pieces[1:]:
            write_window(limits.windows.add(), piece)
            limits.windows.move(len(limits.windows) - 1, index + 1)
            index += 1
        session.bump()
        self.report({"INFO"}, f"Split into {len(pieces)} convex windows")
        return {"FINISHED"}


CLASSES = (
    QUATIK_OT_window_shape_preset,
    QUATIK_OT_window_to_polygon,
    QUATIK_OT_polygon_make_convex,
    QUATIK_OT_polygon_split_convex,
)
