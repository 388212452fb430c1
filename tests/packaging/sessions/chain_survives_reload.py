"""Session script (bpy 5.0 or Blender 3.4; add-on installed by the bootstrap): add a chain with
the operator in pose mode, save, reload from disk, check the chain came back.

argv: OUT_BLEND
"""

import sys

import bpy

from tools.blender_session import add_quat_ik_chain, make_bone_chain

blend_path = sys.argv[1]
ob = make_bone_chain("Arm3", 3)
add_quat_ik_chain(ob, tip_bone="Bone.002", chain_length=3)
assert ob.mode == "POSE"
bpy.ops.wm.save_as_mainfile(filepath=blend_path)

ob.quat_ik.chains.clear()  # so only the file on disk can bring the chain back
bpy.ops.wm.open_mainfile(filepath=blend_path)

assert bpy.data.filepath == blend_path, bpy.data.filepath
chains = bpy.data.objects["Arm3"].quat_ik.chains
assert [(c.tip_bone, c.chain_length, c.enabled) for c in chains] == [("Bone.002", 3, True)], [
    (c.tip_bone, c.chain_length, c.enabled) for c in chains
]
print(f"chain on Bone.002 survived save and reload of {blend_path}")
