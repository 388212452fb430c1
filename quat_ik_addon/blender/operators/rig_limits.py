"""Rig-spec files and the armature: import every bone's joint limits from one, export the
rest bones, Quat IK chains and limits to one (``docs/rig_spec.md``).

Numbers: Blender keeps float properties in single precision, so exported files write each
value as the shortest decimal that reads back to the same stored number (``30`` stays
``30``, not ``29.999999``). A file whose numbers have at most about six significant digits
therefore imports and exports to the same numbers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import bpy
import numpy as np
from bpy.props import BoolProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..limits.conversion import is_default_limit, reset_limits, write_limit
from ..runtime.state import session
from .limit_tools import editable_armature, poll_armature, rest_matrix3

if TYPE_CHECKING:
    from ...solver.rig import spec as spec

# A bone whose rest frame differs from the file's by more than this gets a warning on import:
# limits are measured from the rest pose.
REST_MISMATCH_DEG = 1.0


# --------------------------------------------------------------------------- numbers in files


def tidy_float32(value: float) -> float:
    """The shortest decimal that reads back as the same single-precision number (``0.6``)."""
    return float(np.format_float_positional(np.float32(value), unique=True, trim="-")) + 0.0


def tidy_degrees(degrees: float) -> float:
    """The shortest decimal (degrees) whose radians round to the same single-precision number.

    Blender stores angles as float32 radians: 30° comes back as 29.9999992°. This returns
    30.0 again, and for any other stored angle the fewest decimals that keep it.
    """
    stored = np.float32(math.radians(degrees))
    for digits in range(12):
        candidate = round(degrees, digits)
        if np.float32(math.radians(candidate)) == stored:
            return candidate + 0.0
    return degrees + 0.0


def _tidy_vector(vector) -> tuple[float, float, float]:
    x, y, z = (tidy_float32(c) for c in vector)
    return (x, y, z)


def _tidy_range(values) -> tuple[float, float] | None:
    return None if values is None else (tidy_degrees(values[0]), tidy_degrees(values[1]))


def tidy_limit(limit: spec.JointLimit) -> spec.JointLimit:
    """The limit with every number as :func:`tidy_float32`/:func:`tidy_degrees` writes it."""
    from ...solver.rig import spec as spec

    try:
        if isinstance(limit, spec.BallLimit):
            windows = []
            for window in limit.windows:
                center = _tidy_vector(window.center)
                if isinstance(window, spec.ConeWindow):
                    windows.append(spec.ConeWindow(half_angle_deg=tidy_degrees(window.half_angle_deg), center=center))
                    continue
                x_axis = None if window.x_axis is None else _tidy_vector(window.x_axis)
                if isinstance(window, spec.EllipticConeWindow):
                    angles = tuple(tidy_degrees(a) for a in window.half_angles_deg)
                    windows.append(spec.EllipticConeWindow(half_angles_deg=angles, center=center, x_axis=x_axis))
                else:
                    corners = tuple((tidy_degrees(a), tidy_degrees(b)) for a, b in window.vertices_deg)
                    windows.append(spec.PolygonWindow(vertices_deg=corners, center=center, x_axis=x_axis))
            reference = limit.twist_reference
            return spec.BallLimit(
                windows=tuple(windows),
                twist_deg=_tidy_range(limit.twist_deg),
                stiffness=tidy_float32(limit.stiffness),
                twist_reference=None if reference is None else tuple(tidy_float32(c) for c in reference),
            )
        if isinstance(limit, spec.HingeLimit):
            return spec.HingeLimit(
                axis=_tidy_vector(limit.axis),
                range_deg=_tidy_range(limit.range_deg),
                stiffness=tidy_float32(limit.stiffness),
            )
        if isinstance(limit, spec.FreeLimit):
            return spec.FreeLimit(stiffness=tidy_float32(limit.stiffness))
    except spec.RigSpecError:
        return limit  # tidying moved a corner onto a degenerate polygon: keep every digit
    return limit


# --------------------------------------------------------------------------- rig spec <-> armature


def _bones_parent_first(armature) -> list:
    ordered: list = []

    def visit(bone) -> None:
        ordered.append(bone)
        for child in bone.children:
            visit(child)

    for bone in armature.bones:
        if bone.parent is None:
            visit(bone)
    return ordered


def armature_rig_spec(ob) -> spec.RigSpec:
    """The armature as a rig spec: rest bones, Quat IK chains and every bone's joint limit.

    Bones whose limit is the default (free, no stiffness) get no entry. Raises RigSpecError
    (naming the bone or chain) when a setting is invalid.
    """
    from mathutils import Vector

    from ...solver.rig import spec as spec
    from ..limits.conversion import spec_limit

    bones = []
    for bone in _bones_parent_first(ob.data):
        head, tail = Vector(bone.head_local), Vector(bone.tail_local)
        _axis, roll = bpy.types.Bone.AxisRollFromMatrix(bone.matrix_local.to_3x3(), axis=tail - head)
        bones.append(
            spec.BoneSpec(
                name=bone.name,
                parent=bone.parent.name if bone.parent else None,
                head=_tidy_vector(head),
                tail=_tidy_vector(tail),
                roll_deg=round(math.degrees(roll), 4) + 0.0,
            )
        )
    chains = []
    for chain in ob.quat_ik.chains:
        bone = ob.data.bones.get(chain.tip_bone)
        depth = 0
        while bone is not None:
            depth, bone = depth + 1, bone.parent
        try:
            chains.append(
                spec.ChainSpec(
                    name=chain.name,
                    tip=chain.tip_bone,
                    length=max(1, min(chain.chain_length, depth)),
                    effector_offset=_tidy_vector(chain.effector_offset),
                )
            )
        except spec.RigSpecError as error:
            raise error.within(subject=f"chain {chain.name!r}", chain=chain.name) from None
    limits = {}
    for pose_bone in ob.pose.bones:
        try:
            limit = spec_limit(pose_bone.quat_ik)
        except spec.RigSpecError as error:
            raise error.within(subject=f"bone {pose_bone.name!r}", field="limits", bone=pose_bone.name) from None
        if not is_default_limit(limit):
            limits[pose_bone.name] = tidy_limit(limit)
    return spec.RigSpec(name=ob.name, bones=tuple(bones), chains=tuple(chains), limits=limits)


def _rest_mismatches(ob, rig: spec.RigSpec) -> list[str]:
    """Bones of the file whose rest frame differs from the armature's (limits are relative to rest)."""
    from ...solver.rig.rest_pose import bone_rest_matrix3

    found = []
    for name in rig.limits:
        bone_spec = rig.bone(name)
        wanted = bone_rest_matrix3(bone_spec.head, bone_spec.tail, math.radians(bone_spec.roll_deg))
        have = rest_matrix3(ob, name)
        cosine = (float(np.trace(np.asarray(wanted).reshape(3, 3).T @ have)) - 1.0) / 2.0
        angle = math.degrees(math.acos(max(-1.0, min(1.0, cosine))))
        if angle > REST_MISMATCH_DEG:
            found.append(f"{name} ({angle:.1f}°)")
    return found


class QUATIK_OT_import_rig_limits(bpy.types.Operator, ImportHelper):
    """Read every bone's joint limits from a rig spec file"""

    bl_idname = "quat_ik.import_rig_limits"
    bl_label = "Import Quat IK Rig Limits"
    bl_description = (
        "Set the active armature's joint limits from a rig spec JSON file; bones the file gives no limit "
        "become free joints unless Keep Unlisted is on"
    )
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})
    keep_unlisted: BoolProperty(
        name="Keep Unlisted Bones",
        description="Leave the limits of bones the file does not mention as they are (otherwise they become free)",
    )

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def execute(self, context):
        from ...solver.rig import spec as spec

        ob = context.active_object
        if not editable_armature(self, ob):
            return {"CANCELLED"}
        try:
            rig = spec.load_rig_spec(self.filepath)
        except spec.RigSpecError as error:
            self.report({"ERROR"}, f"Cannot import: {error}")
            return {"CANCELLED"}
        except OSError as error:
            self.report({"ERROR"}, f"Cannot read '{self.filepath}': {error.strerror or error}")
            return {"CANCELLED"}
        missing = [name for name in rig.limits if name not in ob.pose.bones]
        if missing:
            shown = ", ".join(f"'{name}'" for name in missing[:5]) + (" …" if len(missing) > 5 else "")
            self.report({"ERROR"}, f"Cannot import: armature '{ob.name}' has no bone {shown} (limits in the file)")
            return {"CANCELLED"}
        mismatched = _rest_mismatches(ob, rig)
        for pose_bone in ob.pose.bones:
            if pose_bone.name in rig.limits:
                write_limit(pose_bone.quat_ik, rig.limits[pose_bone.name])
            elif not self.keep_unlisted:
                reset_limits(pose_bone.quat_ik)
        session.bump()
        if mismatched:
            self.report(
                {"WARNING"},
                "Rest pose differs from the file's (limits are measured from rest): " + ", ".join(mismatched),
            )
        self.report({"INFO"}, f"Imported limits of {len(rig.limits)} bone(s) into '{ob.name}'")
        return {"FINISHED"}


class QUATIK_OT_export_rig_limits(bpy.types.Operator, ExportHelper):
    """Write the armature's bones, Quat IK chains and joint limits to a rig spec file"""

    bl_idname = "quat_ik.export_rig_limits"
    bl_label = "Export Quat IK Rig Limits"
    bl_description = "Write the active armature's rest bones, Quat IK chains and joint limits as a rig spec JSON file"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".json"
    filter_glob: StringProperty(default="*.json", options={"HIDDEN"})

    @classmethod
    def poll(cls, context):
        return poll_armature(cls, context)

    def invoke(self, context, event):
        if not self.filepath:
            name = bpy.path.clean_name(context.active_object.name)
            folder = bpy.path.abspath("//") if bpy.data.filepath else ""
            self.filepath = f"{folder}{name}.rig.json"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        from ...solver.rig import spec as spec

        ob = context.active_object
        try:
            rig = armature_rig_spec(ob)
        except spec.RigSpecError as error:
            self.report({"ERROR"}, f"Cannot export: {error}")
            return {"CANCELLED"}
        try:
            rig.save(self.filepath)
        except OSError as error:
            self.report({"ERROR"}, f"Cannot write '{self.filepath}': {error.strerror or error}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {len(rig.bones)} bones, {len(rig.limits)} limits to {self.filepath}")
        return {"FINISHED"}


CLASSES = (QUATIK_OT_import_rig_limits, QUATIK_OT_export_rig_limits)
