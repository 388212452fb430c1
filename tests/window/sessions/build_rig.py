"""Session (Blender 3.4 binary, headless; add-on installed by the bootstrap): build the rig the
window tests open and save it.

An arm of three bones straight out along +X from a shoulder at 1.5 m: ``UpperArm`` a ball
joint with a five-cornered polygon reach window and a twist range, ``Forearm`` a hinge about
its local Z (0°..140°), ``Hand`` a ball joint with a round cone. One Live chain "Arm" from the
hand reaches for the empty ``Target``; the armature is left active in pose mode with the hand
bone active, so the file opens the way a user would have saved it mid-work.

argv: OUT_BLEND
"""

import math
import sys

import bpy

from tests.blender.sessions.common import add_chain, empty, make_rig

out_blend = sys.argv[1]

bpy.ops.wm.read_homefile(use_empty=True)
ob = make_rig(
    "Rig", [((0.0, 0.0, 1.5), (0.9, 0.0, 1.5)), ((0.9, 0.0, 1.5), (1.7, 0.0, 1.5)), ((1.7, 0.0, 1.5), (2.0, 0.0, 1.5))]
)
for old, new in (("B0", "UpperArm"), ("B1", "Forearm"), ("B2", "Hand")):
    ob.data.bones[old].name = new
ob.data.display_type = "OCTAHEDRAL"
ob.show_in_front = True

upper = ob.pose.bones["UpperArm"].quat_ik
upper.joint_type = "BALL"
upper.use_twist_range = True
upper.twist_min, upper.twist_max = math.radians(-40.0), math.radians(60.0)
window = upper.windows.add()
window.shape = "POLYGON"
for x_deg, z_deg in ((-35.0, -25.0), (40.0, -30.0), (55.0, 20.0), (10.0, 50.0), (-40.0, 30.0)):
    window.vertices.add().angles = (math.radians(x_deg), math.radians(z_deg))
window.active_vertex_index = 2

forearm = ob.pose.bones["Forearm"].quat_ik
forearm.joint_type = "HINGE"
forearm.hinge_axis = "Z"
forearm.use_hinge_range = True
forearm.hinge_min, forearm.hinge_max = 0.0, math.radians(140.0)

hand = ob.pose.bones["Hand"].quat_ik
hand.joint_type = "BALL"
cone = hand.windows.add()
cone.shape = "CONE"
cone.half_angle = math.radians(35.0)

empty("Target", (1.2, 0.7, 1.9)).empty_display_size = 0.15  # reachable with the elbow bent
result = add_chain(ob, "Hand", 3, "Target", mode="LIVE", chain_name="Arm")
assert result == {"FINISHED"}, result
assert ob.quat_ik.chains["Arm"].status_converged, ob.quat_ik.chains["Arm"].status_message
assert ob.mode == "POSE" and ob.data.bones.active.name == "Hand"
bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 24
bpy.ops.wm.save_as_mainfile(filepath=out_blend)
print(f"saved the window tests' rig to {out_blend}")
