"""Session: chains follow renames. A renamed bone (the tip, a target, pole or orientation
bone of another armature; in Pose or Edit Mode; several at once) is followed by every chain
that names it, as Blender's constraints follow theirs; adding a bone infers nothing. A
chain with Influence below 1 keeps blending from the bones' own pose after its armature is
renamed or duplicated, rather than creeping toward the target with every solve.

argv: WORKDIR
"""

import bpy

from tests.blender.sessions.common import Checks, add_chain, effector_world, empty, make_rig, reset_scene

checks = Checks("chains follow renames")


def update():
    bpy.context.view_layer.update()


def arm(name="Rig", target=(1.2, 0.7, 1.9)):
    ob = make_rig(name, [((0, 0, 1.5), (0.9, 0, 1.5)), ((0.9, 0, 1.5), (1.7, 0, 1.5)), ((1.7, 0, 1.5), (2.0, 0, 1.5))])
    empty("Target", target)
    add_chain(ob, "B2", 3, "Target", mode="LIVE", chain_name="Arm")
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    return ob


def error(ob, tip: str) -> float:
    update()
    return (effector_world(ob, tip) - bpy.data.objects["Target"].matrix_world.translation).length


# ---- the tip bone renamed in Pose Mode's data, then in Edit Mode
with checks.step("a renamed tip is followed and still reaches"):
    reset_scene()
    ob = arm()
    chain = ob.quat_ik.chains[0]
    ob.data.bones["B2"].name = "hand.L"
    update()
    bpy.data.objects["Target"].location = (1.0, 0.5, 2.0)
    checks.check("a renamed tip is followed", chain.tip_bone == "hand.L", chain.tip_bone)
    checks.check(
        "... and the chain still reaches", chain.status_solved and error(ob, "hand.L") < 1e-3, chain.status_message
    )
with checks.step("renamed in edit mode with another bone"):
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    ob.data.edit_bones["hand.L"].name = "Hand.L"
    ob.data.edit_bones["B1"].name = "Forearm.L"  # two at once, as a batch rename does
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check("renamed in Edit Mode, with another bone", chain.tip_bone == "Hand.L", chain.tip_bone)
with checks.step("a bone added renames nothing"):
    bpy.ops.object.mode_set(mode="EDIT")
    ob.data.edit_bones.new("Extra").tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check("a bone added renames nothing", chain.tip_bone == "Hand.L", chain.tip_bone)

# ---- target, pole and orientation bones of another armature
with checks.step("target, pole and orientation bones follow"):
    props = make_rig("Props", [((2, 0, 0), (2, 0, 1)), ((2, 0, 1), (2, 0, 2))])
    chain.target_object, chain.target_bone = props, "B1"
    chain.pole_object, chain.pole_bone = props, "B0"
    chain.orientation_mode, chain.orientation_object, chain.orientation_bone = "OBJECT", props, "B1"
    update()
    props.data.bones["B1"].name = "handle"
    props.data.bones["B0"].name = "elbow_aim"
    update()
    followed = (chain.target_bone, chain.pole_bone, chain.orientation_bone)
    checks.check("target, pole and orientation bones follow", followed == ("handle", "elbow_aim", "handle"), followed)

# ---- Influence below 1 keeps its own pose across an armature rename and a duplicate
with checks.step("influence keeps its own pose across a rename"):
    reset_scene()
    ob = arm(target=(1.0, 0.9, 2.3))
    chain = ob.quat_ik.chains[0]
    chain.influence = 0.5
    update()
    bpy.data.objects["Target"].location = (0.9, 1.0, 2.4)
    update()
    blended = error(ob, "B2")
    ob.name = "Renamed"
    update()
    chain.iterations = 65  # any setting: the chain solves again
    update()
    checks.near("renamed: a solve blends from the same own pose", error(ob, "B2"), blended, 1e-4)
with checks.step("a duplicate blends as the original does"):
    for other in bpy.data.objects:
        other.select_set(other == ob)
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.duplicate(linked=False)
    copy = bpy.context.active_object
    bpy.data.objects["Target"].location = (0.9, 1.0, 2.41)  # both solve
    update()
    checks.near("a duplicate blends as the original does", error(copy, "B2"), error(ob, "B2"), 1e-4)
checks.close()
