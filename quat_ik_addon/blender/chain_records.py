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
  mirrored (``operators_mirror_chain.mirror_in_place``) where the bone is the tip's
  counterpart (Symmetrize; ``symmetrized_limits`` mirrors the limits it copied); a copy
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
import uuid

import bpy

from ..solver.mirroring import mirror_name
from . import runtime
from .bone_renames import BONE_REFERENCES

# On a tip pose bone: {chain id: {"owner": armature name, "settings": {...}, "bones": [root ... tip],
# "notice": what Last Solve says about a change of its bones}} ("bones" where the chain can be
# read, "notice" until a setting of the chain changes).
RECORDS = "quat_ik_chains"
# Written by solves, or named by the record itself: not settings to carry.
NOT_CARRIED = {"rna_type", "tip_bone", "uid"}
OWN = "\x00own"  # an object setting naming the chain's own armature (no object has this name)


def local_armature(ob) -> bool:
    return ob.type == "ARMATURE" and ob.library is None and ob.override_library is None


def new_uid() -> str:
    return uuid.uuid4().hex


def _settings(chain, owner) -> dict:
    """The chain's settings as ID-property values. Objects are named, not held: a record that
    held an armature joined into this one would keep it alive after Join; other objects cannot
    be joined into an armature and are also held (a rename keeps them found)."""
    values = {}
    for prop in chain.bl_rna.properties:
        name = prop.identifier
        if name in NOT_CARRIED or name.startswith("status_") or prop.is_readonly:
            continue
        value = getattr(chain, name)
        if prop.type == "POINTER":
            if value is not None:
                values[name + "_name"] = OWN if value == owner else value.name
                if value.type != "ARMATURE":
                    values[name] = value
        elif prop.type in ("FLOAT", "INT", "BOOLEAN") and getattr(prop, "is_array", False):
            values[name] = [type(item)(item) for item in value]
        elif prop.type == "BOOLEAN":
            values[name] = int(value)
        else:
            values[name] = value
    return values


def _object_of(settings: dict, name: str, owner):
    """The object a record's setting names (see ``_settings``), or None where it is gone."""
    held, named = settings.get(name), settings.get(name + "_name")
    if held is not None:
        return held
    return owner if named == OWN else bpy.data.objects.get(named) if named else None


def write(chain, notice: str = "") -> None:
    """Record the chain on its tip pose bone (and on no other bone of its armature), with the
    bones it spans now and ``notice`` (what Last Solve says about a change of its bones; a
    setting changed drops it: ``properties`` writes without one)."""
    ob = chain.id_data
    if not isinstance(ob, bpy.types.Object) or not local_armature(ob) or ob.pose is None:
        return
    if not chain.uid:
        chain.uid = new_uid()
    tip = ob.pose.bones.get(chain.tip_bone)
    forget(ob, chain.uid, keep=tip)
    if tip is None:
        return
    record = {"owner": ob.name, "settings": _settings(chain, ob)}
    bones = _bones_of(ob, chain)
    if bones:
        record["bones"] = list(bones)
    if notice:
        record["notice"] = notice
    entries = tip.get(RECORDS)
    if entries is None:
        tip[RECORDS] = {chain.uid: record}
    elif chain.uid not in entries or entries[chain.uid].to_dict() != record:
        entries[chain.uid] = record


def _bones_of(ob, chain) -> tuple[str, ...]:
    """The chain's bones, root to tip (none where it cannot be read)."""
    from .errors import ChainError
    from .rig_reader import chain_bone_names  # (imported on first use: registering stays light)

    try:
        return chain_bone_names(ob, chain.tip_bone, chain.chain_length)
    except ChainError:
        return ()


def notice(chain) -> str:
    """What the chain's record says about a change of its bones ("" when nothing)."""
    ob = chain.id_data
    tip = ob.pose.bones.get(chain.tip_bone) if ob.pose is not None else None
    record = tip.get(RECORDS, {}).get(chain.uid) if tip is not None and chain.uid else None
    return str(record.get("notice", "")) if record is not None else ""


def _drop(pose_bone, uid: str) -> None:
    entries = pose_bone[RECORDS]
    del entries[uid]
    if not len(entries):
        del pose_bone[RECORDS]


def forget(ob, uid: str, keep=None) -> None:
    """Remove the chain's record from every bone of the armature (but ``keep``, its tip)."""
    for pose_bone in ob.pose.bones:
        if pose_bone != keep and uid in pose_bone.get(RECORDS, ()):
            _drop(pose_bone, uid)


def _records(ob) -> dict[str, list]:
    """{uid: [(pose bone, record as a dict)]} on the armature's pose bones (copies: writing a
    record frees the one it replaces)."""
    found: dict[str, list] = {}
    for pose_bone in ob.pose.bones:
        for uid, record in pose_bone.get(RECORDS, {}).items():
            found.setdefault(uid, []).append((pose_bone, record.to_dict()))
    return found


def _age(ob):
    # session_uid grows with every ID made in a session (Blender 3.5+); the name before.
    return getattr(ob, "session_uid", None) or ob.name


def reconcile(added: dict, renamed: dict | None = None) -> list[str]:
    """Carry out the module docstring's rules for the objects using the armature data whose
    bones changed ({armature: names of bones added}; ``renamed``: {armature: {old name: new
    name}}), and any waiting from an earlier update; returns what it did, one line each."""
    for armature, names in added.items():
        runtime.records_pending.setdefault(armature.name_full, set()).update(names)
    for armature, names in (renamed or {}).items():
        earlier = runtime.renames_pending.setdefault(armature.name_full, {})
        for old, new in list(earlier.items()):  # renamed twice while another armature was edited
            earlier[old] = names.get(new, new)
        for old, new in names.items():
            earlier.setdefault(old, new)
    if not runtime.records_pending:
        return []
    # Objects in no collection are left over (joined away or deleted): ``deleted_targets``.
    objects = [ob for ob in bpy.data.objects if local_armature(ob) and ob.pose is not None and ob.users_collection]
    if any(ob.mode == "EDIT" or ob.data.is_editmode for ob in objects):
        return []  # pose bones are rebuilt on leaving Edit Mode: wait for that update
    changed = {
        ob: runtime.records_pending[ob.data.name_full] for ob in objects if ob.data.name_full in runtime.records_pending
    }
    renames = {ob: runtime.renames_pending.get(ob.data.name_full, {}) for ob in changed}
    runtime.records_pending.clear()
    runtime.renames_pending.clear()
    if not changed:
        return []
    records = {ob: _records(ob) for ob in objects}
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
            write(chain, notices.get(chain.uid, ""))
    from .deleted_targets import release_deleted

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
        now = list(_bones_of(ob, chain))
        if not before or not now or now == before:
            if record.get("notice"):
                notices[chain.uid] = record["notice"]
            continue
        notices[chain.uid] = _bones_notice(ob, chain, before, now)
        done.append(f"chain '{chain.name}' of '{ob.name}': {notices[chain.uid]}")
        runtime.bump(ob)
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
                runtime.bump(ob)
    return done


def _tell_copies_apart(changed, objects, records) -> list[str]:
    done = []
    for ob in changed:
        for chain in ob.quat_ik.chains:
            if not chain.uid or chain.tip_bone not in ob.pose.bones:
                continue
            twins = [other for other in objects if other != ob and _listed_with_tip(other, chain.uid) is not None]
            if twins and any(_age(ob) > _age(other) for other in twins):
                forget(ob, chain.uid)
                chain.uid = new_uid()
                write(chain)
                records[ob] = _records(ob)
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
                _drop(pose_bone, uid)
                continue
            if tip is None:
                how = f"came with the bones joined into '{ob.name}'"
            elif mirrored:
                how = f"mirrors the chain on '{tip}' (Symmetrize)"
            else:
                how = f"copies the chain on '{tip}' (its tip bone was copied)"
            arrivals.append((pose_bone.name, record, uid if tip is None else new_uid(), mirrored, how))
            listed.setdefault(uid, pose_bone.name)
    # Chains are added only now: adding to a collection may move the items Python holds.
    return [
        f"chain '{_list_from(ob, tip, record, uid, mirrored)}' {how}" for tip, record, uid, mirrored, how in arrivals
    ]


def _list_from(ob, tip: str, record, uid: str, mirrored: bool = False):
    """A chain listed from a record (mirrored: a copy Symmetrize made on the counterpart tip)."""
    from .operators_chain import unique_chain_name
    from .operators_mirror_chain import mirror_in_place

    settings = record.get("settings", {})
    chains = ob.quat_ik.chains
    chain = chains.add()
    chain.uid, chain.tip_bone = uid, tip
    properties = chain.bl_rna.properties
    for prop in properties:
        name = prop.identifier
        if name in NOT_CARRIED or name == "mode" or (name not in settings and name + "_name" not in settings):
            continue
        if prop.type == "POINTER":
            setattr(chain, name, _object_of(settings, name, ob))
        elif prop.type == "BOOLEAN" and not getattr(prop, "is_array", False):
            setattr(chain, name, bool(settings[name]))
        else:
            setattr(chain, name, settings[name])
    if mirrored:
        mirror_in_place(chain)
    chain.name = unique_chain_name(chains, chain.name or tip, exclude=chain)
    chain.mode = settings.get("mode", chain.mode)  # last: a Live chain solves from complete settings
    runtime.bump(ob)
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
            record = tip.get(RECORDS, {}).get(chain.uid) if tip is not None else None
            if record is None:
                continue
            record = record.to_dict()  # a copy: re-pointing rewrites the record
        settings = record.get("settings", {})
        # A chain joined in from another armature reached for that one's bones as its own.
        former_owner = bpy.data.objects.get(record.get("owner", "")) if record.get("owner") != ob.name else None
        for object_attribute, bone_attribute in BONE_REFERENCES:
            was, bone = settings.get(object_attribute + "_name"), getattr(chain, bone_attribute)
            pointed = getattr(chain, object_attribute)
            if was == OWN and _joined_away(former_owner) and pointed == ob and bone:
                name = _name_there(bone, former_owner, ob, changed.get(ob, set()))
                if name is not None and name != bone:
                    setattr(chain, bone_attribute, name)
                    done.append(f"chain '{chain.name}' of '{ob.name}' reaches for '{name}' now (Join renamed '{bone}')")
                continue
            freed = pointed is None and was not in (None, OWN) and was not in bpy.data.objects
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
        runtime.records_pending.setdefault(armature.name_full, set())


def write_all() -> None:
    """Record every chain of every local armature (a file saved before chains had records),
    keeping what their records say about a change of their bones."""
    for ob in bpy.data.objects:
        if local_armature(ob) and ob.pose is not None:
            for chain in ob.quat_ik.chains:
                write(chain, notice(chain))
