"""The View3D sidebar tab "Quat IK"."""

import bpy


class QUATIK_PT_chains(bpy.types.Panel):
    bl_label = "Quat IK"
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "Quat IK"

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type == "ARMATURE"

    def draw(self, context):
        layout = self.layout
        settings = context.object.quat_ik
        row = layout.row(align=True)
        row.operator("quat_ik.add_chain", icon="ADD")
        row.operator("quat_ik.remove_chain", icon="REMOVE", text="")
        for chain in settings.chains:
            row = layout.row()
            row.prop(chain, "enabled", text="")
            row.label(text=f"{chain.tip_bone} ({chain.chain_length} bones)")


CLASSES = (QUATIK_PT_chains,)
