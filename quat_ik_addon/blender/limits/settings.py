"""Per-bone joint limits, stored on the pose bone (``pose_bone.quat_ik``), and the scene's
joint-limit overlay settings (``scene.quat_ik``).

They live on the bone, not on a chain, so chains sharing a bone share its limits, and they
save, undo and link with the pose. Angles are radians inside (``subtype='ANGLE'`` shows
degrees); directions are in the bone's rest frame (bone along +Y). A reach window's plane
axes follow ``solver/limits/window_frames.py``: for the default centre +Y, "X" swings toward the
bone's local X and "Z" toward its local Z.

The overlay settings only change what the viewport draws (``ui/overlays.py``): they have no
``on_setting_changed`` update callback (no solve depends on them), only a redraw.
"""

from __future__ import annotations

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
)

from .. import overrides
from ..runtime.state import on_setting_changed

JOINT_TYPES = (
    ("FREE", "Free", "Any rotation", "DECORATE_UNLOCKED", 0),
    (
        "BALL",
        "Ball",
        "Swing through reach windows (cones or a polygon) and twist about the bone in a range",
        "SPHERE",
        1,
    ),
    (
        "HINGE",
        "Hinge",
        "Rotation about one axis of the bone's rest frame, optionally in a range",
        "DRIVER_ROTATIONAL_DIFFERENCE",
        2,
    ),
    ("FIXED", "Fixed", "No rotation: the bone keeps its rest orientation", "LOCKED", 3),
)

WINDOW_SHAPES = (
    ("CONE", "Cone", "Circular cone: the bone may swing up to the half-angle in any direction", "MESH_CONE", 0),
    ("ELLIPTIC_CONE", "Elliptic Cone", "Elliptic cone: separate swing limits toward X and toward Z", "MESH_CIRCLE", 1),
    ("POLYGON", "Polygon", "Convex polygon of swing angles (X, Z) the bone must pass through", "MESH_DATA", 2),
)

HINGE_AXES = (
    ("X", "X", "The bone's local X axis (a typical elbow or knee)"),
    ("Y", "Y", "The bone's own axis (a twist-only joint)"),
    ("Z", "Z", "The bone's local Z axis"),
    ("CUSTOM", "Custom", "Any axis of the bone's rest frame"),
)

_changed = on_setting_changed


class QuatIKPolygonVertex(bpy.types.PropertyGroup):
    """One corner of a polygon reach window, as two swing angles."""

    angles: FloatVectorProperty(
        name="Swing",
        description="Swing toward the window plane's X axis and toward its Z axis at this corner (each below 90°)",
        size=2,
        unit="ROTATION",
        soft_min=-math.radians(89.0),
        soft_max=math.radians(89.0),
        update=_changed,
    )


class QuatIKReachWindow(bpy.types.PropertyGroup):
    """A reach window (Blow 2002): a convex loop the bone must point through."""

    shape: EnumProperty(name="Shape", description="Shape of the window", items=WINDOW_SHAPES, update=_changed)
    center: FloatVectorProperty(
        name="Center",
        description="Direction at the window's centre, in the bone's rest frame (+Y is the rest direction)",
        size=3,
        subtype="XYZ",
        default=(0.0, 1.0, 0.0),
        update=_changed,
    )
    half_angle: FloatProperty(
        name="Half-Angle",
        description="Largest swing away from the centre, in any direction",
        subtype="ANGLE",
        default=math.radians(45.0),
        min=math.radians(0.01),
        max=math.pi,
        update=_changed,
    )
    half_angles: FloatVectorProperty(
        name="Half-Angles",
        description="Largest swing toward the window plane's X axis and toward its Z axis (each below 90°)",
        size=2,
        unit="ROTATION",
        default=(math.radians(45.0), math.radians(30.0)),
        min=math.radians(0.01),
        max=math.radians(89.99),
        update=_changed,
    )
    use_x_axis: BoolProperty(
        name="Custom Plane X",
        description="Orient the window plane by an explicit X axis instead of the bone's local X",
        update=_changed,
    )
    x_axis: FloatVectorProperty(
        name="Plane X",
        description="Direction (rest frame) the window plane's X axis is projected from",
        size=3,
        subtype="XYZ",
        default=(1.0, 0.0, 0.0),
        update=_changed,
    )
    vertices: CollectionProperty(
        type=QuatIKPolygonVertex, name="Corners", description="Corners of a polygon window, in order"
    )
    active_vertex_index: IntProperty(name="Active Corner", description="Corner selected in the list", min=0)


class QuatIKJointLimits(bpy.types.PropertyGroup):
    """How far one bone may turn from its rest pose when a Quat IK chain moves it."""

    joint_type: EnumProperty(
        name="Joint", description="Kind of joint limit", items=JOINT_TYPES, default="FREE", update=_changed
    )
    stiffness: FloatProperty(
        name="Stiffness",
        description="Share of each solver step this joint refuses (0: moves freely, 1: stays put)",
        subtype="FACTOR",
        min=0.0,
        max=1.0,
        default=0.0,
        update=_changed,
    )
    use_stretch: BoolProperty(
        name="Stretch",
        description=(
            "In a body (chains solved together), the bone may lengthen or shorten along its axis when turning "
            "alone cannot reach a goal: written to its Y scale"
        ),
        update=_changed,
    )
    stretch_min: FloatProperty(
        name="Shortest",
        description="The shortest the bone may get, as a share of its length",
        subtype="FACTOR",
        min=0.001,
        max=1.0,
        default=1.0,
        update=_changed,
    )
    stretch_max: FloatProperty(
        name="Longest",
        description="The longest the bone may get, as a multiple of its length",
        min=1.0,
        max=1000.0,
        soft_max=3.0,
        default=1.5,
        update=_changed,
    )
    stretch_stiffness: FloatProperty(
        name="Stretch Stiffness",
        description="Share of each solver step the bone's length refuses (0: stretches as readily as it turns)",
        subtype="FACTOR",
        min=0.0,
        max=1.0,
        default=0.0,
        update=_changed,
    )
    hinge_axis: EnumProperty(
        name="Hinge Axis", description="Axis of the bone's rest frame it turns about", items=HINGE_AXES, update=_changed
    )
    hinge_custom_axis: FloatVectorProperty(
        name="Custom Axis",
        description="Hinge axis in the bone's rest frame",
        size=3,
        subtype="XYZ",
        default=(1.0, 0.0, 0.0),
        update=_changed,
    )
    use_hinge_range: BoolProperty(
        name="Limit Hinge", description="Keep the hinge angle within a range", default=True, update=_changed
    )
    hinge_min: FloatProperty(
        name="Min",
        description="Where the hinge range starts (it need not include 0)",
        subtype="ANGLE",
        min=-2.0 * math.pi,
        max=2.0 * math.pi,
        default=0.0,
        update=_changed,
    )
    hinge_max: FloatProperty(
        name="Max",
        description=(
            "Where the hinge range ends, turning up from Min (at most a turn past it: Min 150° and Max 210° "
            "run through 180°)"
        ),
        subtype="ANGLE",
        min=-2.0 * math.pi,
        max=2.0 * math.pi,
        default=math.radians(150.0),
        update=_changed,
    )
    windows: CollectionProperty(
        type=QuatIKReachWindow,
        name="Reach Windows",
        description="Directions the bone may point through (any of them); none leaves swing free",
    )
    active_window_index: IntProperty(name="Active Window", description="Window selected in the list", min=0)
    use_twist_range: BoolProperty(
        name="Limit Twist", description="Keep the twist about the bone within a range", update=_changed
    )
    use_twist_reference: BoolProperty(
        name="Fitted Twist",
        description=(
            "Measure the twist from the posture a preset was fitted to (set by Apply Joint Limit Preset), so the "
            "range means the same anatomical twist wherever the bone points; off: measured from the rest pose"
        ),
        update=_changed,
    )
    twist_reference: FloatVectorProperty(
        name="Twist Reference",
        description="The rotation M whose product M·q with the pose rotation q the twist is measured on",
        size=4,
        subtype="QUATERNION",
        default=(1.0, 0.0, 0.0, 0.0),
        update=_changed,
    )
    twist_min: FloatProperty(
        name="Min",
        description="Where the twist range about the bone's own axis starts",
        subtype="ANGLE",
        min=-2.0 * math.pi,
        max=2.0 * math.pi,
        default=math.radians(-45.0),
        update=_changed,
    )
    twist_max: FloatProperty(
        name="Max",
        description=(
            "Where the twist range ends, turning up from Min (at most a turn past it: Min 150° and Max 210° "
            "run through 180°)"
        ),
        subtype="ANGLE",
        min=-2.0 * math.pi,
        max=2.0 * math.pi,
        default=math.radians(45.0),
        update=_changed,
    )


def _redraw_views(_owner, context) -> None:
    """``update=`` callback of the overlay settings: redraw every 3D view (nothing else depends on them)."""
    screen = getattr(context, "screen", None)
    for area in getattr(screen, "areas", ()):
        if area.type == "VIEW_3D":
            area.tag_redraw()


class QuatIKSceneSettings(bpy.types.PropertyGroup):
    """Scene-wide Quat IK settings: the joint-limit overlay in the 3D viewport."""

    show_limit_overlay: BoolProperty(
        name="Show Joint Limits",
        description=(
            "Draw the active bone's joint limits in the viewport: reach windows as translucent cones, "
            "the twist range as an arc, a hinge's range as a fan, and the bone's direction "
            "(in the warning colour when the joint sits on its limit)"
        ),
        default=False,
        update=_redraw_views,
    )
    overlay_opacity: FloatProperty(
        name="Opacity",
        description="Opacity of the reach-window cones and hinge fans (outlines stay opaque)",
        subtype="FACTOR",
        min=0.0,
        max=1.0,
        default=0.25,
        update=_redraw_views,
    )
    overlay_chain_bones: BoolProperty(
        name="All Bones of the Chain",
        description="Draw the limits of every bone of the Quat IK chains through the active bone, not only the active bone",
        default=False,
        update=_redraw_views,
    )
    overlay_outside_pose_mode: BoolProperty(
        name="Outside Pose Mode",
        description="Also draw the active armature's limits in Object Mode (never in Edit Mode, where bones change)",
        default=False,
        update=_redraw_views,
    )
    overlay_in_front: BoolProperty(
        name="In Front",
        description="Draw the limits over everything, even where a mesh hides the joint",
        default=True,
        update=_redraw_views,
    )


CLASSES = (QuatIKPolygonVertex, QuatIKReachWindow, QuatIKJointLimits, QuatIKSceneSettings)


def attach() -> None:
    """Hang the limits on pose bones and the overlay settings on scenes (called from register())."""
    bpy.types.PoseBone.quat_ik = PointerProperty(
        type=QuatIKJointLimits,
        name="Quat IK Limits",
        description="Quat IK joint limits of this bone",
    )
    bpy.types.Scene.quat_ik = PointerProperty(
        type=QuatIKSceneSettings,
        name="Quat IK",
        description="Quat IK settings of this scene (the joint-limit overlay)",
        override=overrides.OVERRIDE,
    )


def detach() -> None:
    del bpy.types.Scene.quat_ik
    del bpy.types.PoseBone.quat_ik
