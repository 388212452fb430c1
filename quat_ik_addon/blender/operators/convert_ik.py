"""Quat IK Chain from IK Constraint: move a bone's Blender IK constraint over to a Quat IK chain.

The new chain reaches for the constraint's target over the same bones, matches the target's
rotation when the constraint does, and bends toward its pole; each bone's own IK limits (Bone >
Inverse Kinematics), where its Quat IK limits are still the default, become joint limits as
*From IK Limits* converts them. The constraint is muted, not deleted, so the rig can go back.
The pole keeps its angle: the chain's root bone X axis faces it, as in Blender's IK. The
constraint's weight becomes the chain's Weight, and its bones' IK Stretch becomes Stretch
(``_convert_stretch``). *Quat IK Chains from IK Constraints* converts every IK constraint of
the armature: those that share bones are then solved as one body, as Blender's IK solves them
as one tree. What has no counterpart is said, not guessed.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from .. import compat
from .common import armature_or_report


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
        from ..errors import ChainError
        from ..rig import reader
        from .limit_tools import editable_armature, limits_of_the_library

        pose_bone = context.active_pose_bone
        ob = pose_bone.id_data
        constraint = _ik_constraint(pose_bone)
        try:
            reader.check_armature(ob)
            names = _checked_chain_bones(ob, pose_bone, constraint)
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        # An override's limits are the library's: the chain is made, the limits left as they are.
        library_limits = limits_of_the_library(ob) if self.convert_limits else ""
        convert_limits = self.convert_limits and not library_limits
        if convert_limits and not editable_armature(self, ob):
            return {"CANCELLED"}
        _chain, message, notes = _convert(ob, pose_bone, constraint, names, convert_limits, self.mute_constraint)
        if library_limits:
            notes.append(f"IK limits not converted: {library_limits}")
        self.report({"WARNING"} if notes else {"INFO"}, message + ("; " + "; ".join(notes) if notes else ""))
        return {"FINISHED"}


class QUATIK_OT_from_all_ik_constraints(bpy.types.Operator):
    """Make a Quat IK chain for every IK constraint of the armature; chains that share bones are
    solved together as one body, as Blender's IK solves constraints that share bones as one tree"""

    bl_idname = "quat_ik.from_all_ik_constraints"
    bl_label = "Quat IK Chains from IK Constraints"
    bl_options = {"REGISTER", "UNDO"}

    convert_limits: BoolProperty(
        name="Convert IK Limits",
        description="Give each bone whose Quat IK limits are still free joint limits from its IK limits",
        default=True,
    )
    mute_constraint: BoolProperty(
        name="Mute Constraints",
        description="Mute the IK constraints so that only Quat IK poses the chains",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        ob = context.object
        if ob is None or ob.type != "ARMATURE" or ob.pose is None:
            compat.poll_message(cls, "Select an armature")
            return False
        if not any(_ik_constraint(pose_bone) is not None for pose_bone in ob.pose.bones):
            compat.poll_message(cls, f"'{ob.name}' has no IK constraint")
            return False
        return True

    def execute(self, context):
        from ..chains import settings
        from ..errors import ChainError
        from .limit_tools import editable_armature, limits_of_the_library

        ob = context.object
        if not armature_or_report(self, ob):
            return {"CANCELLED"}
        found = [(pb, _ik_constraint(pb)) for pb in ob.pose.bones if _ik_constraint(pb) is not None]
        found = [(pb, c) for pb, c in found if not c.mute or not self.mute_constraint]
        planned, skipped = [], []
        for pose_bone, constraint in found:  # every constraint is checked before anything changes
            try:
                planned.append((pose_bone, constraint, _checked_chain_bones(ob, pose_bone, constraint)))
            except ChainError as error:
                skipped.append(str(error))
        if not planned:
            self.report({"ERROR"}, skipped[0] if skipped else f"'{ob.name}' has no unmuted IK constraint to convert")
            return {"CANCELLED"}
        library_limits = limits_of_the_library(ob) if self.convert_limits else ""
        convert_limits = self.convert_limits and not library_limits
        if convert_limits and not editable_armature(self, ob):
            return {"CANCELLED"}
        made, notes = [], list(skipped)
        for pose_bone, constraint, names in planned:
            chain, _message, chain_notes = _convert(
                ob, pose_bone, constraint, names, convert_limits, self.mute_constraint
            )
            made.append(chain)
            notes += [f"{chain.name}: {note}" for note in chain_notes]
        if library_limits:
            notes.append(f"IK limits not converted: {library_limits}")
        indices = [list(ob.quat_ik.chains).index(chain) for chain in made]
        bodies = {tuple(settings.body_of(ob, index)) for index in indices}
        shared = [body for body in bodies if len(body) > 1]
        message = f"{len(made)} chains from IK constraints: " + ", ".join(chain.name for chain in made)
        for body in shared:
            message += "; solved as one body: " + ", ".join(ob.quat_ik.chains[i].name for i in body)
        self.report({"WARNING"} if notes else {"INFO"}, message + ("; " + "; ".join(notes) if notes else ""))
        return {"FINISHED"}


def _checked_chain_bones(ob, pose_bone, constraint) -> tuple[str, ...]:
    """The bones a chain converted from ``constraint`` spans; ChainError when it cannot be."""
    from ..errors import ChainError
    from ..rig import reader

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
        raise ChainError(f"'{pose_bone.name}' already ends Quat IK chain '{existing}': remove it to convert again")
    length = constraint.chain_count or _depth(ob, pose_bone.name)
    names = reader.check_new_chain(ob, pose_bone.name, length, constraint.target, constraint.subtarget)
    if constraint.pole_target is not None:
        reader.check_target(ob, names, constraint.pole_target, constraint.pole_subtarget or None, "pole target")
    return names


# Blender's IK Stretch has no upper bound on a bone's length; a converted bone may reach this
# many times its length (and shrink to the inverse share), which the panel can widen.
STRETCH_RANGE = (0.5, 2.0)


def _convert_stretch(ob, names) -> list[str]:
    """Stretch for the bones with IK Stretch: its stiffness 1 - IK Stretch (IK Stretch 1
    stretches as readily as the joints turn), within ``STRETCH_RANGE``."""
    stretchy = []
    for name in names:
        pose_bone = ob.pose.bones[name]
        if pose_bone.ik_stretch <= 0.0:
            continue
        limits = pose_bone.quat_ik
        limits.use_stretch = True
        limits.stretch_min, limits.stretch_max = STRETCH_RANGE
        limits.stretch_stiffness = 1.0 - pose_bone.ik_stretch
        stretchy.append(name)
    return stretchy


def _convert(ob, pose_bone, constraint, names, convert_limits: bool, mute: bool):
    """The chain made from ``constraint`` (checked by ``_checked_chain_bones``), the report's
    message and its notes (what did not carry over)."""
    from ..chains.listing import create_chain

    converted = _limits_from_ik(ob, names) if convert_limits else []
    length = constraint.chain_count or _depth(ob, pose_bone.name)
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
    chain.weight = constraint.weight
    notes = []
    if constraint.pole_target is not None:
        chain.pole_object, chain.pole_bone = constraint.pole_target, constraint.pole_subtarget
        chain.pole_facing, chain.pole_angle = "ROOT_X", constraint.pole_angle  # Blender's own measure
    wants_stretch = constraint.use_stretch and any(ob.pose.bones[name].ik_stretch > 0.0 for name in names)
    stretchy = _convert_stretch(ob, names) if wants_stretch and compat.is_editable(ob) else []
    if wants_stretch and not stretchy:
        notes.append("IK Stretch not carried over: the armature's bone settings come from its library")
    if mute:
        constraint.mute = True
    message = f"Chain '{chain.name}' from IK constraint '{constraint.name}': {' > '.join(names)}"
    message += f" reaching for '{constraint.target.name}'"
    if converted:
        message += "; joint limits from IK limits: " + ", ".join(converted)
    if stretchy:
        message += "; stretch from IK Stretch: " + ", ".join(stretchy) + " (used when solved as a body)"
    if mute:
        message += "; the constraint is muted"
    return chain, message, notes


def _limits_from_ik(ob, names) -> list[str]:
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


CLASSES = (QUATIK_OT_from_ik_constraint, QUATIK_OT_from_all_ik_constraints)
