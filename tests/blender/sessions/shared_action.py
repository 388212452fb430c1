"""Session: a bake into an active action that another armature also plays keeps that
armature's keys. Blender leaves the baked armature's slot empty when the action's one slot
belongs to the other rig; the bake must make a slot of its own, not key into the other's.

argv: WORKDIR
"""

import math

import bpy

from tests.blender.sessions.common import Checks, action_keys, add_chain, empty, reset_scene, straight_rig, submodule

checks = Checks("a shared action keeps the other rig's keys")


def two_rigs_and_the_others_action(name: str, frames):
    """'Arm' with a chain, and 'Other' playing action ``name`` with keys at ``frames``."""
    reset_scene()
    ob = straight_rig("Arm", 3)
    empty("Target", (1.0, 0.5, 2.0))
    add_chain(ob, "B2", 3, "Target", mode="MANUAL")
    other = straight_rig("Other", 3)
    action = bpy.data.actions.new(name)
    other.animation_data_create()
    other.animation_data.action = action
    for frame in frames:
        other.pose.bones["B1"].rotation_quaternion = (math.cos(frame / 20), math.sin(frame / 20), 0.0, 0.0)
        other.pose.bones["B1"].keyframe_insert("rotation_quaternion", frame=frame)
    return ob, other, action


ob, other, shared = two_rigs_and_the_others_action("Shared", (1, 5, 10))
ob.animation_data_create()
ob.animation_data.action = shared
compat = submodule("compat")


def keys_of(armature):
    """The keys the armature plays: its slot's channels (the whole action before 4.4)."""
    if not compat.HAS_SLOTTED_ACTIONS:
        return action_keys(shared)
    slot = armature.animation_data.action_slot
    bag = shared.layers[0].strips[0].channelbag(slot)
    return {(c.data_path, c.array_index): tuple(tuple(k.co) for k in c.keyframe_points) for c in bag.fcurves}


with checks.step("a bake into a shared action keeps the other rig's keys"):
    before = keys_of(other)
    result = bpy.ops.quat_ik.bake(armature="Arm", frame_start=1, frame_end=5)
    checks.check("the bake finished", result == {"FINISHED"}, result)
    if compat.HAS_SLOTTED_ACTIONS:
        checks.check(
            "the baked armature plays a slot of its own",
            ob.animation_data.action_slot not in (None, other.animation_data.action_slot),
            ob.animation_data.action_slot,
        )
        checks.check("the other armature's keys are as they were", keys_of(other) == before, keys_of(other))
        baked = keys_of(ob)
        checks.check(
            "the baked keys are in the baked armature's slot",
            len(baked.get(('pose.bones["B1"].rotation_quaternion', 0), ())) == 5,
            sorted(baked),
        )

# The other rig made the action's one slot and now plays another action: its slot is still
# its own (Blender's keyframe_insert would make a new slot too).
ob, other, walk = two_rigs_and_the_others_action("Walk", (1, 10, 20))
walk.use_fake_user = True
other.animation_data.action = bpy.data.actions.new("Idle")


def slot_keys(action, identifier):
    bag = action.layers[0].strips[0].channelbag(action.slots[identifier])
    return {(c.data_path, c.array_index): tuple(tuple(k.co) for k in c.keyframe_points) for c in bag.fcurves}


with checks.step("a bake into an action the other rig made keys a slot of its own"):
    before = slot_keys(walk, "OBOther") if compat.HAS_SLOTTED_ACTIONS else action_keys(walk)
    ob.animation_data_create()
    ob.animation_data.action = walk
    result = bpy.ops.quat_ik.bake(armature="Arm", frame_start=1, frame_end=5)
    checks.check("the bake into the other rig's action finished", result == {"FINISHED"}, result)
    if compat.HAS_SLOTTED_ACTIONS:
        slots = [slot.identifier for slot in walk.slots]
        checks.check(
            "... into a slot of its own", len(slots) == 2 and ob.animation_data.action_slot.identifier == "OBArm", slots
        )
        kept = slot_keys(walk, "OBOther")
        checks.check("... and the other rig's keys are as they were", kept == before, kept)
    else:
        baked = action_keys(walk)
        checks.check("... keys added beside the other rig's", len(baked) > len(before))
checks.close()
