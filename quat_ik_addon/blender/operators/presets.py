"""The anatomical preset library on the active bone (or a limb's bones): the preset as written,
or moved onto the rig's own rest pose and bone roll (``solver/limits/retarget.py`` does the maths;
the windows turn, a ball joint's twist is measured through a reference so its range holds).

A preset is written for a bone in the anatomical position (standing, arms at the sides, palms
forward) with its local +Z to the front (up for the foot; the forearm twist is measured from
thumb-forward, so there it stands 90° into supination). A rig is rarely drawn that way: arms
in a T- or A-pose, bone rolls set for other reasons. "Rest Pose" turns the preset about the
bone so its front is the character's front whatever the roll; "Current Pose" takes the bone's
current pose as the anatomical position (pose a T-pose character with its arms at its sides,
palms forward, then apply), so the limit allows the same anatomical motions from the rig's
own rest.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import bpy
import numpy as np
from bpy.props import EnumProperty

from ..limits.conversion import write_limit
from ..runtime.state import session
from .limit_tools import editable_armature, poll_pose_bone

# The character's front in armature space; up is +Z.
FACINGS = {"NEG_Y": (0.0, -1.0, 0.0), "POS_Y": (0.0, 1.0, 0.0), "POS_X": (1.0, 0.0, 0.0), "NEG_X": (-1.0, 0.0, 0.0)}
UP = (0.0, 0.0, 1.0)
HINGE_NOTE_DEG = 0.5  # a posture further off the hinge than this is worth a word in the report

FIT_ITEMS = (
    (
        "REST",
        "Rest Pose",
        "The bone's rest pose is the anatomical position (standing, arms at the sides, palms forward); "
        "the preset is turned about the bone to face the character's front, whatever the bone roll",
    ),
    (
        "POSE",
        "Current Pose",
        "The bone is posed in the anatomical position (a T- or A-pose character posed with its arms at "
        "its sides, palms forward): the preset is moved onto the rest pose so it allows the same motions",
    ),
    (
        "AS_WRITTEN",
        "As Written",
        "The preset's numbers unchanged: the bone is drawn in the preset's own rest posture with its "
        "local +Z to the front (up for the foot)",
    ),
)
FACING_ITEMS = (
    ("NEG_Y", "-Y", "The character faces -Y, Blender's convention (its left is +X)"),
    ("POS_Y", "+Y", "The character faces +Y (its left is -X)"),
    ("POS_X", "+X", "The character faces +X (its left is +Y)"),
    ("NEG_X", "-X", "The character faces -X (its left is -Y)"),
)
SIDE_DESCRIPTION = "Limb presets are for the left side; a right-side bone needs the mirror image"
SIDE_ITEMS = (
    ("AUTO", "Automatic", "Mirror when the bone lies on the character's right side (by Facing)"),
    ("LEFT", "As Is", "Use the preset as written (left side, or the middle of the body)"),
    ("RIGHT", "Mirrored", "Use the preset's mirror image (for a right-side bone)"),
)


_preset_items: list = []  # kept alive: Blender does not copy the strings of dynamic enum items


def preset_enum_items(_self, _context):
    if not _preset_items:
        from ...solver.limits import presets

        for i, name in enumerate(presets.preset_names()):
            info = presets.preset_info(name)
            _preset_items.append((name, preset_label(name), info.description, i))
    return _preset_items


def preset_label(name: str) -> str:
    """'finger_mcp' -> 'Finger MCP' (joint abbreviations stay capitals)."""
    words = name.split("_")
    return " ".join(w.upper() if w in ("mcp", "pip", "dip") else w.capitalize() for w in words)


class _PresetPlacement:
    """How presets go on bones: the options and poll both preset operators share."""

    fit: EnumProperty(name="Fit", description="How presets are placed on the bones", items=FIT_ITEMS, default="REST")
    facing: EnumProperty(name="Facing", description="Which way the character faces (up is +Z)", items=FACING_ITEMS)
    side: EnumProperty(name="Side", description=SIDE_DESCRIPTION, items=SIDE_ITEMS)

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)


class QUATIK_OT_apply_limit_preset(_PresetPlacement, bpy.types.Operator):
    """Give the active bone an anatomical joint limit from the preset library"""

    bl_idname = "quat_ik.apply_limit_preset"
    bl_label = "Apply Joint Limit Preset"
    bl_description = (
        "Replace the active bone's joint limits with an anatomical preset (shoulder, elbow, knee, …), "
        "fitted to the bone's rest pose or current pose and mirrored for a bone on the right side"
    )
    bl_options = {"REGISTER", "UNDO"}

    preset: EnumProperty(name="Preset", description="Anatomical joint limit", items=preset_enum_items)

    def execute(self, context):
        pose_bone = context.active_pose_bone
        if not editable_armature(self, pose_bone.id_data):
            return {"CANCELLED"}
        try:
            placed = place_preset(pose_bone, self.preset, self.fit, self.facing, self.side)
        except (KeyError, ValueError) as error:
            self.report({"ERROR"}, f"Cannot load preset '{self.preset}': {error}")
            return {"CANCELLED"}
        write_limit(pose_bone.quat_ik, placed.limit)
        session.bump()
        self.report({"WARNING"} if placed.notes else {"INFO"}, placed.message)
        return {"FINISHED"}


# Limbs root to tip: the presets in order, or one preset for every bone (None: any count).
LIMBS = {
    "ARM": ("Arm", "Upper arm, forearm and hand", ("shoulder", "elbow", "wrist"), None),
    "ARM_TWIST": (
        "Arm with Forearm Twist",
        "Upper arm, forearm, forearm twist bone and hand",
        ("shoulder", "elbow", "forearm_twist", "wrist"),
        None,
    ),
    "LEG": ("Leg", "Thigh, shin and foot", ("hip", "knee", "ankle"), None),
    "FINGER": ("Finger", "Proximal, middle and distal phalanx", ("finger_mcp", "finger_pip", "finger_dip"), None),
    "SPINE": ("Spine", "Every selected spine bone (each takes a share of the trunk's motion)", (), "spine_segment"),
    "NECK": ("Neck and Head", "The neck and head bones (each takes half the neck's motion)", (), "neck"),
}


class QUATIK_OT_apply_limb_presets(_PresetPlacement, bpy.types.Operator):
    """Give the selected bones of a limb their anatomical joint limits, root to tip"""

    bl_idname = "quat_ik.apply_limb_presets"
    bl_label = "Apply Limb Joint Limit Presets"
    bl_description = (
        "Give the selected bones of an arm, leg, finger, spine or neck (one parent chain) their anatomical "
        "presets, root to tip, fitted to the rest pose or current pose and mirrored on the right side"
    )
    bl_options = {"REGISTER", "UNDO"}

    limb: EnumProperty(
        name="Limb",
        description="Which presets go on the selected bones, root to tip",
        items=[(key, label, description) for key, (label, description, _names, _each) in LIMBS.items()],
    )

    def execute(self, context):
        label, _description, names, each = LIMBS[self.limb]
        bones, problem = _limb_bones(context.selected_pose_bones or [context.active_pose_bone])
        if problem is None and each is None and len(bones) != len(names):
            problem = f"select the {len(names)} bones of the {label.lower()} ({len(bones)} selected)"
        if problem is not None:
            self.report({"ERROR"}, f"Cannot apply the {label.lower()} presets: {problem}")
            return {"CANCELLED"}
        if not editable_armature(self, bones[0].id_data):
            return {"CANCELLED"}
        try:  # every bone first, then write: an error leaves every bone as it was
            placed = [
                place_preset(bone, name, self.fit, self.facing, self.side)
                for bone, name in zip(bones, names or [each] * len(bones), strict=True)
            ]
        except (KeyError, ValueError) as error:
            self.report({"ERROR"}, f"Cannot load the {label.lower()} presets: {error}")
            return {"CANCELLED"}
        for bone, preset in zip(bones, placed, strict=True):
            write_limit(bone.quat_ik, preset.limit)
        session.bump()
        warned = any(preset.notes for preset in placed)
        self.report({"WARNING"} if warned else {"INFO"}, " | ".join(preset.message for preset in placed))
        return {"FINISHED"}


def _limb_bones(selected) -> tuple[list, str | None]:
    """The selected pose bones root to tip, or why they are not one parent chain."""
    if len({bone.id_data for bone in selected}) != 1:
        return [], "select bones of one armature"
    depth = {bone.name: len(bone.parent_recursive) for bone in selected}
    bones = sorted(selected, key=lambda bone: depth[bone.name])
    for parent, child in itertools.pairwise(bones):
        if child.parent != parent:
            return bones, f"'{child.name}' is not the child of '{parent.name}': select one chain, root to tip"
    return bones, None


@dataclass(frozen=True)
class PlacedPreset:
    """A preset ready for one bone, and what to say about it."""

    limit: object  # a rig-spec joint limit
    message: str
    notes: tuple[str, ...]


def place_preset(pose_bone, name: str, fit: str, facing: str, side: str) -> PlacedPreset:
    """Preset ``name`` as it goes on ``pose_bone`` (mirrored, fitted, with the bone's own
    stiffness); writes nothing. KeyError or ValueError when the preset cannot be loaded."""
    from ...solver.limits import presets
    from ...solver.limits.mirroring import mirror_limit_exact

    info = presets.preset_info(name)
    limit = presets.load_preset(name)
    front = np.array(FACINGS[facing])
    left = np.cross(UP, front)
    on_right = float(np.dot(pose_bone.bone.head_local, left)) < -1e-6
    mirrored = info.side == "left" and (side == "RIGHT" or (side == "AUTO" and on_right))
    limit_twist = math.radians(info.anatomical_twist_deg)
    if mirrored:  # the mirror flips twist; front and up lie in the mirror plane, lateral crosses it
        limit, limit_twist, left = mirror_limit_exact(limit), -limit_twist, -left
    notes: tuple[str, ...] = ()
    if fit != "AS_WRITTEN":
        wanted_z = {"front": front, "up": np.array(UP), "lateral": left}[info.z_toward]
        fitted = _fitted(limit, pose_bone, wanted_z, limit_twist, fit)
        limit, notes = fitted.limit, tuple(_fit_notes(fitted))
    limit = _keep_stiffness(limit, pose_bone.quat_ik)
    placed = {"REST": ", fitted to its rest pose", "POSE": ", fitted to its current pose", "AS_WRITTEN": ""}[fit]
    side_note = " mirrored for the right side" if mirrored else ""
    message = f"{pose_bone.name}: {info.name} preset{side_note}, {info.kind}{placed}"
    return PlacedPreset(limit, "; ".join((message, *notes)), notes)


def _fitted(limit, pose_bone, wanted_z: np.ndarray, limit_twist: float, fit: str):
    """The preset moved onto the bone held in the anatomical position: at rest, or as posed now."""
    from ...solver import quaternion as quat
    from ...solver.limits.retarget import fit_to_posture
    from ..rig.rotation_modes import current_quaternion

    if fit == "POSE":
        frame = np.array(pose_bone.matrix.to_3x3().normalized(), dtype=np.float64)
        rotation = quat.normalize(np.array(tuple(current_quaternion(pose_bone)), dtype=np.float64))
    else:
        frame = np.array(pose_bone.bone.matrix_local.to_3x3().normalized(), dtype=np.float64)
        rotation = quat.IDENTITY
    return fit_to_posture(limit, frame, rotation, wanted_z, limit_twist)


def _fit_notes(fitted) -> list[str]:
    """What the report should say about how exact the fit is: swing and twist always are
    (the twist through its reference); a hinge is when the posture bends about its axis."""
    if fitted.hinge_residual_deg > HINGE_NOTE_DEG:
        return [f"the posture is {fitted.hinge_residual_deg:.1f}° off the hinge"]
    return []


def _keep_stiffness(limit, limits):
    """The limit with the bone's own stiffness (a preset should not reset it)."""
    from dataclasses import replace

    from ...solver.rig import spec as spec

    if isinstance(limit, spec.FixedLimit):
        return limit
    return replace(limit, stiffness=float(limits.stiffness))


CLASSES = (QUATIK_OT_apply_limit_preset, QUATIK_OT_apply_limb_presets)
