"""Operators that add and remove Quat IK chains."""

import bpy


class QUATIK_OT_add_chain(bpy.types.Operator):
    """Add a Quat IK chain whose tip is the active pose bone"""

    bl_idname = "quat_ik.add_chain"
    bl_label = "Add Quat IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    chain_length: bpy.props.IntProperty(
        name="Chain Length", description="Number of bones in the chain, counted from the tip", default=2, min=1, max=255
    )

    @classmethod
    def poll(cls, context):
        return context.active_pose_bone is not None

    def execute(self, context):
        settings = context.object.quat_ik
        chain = settings.chains.add()
        chain.tip_bone = context.active_pose_bone.name
        chain.chain_length = self.chain_length
        settings.active_chain_index = len(settings.chains) - 1
        return {"FINISHED"}


class QUATIK_OT_remove_chain(bpy.types.Operator):
    """Remove the active Quat IK chain"""

    bl_idname = "quat_ik.remove_chain"
    bl_label = "Remove Quat IK Chain"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context):
        ob = context.object
        return ob is not None and ob.type == "ARMATURE" and len(ob.quat_ik.chains) > 0

    def execute(self, context):
        settings = context.object.quat_ik
        settings.chains.remove(settings.active_chain_index)
        settings.active_chain_index = max(0, min(settings.active_chain_index, len(settings.chains) - 1))
        return {"FINISHED"}


CLASSES = (QUATIK_OT_add_chain, QUATIK_OT_remove_chain)
