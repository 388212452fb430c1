"""Session: a linked character with a library override. Its chains' settings change and a new
chain is added in the override, solve and bake work, and all of it survives saving and
reopening; joint limits stay the library's (the limit tools refuse with a clear message).

argv: WORKDIR
"""

import sys
import types
from pathlib import Path

import bpy

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    effector_world,
    empty,
    pose_mode,
    reset_scene,
    straight_rig,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("library override of a rig with Quat IK chains")

# The library: a character collection with a rigged arm, its target and one chain.
reset_scene()
character = bpy.data.collections.new("Character")
bpy.context.scene.collection.children.link(character)
rig = straight_rig("Arm", 3)
target = empty("Target", (1.0, 0.5, 2.0))
for ob in (rig, target):
    for collection in ob.users_collection:
        collection.objects.unlink(ob)
    character.objects.link(ob)
bpy.context.view_layer.objects.active = rig
add_chain(rig, "B2", 3, "Target", mode="MANUAL")
rig.pose.bones["B1"].quat_ik.stiffness = 0.25
rig.pose.bones["B0"].use_ik_limit_x = True  # for Chain from IK Constraint in the shot
# A second rig with sides, for Mirror Chain in the shot: one bone an arm, its chain on the left.
sided = bpy.data.objects.new("Sided", bpy.data.armatures.new("Sided"))
character.objects.link(sided)
bpy.context.view_layer.objects.active = sided
bpy.ops.object.mode_set(mode="EDIT")
for side, sign in (("L", 1.0), ("R", -1.0)):
    bone = sided.data.edit_bones.new(f"arm.{side}")
    bone.head, bone.tail = (sign * 0.2, 0.0, 1.0), (sign * 0.7, 0.0, 1.0)
bpy.ops.object.mode_set(mode="OBJECT")
add_chain(sided, "arm.L", 1, "Target", mode="MANUAL")
sided.pose.bones["arm.L"].quat_ik.stiffness = 0.5
bpy.ops.object.mode_set(mode="OBJECT")
library = workdir / "character.blend"
bpy.ops.wm.save_as_mainfile(filepath=str(library))

with checks.step("the override of the linked rig comes with its chain"):
    # The shot: link the character and override it, editable (as Make Library Override does in
    # the UI for the selected object).
    bpy.ops.wm.read_homefile(use_empty=True)
    with bpy.data.libraries.load(str(library), link=True) as (_source, linked):
        linked.collections = ["Character"]
    bpy.context.scene.collection.children.link(linked.collections[0])
    linked.collections[0].override_hierarchy_create(bpy.context.scene, bpy.context.view_layer)
    for ob in bpy.data.objects:
        if ob.override_library is not None:
            ob.override_library.is_system_override = False
    rig = next(ob for ob in bpy.data.objects if ob.name == "Arm" and ob.override_library is not None)
    target = next(ob for ob in bpy.data.objects if ob.type == "EMPTY" and ob.override_library is not None)
    checks.check("the rig is an override of the linked one", rig.library is None and rig.data.library is not None)
    chain = rig.quat_ik.chains[0]
    checks.check("its chain came with it", (chain.name, chain.target_object) == ("B2", target), chain.name)

with checks.step("in the override a chain is added, solved and baked"):
    chain.tolerance = 0.01
    chain.restarts = 5
    pose_mode(rig, "B1")
    checks.check(
        "a chain is added in the override",
        bpy.ops.quat_ik.add_chain(chain_length=2, target=target.name, mode="MANUAL") == {"FINISHED"},
    )
    rig.quat_ik.chains[1].priority = 1  # both reach for one target: the first chain's goal comes first
    rig.quat_ik.active_chain_index = 0
    target.location = (0.8, 0.4, 1.9)
    checks.check("solve now", bpy.ops.quat_ik.solve() == {"FINISHED"})
    bpy.context.view_layer.update()
    reached = (effector_world(rig, "B2") - target.matrix_world.translation).length
    checks.check("... reaches the moved target", reached < 0.01, f"{reached:.2e}")
    bake = bpy.ops.quat_ik.bake(frame_start=1, frame_end=5, destination="NEW_ACTION")
    checks.check("bake", bake == {"FINISHED"} and rig.animation_data.action is not None)
    # Operators may rebuild an override's data: Python references from before them may dangle.
    rig = next(ob for ob in bpy.data.objects if ob.name == "Arm" and ob.override_library is not None)
    rig.quat_ik.chains[0].mode = "PER_FRAME"  # (a bake leaves its chains in Manual)

with checks.step("the limit tools refuse to change the library's limits"):
    # Limits are the rig's: the tools say so and change nothing.
    message = ""
    try:
        bpy.ops.quat_ik.limits_reset()
    except RuntimeError as error:
        message = str(error)
    checks.check("reset limits is refused", "library override" in message and "change them there" in message, message)
    rig.pose.bones["B1"].quat_ik.joint_type = "BALL"  # as the panel would (it greys the field out)
    for tool in (bpy.ops.quat_ik.window_add, bpy.ops.quat_ik.limits_from_blender):
        message = ""
        try:
            tool()
        except RuntimeError as error:
            message = str(error)
        checks.check(f"{tool.idname_py()} is refused too", "library override" in message, message)
    rig.pose.bones["B1"].quat_ik.joint_type = "FREE"
    checks.check("... and the limit is as the library has it", rig.pose.bones["B1"].quat_ik.stiffness == 0.25)

with checks.step("an IK constraint converts on the override and leaves its limits"):
    # Chain from IK Constraint and Mirror Chain make their chains and leave the library's limits.
    pose_mode(rig, "B0")
    ik = rig.pose.bones["B0"].constraints.new("IK")
    ik.target, ik.chain_count = target, 1
    checks.check("an IK constraint converts on the override", bpy.ops.quat_ik.from_ik_constraint() == {"FINISHED"})
    rig = next(ob for ob in bpy.data.objects if ob.name == "Arm" and ob.override_library is not None)
    checks.check("... into a chain", [c.tip_bone for c in rig.quat_ik.chains] == ["B2", "B1", "B0"])
    checks.check("... its IK limit not converted", rig.pose.bones["B0"].quat_ik.joint_type == "FREE")
    rig.quat_ik.chains.remove(2)
with checks.step("a chain mirrors on the override and leaves its limits"):
    sided = next(ob for ob in bpy.data.objects if ob.name == "Sided" and ob.override_library is not None)
    pose_mode(sided, "arm.L")
    checks.check("a chain mirrors on the override", bpy.ops.quat_ik.mirror_chain() == {"FINISHED"})
    sided = next(ob for ob in bpy.data.objects if ob.name == "Sided" and ob.override_library is not None)
    checks.check("... onto the other side", [c.tip_bone for c in sided.quat_ik.chains] == ["arm.L", "arm.R"])
    checks.check("... its limits not mirrored", sided.pose.bones["arm.R"].quat_ik.stiffness == 0.0)
    sided.quat_ik.chains.remove(1)
    pose_mode(rig, "B1")


class RecordingLayout:
    """Stands in for the panel's layout: every call returns it; labels are recorded."""

    def __init__(self):
        self.labels, self.enabled = [], True

    def label(self, text="", **_):
        self.labels.append(text)
        return self

    def __getattr__(self, name):
        return lambda *_args, **_kwargs: self


with checks.step("the Joint Limits panel shows the limits greyed and why"):
    layout = RecordingLayout()
    panel = types.SimpleNamespace(layout=layout)
    context = types.SimpleNamespace(active_pose_bone=rig.pose.bones["B1"], active_object=rig)
    submodule("ui.limits_panel").QUATIK_PT_bone_limits.draw(panel, context)
    checks.check(
        "the Joint Limits panel shows the limits greyed, and why",
        not layout.enabled and any("Library override" in text for text in layout.labels),
        layout.labels,
    )

with checks.step("chains, settings, bake and limits survive reopening"):
    shot = workdir / "shot.blend"
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.ops.wm.save_as_mainfile(filepath=str(shot))
    bpy.ops.wm.open_mainfile(filepath=str(shot))
    rig = next(ob for ob in bpy.data.objects if ob.name == "Arm" and ob.override_library is not None)
    chains = rig.quat_ik.chains
    checks.check("after reopening: both chains", [c.name for c in chains] == ["B2", "B1"], [c.name for c in chains])
    kept = (round(chains[0].tolerance, 6), chains[0].restarts, chains[0].mode)
    checks.check("... the first chain's changed settings", kept == (0.01, 5, "PER_FRAME"), kept)
    checks.check("... the added chain's tip and length", (chains[1].tip_bone, chains[1].chain_length) == ("B1", 2))
    checks.check("... the bake", rig.animation_data is not None and rig.animation_data.action is not None)
    checks.check("... the library's limit", rig.pose.bones["B1"].quat_ik.stiffness == 0.25)
    target = next(ob for ob in bpy.data.objects if ob.type == "EMPTY" and ob.override_library is not None)
    target.location = (0.6, 0.6, 2.0)
    bpy.context.scene.frame_set(3)  # the first chain is Per Frame now
    reached = (effector_world(rig, "B2") - target.matrix_world.translation).length
    checks.check("... and Per Frame solves the override on a frame change", reached < 0.01, f"{reached:.2e}")

with checks.step("a new target empty goes to the scene's collection"):
    # A new target empty: the override's collection refuses new objects, so it goes to the scene's.
    pose_mode(rig, "B2")
    added = bpy.ops.quat_ik.add_chain(chain_length=1, target="", mode="MANUAL")
    made = bpy.data.objects.get("B2_target")
    checks.check(
        "a chain with a new target empty is added",
        added == {"FINISHED"} and made is not None and made.users_collection,
        (added, made and [c.name for c in made.users_collection]),
    )
    orphans = [ob.name for ob in bpy.data.objects if not ob.users_collection]
    checks.check("... and no object is left outside every collection", not orphans, orphans)
with checks.step("a deleted new target is let go"):
    # Deleted (X), the override's chain lets it go, as on a local rig.
    rig = next(ob for ob in bpy.data.objects if ob.name == "Arm" and ob.override_library is not None)
    bpy.ops.object.mode_set(mode="OBJECT")
    for ob in bpy.data.objects:
        ob.select_set(ob.name == "B2_target")
    bpy.ops.object.delete()
    bpy.context.view_layer.update()
    last = rig.quat_ik.chains[-1]
    checks.check(
        "the new target deleted, the override's chain lets it go and it is deleted",
        last.target_object is None and "B2_target" not in bpy.data.objects,
        (last.target_object, list(bpy.data.objects.keys())),
    )
checks.close()
