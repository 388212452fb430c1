"""The View3D sidebar tab "Quat IK": chains, their settings, last solve status, actions.

Joint limits of the active bone have their own panel module (``limits_panel.py``).
"""

from __future__ import annotations

import math
import textwrap

import bpy

from ..chains import settings as chain_settings
from ..chains.order import ORDER_HINT
from ..chains.pins import pin_label
from ..runtime.state import session
from .solver_settings import draw_solver_settings


class QUATIK_UL_chains(bpy.types.UIList):
    """The armature's chains in priority order: enabled, name, bone count, mode."""

    bl_idname = "QUATIK_UL_chains"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "enabled", text="")
        row.prop(item, "name", text="", emboss=False)
        sub = row.row()
        sub.alignment = "RIGHT"
        state = "ERROR" if item.status_message and not item.status_converged else ""
        if state:
            sub.label(text="", icon="ERROR")
        elif index in _chains_with_active_bone(data.id_data):
            sub.label(text="", icon="BONE_DATA")
        # The name is usually the tip bone's: the length alone keeps narrow sidebars readable.
        sub.label(text=f"×{item.chain_length}")
        sub.prop(item, "mode", text="", icon_only=True, emboss=False)


def _chains_with_active_bone(ob) -> list[int]:
    bone = ob.data.bones.active
    return chain_settings.chains_with_bone(ob, bone.name) if bone is not None else []


class _QuatIKPanel:
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Quat IK"

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type == "ARMATURE"


def _object_or_bone(layout, chain, object_property: str, bone_property: str, operator: tuple[str, str] = ()):
    """An object field, and a bone search below it when the object is an armature.
    ``operator``: (idname, icon) of a button beside the object field."""
    if operator:
        row = layout.row(align=True)
        row.prop(chain, object_property)
        row.operator(operator[0], icon=operator[1], text="")
    else:
        layout.prop(chain, object_property)
    target = getattr(chain, object_property)
    if target is not None and target.type == "ARMATURE":
        layout.prop_search(chain, bone_property, target.data, "bones", text="Bone")
    return target


class QUATIK_PT_chains(_QuatIKPanel, bpy.types.Panel):
    """Chains of the active armature"""

    bl_label = "Quat IK Chains"
    bl_idname = "QUATIK_PT_chains"

    def draw(self, context):
        layout = self.layout
        ob = context.object
        settings = ob.quat_ik
        row = layout.row()
        row.template_list("QUATIK_UL_chains", "", settings, "chains", settings, "active_chain_index", rows=3)
        col = row.column(align=True)
        col.operator("quat_ik.add_chain", icon="ADD", text="")
        col.operator("quat_ik.remove_chain", icon="REMOVE", text="")
        col.separator()
        col.operator("quat_ik.move_chain", icon="TRIA_UP", text="").direction = "UP"
        col.operator("quat_ik.move_chain", icon="TRIA_DOWN", text="").direction = "DOWN"
        col.operator("quat_ik.sort_chains", icon="SORTSIZE", text="")
        col.separator()
        col.operator("quat_ik.mirror_chain", icon="MOD_MIRROR", text="")

        chain = chain_settings.active_chain(ob)
        if chain is None:
            layout.label(text="Select a bone and add a chain", icon="INFO")
            return
        others = _chains_with_active_bone(ob)
        if others and settings.active_chain_index not in others:
            row = layout.row()
            row.label(text=f"'{ob.data.bones.active.name}' is in '{settings.chains[others[0]].name}'", icon="BONE_DATA")
            row.operator("quat_ik.select_bone_chain", text="Show")
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        col.prop_search(chain, "tip_bone", ob.data, "bones", text="Tip")
        col.prop(chain, "chain_length")
        _object_or_bone(col, chain, "target_object", "target_bone", ("quat_ik.snap_target", "SNAP_ON"))
        col.prop(chain, "effector_offset")
        col.prop(chain, "mode")
        col.prop(chain, "influence", slider=True)

        row = layout.row(align=True)
        row.operator("quat_ik.solve", icon="CON_KINEMATIC", text="Solve Now").chains = "ACTIVE"
        row.operator("quat_ik.bake", icon="REC", text="Bake").chains = "ACTIVE"


class _ChainSubPanel(_QuatIKPanel):
    """A sub-panel about the selected chain (shown only when there is one)."""

    bl_parent_id = "QUATIK_PT_chains"
    bl_options = {"DEFAULT_CLOSED"}

    @classmethod
    def poll(cls, context):
        return super().poll(context) and chain_settings.active_chain(context.object) is not None

    def split_layout(self):
        """The panel's layout with property labels on the left, Blender's settings style."""
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        return layout


class QUATIK_PT_chain_orientation(_ChainSubPanel, bpy.types.Panel):
    """The tip's rotation goal (shown only when the solver supports it)"""

    bl_label = "Orientation"

    def draw(self, context):
        layout = self.split_layout()
        chain = chain_settings.active_chain(context.object)
        layout.prop(chain, "orientation_mode")
        if chain.orientation_mode == "OBJECT":
            _object_or_bone(layout, chain, "orientation_object", "orientation_bone")
        if chain.orientation_mode != "NONE":
            layout.prop(chain, "orientation_weight")


class QUATIK_PT_chain_pole(_ChainSubPanel, bpy.types.Panel):
    """Which way the chain bends: toward a pole target, as Blender's IK pole"""

    bl_label = "Pole"

    def draw(self, context):
        layout = self.split_layout()
        chain = chain_settings.active_chain(context.object)
        pole = _object_or_bone(layout, chain, "pole_object", "pole_bone")
        if pole is None:
            layout.operator("quat_ik.add_pole", text="Add Pole", icon="EMPTY_AXIS")
        col = layout.column()
        col.active = pole is not None
        col.prop(chain, "pole_facing")
        col.prop(chain, "pole_angle")


class QUATIK_PT_chain_solver(_ChainSubPanel, bpy.types.Panel):
    """Solver settings of the selected chain"""

    bl_label = "Solver"

    def draw(self, context):

        draw_solver_settings(self.split_layout(), chain_settings.active_chain(context.object))


class QUATIK_PT_chain_status(_ChainSubPanel, bpy.types.Panel):
    """How the selected chain's last solve went, so a pose can be explained"""

    bl_label = "Last Solve"
    bl_options = set()  # open: it explains the pose

    def draw(self, context):
        layout = self.layout
        chain = chain_settings.active_chain(context.object)
        if chain.status_message:
            box = layout.box()
            for i, line in enumerate(_wrap(chain.status_message, _label_characters(context))):
                box.label(text=line, icon="ERROR" if i == 0 else "BLANK1")
            if ORDER_HINT in chain.status_message:
                box.operator("quat_ik.sort_chains", icon="SORTSIZE", text="Sort Chains by Dependency")
        if not chain.status_solved:
            layout.label(text="Pose left as it was" if chain.status_message else "Not solved yet")
            return
        col = layout.column(align=True)
        col.label(
            text="Reached the target" if chain.status_converged else "Did not reach the target",
            icon="CHECKMARK" if chain.status_converged else "CANCEL",
        )
        unit = context.scene.unit_settings
        error = bpy.utils.units.to_string(unit.system, "LENGTH", chain.status_error, precision=4)
        col.label(text=f"Error: {error}")
        col.label(text=f"Sweeps: {chain.status_iterations}")
        col.label(text=f"Restarts: {chain.status_restarts}")
        if chain.status_solver:  # empty for a solve saved by a version that did not record it
            for line in _wrap(f"Solver: {chain.status_solver}", _label_characters(context)):
                col.label(text=line)
        if chain.influence < 1.0:
            col.label(text=f"Influence {chain.influence:.0%}: the bones take that share of it", icon="INFO")
        if chain.status_jump_frames:
            _draw_jumps(layout, chain)
        if chain.mode == "LIVE" and not chain.status_converged and context.object.name_full in session.resting_due:
            col.label(text="Solved in full once the target rests", icon="TIME")


def _draw_jumps(layout, chain) -> None:
    """The last bake's pose jumps, and buttons stepping the frame through them."""
    from ..operators.jumps import jump_frames

    count, largest = len(jump_frames(chain)), math.degrees(chain.status_largest_jump)
    col = layout.column(align=True)
    col.label(text=f"{count} pose jump{'s' if count != 1 else ''}, up to {largest:.0f}°", icon="ERROR")
    row = col.row(align=True)
    row.operator("quat_ik.next_jump", text="Previous", icon="PREV_KEYFRAME").previous = True
    row.operator("quat_ik.next_jump", text="Next", icon="NEXT_KEYFRAME").previous = False


def _wrap(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` characters, broken between words (panel labels do not wrap)."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


# Average width of a label character at UI scale 1 (Blender's default font at 11 pt), and the
# room a boxed label's icon and margins take: measured on the default 3.4 and 5.0 themes.
LABEL_CHARACTER_PX = 6.5
BOXED_LABEL_MARGIN_PX = 50


def _label_characters(context) -> int:
    """How many characters a boxed label line holds in this region (48 without a region)."""
    region = getattr(context, "region", None)
    if region is None or region.width <= 1:
        return 48
    scale = context.preferences.system.ui_scale
    return max(16, int((region.width - BOXED_LABEL_MARGIN_PX * scale) / (LABEL_CHARACTER_PX * scale)))


class QUATIK_UL_pins(bpy.types.UIList):
    """The armature's pins: enabled, bone, frames, whether the last solve held it."""

    bl_idname = "QUATIK_UL_pins"

    def draw_item(self, context, layout, data, item, icon, active_data, active_propname, index=0):
        row = layout.row(align=True)
        row.prop(item, "enabled", text="")
        row.label(text=pin_label(item), icon="PINNED")
        sub = row.row()
        sub.alignment = "RIGHT"
        if item.status_message or (item.status_solved and not item.status_held):
            sub.label(text="", icon="ERROR")
        sub.label(text=f"{item.frame_start}–{item.frame_end}")


class QUATIK_PT_body(_QuatIKPanel, bpy.types.Panel):
    """Chains solved together as one body, their priorities and weights, and pinned bones"""

    bl_label = "Body & Pins"
    bl_idname = "QUATIK_PT_body"
    bl_parent_id = "QUATIK_PT_chains"
    bl_options = {"DEFAULT_CLOSED"}

    def draw(self, context):
        layout = self.layout
        ob = context.object
        settings = ob.quat_ik
        layout.prop(settings, "use_bodies")
        chain = chain_settings.active_chain(ob)
        if chain is not None and settings.use_bodies:
            together = chain_settings.body_of(ob, settings.active_chain_index)
            col = layout.column(align=True)
            if len(together) > 1:
                col.label(
                    text="Solved with: "
                    + ", ".join(settings.chains[i].name for i in together if i != settings.active_chain_index),
                    icon="LINKED",
                )
            split = col.split(factor=0.5, align=True)
            split.prop(chain, "priority")
            split.prop(chain, "weight")
        row = layout.row()
        row.template_list("QUATIK_UL_pins", "", settings, "pins", settings, "active_pin_index", rows=2)
        col = row.column(align=True)
        col.operator("quat_ik.add_pin", icon="ADD", text="")
        col.operator("quat_ik.remove_pin", icon="REMOVE", text="")
        if not 0 <= settings.active_pin_index < len(settings.pins):
            return
        pin = settings.pins[settings.active_pin_index]
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        col.prop_search(pin, "bone", ob.data, "bones")
        col.prop(pin, "hold")
        sub = col.column(align=True)
        sub.prop(pin, "frame_start", text="Frames")
        sub.prop(pin, "frame_end", text="End")
        col.operator("quat_ik.capture_pin", icon="EYEDROPPER", text="Capture Current Pose")
        if pin.status_message:
            col.label(text=pin.status_message[:1].upper() + pin.status_message[1:], icon="ERROR")
        elif pin.status_solved:
            icon = "CHECKMARK" if pin.status_held else "ERROR"
            col.label(text=("Held" if pin.status_held else "Slipped") + f", off by {pin.status_error:.2g}", icon=icon)


def draw_pose_ik_menu(self, context):
    """Entries in Pose > Inverse Kinematics (and the Shift+I menu area)."""
    layout = self.layout
    layout.separator()
    layout.operator("quat_ik.add_chain", icon="CON_KINEMATIC")
    layout.operator("quat_ik.add_pole", text="Add Quat IK Pole Target")
    layout.operator("quat_ik.snap_target", text="Snap Quat IK Target to Chain")
    layout.operator("quat_ik.add_pin", text="Pin Bone (Quat IK)")
    layout.operator("quat_ik.mirror_chain", text="Mirror Quat IK Chain")
    layout.operator("quat_ik.select_bone_chain", text="Select Quat IK Chain of Active Bone")
    layout.operator("quat_ik.from_ik_constraint", text="Quat IK Chain from IK Constraint")
    layout.operator("quat_ik.from_all_ik_constraints", text="Quat IK Chains from All IK Constraints")
    layout.operator("quat_ik.solve", text="Solve Quat IK Now")
    layout.operator("quat_ik.bake", text="Bake Quat IK...")
    layout.operator("quat_ik.next_jump", text="Next Quat IK Pose Jump")


CLASSES = (
    QUATIK_UL_chains,
    QUATIK_PT_chains,
    QUATIK_PT_chain_orientation,
    QUATIK_PT_chain_pole,
    QUATIK_PT_chain_solver,
    QUATIK_PT_chain_status,
    QUATIK_UL_pins,
    QUATIK_PT_body,
)
