"""Objects deleted while chains reach for them go, as they go from Blender's constraints.

Blender deletes an object (X, or Join taking an armature's bones) that only Blender's
constraints reach for, and clears the constraints' targets. A chain's target, pole or
orientation pointer (and its record, ``chains.records``) holds the object as a user, so
Blender only unlinks it: unseen in any collection, still in every constraint that reached
for it, and saved with the file for ever. So an object that was seen in a collection, is in
none now and that only chains hold is let go by the chains (each reports its target missing)
and deleted as Blender would have: its name is free again. An object never seen in a
collection may be a script's, still to be linked: it is kept.
"""

from __future__ import annotations

import bpy

from .. import compat
from ..runtime.state import session
from .bone_renames import BONE_REFERENCES
from .tip_records import RECORDS, local_armature


def release_deleted(delete: bool = True) -> list[str]:
    """Let go of the objects in no collection that only chains hold and, with ``delete``, delete
    them (see the module docstring). Waits while records wait for Edit Mode to end (Join's
    re-pointing reads where chains pointed). Returns what it did, one line each."""
    if session.records_pending:
        return []
    held: dict = {}  # object -> [(chain, pointer attribute)]
    for ob in bpy.data.objects:
        if ob.type != "ARMATURE" or ob.library is not None:
            continue  # (a library override's chains are the shot's: they let go too)
        for chain in ob.quat_ik.chains:
            for attribute, _ in BONE_REFERENCES:
                pointed = getattr(chain, attribute)
                if pointed is None:
                    continue
                if pointed.users_collection:
                    session.seen_in_collections.add(compat.session_key(pointed))
                else:
                    held.setdefault(pointed, []).append((chain, attribute))
    deleted = [
        pointed
        for pointed, holders in held.items()
        # An object never seen in a collection may be a script's, still to be linked.
        if compat.session_key(pointed) in session.seen_in_collections
        and pointed.library is None
        and not pointed.use_fake_user
        and pointed.users == len(holders) + _in_records(pointed)
    ]
    done = []
    for pointed in deleted:
        name, own = pointed.name, pointed.type == "ARMATURE"
        for chain, attribute in held[pointed]:
            if not own or chain.id_data != pointed:  # (an armature's own chains go with it)
                done.append(f"chain '{chain.name}' of '{chain.id_data.name}' lost '{name}' (deleted)")
            setattr(chain, attribute, None)  # (its record is rewritten without it)
        if delete and pointed.users == 0:
            bpy.data.objects.remove(pointed)
    return done


def _in_records(ob) -> int:
    """How many chain records hold ``ob`` (objects other than armatures: ``tip_records._settings``)."""
    if ob.type == "ARMATURE":
        return 0
    count = 0
    for armature in bpy.data.objects:
        if local_armature(armature) and armature.pose is not None:
            for pose_bone in armature.pose.bones:
                for record in pose_bone.get(RECORDS, {}).values():
                    count += sum(1 for value in record.get("settings", {}).values() if value == ob)
    return count
