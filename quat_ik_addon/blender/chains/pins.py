"""Pinned bones, stored on the armature object (``object.quat_ik.pins``).

A pin holds a bone where it was captured (its head's location and its pose rotation, in
armature space) over a frame range, above every chain's goal: a planted foot while the hips
move, a hand on a prop. A chain that holds a pinned bone is solved as a body
(``solving/body_jobs.py``). The ``status_*`` properties are written by solves only.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, FloatVectorProperty, IntProperty, StringProperty

from ..runtime.state import on_setting_changed

HOLDS = (
    ("BOTH", "Location & Rotation", "The bone's head stays where it was captured and the bone keeps its rotation"),
    ("LOCATION", "Location", "The bone's head stays where it was captured; the bone may turn"),
    ("ROTATION", "Rotation", "The bone keeps the rotation it was captured with; its head may move"),
)


class QuatIKPin(bpy.types.PropertyGroup):
    """One pinned bone: what it holds, where, and on which frames."""

    bone: StringProperty(name="Bone", description="The pinned bone", update=on_setting_changed)
    enabled: BoolProperty(name="Enabled", description="Hold this pin", default=True, update=on_setting_changed)
    hold: EnumProperty(name="Hold", description="What the pin holds", items=HOLDS, update=on_setting_changed)
    frame_start: IntProperty(
        name="Start", description="First frame the pin holds", default=1, update=on_setting_changed
    )
    frame_end: IntProperty(name="End", description="Last frame the pin holds", default=250, update=on_setting_changed)
    location: FloatVectorProperty(
        name="Location",
        description="Where the bone's head is held, in the armature's space (Capture sets it from the pose)",
        size=3,
        subtype="TRANSLATION",
        update=on_setting_changed,
    )
    rotation: FloatVectorProperty(
        name="Rotation",
        description="The rotation the bone is held at, in the armature's space (Capture sets it from the pose)",
        size=4,
        subtype="QUATERNION",
        default=(1.0, 0.0, 0.0, 0.0),
        update=on_setting_changed,
    )

    # Written by solves; no update callback.
    status_solved: BoolProperty(name="Solved", description="A solve has measured this pin")
    status_held: BoolProperty(name="Held", description="The last solve held the pin within tolerance")
    status_error: FloatProperty(
        name="Error",
        description="How far the bone's head was from where it is held after the last solve",
        subtype="DISTANCE",
        precision=5,
    )
    status_message: StringProperty(name="Message", description="Why the pin could not be held, or a warning")

    def holds_location(self) -> bool:
        return self.hold in ("BOTH", "LOCATION")

    def holds_rotation(self) -> bool:
        return self.hold in ("BOTH", "ROTATION")

    def active_at(self, frame: float) -> bool:
        return self.enabled and self.frame_start <= frame <= self.frame_end


def pin_label(pin) -> str:
    return pin.bone or "(no bone)"
