"""Chains go where their tip bone goes: Join (Ctrl-J), Separate (P), Symmetrize, duplicates.

Chains are listed on the armature object, and Blender's Join keeps only the active object's
properties, so the chains of every armature joined into it were lost; Separate copies the
whole list to the new armature, so each half kept chains whose bones went to the other.
Blender's own constraints live on the pose bones and travel with them (Symmetrize and bone
duplicates copy them too). So each chain leaves a record on its tip pose bone (an ID property
{chain id: record}, which those edits carry with the bone): the armature that lists it and
its settings. After an update that changed the bones of an armature (``bone_renames.follow``
notices), the records are read back:

* a record whose chain is listed nowhere in its armature came with joined bones: the chain is
  listed again from it (a record left by a chain this armature removed is dropped instead);
* a record copied to another bone of the same armature lists a copy of the chain there,
  mirrored (``mirroring.mirror_in_place``) where the bone is the tip's
  counterpart (Symmetrize; ``limits.symmetrized`` mirrors the limits it copied); a copy
  landing on the tip of a listed chain is dropped;
* a chain whose tip bone left with Separate is dropped where the other armature lists it
  with its tip;
* two armatures listing the same chain with their own tip bones (a duplicated object) give
  the younger copy a new id, so the two are told apart from then on;
* a target (or pole, or orientation) bone that Join or Separate moved to another armature is
  looked up on that one, as they point Blender's constraints there;
* a chain whose bones changed while its settings did not (a middle bone deleted: the chain
  follows the tip's new parents up to the next ancestor; bones re-parented or subdivided) is
  told about: in a report, and in Last Solve until one of its settings changes (the record
  keeps the bones it spans, and the notice).

Nothing runs while an armature is in Edit Mode: its pose bones are rebuilt when it leaves.
"""

from __future__ import annotations

import re

import bpy

from ...solver.limits.mirroring import mirror_name
from ..runtime.state import session
from . import tip_records
from .bone_renames import BONE_REFERENCES
from .deleted_targets import release_deleted
from .listing import unique_chain_name
from .mirroring import mirror_in_place


def _age(ob):
    # session_uid grows with every ID made in a session (Blender 3.5+); the name before.
    return getattr(ob, "session_uid", None) or ob.name


def reconcile(added: dict, renamed: dict | None = None) -> list[str]:
    """Carry out the module docstring's rules for the objects using the armature data whose
    bones changed ({armature: names of bones added}; ``renamed``: {armature: {old name: new
    name}}), and any waiting from an earlier update; returns what it did, one line each."""
    for armature, names in added.items():
        session.records_pending.setdefault(armature.name_full, set()).update(names)
    for armature, names in (renamed or {}).items():
        earlier = session.renames_pending.setdefault(armature.name_full, {})
        for old, new in list(earlier.items()):  # renamed twice while another armature was edited
            earlier[old] = names.get(new, new)
        for old, new in names.items():
            earlier.setdefault(old, new)
    if not session.records_pending:
        return []
    # Objects in no collection are left over (joined away or deleted): ``deleted_targets``.
    objects = [
        ob for ob in bpy.data.objects if tip_records.local_armature(ob) and ob.pose is not None and ob.users_collection
    ]
    if any(ob.mode == "EDIT" or ob.data.is_editmode for ob in objects):
        return []  # pose bones are rebuilt on leaving Edit Mode: wait for that update
    changed = {
        ob: session.records_pending[ob.data.name_full] for ob in objects if ob.data.name_full in session.records_pending
    }
    renames = {ob: session.renames_pending.get(ob.data.name_full, {}) for ob in changed}
    session.records_pending.clear()
    session.renames_pending.clear()
    if not changed:
        return []
    records = {ob: tip_records.records_of(ob) for ob in objects}
    done = _drop_separated(changed, records)
    done += _tell_copies_apart(changed, objects, records)
    # The records as they were before any chain is listed or changed here (which rewrites them).
    recorded = {uid: places[0][1] for found in records.values() for uid, places in found.items()}
    for ob in changed:
        done += _adopt(ob, records[ob])
    for ob in objects:
        done += _relink_moved_bones(ob, changed, recorded)
    notices: dict = {}
    for ob in changed:
        done += _tell_changed_bones(ob, recorded, renames[ob], notices)
    for ob in changed:
        for chain in ob.quat_ik.chains:
            tip_records.write(chain, notices.get(chain.uid, ""))
    return done + release_deleted()  # (chains reaching for an armature joined away point elsewhere now)


def _tell_changed_bones(ob, recorded: dict, renames: dict, notices: dict) -> list[str]:
    """Chains of ``ob`` whose bones changed while their settings did not (``recorded``: the
    records by chain id before this update's changes; ``renames``: {old: new} bone names):
    their notice for Last Solve goes into ``notices`` (by chain id), and a line for the report
    is returned; a notice recorded before stays while the bones stay as recorded."""
    done = []
    for chain in ob.quat_ik.chains:
        record = recorded.get(chain.uid)
        if record is None or record.get("owner") != ob.name:
            continue  # (joined or separated with their bones, maybe renamed: nothing to compare)
        before = [renames.get(name, name) for name in record.get("bones", ())]
        now = list(tip_records.bones_of(ob, chain))
        if not before or not now or now == before:
            if record.get("notice"):
                notices[chain.uid] = record["notice"]
            continue
        notices[chain.uid] = _bones_notice(ob, chain, before, now)
        done.append(f"chain '{chain.name}' of '{ob.name}': {notices[chain.uid]}")
        session.bump(ob)
    return done


def _bones_notice(ob, chain, before: list[str], now: list[str]) -> str:
    """What Last Solve says about a chain that spans bones ``now``, not ``before``."""
    bones = ob.data.bones
    deleted = [name for name in before if name not in bones]
    said = f"its bones changed: it spans {' > '.join(now)} now, not {' > '.join(before)}"
    if deleted:
        said += f" ({', '.join(repr(name) for name in deleted)} deleted)"
    root = bones.get(before[0])
    bone = bones.get(chain.tip_bone)
    length = 1
    while bone is not None and root is not None and bone != root:
        bone, length = bone.parent, length + 1
    if bone is not None and root is not None and length != chain.chain_length:
        said += f"; Chain Length {length} keeps its root at '{root.name}'"
    return said


def _listed_with_tip(ob, uid: str):
    for chain in ob.quat_ik.chains:
        if chain.uid == uid and chain.tip_bone in ob.pose.bones:
            return chain
    return None


def _drop_separated(changed, records) -> list[str]:
    done = []
    for ob in changed:
        chains = ob.quat_ik.chains
        for index in reversed(range(len(chains))):
            chain = chains[index]
            if not chain.uid or chain.tip_bone in ob.pose.bones:
                continue
            elsewhere = [
                other
                for other, found in records.items()
                if other != ob
                and any(bone.name == chain.tip_bone for bone, _ in found.get(chain.uid, ()))
                and _listed_with_tip(other, chain.uid) is not None
            ]
            if elsewhere:
                done.append(f"chain '{chain.name}' left '{ob.name}' with its bones, for '{elsewhere[0].name}'")
                chains.remove(index)
                ob.quat_ik.active_chain_index = max(0, min(ob.quat_ik.active_chain_index, len(chains) - 1))
                session.bump(ob)
    return done


def _tell_copies_apart(changed, objects, records) -> list[str]:
    done = []
    for ob in changed:
        for chain in ob.quat_ik.chains:
            if not chain.uid or chain.tip_bone not in ob.pose.bones:
                continue
            twins = [other for other in objects if other != ob and _listed_with_tip(other, chain.uid) is not None]
            if twins and any(_age(ob) > _age(other) for other in twins):
                tip_records.forget(ob, chain.uid)
                chain.uid = tip_records.new_uid()
                tip_records.write(chain)
                records[ob] = tip_records.records_of(ob)
                done.append(f"chain '{chain.name}' of '{ob.name}' is a copy: it has its own id now")
    return done


def _adopt(ob, found: dict) -> list[str]:
    """List the chains whose records came with bones: joined from another armature, or copied
    inside this one (Symmetrize mirrors them, a bone duplicated copies them)."""
    listed = {chain.uid: chain.tip_bone for chain in ob.quat_ik.chains if chain.uid}
    tips = set(listed.values())
    arrivals = []
    for uid, places in found.items():
        for pose_bone, record in places:
            tip = listed.get(uid)
            if tip == pose_bone.name:
                continue
            mirrored = tip is not None and mirror_name(tip) == pose_bone.name
            if (tip is None and record.get("owner") == ob.name) or (tip is not None and pose_bone.name in tips):
                # Its chain was removed here (not by our operator), or the copy landed on the tip
                # of a chain that is listed already (Symmetrize again): the record is stale.
                tip_records.drop(pose_bone, uid)
                continue
            if tip is None:
                how = f"came with the bones joined into '{ob.name}'"
            elif mirrored:
                how = f"mirrors the chain on '{tip}' (Symmetrize)"
            else:
                how = f"copies the chain on '{tip}' (its tip bone was copied)"
            arrivals.append((pose_bone.name, record, uid if tip is None else tip_records.new_uid(), mirrored, how))
            listed.setdefault(uid, pose_bone.name)
    # Chains are added only now: adding to a collection may move the items Python holds.
    return [
        f"chain '{_list_from(ob, tip, record, uid, mirrored)}' {how}" for tip, record, uid, mirrored, how in arrivals
    ]


def _list_from(ob, tip: str, record, uid: str, mirrored: bool = False):
    """A chain listed from a record (mirrored: a copy Symmetrize made on the counterpart tip)."""
    settings = record.get("settings", {})
    chains = ob.quat_ik.chains
    chain = chains.add()
    chain.uid, chain.tip_bone = uid, tip
    properties = chain.bl_rna.properties
    for prop in properties:
        name = prop.identifier
        if (
            name in tip_records.NOT_CARRIED
            or name == "mode"
            or (name not in settings and name + "_name" not in settings)
        ):
            continue
        if prop.type == "POINTER":
            setattr(chain, name, tip_records.object_of(settings, name, ob))
        elif prop.type == "BOOLEAN" and not getattr(prop, "is_array", False):
            setattr(chain, name, bool(settings[name]))
        else:
            setattr(chain, name, settings[name])
    if mirrored:
        mirror_in_place(chain)
    chain.name = unique_chain_name(chains, chain.name or tip, exclude=chain)
    chain.mode = settings.get("mode", chain.mode)  # last: a Live chain solves from complete settings
    session.bump(ob)
    return chain.name


def _joined_away(ob) -> bool:
    """An armature Join took the bones of, still there because a chain points at it: in no
    collection, its pose emptied, its data not."""
    return (
        ob is not None
        and ob.type == "ARMATURE"
        and not ob.users_collection
        and ob.pose is not None
        and len(ob.pose.bones) == 0
        and len(ob.data.bones) > 0
    )


def _relink_moved_bones(ob, changed: dict, recorded: dict) -> list[str]:
    """Point a chain's target, pole or orientation bone that an edit moved to another armature
    at that armature, as Join and Separate point Blender's constraints: the bone's armature
    was joined away (the pointer went with it, or only chains still hold it: the record, as
    ``recorded`` before this update's changes by chain id, names it), or separated from it
    (the pointed armature has the bone no more). The bone must be among the bones just added
    to an armature (the chain's own first), under its name or the one Join gave it."""
    done = []
    for chain in ob.quat_ik.chains:
        record = recorded.get(chain.uid)
        if record is None:  # a copy listed just now, under a new id: its record is the copy's
            tip = ob.pose.bones.get(chain.tip_bone)
            record = tip.get(tip_records.RECORDS, {}).get(chain.uid) if tip is not None else None
            if record is None:
                continue
            record = record.to_dict()  # a copy: re-pointing rewrites the record
        settings = record.get("settings", {})
        # A chain joined in from another armature reached for that one's bones as its own.
        former_owner = bpy.data.objects.get(record.get("owner", "")) if record.get("owner") != ob.name else None
        for object_attribute, bone_attribute in BONE_REFERENCES:
            was, bone = settings.get(object_attribute + "_name"), getattr(chain, bone_attribute)
            pointed = getattr(chain, object_attribute)
            if was == tip_records.OWN and _joined_away(former_owner) and pointed == ob and bone:
                name = _name_there(bone, former_owner, ob, changed.get(ob, set()))
                if name is not None and name != bone:
                    setattr(chain, bone_attribute, name)
                    done.append(f"chain '{chain.name}' of '{ob.name}' reaches for '{name}' now (Join renamed '{bone}')")
                continue
            freed = pointed is None and was not in (None, tip_records.OWN) and was not in bpy.data.objects
            separated = (
                pointed is not None and pointed.type == "ARMATURE" and bool(bone) and bone not in pointed.data.bones
            )
            if not (freed or separated or _joined_away(pointed)):
                continue
            if not bone:
                continue
            for holder in sorted(changed, key=lambda other: other != ob):
                name = _name_there(bone, pointed, holder, changed[holder]) if holder != pointed else None
                if name is not None:
                    setattr(chain, object_attribute, holder)
                    setattr(chain, bone_attribute, name)
                    done.append(f"chain '{chain.name}' of '{ob.name}' reaches for '{name}' on '{holder.name}' now")
                    break
    return done


def _name_there(bone: str, pointed, holder, added: set) -> str | None:
    """The name bone ``bone`` (of armature ``pointed``, None if freed) has among the bones
    ``added`` to ``holder``: its own, or the numbered one Join gave it where the name was taken
    (``Handle`` → ``Handle.001``), lying where the bone lay on ``pointed``."""
    if bone in added:
        return bone
    if pointed is None or pointed.type != "ARMATURE" or bone not in pointed.data.bones:
        return None  # (a bone deleted before the Join is not looked for under another name)
    numbered = re.compile(re.escape(bone) + r"\.\d{3,}")
    head = holder.matrix_world.inverted() @ pointed.matrix_world @ pointed.data.bones[bone].head_local
    candidates = [
        name
        for name in added
        if numbered.fullmatch(name)
        and (holder.data.bones[name].head_local - head).length <= 1e-5 * max(1.0, head.length)
    ]
    return candidates[0] if len(candidates) == 1 else None


def read_again() -> None:
    """Have the next update read every armature's records (after undo or redo)."""
    for armature in bpy.data.armatures:
        session.records_pending.setdefault(armature.name_full, set())
