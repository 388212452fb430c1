"""Fit Joint Limits from Action: learn the selected bones' limits from the rotations an action
(mocap or keyed) gives them, with the solver's ``limit_fitting``, and write them only when
every bone fitted.
"""

from __future__ import annotations

import math

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from .. import compat
from ..limits.conversion import write_limit
from ..runtime.state import session
from .limit_tools import editable_armature, poll_pose_bone, target_bones

# A million frames read in about 5 s; more would freeze Blender for minutes (or run out of memory).
MAX_FIT_FRAMES = 1_000_000
MIN_FIT_FRAMES = 3


def bone_rotations(pose_bone, curves: dict, frames: np.ndarray) -> np.ndarray | None:
    """The bone's rotations (F, 4) (w, x, y, z) at ``frames`` from its rotation curves in its own
    rotation mode; channels without a curve keep the bone's current value. None if none is keyed."""
    from mathutils import Euler, Quaternion

    from ..rig.rotation_modes import data_path_and_size

    mode = pose_bone.rotation_mode
    prop, size = data_path_and_size(mode)
    path = pose_bone.path_from_id(prop)
    static = list(getattr(pose_bone, prop))
    channels = [curves.get((path, i)) for i in range(size)]
    if not any(channels):
        return None
    values = np.array(
        [[fc.evaluate(float(f)) if fc is not None else static[i] for i, fc in enumerate(channels)] for f in frames]
    )
    out = np.empty((len(frames), 4))
    for row, value in enumerate(values):
        if mode == "QUATERNION":
            q = Quaternion(value)
            q = q.normalized() if q.magnitude > 1e-12 else Quaternion()
        elif mode == "AXIS_ANGLE":
            angle, *axis = value
            q = Quaternion(axis, angle) if any(axis) else Quaternion()
        else:
            q = Euler(value, mode).to_quaternion()
        out[row] = tuple(q)
    return out


def describe_fit(bone_name: str, fit) -> str:
    """One line for the info log: kind, windows and corners, twist or hinge range."""
    limit, report = fit.limit, fit.report
    if report.kind == "hinge":
        axis = ", ".join(f"{c:.2f}" for c in limit.axis)
        span = "full turn" if limit.range_deg is None else f"{limit.range_deg[0]:.1f}° to {limit.range_deg[1]:.1f}°"
        return f"{bone_name}: hinge about ({axis}), {span}"
    corners = [f"{w.vertices} corners" if w.vertices else "a cone" for w in report.windows]
    windows = f"{len(report.windows)} window{'s' if len(report.windows) != 1 else ''} ({', '.join(corners)})"
    twist = "free" if limit.twist_deg is None else f"{limit.twist_deg[0]:.1f}° to {limit.twist_deg[1]:.1f}°"
    return f"{bone_name}: ball, {windows}, twist {twist}"


class QUATIK_OT_limits_fit_from_action(bpy.types.Operator):
    """Learn the selected bones' joint limits from an action (mocap or keyed)"""

    bl_idname = "quat_ik.limits_fit_from_action"
    bl_label = "Fit Joint Limits from Action"
    bl_description = (
        "Read the selected bones' rotations from an action over a frame range and give each the smallest "
        "limit (reach windows and twist range, or a hinge) that allows every pose, plus a margin"
    )
    bl_options = {"REGISTER", "UNDO"}

    action_name: StringProperty(
        name="Action", description="Action to read (empty: the armature's active action)", default=""
    )
    use_action_range: BoolProperty(
        name="Whole Action", description="Read every frame the action has keys on", default=True
    )
    frame_start: IntProperty(name="Start", description="First frame read", default=1)
    frame_end: IntProperty(name="End", description="Last frame read", default=250)
    frame_step: IntProperty(name="Step", description="Read every n-th frame", default=1, min=1, max=100)
    kind: EnumProperty(
        name="Joint",
        description="Kind of limit to fit",
        items=(
            ("AUTO", "Automatic", "A hinge when the bone only turned about one axis, else a ball joint"),
            ("BALL", "Ball", "Reach windows around the bone's directions and a twist range"),
            ("HINGE", "Hinge", "The best single axis and the range of angles about it"),
        ),
    )
    margin: FloatProperty(
        name="Margin",
        description="Room added around every pose seen (swing, twist and hinge angle)",
        subtype="ANGLE",
        default=math.radians(2.0),
        min=0.0,
        max=math.radians(30.0),
    )
    max_vertices: IntProperty(
        name="Max Corners", description="Most corners of each reach window", default=12, min=4, max=64
    )
    max_windows: IntProperty(
        name="Max Windows",
        description="Most reach windows, for a bone whose directions spread over more than a hemisphere",
        default=4,
        min=1,
        max=8,
    )
    only_active: BoolProperty(name="Active Bone Only", description="Fit only the active bone")

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def invoke(self, context, event):
        anim = context.active_object.animation_data if context.active_object else None
        if not self.action_name and anim is not None and anim.action is not None:
            self.action_name = anim.action.name
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop_search(self, "action_name", bpy.data, "actions")
        layout.prop(self, "use_action_range")
        col = layout.column(align=True)
        col.enabled = not self.use_action_range
        col.prop(self, "frame_start")
        col.prop(self, "frame_end")
        layout.prop(self, "frame_step")
        layout.prop(self, "kind")
        layout.prop(self, "margin")
        layout.prop(self, "max_vertices")
        layout.prop(self, "max_windows")
        layout.prop(self, "only_active")

    def execute(self, context):
        from ...solver.limits.fitting import LimitFitError, fit_limit

        ob = context.active_object
        action = self._action(ob)
        if action is None:
            return {"CANCELLED"}
        frames = self._frames(action)
        if frames is None:
            return {"CANCELLED"}
        curves = compat.object_fcurves(action, ob)
        bones = [pb for pb in target_bones(context, self.only_active) if pb.id_data == ob]
        fits, skipped = [], []
        for pose_bone in bones:
            rotations = bone_rotations(pose_bone, curves, frames)
            if rotations is None:
                skipped.append(pose_bone.name)
                continue
            try:
                fit = fit_limit(
                    rotations,
                    kind=self.kind.lower(),
                    margin_deg=math.degrees(self.margin),
                    max_vertices=self.max_vertices,
                    max_windows=self.max_windows,
                    stiffness=float(pose_bone.quat_ik.stiffness),
                )
            except (LimitFitError, ValueError) as error:
                self.report({"ERROR"}, f"Cannot fit '{pose_bone.name}': {error}")
                return {"CANCELLED"}
            fits.append((pose_bone, fit))
        if not fits:
            names = ", ".join(skipped)
            self.report({"ERROR"}, f"Action '{action.name}' has no rotation keys for {names} (in its rotation mode)")
            return {"CANCELLED"}
        if not editable_armature(self, ob):
            return {"CANCELLED"}
        for pose_bone, fit in fits:
            write_limit(pose_bone.quat_ik, fit.limit)
        session.bump()
        lines = [describe_fit(pb.name, fit) for pb, fit in fits]
        for line in lines:
            self.report({"INFO"}, line)
        if skipped:
            self.report({"WARNING"}, f"No rotation keys in '{action.name}' for " + ", ".join(skipped))
        self.report(
            {"INFO"},
            f"Fitted {len(fits)} bone(s) to {len(frames)} frames of '{action.name}': " + "; ".join(lines),
        )
        return {"FINISHED"}

    def _action(self, ob):
        if self.action_name:
            action = bpy.data.actions.get(self.action_name)
            if action is None:
                self.report({"ERROR"}, f"There is no action '{self.action_name}'")
            return action
        anim = ob.animation_data
        if anim is None or anim.action is None:
            self.report({"ERROR"}, f"Armature '{ob.name}' has no action: choose one to fit the limits to")
            return None
        return anim.action

    def _frames(self, action) -> np.ndarray | None:
        if self.use_action_range:
            start, end = (round(f) for f in action.frame_range)
        else:
            start, end = self.frame_start, self.frame_end
        count = (end - start) // self.frame_step + 1
        if count > MAX_FIT_FRAMES:
            self.report(
                {"ERROR"},
                f"Frames {start} to {end} at step {self.frame_step} are {count:,} frames to read; "
                f"fit to at most {MAX_FIT_FRAMES:,} (a larger step, or the action's own range)",
            )
            return None
        frames = np.arange(start, end + 1, self.frame_step, dtype=np.float64)
        if len(frames) < MIN_FIT_FRAMES:
            self.report(
                {"ERROR"},
                f"Too few frames to fit limits: {len(frames)} (frames {start} to {end}, step {self.frame_step}); "
                f"need at least {MIN_FIT_FRAMES}",
            )
            return None
        return frames


CLASSES = (QUATIK_OT_limits_fit_from_action,)
