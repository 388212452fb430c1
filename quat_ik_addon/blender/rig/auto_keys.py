"""Auto Keying for what our operators pose: the chain bones Solve Now turns, the targets and
poles Snap moves.

Blender's own pose tools (Paste Pose, Clear Transform, the transform tools) insert keys when
Auto Keying is on, with the scene's and the preferences' keying options; ours do the same
with the same options, so a pose set through Quat IK is not lost at the next frame change.
Only the channels an operator changed are keyed (rotation; location for a moved target).
"""

from __future__ import annotations

from .. import compat
from .rotation_modes import data_path_and_size


def is_on(context) -> bool:
    """Whether Auto Keying (the record button in the timeline) is on."""
    return bool(context.scene.tool_settings.use_keyframe_insert_auto)


def insert_options(context) -> set[str]:
    """``keyframe_insert`` flags for the scene's Auto Keying mode and the keying preferences."""
    tool_settings = context.scene.tool_settings
    edit = context.preferences.edit
    options = set()
    if tool_settings.auto_keying_mode == "REPLACE_KEYS":
        options.add("INSERTKEY_REPLACE")
    if edit.use_keyframe_insert_available:
        options.add("INSERTKEY_AVAILABLE")
    # 4.x and later keep a separate "Only Insert Needed" for Auto Keying; 3.4 has one for both.
    if getattr(edit, "use_auto_keyframe_insert_needed", edit.use_keyframe_insert_needed):
        options.add("INSERTKEY_NEEDED")
    if tool_settings.use_keyframe_cycle_aware:
        options.add("INSERTKEY_CYCLE_AWARE")
    return options


def rotation_path(owner) -> str:
    """The property holding an object's or pose bone's rotation in its rotation mode."""
    return data_path_and_size(owner.rotation_mode)[0]


def key_channels(context, owner, paths, group: str = "") -> int:
    """Key ``paths`` of ``owner`` (an object or a pose bone) at the current frame if Auto Keying
    is on; returns how many properties got a key."""
    if not is_on(context):
        return 0
    options = insert_options(context)
    keytype = context.scene.tool_settings.keyframe_type
    keyed = 0
    for path in paths:
        if compat.keyframe_insert(owner, path, group=group, options=options, keytype=keytype):
            keyed += 1
    return keyed


def key_chain_bones(context, rig) -> int:
    """Key the rotation of every chain bone the solver may turn (Auto Keying on); returns how
    many bones got a key."""
    if not is_on(context):
        return 0
    pose_bones = rig.armature.pose.bones
    keyed = 0
    for name, writable in zip(rig.bone_names, rig.writable, strict=True):
        if writable:
            pose_bone = pose_bones[name]
            keyed += key_channels(context, pose_bone, [rotation_path(pose_bone)], group=name) > 0
    return keyed
