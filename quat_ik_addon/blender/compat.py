"""Every difference between Blender 3.4 and 5.0 that the add-on meets, in one place.

Version tests use ``bpy.app.version`` (RNA properties are not class attributes, so
``hasattr(bpy.types.Action, "fcurves")`` is False even where actions have curves).

* Actions: 3.4-4.3 keep F-curves on ``Action.fcurves``; 4.4 adds slotted, layered actions
  (``fcurves`` stays as a legacy proxy); 5.0 keeps curves only in a channelbag of a keyframe
  strip, per slot. :func:`action_channels` hides this: it returns the curve and group
  collections for one object in one action, creating what is missing.
* ``ID.is_editable`` (linked data) and ``Operator.poll_message_set`` are newer than 3.4.
* Keyframes: Blender 3.4's ``foreach_get``/``foreach_set`` skip a key's handle types (get
  gives zeros, set does nothing, no error); 4.2 and later handle them.
  :func:`keyframes_foreach_get` / :func:`keyframes_foreach_set` fall back to one key at a time
  there.
* ``keyframe_insert`` takes a ``keytype`` from 4.2 (checked; 3.4 refuses the keyword).
* Add-on preferences are filed under the add-on's top package, ``bl_ext.<repo>.quat_ik`` for an
  extension (4.2+) and ``quat_ik`` for a legacy add-on (3.4-4.1), and need no branch:
  ``preferences.ADDON_PACKAGE`` derives it from ``__package__``. Reading them in ``register()``
  works in both: 3.4's restricted context keeps ``preferences`` (tests/blender/test_preferences.py).
* Builtin shaders need no branch: ``UNIFORM_COLOR`` and ``POLYLINE_UNIFORM_COLOR`` exist from
  3.4 (checked in a 3.4 window) to 5.0; the ``3D_``-prefixed names raise in 5.0, avoid them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy

if TYPE_CHECKING:
    from bpy.types import ID, Action, ActionSlot, NlaStrip, NlaTrack, Object

VERSION: tuple[int, int, int] = tuple(bpy.app.version)
HAS_SLOTTED_ACTIONS = VERSION >= (4, 4, 0)
MAX_FRAME = 1_048_574  # Blender's last frame (MAXFRAME); the first is its negative
# Checked on 3.4 (broken) and 4.2, 4.5, 5.0 (working); versions between take the slow, safe path.
FOREACH_HANDLE_TYPES = VERSION >= (4, 2, 0)
_HANDLE_TYPES = ("handle_left_type", "handle_right_type")
KEYFRAME_INSERT_TAKES_KEYTYPE = VERSION >= (4, 2, 0)


def session_key(datablock: ID):
    """A key for session state about a datablock that survives its renames and undo:
    ``session_uid`` (Blender 3.5+), the name before."""
    return getattr(datablock, "session_uid", None) or datablock.name_full


def is_editable(datablock: ID) -> bool:
    """False for linked (library) data that may not be changed; overrides count as editable."""
    if datablock is None:
        return False
    editable = getattr(datablock, "is_editable", None)
    if editable is not None:
        return bool(editable)
    return datablock.library is None or datablock.override_library is not None


def linked_from(datablock: ID) -> str:
    """The library file a linked datablock comes from, for messages."""
    library = getattr(datablock, "library", None)
    return library.filepath if library is not None else ""


def poll_message(cls, message: str) -> None:
    """Say why an operator's poll failed (shown in the tooltip and the error), where supported."""
    setter = getattr(cls, "poll_message_set", None)
    if setter is not None:
        setter(message)


def object_slot(action: Action, ob: Object, *, assign: bool) -> ActionSlot | None:
    """The action slot that animates ``ob`` (created if missing); None before 4.4.

    With ``assign`` the slot is also made the object's active slot (the action must be the
    object's active action).
    """
    if not HAS_SLOTTED_ACTIONS:
        return None
    anim = ob.animation_data
    slot = None
    if anim is not None and anim.action == action and anim.action_slot is not None:
        slot = anim.action_slot
    # Never a slot that animates another ID, or that is named for another: an action shared
    # between rigs keeps each rig's keys in its own slot, even while the other plays something
    # else. Blender's own choice when an action is assigned: the slot the object last played,
    # one named for it, or the one slot of an action that never animated anything.
    free = [s for s in action.slots if not _animates_another(s, ob)]
    if slot is None:
        own = {"OB" + ob.name, getattr(anim, "last_slot_identifier", "") if anim is not None else ""} - {""}
        slot = next((s for s in free if s.identifier in own), None)
    if slot is None and len(action.slots) == 1 and free and _slot_id_type(free[0]) == "UNSPECIFIED":
        slot = free[0]
    if slot is None:
        slot = action.slots.new(id_type="OBJECT", name=ob.name)
    if assign and anim is not None and anim.action == action and anim.action_slot != slot:
        anim.action_slot = slot
    return slot


def link_object(ob: Object, collections, scene) -> None:
    """Link a new object into the first of ``collections`` that takes it, else into the scene's
    own collection. A library override's collection looks editable but refuses new objects
    (RuntimeError "collection ... is overridden"), so each is tried, not checked."""
    for collection in collections:
        if not is_editable(collection):
            continue
        try:
            collection.objects.link(ob)
            return
        except RuntimeError:
            continue
    scene.collection.objects.link(ob)


def _animates_another(slot, ob: Object) -> bool:
    """True if an ID other than ``ob`` plays ``slot``."""
    users = slot.users() if hasattr(slot, "users") else ()
    return any(user != ob for user in users)


def _slot_id_type(slot) -> str:
    # 4.4 betas called it id_root; releases call it target_id_type.
    return getattr(slot, "target_id_type", None) or getattr(slot, "id_root", "")


def action_channels(action: Action, ob: Object):
    """(fcurves, groups) collections of ``action`` for ``ob``, created on demand.

    Both collections have ``find``/``new`` (curves) and ``get``/``new`` (groups) on every
    version; curves are created without a group argument (its name changed) and grouped by
    assigning ``fcurve.group``.
    """
    if not HAS_SLOTTED_ACTIONS:
        return action.fcurves, action.groups
    slot = object_slot(action, ob, assign=True)
    layer = action.layers[0] if len(action.layers) else action.layers.new("Layer")
    strip = layer.strips[0] if len(layer.strips) else layer.strips.new(type="KEYFRAME")
    channelbag = strip.channelbag(slot, ensure=True)
    return channelbag.fcurves, channelbag.groups


def find_channels(action: Action, ob: Object):
    """(fcurves, groups) of ``action`` for ``ob`` without creating anything, or None."""
    if action is None:
        return None
    if not HAS_SLOTTED_ACTIONS:
        return action.fcurves, action.groups
    anim = ob.animation_data
    slot = anim.action_slot if anim is not None and anim.action == action else None
    if slot is None:
        return None
    return next(((bag.fcurves, bag.groups) for bag in _channelbags(action, slot)), None)


def _channelbags(action: Action, slot):
    """The channelbags that hold ``slot``'s curves, in every strip of every layer (4.4+)."""
    for layer in action.layers:
        for strip in layer.strips:
            channelbag = strip.channelbag(slot)
            if channelbag is not None:
                yield channelbag


def object_fcurves(action: Action, ob: Object) -> dict:
    """``{(data_path, index): fcurve}`` of ``action`` that animate ``ob`` (read only, any version).

    Before 4.4 that is ``action.fcurves``. From 4.4 the curves sit in a channelbag per slot:
    the object's assigned slot when it plays this action, else the slot named after the
    object, else the first object slot (an action made for another armature still fits).
    """
    if not HAS_SLOTTED_ACTIONS:
        return {(fc.data_path, fc.array_index): fc for fc in action.fcurves}
    anim = ob.animation_data
    slot = anim.action_slot if anim is not None and anim.action == action else None
    slots = list(action.slots)
    if slot is None:
        slot = next((s for s in slots if s.identifier == "OB" + ob.name), None)
    if slot is None:
        slot = next((s for s in slots if _slot_id_type(s) == "OBJECT"), slots[0] if slots else None)
    if slot is None:
        return {}
    return {(fc.data_path, fc.array_index): fc for bag in _channelbags(action, slot) for fc in bag.fcurves}


def all_action_fcurves(action: Action) -> list:
    """Every F-curve of an action, all slots (for snapshots and tests)."""
    if not HAS_SLOTTED_ACTIONS:
        return list(action.fcurves)
    curves = []
    for layer in action.layers:
        for strip in layer.strips:
            for channelbag in getattr(strip, "channelbags", ()):
                curves.extend(channelbag.fcurves)
    return curves


def assign_action(ob: Object, action: Action) -> None:
    """Make ``action`` the object's active action (with a slot for it from 4.4 on)."""
    anim = ob.animation_data or ob.animation_data_create()
    anim.action = action
    object_slot(action, ob, assign=True)


def new_nla_strip(ob: Object, track: NlaTrack, name: str, start: int, action: Action) -> NlaStrip:
    """A new action strip on ``track`` playing ``action`` for ``ob`` (its slot from 4.4 on)."""
    strip = track.strips.new(name, int(start), action)
    if HAS_SLOTTED_ACTIONS:
        slot = object_slot(action, ob, assign=False)
        if strip.action_slot != slot:
            strip.action_slot = slot
    return strip


def evaluated_depsgraph(context):
    return context.evaluated_depsgraph_get()


def window_manager_progress(context):
    """The window manager when a progress bar can be shown (a UI session), else None."""
    wm = getattr(context, "window_manager", None)
    if wm is None or bpy.app.background:
        return None
    return wm


def is_bone_selected(ob: Object, bone_name: str) -> bool:
    """Selection moved from Bone to PoseBone in 5.0."""
    pose_bone = ob.pose.bones.get(bone_name) if ob.pose is not None else None
    if pose_bone is not None and "select" in pose_bone.bl_rna.properties:
        return bool(pose_bone.select)
    bone = ob.data.bones.get(bone_name)
    return bool(bone is not None and bone.select)


def keyframes_foreach_get(points, name: str, array) -> None:
    """``points.foreach_get(name, array)`` that also reads handle types on Blender 3.4."""
    if FOREACH_HANDLE_TYPES or name not in _HANDLE_TYPES:
        points.foreach_get(name, array)
        return
    values = {item.identifier: item.value for item in bpy.types.Keyframe.bl_rna.properties[name].enum_items}
    for i, key in enumerate(points):
        array[i] = values[getattr(key, name)]


def recalculate_handles(fcurve) -> None:
    """Automatic handles from the key positions, for keys already in frame order.

    ``keyframe_points.handles_recalc`` (4.2 and later) is ``FCurve.update`` without its sort:
    half the time for 1,000 keys. 3.4 has only ``update``."""
    points = fcurve.keyframe_points
    if hasattr(points, "handles_recalc"):
        points.handles_recalc()
    else:
        fcurve.update()


def keyframes_foreach_set(points, name: str, array) -> None:
    """``points.foreach_set(name, array)`` that also writes handle types on Blender 3.4."""
    if FOREACH_HANDLE_TYPES or name not in _HANDLE_TYPES:
        points.foreach_set(name, array)
        return
    identifiers = {item.value: item.identifier for item in bpy.types.Keyframe.bl_rna.properties[name].enum_items}
    for key, value in zip(points, array, strict=True):
        setattr(key, name, identifiers[int(value)])


def keyframe_insert(owner, data_path: str, *, group: str, options: set[str], keytype: str) -> bool:
    """``owner.keyframe_insert`` at the current frame, with the key type where Blender takes one."""
    if KEYFRAME_INSERT_TAKES_KEYTYPE:
        return owner.keyframe_insert(data_path, group=group, options=options, keytype=keytype)
    return owner.keyframe_insert(data_path, group=group, options=options)
