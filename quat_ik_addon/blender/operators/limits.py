"""Operators that edit the active bone's joint limits: windows, polygon corners, and a
starting point from Blender's own limits (per-bone IK limits or a Limit Rotation constraint).

Blender expresses limits as ranges of Euler-like angles per axis. As a starting point:
all three locked -> fixed; one axis free to move -> a hinge about it; otherwise a ball whose
Y range is the twist range and whose X and Z ranges make an elliptic cone (a rotation about
X swings the bone toward +Z, one about Z toward -X; an off-centre range tilts the cone's
centre). Blender's own IK builds its swing limit the same elliptic way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import bpy
from bpy.props import BoolProperty, EnumProperty

from .. import compat
from ..limits.settings import WINDOW_SHAPES
from ..runtime.state import session
from .limit_tools import editable_armature

MAX_HALF_ANGLE = math.radians(89.99)
MIN_HALF_ANGLE = math.radians(0.01)


@dataclass(frozen=True)
class AxisRange:
    """One axis of a Blender limit: locked, limited to [minimum, maximum] (radians), or free."""

    state: str  # "LOCKED", "LIMITED", "FREE"
    minimum: float = 0.0
    maximum: float = 0.0

    @property
    def center(self) -> float:
        return 0.5 * (self.minimum + self.maximum) if self.state == "LIMITED" else 0.0

    @property
    def half_width(self) -> float:
        if self.state == "LOCKED":
            return MIN_HALF_ANGLE
        if self.state == "FREE":
            return MAX_HALF_ANGLE
        return min(MAX_HALF_ANGLE, max(MIN_HALF_ANGLE, 0.5 * (self.maximum - self.minimum)))


def _axis(locked: bool, limited: bool, minimum: float, maximum: float) -> AxisRange:
    if locked or (limited and abs(maximum - minimum) < 1e-9):
        return AxisRange("LOCKED")
    if limited and maximum - minimum < 2.0 * math.pi:
        # A Limit Rotation range may run past ±180° (150° to 210°); ours may too, up to ±360°.
        return AxisRange("LIMITED", max(-2.0 * math.pi, minimum), min(2.0 * math.pi, maximum))
    return AxisRange("FREE")


def apply_axis_ranges(limits, x: AxisRange, y: AxisRange, z: AxisRange) -> str:
    """Set a pose bone's ``quat_ik`` limits from per-axis ranges; returns the joint type set."""
    moving = [(name, axis) for name, axis in (("X", x), ("Y", y), ("Z", z)) if axis.state != "LOCKED"]
    limits.windows.clear()
    if not moving:
        limits.joint_type = "FIXED"
        return "FIXED"
    if len(moving) == 1:
        name, axis = moving[0]
        limits.joint_type = "HINGE"
        limits.hinge_axis = name
        limits.use_hinge_range = axis.state == "LIMITED"
        if axis.state == "LIMITED":
            limits.hinge_min, limits.hinge_max = axis.minimum, axis.maximum
        return "HINGE"
    limits.joint_type = "BALL"
    limits.use_twist_reference = False  # Blender's twist is measured from the rest pose
    limits.use_twist_range = y.state != "FREE"
    if y.state != "FREE":
        limits.twist_min, limits.twist_max = (y.minimum, y.maximum) if y.state == "LIMITED" else (0.0, 0.0)
    if x.state == "FREE" and z.state == "FREE":
        return "BALL"
    window = limits.windows.add()
    window.shape = "ELLIPTIC_CONE"
    # Gnomonic centre: tan of the centre swing toward +X (a Z rotation's negative) and +Z (an X rotation).
    window.center = (math.tan(-z.center), 1.0, math.tan(x.center))
    window.half_angles = (z.half_width, x.half_width)
    limits.active_window_index = 0
    return "BALL"


def ik_limit_ranges(pose_bone) -> tuple[AxisRange, AxisRange, AxisRange]:
    """The bone's own IK limits (Bone > Inverse Kinematics) as X, Y and Z ranges."""
    return tuple(
        _axis(
            getattr(pose_bone, f"lock_ik_{a}"),
            getattr(pose_bone, f"use_ik_limit_{a}"),
            getattr(pose_bone, f"ik_min_{a}"),
            getattr(pose_bone, f"ik_max_{a}"),
        )
        for a in "xyz"
    )


def _from_limit_rotation(constraint) -> tuple[AxisRange, AxisRange, AxisRange]:
    """The constraint's X, Y and Z ranges; ValueError where a used range runs backwards."""
    for a in "xyz":
        minimum, maximum = getattr(constraint, f"min_{a}"), getattr(constraint, f"max_{a}")
        if getattr(constraint, f"use_limit_{a}") and minimum > maximum:
            raise ValueError(
                f"its {a.upper()} minimum {math.degrees(minimum):.4g}° is above its maximum "
                f"{math.degrees(maximum):.4g}°"
            )
    return tuple(
        _axis(
            False,
            getattr(constraint, f"use_limit_{a}"),
            getattr(constraint, f"min_{a}"),
            getattr(constraint, f"max_{a}"),
        )
        for a in "xyz"
    )


class QUATIK_OT_limits_from_blender(bpy.types.Operator):
    """Set Quat IK joint limits from Blender's own limits of the selected bones"""

    bl_idname = "quat_ik.limits_from_blender"
    bl_label = "Quat IK Limits from Blender Limits"
    bl_description = (
        "Convert the selected bones' IK limits (Bone > Inverse Kinematics) or Limit Rotation constraint "
        "into Quat IK joint limits, as a starting point"
    )
    bl_options = {"REGISTER", "UNDO"}

    source: EnumProperty(
        name="From",
        description="Which Blender limits to convert",
        items=(
            ("IK", "IK Limits", "The bone's own IK settings (lock and limit X, Y, Z)"),
            ("LIMIT_ROTATION", "Limit Rotation", "The bone's first Limit Rotation constraint"),
        ),
    )
    only_active: BoolProperty(
        name="Active Bone Only", description="Convert only the active bone, not every selected one"
    )

    @classmethod
    def poll(cls, context):
        if context.active_pose_bone is None:
            compat.poll_message(cls, "Select a bone in Pose Mode")
            return False
        return True

    def execute(self, context):
        bones = [context.active_pose_bone]
        if not self.only_active:
            bones += [pb for pb in (context.selected_pose_bones or ()) if pb != context.active_pose_bone]
        if not editable_armature(self, bones[0].id_data):
            return {"CANCELLED"}
        planned = []  # every bone's ranges read before any limit changes
        for pose_bone in bones:
            if self.source == "IK":
                planned.append((pose_bone, ik_limit_ranges(pose_bone)))
                continue
            constraint = next((c for c in pose_bone.constraints if c.type == "LIMIT_ROTATION"), None)
            if constraint is None:
                continue
            try:
                planned.append((pose_bone, _from_limit_rotation(constraint)))
            except ValueError as error:
                self.report({"ERROR"}, f"Limit Rotation '{constraint.name}' of '{pose_bone.name}': {error}")
                return {"CANCELLED"}
        converted = []
        for pose_bone, ranges in planned:
            kind = apply_axis_ranges(pose_bone.quat_ik, *ranges)
            converted.append(f"{pose_bone.name}: {kind.lower()}")
        if not converted:
            self.report({"ERROR"}, "None of the selected bones has a Limit Rotation constraint")
            return {"CANCELLED"}
        session.bump()
        self.report({"INFO"}, "Converted " + ", ".join(converted))
        return {"FINISHED"}


def _active_limits(context):
    pose_bone = context.active_pose_bone
    return None if pose_bone is None else pose_bone.quat_ik


class QUATIK_OT_window_add(bpy.types.Operator):
    """Add a reach window to the active bone's ball joint"""

    bl_idname = "quat_ik.window_add"
    bl_label = "Add Reach Window"
    bl_description = "Add a reach window (a cone, elliptic cone or polygon the bone must point through)"
    bl_options = {"REGISTER", "UNDO"}

    shape: EnumProperty(name="Shape", description="Shape of the new window", items=WINDOW_SHAPES)

    @classmethod
    def poll(cls, context):
        limits = _active_limits(context)
        if limits is None or limits.joint_type != "BALL":
            compat.poll_message(cls, "The active bone needs a Ball joint")
            return False
        return True

    def execute(self, context):
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        limits = _active_limits(context)
        window = limits.windows.add()
        window.shape = self.shape
        if self.shape == "POLYGON":
            for corner in ((-30.0, -30.0), (30.0, -30.0), (30.0, 30.0), (-30.0, 30.0)):
                window.vertices.add().angles = tuple(math.radians(a) for a in corner)
        limits.active_window_index = len(limits.windows) - 1
        session.bump()
        return {"FINISHED"}


class QUATIK_OT_window_remove(bpy.types.Operator):
    """Remove the selected reach window"""

    bl_idname = "quat_ik.window_remove"
    bl_label = "Remove Reach Window"
    bl_description = "Remove the selected reach window from the active bone"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        limits = _active_limits(context)
        if limits is None or not limits.windows:
            compat.poll_message(cls, "The active bone has no reach window to remove")
            return False
        return True

    def execute(self, context):
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        limits = _active_limits(context)
        index = min(limits.active_window_index, len(limits.windows) - 1)
        limits.windows.remove(index)
        limits.active_window_index = max(0, index - 1)
        session.bump()
        return {"FINISHED"}


def _active_polygon(context):
    limits = _active_limits(context)
    if limits is None or not (0 <= limits.active_window_index < len(limits.windows)):
        return None
    window = limits.windows[limits.active_window_index]
    return window if window.shape == "POLYGON" else None


# How far a new corner sits outside the edge it splits, as a share of the edge: enough that
# the corners' 32-bit storage cannot round it to a dent, far too little to see (~0.001°).
CORNER_BULGE = 1e-5


def _corner_between(window, first: int, second: int) -> tuple[float, float]:
    """A corner midway between two on the window's plane (a polygon is convex there; corners
    are the swing angles of the plane point (tan a, tan b)), nudged out by ``CORNER_BULGE``."""
    points = [(math.tan(a), math.tan(b)) for a, b in (tuple(v.angles) for v in window.vertices)]
    (ax, az), (bx, bz) = points[first], points[second]
    cx, cz = sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    mx, mz = 0.5 * (ax + bx), 0.5 * (az + bz)
    nx, nz = bz - az, ax - bx  # perpendicular to the edge, turned outward below
    if nx * (mx - cx) + nz * (mz - cz) < 0.0:
        nx, nz = -nx, -nz
    return math.atan(mx + CORNER_BULGE * nx), math.atan(mz + CORNER_BULGE * nz)


class QUATIK_OT_polygon_vertex_add(bpy.types.Operator):
    """Add a corner to the selected polygon window"""

    bl_idname = "quat_ik.polygon_vertex_add"
    bl_label = "Add Polygon Corner"
    bl_description = "Add a corner after the selected one (midway to the next), keeping the polygon convex"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        if _active_polygon(context) is None:
            compat.poll_message(cls, "Select a polygon reach window of the active bone")
            return False
        return True

    def execute(self, context):
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        window = _active_polygon(context)
        count = len(window.vertices)
        index = min(window.active_vertex_index, count - 1) if count else -1
        corner = _corner_between(window, index, (index + 1) % count) if count >= 2 else None
        new = window.vertices.add()
        if corner is not None:
            new.angles = corner
            window.vertices.move(count, index + 1)
            window.active_vertex_index = index + 1
        else:
            window.active_vertex_index = count
        session.bump()
        return {"FINISHED"}


class QUATIK_OT_polygon_vertex_remove(bpy.types.Operator):
    """Remove the selected corner of the polygon window"""

    bl_idname = "quat_ik.polygon_vertex_remove"
    bl_label = "Remove Polygon Corner"
    bl_description = "Remove the selected corner (a polygon needs at least three)"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        window = _active_polygon(context)
        if window is None or len(window.vertices) <= 3:
            compat.poll_message(cls, "Select a polygon reach window with more than three corners")
            return False
        return True

    def execute(self, context):
        if not editable_armature(self, context.active_pose_bone.id_data):
            return {"CANCELLED"}
        window = _active_polygon(context)
        index = min(window.active_vertex_index, len(window.vertices) - 1)
        window.vertices.remove(index)
        window.active_vertex_index = max(0, index - 1)
        session.bump()
        return {"FINISHED"}


CLASSES = (
    QUATIK_OT_limits_from_blender,
    QUATIK_OT_window_add,
    QUATIK_OT_window_remove,
    QUATIK_OT_polygon_vertex_add,
    QUATIK_OT_polygon_vertex_remove,
)
