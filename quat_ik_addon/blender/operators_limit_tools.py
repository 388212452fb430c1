"""Tools for joint limits: reset, copy to selected bones, left ↔ right mirroring, rig-spec
import and export, limits fitted to an existing action, and the helpers that read and write a
bone's settings (the window and preset operators build on them).

The solver's pure modules do the work (``mirroring``, ``limit_fitting``, ``rig_spec``); these
operators read and write the pose bones' ``quat_ik`` settings around them. Each operator computes everything first and writes only
when nothing failed, so a bad input reports an error and leaves the scene unchanged.

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
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from . import compat, runtime

if TYPE_CHECKING:
    from ..solver import rig_spec as spec

MIN_FIT_FRAMES = 3
# A bone whose rest frame differs from the file's by more than this gets a warning on import:
# limits are measured from the rest pose.
REST_MISMATCH_DEG = 1.0
_AXES = {(1.0, 0.0, 0.0): "X", (0.0, 1.0, 0.0): "Y", (0.0, 0.0, 1.0): "Z"}


# --------------------------------------------------------------------------- reading and writing settings


def reset_limits(limits) -> None:
    """Every setting of a bone's ``quat_ik`` back to its default (a free joint, no windows)."""
    for prop in limits.bl_rna.properties:
        name = prop.identifier
        if name in ("rna_type", "name"):
            continue
        if prop.type == "COLLECTION":
            getattr(limits, name).clear()
        else:
            limits.property_unset(name)


def copy_limits(source, target) -> None:
    """Copy every setting of one property group to another of the same type, recursively."""
    for prop in source.bl_rna.properties:
        name = prop.identifier
        if name in ("rna_type", "name"):
            continue
        if prop.type == "COLLECTION":
            items = getattr(target, name)
            items.clear()
            for item in getattr(source, name):
                copy_limits(item, items.add())
        elif prop.type == "POINTER":
            copy_limits(getattr(source, name), getattr(target, name))
        elif not prop.is_readonly:
            setattr(target, name, getattr(source, name))


def write_window(window, spec_window: spec.ReachWindow) -> None:
    """Set one ``QuatIKReachWindow`` from a rig-spec window (degrees -> radians)."""
    from ..solver import rig_spec as spec

    for name in ("use_x_axis", "x_axis", "half_angle", "half_angles", "center", "active_vertex_index"):
        window.property_unset(name)
    window.vertices.clear()
    window.center = spec_window.center
    if isinstance(spec_window, spec.ConeWindow):
        window.shape = "CONE"
        window.half_angle = math.radians(spec_window.half_angle_deg)
        return
    if spec_window.x_axis is not None:
        window.use_x_axis = True
        window.x_axis = spec_window.x_axis
    if isinstance(spec_window, spec.EllipticConeWindow):
        window.shape = "ELLIPTIC_CONE"
        window.half_angles = tuple(math.radians(a) for a in spec_window.half_angles_deg)
        return
    window.shape = "POLYGON"
    for corner in spec_window.vertices_deg:
        window.vertices.add().angles = tuple(math.radians(a) for a in corner)


def write_limit(limits, limit: spec.JointLimit) -> None:
    """Replace a bone's ``quat_ik`` settings with a rig-spec limit (everything else reset)."""
    from ..solver import rig_spec as spec

    reset_limits(limits)
    if isinstance(limit, spec.FixedLimit):
        limits.joint_type = "FIXED"
        return
    limits.stiffness = limit.stiffness
    if isinstance(limit, spec.FreeLimit):
        return
    if isinstance(limit, spec.HingeLimit):
        limits.joint_type = "HINGE"
        axis = _AXES.get(tuple(float(c) for c in limit.axis))
        limits.hinge_axis = axis or "CUSTOM"
        if axis is None:
            limits.hinge_custom_axis = limit.axis
        limits.use_hinge_range = limit.range_deg is not None
        if limit.range_deg is not None:
            limits.hinge_min, limits.hinge_max = (math.radians(a) for a in limit.range_deg)
        return
    limits.joint_type = "BALL"
    for spec_window in limit.windows:
        write_window(limits.windows.add(), spec_window)
    limits.use_twist_range = limit.twist_deg is not None
    if limit.twist_deg is not None:
        limits.twist_min, limits.twist_max = (math.radians(a) for a in limit.twist_deg)
    limits.use_twist_reference = limit.twist_reference is not None
    if limit.twist_reference is not None:
        limits.twist_reference = limit.twist_reference


def is_default_limit(limit: spec.JointLimit) -> bool:
    from ..solver import rig_spec as spec

    return isinstance(limit, spec.FreeLimit) and limit.stiffness == 0.0


def _spec_limit_or_error(pose_bone) -> tuple[spec.JointLimit | None, str]:
    """(rig-spec limit, '') of a bone's settings, or (None, message naming the bone)."""
    from ..solver import rig_spec as spec
    from .limit_conversion import spec_limit

    try:
        return spec_limit(pose_bone.quat_ik), ""
    except spec.RigSpecError as error:
        return None, f"Bone '{pose_bone.name}' has invalid joint limits: {error}"


def _rest_matrix3(ob, bone_name: str) -> np.ndarray:
    return np.array(ob.data.bones[bone_name].matrix_local.to_3x3(), dtype=np.float64)


def editable_armature(operator, ob) -> bool:
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


def _poll_armature(cls, context) -> bool:
    ob = context.active_object
    if ob is None or ob.type != "ARMATURE":
        compat.poll_message(cls, "The active object must be an armature")
        return False
    return True


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
    from ..solver import rig_spec as spec

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

    from ..solver import rig_spec as spec
    from .limit_conversion import spec_limit

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
    from ..solver.rest_pose import bone_rest_matrix3

    found = []
    for name in rig.limits:
        bone_spec = rig.bone(name)
        wanted = bone_rest_matrix3(bone_spec.head, bone_spec.tail, math.radians(bone_spec.roll_deg))
        have = _rest_matrix3(ob, name)
        cosine = (float(np.trace(np.asarray(wanted).reshape(3, 3).T @ have)) - 1.0) / 2.0
        angle = math.degrees(math.acos(max(-1.0, min(1.0, cosine))))
        if angle > REST_MISMATCH_DEG:
            found.append(f"{name} ({angle:.1f}°)")
    return found


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
        bones = _target_bones(context, self.only_active)
        if not all(editable_armature(self, ob) for ob in {pb.id_data for pb in bones}):
            return {"CANCELLED"}
        for pose_bone in bones:
            reset_limits(pose_bone.quat_ik)
        runtime.bump()
        self.report({"INFO"}, "Reset " + ", ".join(pb.name for pb in bones))
        return {"FINISHED"}


def _target_bones(context, only_active: bool) -> list:
    bones = [context.active_pose_bone]
    if not only_active:
        bones += [pb for pb in (context.selected_pose_bones or ()) if pb != context.active_pose_bone]
    return bones


# --------------------------------------------------------------------------- copy and mirror


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
        runtime.bump()
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
        from ..solver.mirroring import mirror_limit, mirror_name

        sources = _target_bones(context, self.only_active)
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
            limit, problem = _spec_limit_or_error(source)
            if limit is None:
                self.report({"ERROR"}, problem)
                return {"CANCELLED"}
            try:
                mirrored = mirror_limit(limit, _rest_matrix3(ob, source.name), _rest_matrix3(ob, other))
            except ValueError as error:
                self.report({"ERROR"}, f"Cannot mirror '{source.name}' to '{other}': {error}")
                return {"CANCELLED"}
            plans.append((ob, other, mirrored, source))
        if not all(editable_armature(self, ob) for ob in {plan[0] for plan in plans}):
            return {"CANCELLED"}
        for ob, other, mirrored, _source in plans:
            write_limit(ob.pose.bones[other].quat_ik, mirrored)
        runtime.bump()
        self.report({"INFO"}, "Mirrored " + ", ".join(f"{p[3].name} → {p[1]}" for p in plans))
        return {"FINISHED"}


# --------------------------------------------------------------------------- import and export


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
        return _poll_armature(cls, context)

    def execute(self, context):
        from ..solver import rig_spec as spec

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
        runtime.bump()
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
        return _poll_armature(cls, context)

    def invoke(self, context, event):
        if not self.filepath:
            name = bpy.path.clean_name(context.active_object.name)
            folder = bpy.path.abspath("//") if bpy.data.filepath else ""
            self.filepath = f"{folder}{name}.rig.json"
        context.window_manager.fileselect_add(self)
        return {"RUNNING_MODAL"}

    def execute(self, context):
        from ..solver import rig_spec as spec

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


# --------------------------------------------------------------------------- fit from an action


def action_fcurves(action, ob) -> dict:
    """``{(data_path, index): fcurve}`` of ``action`` that animate ``ob`` (read only, any version).

    Before 4.4 that is ``action.fcurves``. From 4.4 the curves sit in a channelbag per slot:
    the object's assigned slot when it plays this action, else the slot named after the
    object, else the first object slot (an action made for another armature still fits).
    """
    if not compat.HAS_SLOTTED_ACTIONS:
        return {(fc.data_path, fc.array_index): fc for fc in action.fcurves}
    anim = ob.animation_data
    slot = anim.action_slot if anim is not None and anim.action == action else None
    slots = list(action.slots)
    if slot is None:
        slot = next((s for s in slots if s.identifier == "OB" + ob.name), None)
    if slot is None:
        slot = next((s for s in slots if compat._slot_id_type(s) == "OBJECT"), slots[0] if slots else None)
    curves = {}
    if slot is None:
        return curves
    for layer in action.layers:
        for strip in layer.strips:
            channelbag = strip.channelbag(slot)
            if channelbag is not None:
                curves.update({(fc.data_path, fc.array_index): fc for fc in channelbag.fcurves})
    return curves


def bone_rotations(pose_bone, curves: dict, frames: np.ndarray) -> np.ndarray | None:
    """The bone's rotations (F, 4) (w, x, y, z) at ``frames`` from its rotation curves in its own
    rotation mode; channels without a curve keep the bone's current value. None if none is keyed."""
    from mathutils import Euler, Quaternion

    from .rotation_modes import data_path_and_size

    mode = pose_bone.rotation_mode
    prop, size = data_path_and_size(mode)
    path = pose_bone.path_from_id(prop)
    static = list(getattr(pose_bone, prop))
    channels = [curves.get((path, i)) for i in range(size)]
    if not any(channels):
        return None
    values = np.array(
        [[fc.evaluate(float(f)) if fc is not None else static[i] for i, fc in enumerate(channels)] for f in frames]
    )
    out = np.empty((len(frames), 4))
    for row, value in enumerate(values):
        if mode == "QUATERNION":
            q = Quaternion(value)
            q = q.normalized() if q.magnitude > 1e-12 else Quaternion()
        elif mode == "AXIS_ANGLE":
            angle, *axis = value
            q = Quaternion(axis, angle) if any(axis) else Quaternion()
        else:
            q = Euler(value, mode).to_quaternion()
        out[row] = tuple(q)
    return out


def describe_fit(bone_name: str, fit) -> str:
    """One line for the info log: kind, windows and corners, twist or hinge range."""
    limit, report = fit.limit, fit.report
    if report.kind == "hinge":
        axis = ", ".join(f"{c:.2f}" for c in limit.axis)
        span = "full turn" if limit.range_deg is None else f"{limit.range_deg[0]:.1f}° to {limit.range_deg[1]:.1f}°"
        return f"{bone_name}: hinge about ({axis}), {span}"
    corners = [f"{w.vertices} corners" if w.vertices else "a cone" for w in report.windows]
    windows = f"{len(report.windows)} window{'s' if len(report.windows) != 1 else ''} ({', '.join(corners)})"
    twist = "free" if limit.twist_deg is None else f"{limit.twist_deg[0]:.1f}° to {limit.twist_deg[1]:.1f}°"
    return f"{bone_name}: ball, {windows}, twist {twist}"


class QUATIK_OT_limits_fit_from_action(bpy.types.Operator):
    """Learn the selected bones' joint limits from an action (mocap or keyed)"""

    bl_idname = "quat_ik.limits_fit_from_action"
    bl_label = "Fit Joint Limits from Action"
    bl_description = (
        "Read the selected bones' rotations from an action over a frame range and give each the smallest "
        "limit (reach windows and twist range, or a hinge) that allows every pose, plus a margin"
    )
    bl_options = {"REGISTER", "UNDO"}

    action_name: StringProperty(
        name="Action", description="Action to read (empty: the armature's active action)", default=""
    )
    use_action_range: BoolProperty(
        name="Whole Action", description="Read every frame the action has keys on", default=True
    )
    frame_start: IntProperty(name="Start", description="First frame read", default=1)
    frame_end: IntProperty(name="End", description="Last frame read", default=250)
    frame_step: IntProperty(name="Step", description="Read every n-th frame", default=1, min=1, max=100)
    kind: EnumProperty(
        name="Joint",
        description="Kind of limit to fit",
        items=(
            ("AUTO", "Automatic", "A hinge when the bone only turned about one axis, else a ball joint"),
            ("BALL", "Ball", "Reach windows around the bone's directions and a twist range"),
            ("HINGE", "Hinge", "The best single axis and the range of angles about it"),
        ),
    )
    margin: FloatProperty(
        name="Margin",
        description="Room added around every pose seen (swing, twist and hinge angle)",
        subtype="ANGLE",
        default=math.radians(2.0),
        min=0.0,
        max=math.radians(30.0),
    )
    max_vertices: IntProperty(
        name="Max Corners", description="Most corners of each reach window", default=12, min=4, max=64
    )
    max_windows: IntProperty(
        name="Max Windows",
        description="Most reach windows, for a bone whose directions spread over more than a hemisphere",
        default=4,
        min=1,
        max=8,
    )
    only_active: BoolProperty(name="Active Bone Only", description="Fit only the active bone")

    @classmethod
    def poll(cls, context):
        return poll_pose_bone(cls, context)

    def invoke(self, context, event):
        anim = context.active_object.animation_data if context.active_object else None
        if not self.action_name and anim is not None and anim.action is not None:
            self.action_name = anim.action.name
        return context.window_manager.invoke_props_dialog(self)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.prop_search(self, "action_name", bpy.data, "actions")
        layout.prop(self, "use_action_range")
        col = layout.column(align=True)
        col.enabled = not self.use_action_range
        col.prop(self, "frame_start")
        col.prop(self, "frame_end")
        layout.prop(self, "frame_step")
        layout.prop(self, "kind")
        layout.prop(self, "margin")
        layout.prop(self, "max_vertices")
        layout.prop(self, "max_windows")
        layout.prop(self, "only_active")

    def execute(self, context):
        from ..solver.limit_fitting import LimitFitError, fit_limit

        ob = context.active_object
        action = self._action(ob)
        if action is None:
            return {"CANCELLED"}
        frames = self._frames(action)
        if frames is None:
            return {"CANCELLED"}
        curves = action_fcurves(action, ob)
        bones = [pb for pb in _target_bones(context, self.only_active) if pb.id_data == ob]
        fits, skipped = [], []
        for pose_bone in bones:
            rotations = bone_rotations(pose_bone, curves, frames)
            if rotations is None:
                skipped.append(pose_bone.name)
                continue
            try:
                fit = fit_limit(
                    rotations,
                    kind=self.kind.lower(),
                    margin_deg=math.degrees(self.margin),
                    max_vertices=self.max_vertices,
                    max_windows=self.max_windows,
                    stiffness=float(pose_bone.quat_ik.stiffness),
                )
            except (LimitFitError, ValueError) as error:
                self.report({"ERROR"}, f"Cannot fit '{pose_bone.name}': {error}")
                return {"CANCELLED"}
            fits.append((pose_bone, fit))
        if not fits:
            names = ", ".join(skipped)
            self.report({"ERROR"}, f"Action '{action.name}' has no rotation keys for {names} (in its rotation mode)")
            return {"CANCELLED"}
        if not editable_armature(self, ob):
            return {"CANCELLED"}
        for pose_bone, fit in fits:
            write_limit(pose_bone.quat_ik, fit.limit)
        runtime.bump()
        lines = [describe_fit(pb.name, fit) for pb, fit in fits]
        for line in lines:
            self.report({"INFO"}, line)
        if skipped:
            self.report({"WARNING"}, f"No rotation keys in '{action.name}' for " + ", ".join(skipped))
        self.report(
            {"INFO"},
            f"Fitted {len(fits)} bone(s) to {len(frames)} frames of '{action.name}': " + "; ".join(lines),
        )
        return {"FINISHED"}

    def _action(self, ob):
        if self.action_name:
            action = bpy.data.actions.get(self.action_name)
            if action is None:
                self.report({"ERROR"}, f"There is no action '{self.action_name}'")
            return action
        anim = ob.animation_data
        if anim is None or anim.action is None:
            self.report({"ERROR"}, f"Armature '{ob.name}' has no action: choose one to fit the limits to")
            return None
        return anim.action

    def _frames(self, action) -> np.ndarray | None:
        if self.use_action_range:
            start, end = (round(f) for f in action.frame_range)
        else:
            start, end = self.frame_start, self.frame_end
        frames = np.arange(start, end + 1, self.frame_step, dtype=np.float64)
        if len(frames) < MIN_FIT_FRAMES:
            self.report(
                {"ERROR"},
                f"Too few frames to fit limits: {len(frames)} (frames {start} to {end}, step {self.frame_step}); "
                f"need at least {MIN_FIT_FRAMES}",
            )
            return None
        return frames


CLASSES = (
    QUATIK_OT_limits_reset,
    QUATIK_OT_limits_copy_to_selected,
    QUATIK_OT_limits_mirror,
    QUATIK_OT_import_rig_limits,
    QUATIK_OT_export_rig_limits,
    QUATIK_OT_limits_fit_from_action,
)
