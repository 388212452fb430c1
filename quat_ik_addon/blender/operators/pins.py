"""Pin Bone, Capture Pin and Remove Pin: bones held in place over a frame range.

A pin keeps its bone where it was captured (armature space), so a planted foot stays put while
the hips above it move; chains that hold a pinned bone are solved as a body
(``solving/body_jobs.py``).
"""

from __future__ import annotations

import bpy
from bpy.props import IntProperty

from .. import compat
from ..chains import settings
from ..runtime.state import on_setting_changed
from .common import chains_editable


def _capture(pin, ob) -> None:
    """The pin's location and rotation from its bone's current pose (armature space)."""
    matrix = ob.pose.bones[pin.bone].matrix
    pin.location = matrix.to_translation()
    pin.rotation = matrix.to_quaternion().normalized()


def _armature_in_pose_mode(cls, context):
    ob = context.object
    if ob is None or ob.type != "ARMATURE" or context.mode != "POSE":
        compat.poll_message(cls, "Select an armature in Pose Mode")
        return None
    return ob


def _active_pin(cls, context):
    ob = context.object
    if ob is None or ob.type != "ARMATURE":
        compat.poll_message(cls, "Select an armature")
        return None
    pins = ob.quat_ik.pins
    if not 0 <= ob.quat_ik.active_pin_index < len(pins):
        compat.poll_message(cls, f"'{ob.name}' has no pin selected")
        return None
    return pins[ob.quat_ik.active_pin_index]


class QUATIK_OT_add_pin(bpy.types.Operator):
    """Pin the active bone where it is now, from this frame to the end of the scene: chains that
    hold it keep it there while the rest of the body moves"""

    bl_idname = "quat_ik.add_pin"
    bl_label = "Pin Bone (Quat IK)"
    bl_options = {"REGISTER", "UNDO"}

    frame_start: IntProperty(name="Start", description="First frame the pin holds")
    frame_end: IntProperty(name="End", description="Last frame the pin holds")

    @classmethod
    def poll(cls, context):
        ob = _armature_in_pose_mode(cls, context)
        if ob is None:
            return False
        if ob.data.bones.active is None:
            compat.poll_message(cls, "Select the bone to pin")
            return False
        return True

    def invoke(self, context, event):
        self.frame_start = context.scene.frame_current
        self.frame_end = max(context.scene.frame_end, self.frame_start)
        return self.execute(context)

    def execute(self, context):
        ob = context.object
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        if self.frame_end < self.frame_start:
            self.report({"ERROR"}, f"The pin would end (frame {self.frame_end}) before it starts ({self.frame_start})")
            return {"CANCELLED"}
        bone = ob.data.bones.active.name
        if not settings.chains_with_bone(ob, bone):
            self.report({"WARNING"}, f"No Quat IK chain moves '{bone}' yet: the pin holds once a chain does")
        pin = ob.quat_ik.pins.add()
        pin.name = pin.bone = bone
        pin.frame_start, pin.frame_end = self.frame_start, self.frame_end
        _capture(pin, ob)
        ob.quat_ik.active_pin_index = len(ob.quat_ik.pins) - 1
        on_setting_changed(pin, context)
        return {"FINISHED"}


class _ActivePinOperator:
    """An operator on the pin selected in the panel's list (undoable)."""

    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return _active_pin(cls, context) is not None


class QUATIK_OT_capture_pin(_ActivePinOperator, bpy.types.Operator):
    """Hold the selected pin's bone where it is now instead (its location and rotation in the
    armature's space)"""

    bl_idname = "quat_ik.capture_pin"
    bl_label = "Capture Pin (Quat IK)"

    def execute(self, context):
        ob = context.object
        pin = _active_pin(self, context)
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        if pin.bone not in ob.pose.bones:
            self.report({"ERROR"}, f"The armature has no bone '{pin.bone}' to capture")
            return {"CANCELLED"}
        _capture(pin, ob)
        on_setting_changed(pin, context)
        return {"FINISHED"}


class QUATIK_OT_remove_pin(_ActivePinOperator, bpy.types.Operator):
    """Remove the selected pin: its bone is no longer held"""

    bl_idname = "quat_ik.remove_pin"
    bl_label = "Remove Pin (Quat IK)"

    def execute(self, context):
        ob = context.object
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        pins = ob.quat_ik.pins
        pins.remove(ob.quat_ik.active_pin_index)
        ob.quat_ik.active_pin_index = min(ob.quat_ik.active_pin_index, max(len(pins) - 1, 0))
        on_setting_changed(ob.quat_ik, context)
        return {"FINISHED"}


CLASSES = (QUATIK_OT_add_pin, QUATIK_OT_capture_pin, QUATIK_OT_remove_pin)
