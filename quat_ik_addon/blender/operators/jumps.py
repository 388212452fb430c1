"""Going to the frames where a bake left a chain's pose jumping between solution branches.

The bake finds them (``solver.request.shot_jumps``), names the first few in its report and
keeps them all on the chain (``status_jump_frames``); these operators step the current frame
through them, so an animator can look at each pop and key a pose or widen a limit there.
"""

import bpy
from bpy.props import BoolProperty

from .. import compat
from ..chains import settings


def jump_frames(chain) -> list[int]:
    """The frames of the chain's last bake where its pose jumps, increasing (text that is not
    a frame number Blender has, which only a script could have written, is skipped)."""
    frames = []
    for text in chain.status_jump_frames.split(","):
        try:
            frame = int(text)
        except ValueError:
            continue
        if abs(frame) <= compat.MAX_FRAME:
            frames.append(frame)
    return sorted(frames)


def _active_chain(context):
    ob = context.object
    if ob is None or ob.type != "ARMATURE":
        return None
    return settings.active_chain(ob)


class QUATIK_OT_next_jump(bpy.types.Operator):
    """Go to the next frame where the selected chain's baked pose jumps to another solution branch"""

    bl_idname = "quat_ik.next_jump"
    bl_label = "Next Quat IK Pose Jump"
    bl_description = (
        "Go to the next frame (or the previous one) where the selected chain's last bake left its pose "
        "jumping from one solution branch to another"
    )
    # A frame change, as Blender's own Jump to Keyframe: one grouped undo step, not one per press.
    bl_options = {"REGISTER", "UNDO_GROUPED"}
    bl_undo_group = "Frame Change"

    previous: BoolProperty(name="Previous", description="Go to the jump before the current frame instead")

    @classmethod
    def poll(cls, context):
        chain = _active_chain(context)
        if chain is None:
            compat.poll_message(cls, "Select an armature with a Quat IK chain")
            return False
        if not jump_frames(chain):
            compat.poll_message(cls, "The selected chain's last bake left no pose jumps")
            return False
        return True

    def execute(self, context):
        frames = jump_frames(_active_chain(context))
        current = context.scene.frame_current
        if self.previous:
            beyond = [frame for frame in frames if frame < current][-1:]
        else:
            beyond = [frame for frame in frames if frame > current][:1]
        if not beyond:  # as Blender's Jump to Keyframe: no wrapping round
            self.report({"INFO"}, f"No more pose jumps {'before' if self.previous else 'after'} frame {current}")
            return {"CANCELLED"}
        (frame,) = beyond
        context.scene.frame_set(frame)
        self.report({"INFO"}, f"Pose jump {frames.index(frame) + 1} of {len(frames)}: frame {frame}")
        return {"FINISHED"}


CLASSES = (QUATIK_OT_next_jump,)
