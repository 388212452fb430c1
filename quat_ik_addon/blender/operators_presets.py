"""The anatomical preset library on the active bone: the preset as written, or moved onto the
rig's own rest pose and bone roll (``solver/retarget.py`` does the maths).

A preset is written for a bone in its preset's rest posture (the anatomical position for
most: standing, arms at the sides, palms forward) with its local +Z to the front (up for the
foot). A rig is rarely drawn that way: arms in a T- or A-pose, bone rolls set for other
reasons. "Rest Pose" turns the preset about the bone so its front is the character's front
whatever the roll; "Current Pose" takes the bone's current pose as the preset's rest posture
(pose a T-pose character with its arms at its sides, palms forward, then apply), so the limit
allows the same anatomical motions from the rig's own rest.
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import EnumProperty

from . import runtime
from .operators_limit_tools import editable_armature, poll_pose_bone, write_limit

# The character's front in armature space; up is +Z.
FACINGS = {"NEG_Y": (0.0, -1.0, 0.0), "POS_Y": (0.0, 1.0, 0.0), "POS_X": (1.0, 0.0, 0.0), "NEG_X": (-1.0, 0.0, 0.0)}
UP = (0.0, 0.0, 1.0)
TWIST_NOTE_DEG = 0.5  # a fit less exact than this is worth a word in the report

_preset_items: list = []  # kept alive: Blender does not copy the strings of dynamic enum items


def preset_enum_items(_self, _context):
    if not _preset_items:
        from ..solver import presets

        for i, name in enumerate(presets.preset_names()):
            info = presets.preset_info(name)
            _preset_items.append((name, preset_label(name), info.description, i))
    return _preset_items


def preset_label(name: str) -> str:
    """'finger_mcp' -> 'Finger MCP' (joint abbreviations stay capitals)."""
    words = name.split("_")
    return " ".join(w.upper() if w in ("mcp", "pip", "dip") else w.capitalize() for w in words)


class QUATIK_OT_apply_limit_preset(bpy.types.Operator):
    """Give the active bone an anatomical joint limit from the preset library"""

    bl_idname = "quat_ik.apply_limit_preset"
    bl_label = "Apply Joint Limit Preset"
    bl_description = (
        "Replace the active bone's joint limits with an anatomical preset (shoulder, elbow, knee, …), "
        "fitted to the bone's rest pose or current pose and mirrored for a bone on the right side"
    )
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", description="Anatomical joint limit", items=preset_enum_items)
    fit: EnumProperty(
        name="Fit",
        description="How the preset is placed on the bone",
        items=(
            (
                "REST",
                "Rest Pose",
                "The bone's rest pose is the preset's rest posture (for most, the anatomical position: limb "
                "hanging, palms forward); the preset is turned about the bone to face the character's front, "
                "whatever the bone roll",
            ),
            (
                "POSE",
                "Current Pose",
                "The bone is posed in the preset's rest posture (a T- or A-pose character posed with its arms at "
                "its sides, palms forward): the preset is moved onto the rest pose so it allows the same motions",
            ),
            (
                "AS_WRITTEN",
                "As Written",
                "The preset's numbers unchanged: the bone is drawn in the preset's rest posture with its local +Z "
                "to the front (up for the foot)",
            ),
        ),
        default="REST",
    )
    facing: EnumProperty(
        name="Facing",
        description="Which way the character faces in the armature (up is +Z)",
        items=(
            ("NEG_Y", "-Y", "The character faces -Y, Blender's convention (its left is +X)"),
            ("POS_Y", "+Y", "The character faces +Y (its left is -X)"),
            ("POS_X", "+X", "The character faces +X (its left is +Y)"),
            ("NEG_X", "-X", "The character faces -X (its left is -Y)"),
        ),
        default="NEG_Y",
    )
    side: EnumProperty(
        name="Side",
        description="Limb presets are for the left side; a right-side bone needs the mirror image",
        items=(
            ("AUTO", "Automatic", "Mirror when the bone lies on the character's right side (by Facing)"),
            ("LEFT", "As Is", "Use the preset as written (left side, or the middle of the body)"),
            ("RIGHT", "Mirrored", "Use the preset's mirror image (for a right-side bone)"),
        ),
    )

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def execute(self, context):
        from ..solver import presets
        from ..solver.mirroring import mirror_limit_exact

        pose_bone = context.active_pose_bone
        if not editable_armature(self, pose_bone.id_data):
            return {"CANCELLED"}
        try:
            info = presets.preset_info(self.preset)
            limit = presets.load_preset(self.preset)
        except (KeyError, ValueError) as error:
            self.report({"ERROR"}, f"Cannot load preset '{self.preset}': {error}")
            return {"CANCELLED"}
        front = np.array(FACINGS[self.facing])
        left = np.cross(UP, front)
        on_right = float(np.dot(pose_bone.bone.head_local, left)) < -1e-6
        mirrored = info.side == "left" and (self.side == "RIGHT" or (self.side == "AUTO" and on_right))
        if mirrored:
            limit = mirror_limit_exact(limit)  # a right bone's +Z is still the front: the mirror keeps it
        notes = []
        if self.fit != "AS_WRITTEN":
            fitted = _fitted(limit, pose_bone, front if info.z_toward == "front" else np.array(UP), self.fit)
            limit = fitted.limit
            notes = _fit_notes(fitted)
        limit = _keep_stiffness(limit, pose_bone.quat_ik)
        write_limit(pose_bone.quat_ik, limit)
        runtime.bump()
        side = " mirrored for the right side" if mirrored else ""
        placed = {"REST": ", fitted to its rest pose", "POSE": ", fitted to its current pose", "AS_WRITTEN": ""}
        message = f"{pose_bone.name}: {info.name} preset{side}, {info.kind}{placed[self.fit]}"
        self.report({"WARNING"} if notes else {"INFO"}, "; ".join((message, *notes)))
        return {"FINISHED"}


def _fitted(limit, pose_bone, wanted_z: np.ndarray, fit: str):
    """The preset moved onto the bone held in the preset's rest posture: at rest, or as posed now."""
    from ..solver import quaternion as quat
    from ..solver.retarget import fit_to_posture
    from .rotation_modes import current_quaternion

    if fit == "POSE":
        frame = np.array(pose_bone.matrix.to_3x3().normalized(), dtype=np.float64)
        rotation = quat.normalize(np.array(tuple(current_quaternion(pose_bone)), dtype=np.float64))
    else:
        frame = np.array(pose_bone.bone.matrix_local.to_3x3().normalized(), dtype=np.float64)
        rotation = quat.IDENTITY
    return fit_to_posture(limit, frame, rotation, wanted_z)


def _fit_notes(fitted) -> list[str]:
    """What the report should say about how exact the fit is (swing always is)."""
    notes = []
    main, others = fitted.twist_error_deg, fitted.twist_error_other_windows_deg
    if max(main, others) > TWIST_NOTE_DEG:
        # Twist from another rest depends on the swing (Codman's paradox): the range is centred on the main window.
        where = f"±{main:.0f}° over its main window" + (
            f", ±{others:.0f}° over its others" if others > TWIST_NOTE_DEG else ""
        )
        notes.append(f"its twist range holds to {where}")
    if fitted.hinge_residual_deg > TWIST_NOTE_DEG:
        notes.append(f"the posture is {fitted.hinge_residual_deg:.1f}° off the hinge")
    return notes


def _keep_stiffness(limit, limits):
    """The limit with the bone's own stiffness (a preset should not reset it)."""
    from dataclasses import replace

    from ..solver import rig_spec as spec

    if isinstance(limit, spec.FixedLimit):
        return limit
    return replace(limit, stiffness=float(limits.stiffness))


CLASSES = (QUATIK_OT_apply_limit_preset,)
