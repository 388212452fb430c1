"""Transforms changed without keys, kept across the frames a bake steps through.

On every frame change Blender writes the animated values back into the objects and pose
bones themselves (the active depsgraph flushes its animation to the original data), so a
bake that steps frames to read its inputs and then returns to the current frame replaces a
transform the animator changed without keying it (a target nudged to try a pose) with its
keys' value there, whether the bake then succeeds or refuses. ``UnkeyedEdits`` reads the
transform channels of every animated object and of its pose bones before the stepping, and
writes back those the stepping changed: the bake leaves them as they were.

Only transforms are kept (other animated properties, a material's colour, still follow their
keys after a stepped bake, as after any frame change).
"""

from __future__ import annotations

OBJECT_CHANNELS = (
    "location",
    "rotation_euler",
    "rotation_quaternion",
    "rotation_axis_angle",
    "scale",
    "delta_location",
    "delta_rotation_euler",
    "delta_rotation_quaternion",
    "delta_scale",
)
BONE_CHANNELS = ("location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale")


class UnkeyedEdits:
    """The transform channels of the scene's animated objects and their pose bones, as they are now."""

    def __init__(self, scene) -> None:
        self.kept: list[tuple[object, str, tuple[float, ...]]] = []
        for ob in scene.objects:
            if ob.animation_data is None:  # nothing animates it: a frame change leaves it alone
                continue
            self._keep(ob, OBJECT_CHANNELS)
            if ob.pose is not None:
                for pose_bone in ob.pose.bones:
                    self._keep(pose_bone, BONE_CHANNELS)

    def _keep(self, owner, channels: tuple[str, ...]) -> None:
        for name in channels:
            self.kept.append((owner, name, tuple(getattr(owner, name))))

    def restore(self) -> int:
        """Write back every kept channel whose value changed; returns how many were written."""
        written = 0
        for owner, name, value in self.kept:
            if tuple(getattr(owner, name)) != value:
                setattr(owner, name, value)
                written += 1
        return written
