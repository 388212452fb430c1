"""Joint limits copied to the other side of a rig in Edit Mode get their mirror image.

Symmetrize copies a bone's pose data, our joint limits with it, to its counterpart unmirrored
(as a bone duplicated and renamed to the other side does): a left elbow's limits, copied
as they are onto the right elbow, bend it the wrong way. So each armature's limits are
remembered when it enters Edit Mode, and when it leaves, a bone whose limits changed there to
exactly its counterpart's (the counterpart's own unchanged) gets the mirror image of them
(``operators.limit_tools.mirrored_limit``, as *Mirror Joint Limits* gives). Limits that
differ from the counterpart's, or that were already the same before, are left alone.

What was remembered outlives undo and redo (only loading a file forgets it): undo inside Edit
Mode stays in the same edit, and redoing the step that left Edit Mode brings back the copy
unmirrored, to be mirrored again.
"""

from __future__ import annotations

import bpy

from ...solver.limits.mirroring import mirror_name
from .. import compat
from ..runtime.state import session
from .conversion import settings_key, spec_limit, write_limit


def _users(armature) -> list:
    """The objects posing this armature whose joint limits can change here."""
    from ..operators.limit_tools import limits_of_the_library

    return [
        ob
        for ob in bpy.data.objects
        if ob.data == armature and ob.library is None and ob.pose is not None and not limits_of_the_library(ob)
    ]


def _limits(ob) -> dict[str, tuple]:
    return {pose_bone.name: settings_key(pose_bone.quat_ik) for pose_bone in ob.pose.bones}


def follow(touched: list) -> list[str]:
    """Remember the limits of armatures entering Edit Mode; mirror the copies in those that
    left it (``touched``: ``chains.bone_renames.touched_armatures`` of the update). Returns what it
    did, one line each."""
    done = []
    for evaluated in touched:
        armature = evaluated.original
        key = compat.session_key(armature)
        if armature.is_editmode:
            if key not in session.limits_before_edit:  # (the first update in Edit Mode: nothing changed yet)
                session.limits_before_edit[key] = {ob.name_full: _limits(ob) for ob in _users(armature)}
        elif key in session.limits_before_edit:
            done += _mirror_copies(armature, session.limits_before_edit.pop(key))
    return done


def _mirror_copies(armature, remembered: dict) -> list[str]:
    from ..operators.limit_tools import mirrored_limit

    done = []
    for ob in _users(armature):
        before, now = remembered.get(ob.name_full, {}), _limits(ob)
        mirrored = []
        for name, limits in now.items():
            source = mirror_name(name)
            if source == name or now.get(source) != limits:
                continue
            if before.get(name) == limits or before.get(source) != limits:
                continue  # already alike before, or the counterpart changed too: no copy to tell apart
            limit, _problem = mirrored_limit(ob.pose.bones[source], name)
            if limit is not None and limit != spec_limit(ob.pose.bones[name].quat_ik):  # (not symmetric)
                write_limit(ob.pose.bones[name].quat_ik, limit)
                mirrored.append(name)
        if mirrored:
            session.bump(ob)
            done.append(f"joint limits of {', '.join(sorted(mirrored))} on '{ob.name}' mirrored from their side")
    return done
