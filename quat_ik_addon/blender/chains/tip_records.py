"""The record each chain leaves on its tip pose bone: its armature, its settings, the bones it
spans and what Last Solve says about a change of them (``records`` reads them back after Join,
Separate, Symmetrize and duplicates; ``deleted_targets`` counts the objects they hold).
"""

from __future__ import annotations

import uuid

import bpy

from ..errors import ChainError
from ..rig.bones import follow_parents

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


def object_of(settings: dict, name: str, owner):
    """The object a record's setting names (see ``_settings``), or None where it is gone."""
    held, named = settings.get(name), settings.get(name + "_name")
    if held is not None:
        return held
    return owner if named == OWN else bpy.data.objects.get(named) if named else None


def write(chain, notice: str = "") -> None:
    """Record the chain on its tip pose bone (and on no other bone of its armature), with the
    bones it spans now and ``notice`` (what Last Solve says about a change of its bones; a
    setting changed drops it: ``chains.settings`` writes without one)."""
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
    bones = bones_of(ob, chain)
    if bones:
        record["bones"] = list(bones)
    if notice:
        record["notice"] = notice
    entries = tip.get(RECORDS)
    if entries is None:
        tip[RECORDS] = {chain.uid: record}
    elif chain.uid not in entries or entries[chain.uid].to_dict() != record:
        entries[chain.uid] = record


def bones_of(ob, chain) -> tuple[str, ...]:
    """The chain's bones, root to tip (none where it cannot be read)."""
    try:
        return follow_parents(ob, chain.tip_bone, chain.chain_length)
    except ChainError:
        return ()


def notice(chain) -> str:
    """What the chain's record says about a change of its bones ("" when nothing)."""
    ob = chain.id_data
    tip = ob.pose.bones.get(chain.tip_bone) if ob.pose is not None else None
    record = tip.get(RECORDS, {}).get(chain.uid) if tip is not None and chain.uid else None
    return str(record.get("notice", "")) if record is not None else ""


def drop(pose_bone, uid: str) -> None:
    entries = pose_bone[RECORDS]
    del entries[uid]
    if not len(entries):
        del pose_bone[RECORDS]


def forget(ob, uid: str, keep=None) -> None:
    """Remove the chain's record from every bone of the armature (but ``keep``, its tip)."""
    for pose_bone in ob.pose.bones:
        if pose_bone != keep and uid in pose_bone.get(RECORDS, ()):
            drop(pose_bone, uid)


def records_of(ob) -> dict[str, list]:
    """{uid: [(pose bone, record as a dict)]} on the armature's pose bones (copies: writing a
    record frees the one it replaces)."""
    found: dict[str, list] = {}
    for pose_bone in ob.pose.bones:
        for uid, record in pose_bone.get(RECORDS, {}).items():
            found.setdefault(uid, []).append((pose_bone, record.to_dict()))
    return found


def write_all() -> None:
    """Record every chain of every local armature (a file saved before chains had records),
    keeping what their records say about a change of their bones."""
    for ob in bpy.data.objects:
        if local_armature(ob) and ob.pose is not None:
            for chain in ob.quat_ik.chains:
                write(chain, notice(chain))
