"""Tools for joint limits: reset, copy to selected bones, left ↔ right mirroring, and the
checks every limit operator shares (the window, preset, rig-file and fitting operators build
on them).

The solver's pure modules do the work (``mirroring``, ``limits.conversion`` for the settings);
these operators read and write the pose bones' ``quat_ik`` settings around them. Each operator
computes everything first and writes only when nothing failed, so a bad input reports an error
and leaves the scene unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import bpy
import numpy as np
from bpy.props import BoolProperty

from .. import compat
from ..limits.conversion import copy_limits, reset_limits, spec_limit, write_limit
from ..runtime.state import session

if TYPE_CHECKING:
    from ...solver.rig import spec as spec


# --------------------------------------------------------------------------- shared checks


def _spec_limit_or_error(pose_bone) -> tuple[spec.JointLimit | None, str]:
    """(rig-spec limit, '') of a bone's settings, or (None, message naming the bone)."""
    from ...solver.rig import spec as spec

    try:
        return spec_limit(pose_bone.quat_ik), ""
    except spec.RigSpecError as error:
        return None, f"Bone '{pose_bone.name}' has invalid joint limits: {error}"


def rest_matrix3(ob, bone_name: str) -> np.ndarray:
    """The bone's rest orientation in armature space (3 x 3); limits are measured from it."""
    return np.array(ob.data.bones[bone_name].matrix_local.to_3x3(), dtype=np.float64)


def mirrored_limit(source, other: str) -> tuple[spec.JointLimit | None, str]:
    """(the mirror image of pose bone ``source``'s limits for its counterpart ``other``, '') or
    (None, why not)."""
    from ...solver.limits.mirroring import mirror_limit

    limit, problem = _spec_limit_or_error(source)
    if limit is None:
        return None, problem
    ob = source.id_data
    try:
        return mirror_limit(limit, rest_matrix3(ob, source.name), rest_matrix3(ob, other)), ""
    except ValueError as error:
        return None, f"Cannot mirror '{source.name}' to '{other}': {error}"


def limits_of_the_library(ob) -> str:
    """Why the armature's joint limits cannot change here, or "" if they can.

    A library override cannot keep them (``overrides``): they are the library's, as its bones are.
    """
    if getattr(ob, "override_library", None) is None:
        return ""
    where = compat.linked_from(ob.override_library.reference)
    return (
        f"Armature '{ob.name}' is a library override: its joint limits come with the rig"
        f"{f' from {where}' if where else ''}; change them there"
    )


def editable_armature(operator, ob) -> bool:
    """True if the armature's joint limits can be changed; else reports why and returns False."""
    locked = limits_of_the_library(ob)
    if locked:
        operator.report({"ERROR"}, locked)
        return False
    if not compat.is_editable(ob) or not compat.is_editable(ob.data):
        operator.report({"ERROR"}, f"Armature '{ob.name}' is linked and cannot be changed")
        return False
    return True


def _active_limits(context):
    pose_bone = context.active_pose_bone
    return None if pose_bone is None else pose_bone.quat_ik


def active_window(context):
    limits = _active_limits(context)
    if limits is None or not (0 <= limits.active_window_index < len(limits.windows)):
        return None
    return limits.windows[limits.active_window_index]


def poll_pose_bone(cls, context) -> bool:
    if context.active_pose_bone is None:
        compat.poll_message(cls, "Select a bone in Pose Mode")
        return False
    return True


def poll_armature(cls, context) -> bool:
    ob = context.active_object
    if ob is None or ob.type != "ARMATURE":
        compat.poll_message(cls, "The active object must be an armature")
        return False
    return True


def target_bones(context, only_active: bool) -> list:
    """The active pose bone, then (unless ``only_active``) the other selected ones."""
    bones = [context.active_pose_bone]
    if not only_active:
        bones += [pb for pb in (context.selected_pose_bones or ()) if pb != context.active_pose_bone]
    return bones


# --------------------------------------------------------------------------- reset, copy and mirror


class QUATIK_OT_limits_reset(bpy.types.Operator):
    """Reset the joint limits of the active bone (and the other selected bones) to a free joint"""

    bl_idname = "quat_ik.limits_reset"
    bl_label = "Reset Joint Limits"
    bl_description = "Remove every Quat IK joint limit of the active bone (and the other selected ones): a free joint"
    bl_options = {"REGISTER", "UNDO"}

    only_active: BoolProperty(name="Active Bone Only", description="Reset only the active bone", default=True)

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def execute(self, context):
        bones = target_bones(context, self.only_active)
        if not all(editable_armature(self, ob) for ob in {pb.id_data for pb in bones}):
            return {"CANCELLED"}
        for pose_bone in bones:
            reset_limits(pose_bone.quat_ik)
        session.bump()
        self.report({"INFO"}, "Reset " + ", ".join(pb.name for pb in bones))
        return {"FINISHED"}


class QUATIK_OT_limits_copy_to_selected(bpy.types.Operator):
    """Copy the active bone's joint limits to the other selected bones"""

    bl_idname = "quat_ik.limits_copy_to_selected"
    bl_label = "Copy Joint Limits to Selected"
    bl_description = "Give every other selected bone exactly the active bone's Quat IK joint limits"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def execute(self, context):
        source = context.active_pose_bone
        targets = [pb for pb in (context.selected_pose_bones or ()) if pb != source]
        if not targets:
            self.report({"ERROR"}, f"Select the bones to copy to besides the active bone '{source.name}'")
            return {"CANCELLED"}
        if not all(editable_armature(self, ob) for ob in {pb.id_data for pb in targets}):
            return {"CANCELLED"}
        for target in targets:
            copy_limits(source.quat_ik, target.quat_ik)
        session.bump()
        self.report({"INFO"}, f"Copied {source.name}'s limits to " + ", ".join(pb.name for pb in targets))
        return {"FINISHED"}


class QUATIK_OT_limits_mirror(bpy.types.Operator):
    """Copy the selected bones' joint limits to their other-side counterparts, mirrored"""

    bl_idname = "quat_ik.limits_mirror"
    bl_label = "Mirror Joint Limits"
    bl_description = (
        "Give each selected bone's counterpart on the other side (.L/.R, _l/_r, Left/Right) the mirror "
        "image of its joint limits, measured in both bones' rest frames"
    )
    bl_options = {"REGISTER", "UNDO"}

    only_active: BoolProperty(name="Active Bone Only", description="Mirror only the active bone's limits")

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def execute(self, context):
        from ...solver.limits.mirroring import mirror_name

        sources = target_bones(context, self.only_active)
        names = {(pb.id_data.name_full, pb.name) for pb in sources}
        plans = []
        for source in sources:
            ob = source.id_data
            other = mirror_name(source.name)
            if other == source.name:
                self.report({"ERROR"}, f"'{source.name}' has no side in its name (.L/.R, _l/_r, Left/Right)")
                return {"CANCELLED"}
            if other not in ob.pose.bones:
                self.report({"ERROR"}, f"'{source.name}' has no counterpart: there is no bone '{other}'")
                return {"CANCELLED"}
            if (ob.name_full, other) in names:
                self.report(
                    {"ERROR"},
                    f"Both '{source.name}' and '{other}' are selected: select one side to mirror from",
                )
                return {"CANCELLED"}
            mirrored, problem = mirrored_limit(source, other)
            if mirrored is None:
                self.report({"ERROR"}, problem)
                return {"CANCELLED"}
            plans.append((ob, other, mirrored, source))
        if not all(editable_armature(self, ob) for ob in {plan[0] for plan in plans}):
            return {"CANCELLED"}
        for ob, other, mirrored, _source in plans:
            write_limit(ob.pose.bones[other].quat_ik, mirrored)
        session.bump()
        self.report({"INFO"}, "Mirrored " + ", ".join(f"{p[3].name} → {p[1]}" for p in plans))
        return {"FINISHED"}


CLASSES = (QUATIK_OT_limits_reset, QUATIK_OT_limits_copy_to_selected, QUATIK_OT_limits_mirror)
