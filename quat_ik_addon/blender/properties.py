"""Settings stored in the .blend: Quat IK chains on the armature object."""

import bpy
from bpy.props import BoolProperty, CollectionProperty, IntProperty, PointerProperty, StringProperty


class QuatIKChain(bpy.types.PropertyGroup):
    """One IK chain: its tip bone, how many bones it spans and what it reaches for."""

    tip_bone: StringProperty(name="Tip Bone", description="Last bone of the chain; its tail reaches for the target")
    chain_length: IntProperty(
        name="Chain Length", description="Number of bones in the chain, counted from the tip", default=2, min=1, max=255
    )
    enabled: BoolProperty(name="Enabled", description="Solve this chain", default=True)


class QuatIKArmatureSettings(bpy.types.PropertyGroup):
    """All Quat IK chains of one armature object."""

    chains: CollectionProperty(type=QuatIKChain, name="Chains", description="Quat IK chains of this armature")
    active_chain_index: IntProperty(name="Active Chain", description="Chain shown in the panel", default=0, min=0)


CLASSES = (QuatIKChain, QuatIKArmatureSettings)


def attach() -> None:
    """Hang the property groups on Blender types (called from register())."""
    bpy.types.Object.quat_ik = PointerProperty(type=QuatIKArmatureSettings)


def detach() -> None:
    del bpy.types.Object.quat_ik
