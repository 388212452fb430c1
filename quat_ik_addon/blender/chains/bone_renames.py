"""Chains follow bone renames, as Blender's own constraints follow their subtargets.

A chain names its bones (tip, and target, orientation and pole bones) by name, and Blender
tells no one when a bone is renamed. So each armature's bones are remembered by name with
where they lie (head and tail at rest), and after an update that touched an armature's data
the names are compared: a name gone and a new one in its place (same head and tail) is a
rename (one bone, or several at once), and every chain that named it is pointed at the new
name. Bones added, deleted or moved while renamed are not inferred.
"""

from __future__ import annotations

from typing import NamedTuple

import bpy

from .. import compat
from ..runtime.state import session

# The chain's (object, bone) pointers; the tip is a bone of the chain's own armature.
BONE_REFERENCES = (
    ("target_object", "target_bone"),
    ("orientation_object", "orientation_bone"),
    ("pole_object", "pole_bone"),
)


def _names(armature) -> dict[str, tuple]:
    """Each bone's name and where it lies (bone order follows the hierarchy, so it is no key)."""
    return {bone.name: (*_rounded(bone.head_local), *_rounded(bone.tail_local)) for bone in armature.bones}


def _rounded(vector) -> tuple:
    return tuple(round(value, 6) for value in vector)


def _renames(before: dict, now: dict) -> dict[str, str]:
    """{old: new} for each name gone whose bone (same place) now has exactly one new name."""
    gone = {name: place for name, place in before.items() if name not in now}
    new_by_place: dict = {}
    for name, place in now.items():
        if name not in before:
            new_by_place.setdefault(place, []).append(name)
    found = {}
    for old, place in gone.items():
        candidates = new_by_place.get(place, [])
        if len(candidates) == 1:
            found[old] = candidates[0]
    return found


def _remembered(armature) -> tuple[tuple[str, ...], dict]:
    # The names alone come in one call: places are read only when the names changed.
    return tuple(armature.bones.keys()), _names(armature)


def remember_all() -> None:
    """Remember every armature's bone names (after a file loads, after undo)."""
    session.bone_names.clear()
    for armature in bpy.data.armatures:
        session.bone_names[compat.session_key(armature)] = _remembered(armature)


class BoneChanges(NamedTuple):
    renamed: dict  # {armature data: {old name: new name}}
    added: dict  # {armature data: names it did not have} for each whose names changed or that left Edit Mode


def touched_armatures(depsgraph) -> list:
    """The evaluated armature data an update touched (what every follower of bone edits reads)."""
    return [update.id for update in depsgraph.updates if isinstance(update.id, bpy.types.Armature)]


def follow(touched: list) -> BoneChanges:
    """Point chains at the new names of bones renamed since the last update (``touched``:
    ``touched_armatures`` of it)."""
    renamed, added = {}, {}
    for evaluated in touched:
        armature = evaluated.original
        if armature.is_editmode:
            session.bones_being_edited.add(compat.session_key(armature))
            continue  # its bones are being rebuilt: compared once it leaves Edit Mode
        # Leaving Edit Mode counts as a change even with the same names: Symmetrize run again
        # copies the left side's bone data over the right side's.
        edited = compat.session_key(armature) in session.bones_being_edited
        session.bones_being_edited.discard(compat.session_key(armature))
        # Live writes poses, so an armature is in most updates: its bone names are compared in
        # one call, and the places read only when they differ (or the armature is new here:
        # the add-on was enabled since the file loaded).
        before = session.bone_names.get(compat.session_key(armature))
        if before is not None and tuple(evaluated.bones.keys()) == before[0] and not edited:
            continue
        now = _remembered(evaluated)
        session.bone_names[compat.session_key(armature)] = now
        added[armature] = set(now[0]).difference(before[0] if before is not None else ())
        if before is not None:
            names = _renames(before[1], now[1])
            if names:
                renamed[armature] = names
    if renamed:
        _point_chains_at(renamed)
    return BoneChanges(renamed, added)


def _point_chains_at(renamed: dict) -> None:
    for ob in bpy.data.objects:
        if ob.type != "ARMATURE" or ob.library is not None or not getattr(ob, "quat_ik", None):
            continue
        for chain in ob.quat_ik.chains:
            names = renamed.get(ob.data)
            if names and chain.tip_bone in names:
                chain.tip_bone = names[chain.tip_bone]
            for object_attribute, bone_attribute in BONE_REFERENCES:
                target = getattr(chain, object_attribute)
                names = renamed.get(target.data) if target is not None and target.type == "ARMATURE" else None
                if names and getattr(chain, bone_attribute) in names:
                    setattr(chain, bone_attribute, names[getattr(chain, bone_attribute)])
