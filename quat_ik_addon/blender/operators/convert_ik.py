"""Quat IK Chain from IK Constraint: move a bone's Blender IK constraint over to a Quat IK chain.

The new chain reaches for the constraint's target over the same bones, matches the target's
rotation when the constraint does, and bends toward its pole; each bone's own IK limits (Bone >
Inverse Kinematics), where its Quat IK limits are still the default, become joint limits as
*From IK Limits* converts them. The constraint is muted, not deleted, so the rig can go back.
The pole keeps its angle: the chain's root bone X axis faces it, as in Blender's IK. What has no
counterpart is said, not guessed: stretch, and a weight below 1.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from .. import compat


def _ik_constraint(pose_bone):
    """The bone's first unmuted IK constraint, else its first IK constraint, else None."""
    found = [c for c in pose_bone.constraints if c.type == "IK"]
    return next((c for c in found if not c.mute), found[0] if found else None)


def _depth(ob, bone_name: str) -> int:
    """Bones from this one up to the top of its hierarchy (Blender's chain length 0)."""
    bone, depth = ob.data.bones[bone_name], 0
    while bone is not None:
        bone, depth = bone.parent, depth + 1
    return depth


class QUATIK_OT_from_ik_constraint(bpy.types.Operator):
    """Make a Quat IK chain that does what the active bone's IK constraint does"""

    bl_idname = "quat_ik.from_ik_constraint"
    bl_label = "Quat IK Chain from IK Constraint"
    bl_description = (
        "Add a Quat IK chain with the active bone's IK constraint's target, chain length, rotation and pole, "
        "give its bones joint limits from their IK limits, and mute the constraint"
    )
    bl_options = {"REGISTER", "UNDO"}

    convert_limits: BoolProperty(
        name="Convert IK Limits",
        description=(
            "Give each bone of the chain whose Quat IK limits are still free joint limits from its IK limits "
            "(not on a library override, whose limits come with the rig)"
        ),
        default=True,
    )
    mute_constraint: BoolProperty(
        name="Mute Constraint", description="Mute the IK constraint so that only Quat IK poses the chain", default=True
    )

    @classmethod
    def poll(cls, context):
        pose_bone = context.active_pose_bone
        if pose_bone is None:
            compat.poll_message(cls, "Select the bone with the IK constraint in Pose Mode")
            return False
        if _ik_constraint(pose_bone) is None:
            compat.poll_message(cls, f"Bone '{pose_bone.name}' has no IK constraint")
            return False
        return True

    def execute(self, context):
        from ..chains.listing import create_chain
        from ..errors import ChainError
        from ..rig import reader
        from .limit_tools import editable_armature, limits_of_the_library

        pose_bone = context.active_pose_bone
        ob = pose_bone.id_data
        constraint = _ik_constraint(pose_bone)
        try:
            reader.check_armature(ob)
            if constraint.target is None:
                raise ChainError(f"IK constraint '{constraint.name}' of '{pose_bone.name}' has no target")
            if not constraint.use_tail:
                raise ChainError(
                    f"IK constraint '{constraint.name}' has Use Tail off: turn it on (the chain then reaches "
                    "with the bone's tail), then convert"
                )
            if getattr(constraint, "ik_type", "COPY_POSE") == "DISTANCE":
                raise ChainError(f"IK constraint '{constraint.name}' keeps a distance: Quat IK has no counterpart")
            if not constraint.use_location:
                raise ChainError(
                    f"IK constraint '{constraint.name}' only matches rotation (Use Location is off): a Quat IK "
                    "chain reaches for a position; set one up by hand"
                )
            existing = next((c.name for c in ob.quat_ik.chains if c.tip_bone == pose_bone.name), None)
            if existing is not None:
                raise ChainError(
                    f"'{pose_bone.name}' already ends Quat IK chain '{existing}': remove it to convert again"
                )
            length = constraint.chain_count or _depth(ob, pose_bone.name)
            names = reader.check_new_chain(ob, pose_bone.name, length, constraint.target, constraint.subtarget)
            if constraint.pole_target is not None:
                reader.check_target(ob, names, constraint.pole_target, constraint.pole_subtarget or None, "pole target")
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        # An override's limits are the library's: the chain is made, the limits left as they are.
        library_limits = limits_of_the_library(ob) if self.convert_limits else ""
        convert_limits = self.convert_limits and not library_limits
        if convert_limits and not editable_armature(self, ob):
            return {"CANCELLED"}

        converted = self._convert_limits(ob, names) if convert_limits else []
        chain = create_chain(
            ob,
            pose_bone.name,
            length,
            constraint.target,
            target_bone=constraint.subtarget,
            name=pose_bone.name,
            mode="PER_FRAME",  # a constraint poses the chain on every frame, renders included
            orientation_mode="MATCH_TARGET" if constraint.use_rotation else "NONE",
        )
        notes = []
        if constraint.pole_target is not None:
            chain.pole_object, chain.pole_bone = constraint.pole_target, constraint.pole_subtarget
            chain.pole_facing, chain.pole_angle = "ROOT_X", constraint.pole_angle  # Blender's own measure
        if constraint.use_stretch and any(ob.pose.bones[name].ik_stretch > 0.0 for name in names):
            notes.append("stretch is not carried over (Quat IK bones keep their length)")
        if library_limits:
            notes.append(f"IK limits not converted: {library_limits}")
        if constraint.weight < 1.0:
            notes.append(f"its weight {constraint.weight:g} is not carried over (Quat IK reaches fully)")
        if self.mute_constraint:
            constraint.mute = True
        message = f"Chain '{chain.name}' from IK constraint '{constraint.name}': {' > '.join(names)}"
        message += f" reaching for '{constraint.target.name}'"
        if converted:
            message += "; joint limits from IK limits: " + ", ".join(converted)
        if self.mute_constraint:
            message += "; the constraint is muted"
        self.report({"WARNING"} if notes else {"INFO"}, message + ("; " + "; ".join(notes) if notes else ""))
        return {"FINISHED"}

    @staticmethod
    def _convert_limits(ob, names) -> list[str]:
        """Bones given joint limits from their IK limits: those with IK limits whose Quat IK
        limits are still the default (settings made by hand stay)."""
        from ...solver.rig.spec import RigSpecError
        from ..limits.conversion import is_default_limit, spec_limit
        from .limits import apply_axis_ranges, ik_limit_ranges

        def is_default(pose_bone) -> bool:
            try:
                return is_default_limit(spec_limit(pose_bone.quat_ik))
            except RigSpecError:
                return False  # settings made by hand, if broken: not ours to replace

        converted = []
        for name in names:
            pose_bone = ob.pose.bones[name]
            has_ik_limits = any(
                getattr(pose_bone, f"lock_ik_{a}") or getattr(pose_bone, f"use_ik_limit_{a}") for a in "xyz"
            )
            if has_ik_limits and is_default(pose_bone):
                kind = apply_axis_ranges(pose_bone.quat_ik, *ik_limit_ranges(pose_bone))
                converted.append(f"{name} ({kind.lower()})")
        return converted


CLASSES = (QUATIK_OT_from_ik_constraint,)
