"""What several operators share: their polls on the active armature and chain, the check that
its chains may change, and the sphere empties Add Chain and Add Pole Target make.
"""

from __future__ import annotations

import bpy

from .. import compat
from ..chains import settings


def armature_with_chains_poll(cls, context) -> bool:
    """An armature with Quat IK chains is active; else the poll message says what is missing."""
    ob = context.object
    if ob is None or ob.type != "ARMATURE":
        compat.poll_message(cls, "Select an armature")
        return False
    if not ob.quat_ik.chains:
        compat.poll_message(cls, f"'{ob.name}' has no Quat IK chains")
        return False
    return True


def chains_editable(operator, ob) -> bool:
    """True if the armature's chains can be changed (a library override's can); else reports why."""
    if compat.is_editable(ob):
        return True
    operator.report({"ERROR"}, f"Armature '{ob.name}' is linked and cannot be changed")
    return False


def armature_or_report(operator, ob) -> bool:
    """True if ``ob`` is an armature whose pose may change; else reports why (status bar)."""
    from ..errors import ChainError
    from ..rig import reader

    try:
        reader.check_armature(ob)
    except ChainError as error:
        operator.report({"ERROR"}, str(error))
        return False
    return True


def active_chain_poll(cls, context):
    """The active chain of an armature with chains, or None (the poll message says what is missing)."""
    if not armature_with_chains_poll(cls, context):
        return None
    chain = settings.active_chain(context.object)
    if chain is None:
        compat.poll_message(cls, "Select a chain in the Quat IK Chains list")
    return chain


def new_empty(context, ob, name: str, location, size: float):
    """A sphere empty at ``location`` (world), in the armature's first collection (the
    scene's when that one is linked and read-only)."""
    empty = bpy.data.objects.new(name, None)
    empty.empty_display_type = "SPHERE"
    empty.empty_display_size = size
    empty.location = location
    compat.link_object(empty, ob.users_collection[:1], context.scene)
    return empty
