"""Session: chains go where their tip bones go, as Blender's constraints do. Joining an
armature into another (Ctrl-J) keeps the joined armature's chains, with their settings, their
tips under the names Join gave the bones and their targets on the joined armature's bones;
separating bones (P) leaves each chain on the armature that has its tip; a duplicate joined
back in gives a second chain; a chain removed stays removed when bones change later; a file
saved before chains had records gets them on loading; an armature deleted while its chain
reached for its own bone is not saved.

argv: WORKDIR
"""

import math
import sys
from pathlib import Path

import bpy
from mathutils import Vector

from tests.blender.sessions.common import Checks, add_chain, effector_world, empty, make_rig, reset_scene, submodule

checks = Checks("chains follow joined and separated bones")
workdir = Path(sys.argv[-1])
records = __import__("tests.blender.sessions.common", fromlist=["submodule"]).submodule("chains.tip_records")


def update():
    bpy.context.view_layer.update()


def object_mode():
    if bpy.context.object is not None and bpy.context.object.mode != "OBJECT":
        bpy.ops.object.mode_set(mode="OBJECT")


def join(active, *others):
    object_mode()
    for ob in bpy.data.objects:
        ob.select_set(ob == active or ob in others)
    bpy.context.view_layer.objects.active = active
    result = bpy.ops.object.join()
    update()
    return result


def chains_of(ob) -> dict:
    return {chain.name: chain for chain in ob.quat_ik.chains}


def reaches(ob, chain) -> float:
    target = chain.target_object
    goal = (
        target.matrix_world @ target.pose.bones[chain.target_bone].head
        if chain.target_bone
        else (target.matrix_world.translation)
    )
    return (effector_world(ob, chain.tip_bone) - goal).length


ARM = [((0, 0, 1.5), (0.9, 0, 1.5)), ((0.9, 0, 1.5), (1.7, 0, 1.5)), ((1.7, 0, 1.5), (2.0, 0, 1.5))]

with checks.step("a chain's tip bone carries its record"):
    # ---- join: the joined armature's chain comes along, settings, renamed tip and own-bone target
    reset_scene()
    left = make_rig("Left", ARM)
    empty("TargetL", (1.2, 0.7, 1.9))
    add_chain(left, "B2", 3, "TargetL", mode="LIVE", chain_name="ArmL")
    object_mode()
    right = make_rig(
        "Right",
        [((0, 2, 1.5), (0.9, 2, 1.5)), ((0.9, 2, 1.5), (1.7, 2, 1.5)), ((1.7, 2, 1.5), (2.0, 2, 1.5))],
        extra_bones=[("Handle", (1.3, 2.6, 1.9), (1.3, 2.6, 2.2), None)],
    )
    pole = empty("PoleR", (1.0, 3.5, 1.5))
    add_chain(right, "B2", 3, "Right", target_bone="Handle", mode="LIVE", chain_name="ArmR")
    object_mode()
    arm_r = right.quat_ik.chains[0]
    arm_r.iterations, arm_r.tolerance, arm_r.influence, arm_r.pole_object = 77, 2e-4, 0.75, pole
    arm_r.effector_offset = (0.0, 0.05, 0.0)
    update()
    checks.check(
        "the tip bone carries a record", records.RECORDS in right.pose.bones["B2"], list(right.pose.bones["B2"].keys())
    )
with checks.step("a Join brings the joined armature's chain, settings, renamed tip and target"):
    # A third rig, not joined, whose chain reaches for a bone of the armature joined away.
    other = make_rig("Other", [((0, -2, 1.5), (0.9, -2, 1.5)), ((0.9, -2, 1.5), (1.7, -2, 1.5))])
    add_chain(other, "B1", 2, "Right", target_bone="Handle", mode="MANUAL", chain_name="Reacher")
    object_mode()
    checks.check("join finished", join(left, right) == {"FINISHED"})
    found = chains_of(left)
    checks.check("the joined armature's chain is listed", sorted(found) == ["ArmL", "ArmR"], sorted(found))
    joined = found.get("ArmR")
    if joined is not None:
        checks.check("... its tip is the bone under its new name", joined.tip_bone == "B2.001", joined.tip_bone)
        carried = (
            joined.iterations,
            round(joined.tolerance, 7),
            joined.influence,
            joined.pole_object,
            tuple(round(value, 6) for value in joined.effector_offset),
            joined.mode,
            joined.chain_length,
        )
        checks.check(
            "... its settings came along", carried == (77, 2e-4, 0.75, pole, (0.0, 0.05, 0.0), "LIVE", 3), carried
        )
        checks.check(
            "... its target bone is now on the joined armature",
            (joined.target_object, joined.target_bone) == (left, "Handle"),
            (joined.target_object, joined.target_bone),
        )
        checks.check("... the ids of the two chains differ", joined.uid and joined.uid != found["ArmL"].uid)
        left.pose.bones["Handle"].location = (0.0, 0.1, 0.0)  # the handle moves: Live solves
        update()
        checks.check(
            "... and it solves Live there", joined.status_solved and joined.status_converged, joined.status_message
        )
    gone = bpy.data.objects.get("Right")
    checks.check(
        "the joined armature is let go (its own chain reached for its bones)",
        gone is None or gone.users == 0,
        gone and gone.users,
    )
    checks.check(
        "the active armature's own chain stays", found.get("ArmL") is not None and found["ArmL"].tip_bone == "B2"
    )
    reacher = other.quat_ik.chains[0]
    checks.check(
        "another rig's chain reaching for the joined armature's bone now reaches for it on the joined one",
        (reacher.target_object, reacher.target_bone) == (left, "Handle"),
        (reacher.target_object, reacher.target_bone),
    )

with checks.step("separating bones leaves each chain with the armature of its tip"):
    # ---- separate: each chain stays with the armature that has its tip
    object_mode()
    bpy.context.view_layer.objects.active = left
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in left.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name.endswith(".001") or bone.name == "Handle"
    bpy.ops.armature.separate()
    update()
    runtime = submodule("runtime.state").session
    checks.check(
        "no chain of the new armature is reported broken while its bones are sorted out",
        not [entry for entry in runtime.reported if "Left.001" in str(entry)],
        sorted(map(str, runtime.reported)),
    )
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    others = [
        ob for ob in bpy.data.objects if ob.type == "ARMATURE" and ob not in (left, other) and ob.users_collection
    ]
    checks.check("separate made one armature", len(others) == 1, [ob.name for ob in others])
    if others:
        apart = others[0]
        checks.check(
            "the separated armature lists its own chain only",
            sorted(chains_of(apart)) == ["ArmR"],
            sorted(chains_of(apart)),
        )
        checks.check(
            "the armature left behind keeps the other", sorted(chains_of(left)) == ["ArmL"], sorted(chains_of(left))
        )

with checks.step("a target bone Join renamed is followed under its new name"):
    # ---- a target bone whose name Join had to change is followed under its new name
    reset_scene()
    left = make_rig("Left", ARM, extra_bones=[("Handle", (1.3, 0.6, 1.9), (1.3, 0.6, 2.2), None)])
    object_mode()
    right = make_rig(
        "Right",
        [((0, 2, 1.5), (0.9, 2, 1.5)), ((0.9, 2, 1.5), (1.7, 2, 1.5))],
        extra_bones=[
            ("Handle", (1.3, 2.6, 1.9), (1.3, 2.6, 2.2), None),
            ("Handle.001", (0.5, 2.6, 1.9), (0.5, 2.6, 2.2), None),  # Join renames both
        ],
    )
    add_chain(right, "B1", 2, "Right", target_bone="Handle", mode="MANUAL", chain_name="ArmR")
    object_mode()
    right.location = (0.0, 0.5, 0.2)  # Join moves the bones into the joined armature's space
    other = make_rig("Other", [((0, -2, 1.5), (0.9, -2, 1.5)), ((0.9, -2, 1.5), (1.7, -2, 1.5))])
    add_chain(other, "B1", 2, "Right", target_bone="Handle", mode="MANUAL", chain_name="Reacher")
    object_mode()
    join(left, right)
    renamed = [
        bone.name
        for bone in left.data.bones
        if (left.matrix_world @ bone.head_local - Vector((1.3, 3.1, 2.1))).length < 1e-4 and bone.name != "Handle"
    ]
    checks.check("(Join renamed the joined handle)", len(renamed) == 1 and renamed[0].startswith("Handle."), renamed)
    joined, reacher = chains_of(left).get("ArmR"), other.quat_ik.chains[0]
    for label, chain in (("the joined chain", joined), ("another rig's chain", reacher)):
        reaches_for = (chain.target_object, chain.target_bone) if chain is not None else None
        checks.check(
            f"{label} reaches for the handle under the name Join gave it",
            reaches_for == (left, renamed[0] if renamed else None),
            reaches_for,
        )

with checks.step("a target bone separated away is reached for on the new armature"):
    # ---- separate the target bone away: the chain reaches for it on the new armature
    reset_scene()
    rig = make_rig("Rig", ARM, extra_bones=[("Handle", (1.3, 0.6, 1.9), (1.3, 0.6, 2.2), None)])
    add_chain(rig, "B2", 3, "Rig", target_bone="Handle", mode="MANUAL", chain_name="Arm")
    object_mode()
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in rig.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name == "Handle"
    bpy.ops.armature.separate()
    update()
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    handles = [ob for ob in bpy.data.objects if ob.type == "ARMATURE" and ob != rig and ob.users_collection]
    arm = rig.quat_ik.chains[0]
    checks.check(
        "a target bone separated away is reached for on the new armature",
        len(handles) == 1 and (arm.target_object, arm.target_bone) == (handles[0], "Handle"),
        (arm.target_object, arm.target_bone),
    )

with checks.step("a removed chain stays removed when bones change later"):
    # ---- a chain removed (not by our operator) stays removed when bones change later
    reset_scene()
    left = make_rig("Left", ARM)
    empty("TargetL", (1.2, 0.7, 1.9))
    add_chain(left, "B2", 3, "TargetL", mode="LIVE", chain_name="ArmL")
    object_mode()
    left.quat_ik.chains.remove(0)
    bpy.context.view_layer.objects.active = left
    bpy.ops.object.mode_set(mode="EDIT")
    left.data.edit_bones.new("Extra").tail = (0.0, 0.0, 1.0)
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check("a removed chain is not listed again", len(left.quat_ik.chains) == 0, len(left.quat_ik.chains))
    checks.check("... and its record is gone", records.RECORDS not in left.pose.bones["B2"])

with checks.step("a duplicate's chain gets its own id"):
    # ---- the remove operator drops the record; a duplicate joined back in gives a second chain
    reset_scene()
    left = make_rig("Left", ARM)
    empty("TargetL", (1.2, 0.7, 1.9))
    add_chain(left, "B2", 3, "TargetL", mode="LIVE", chain_name="ArmL")
    object_mode()
    for ob in bpy.data.objects:
        ob.select_set(ob == left)
    bpy.context.view_layer.objects.active = left
    bpy.ops.object.duplicate(linked=False)
    update()
    copy = bpy.context.active_object
    checks.check("a duplicate's chain gets its own id", copy.quat_ik.chains[0].uid != left.quat_ik.chains[0].uid)
with checks.step("a duplicate joined back in gives a second chain, removing it drops its record"):
    join(left, copy)
    found = chains_of(left)
    checks.check("a duplicate joined back in gives two chains", sorted(found) == ["ArmL", "ArmL.001"], sorted(found))
    if "ArmL.001" in found:
        checks.check("... on the joined bones", found["ArmL.001"].tip_bone == "B2.001", found["ArmL.001"].tip_bone)
        checks.check("... reaching for the same target", found["ArmL.001"].target_object == bpy.data.objects["TargetL"])
    pose_mode = __import__("tests.blender.sessions.common", fromlist=["pose_mode"]).pose_mode
    pose_mode(left, "B2.001")
    left.quat_ik.active_chain_index = 1
    bpy.ops.quat_ik.remove_chain()
    checks.check("the remove operator drops the record", records.RECORDS not in left.pose.bones["B2.001"])
    object_mode()

# ---- Symmetrize mirrors a chain as it mirrors constraints; doing it again adds none
reset_scene()
sym = make_rig("Sym", [((0.2, 0, 1.5), (0.9, 0, 1.5)), ((0.9, 0, 1.5), (1.7, 0, 1.5))])
sym.data.bones["B0"].name, sym.data.bones["B1"].name = "arm.L", "hand.L"
empty("target.L", (1.2, 0.7, 1.9))
empty("target.R", (-1.2, 0.7, 1.9))
add_chain(sym, "hand.L", 2, "target.L", mode="MANUAL", chain_name="Arm.L")
hand = sym.pose.bones["hand.L"].quat_ik  # a twist range one-sided: its mirror image differs
hand.joint_type, hand.use_twist_range = "BALL", True
hand.twist_min, hand.twist_max = math.radians(-10.0), math.radians(50.0)
arm_l = sym.quat_ik.chains[0]
arm_l.effector_offset, arm_l.pole_angle = (0.02, 0.0, 0.0), 0.3


def symmetrize(armature):
    object_mode()
    bpy.context.view_layer.objects.active = armature
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in armature.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name.endswith(".L")
    bpy.ops.armature.symmetrize()
    bpy.ops.object.mode_set(mode="OBJECT")
    update()


with checks.step("Symmetrize gives the mirrored chain"):
    symmetrize(sym)
    found = chains_of(sym)
    checks.check("Symmetrize gives the mirrored chain", sorted(found) == ["Arm.L", "Arm.R"], sorted(found))
    if "Arm.R" in found:
        arm_r = found["Arm.R"]
        mirrored = (
            arm_r.tip_bone,
            arm_r.target_object.name,
            tuple(round(v, 6) for v in arm_r.effector_offset),
            round(arm_r.pole_angle, 6),
            arm_r.chain_length,
        )
        checks.check(
            "... on the mirrored tip, reaching for the mirrored target",
            mirrored == ("hand.R", "target.R", (-0.02, 0.0, 0.0), -0.3, 2),
            mirrored,
        )


def limit_of(bone: str):
    return submodule("limits.conversion").spec_limit(sym.pose.bones[bone].quat_ik)


def mirror_of_left():
    mirrored, problem = submodule("operators.limit_tools").mirrored_limit(sym.pose.bones["hand.L"], "hand.R")
    return mirrored if mirrored is not None else problem


with checks.step("Symmetrize mirrors the chain's limits, again too, and keeps limits set by hand"):
    checks.check(
        "(the mirror image differs from the limit itself)", mirror_of_left() != limit_of("hand.L"), mirror_of_left()
    )
    checks.check(
        "... and the mirror image of its joint limits", limit_of("hand.R") == mirror_of_left(), limit_of("hand.R")
    )
    hand.twist_max = math.radians(60.0)
    symmetrize(sym)
    checks.check("Symmetrize again adds no chain", sorted(chains_of(sym)) == ["Arm.L", "Arm.R"], sorted(chains_of(sym)))
    checks.check("... and mirrors the limits again", limit_of("hand.R") == mirror_of_left(), limit_of("hand.R"))
    sym.pose.bones["hand.R"].quat_ik.twist_min = math.radians(-5.0)  # set by hand on its own side
    set_by_hand = limit_of("hand.R")
    bpy.context.view_layer.objects.active = sym
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check("limits set on the other side stay", limit_of("hand.R") == set_by_hand, limit_of("hand.R"))

# ---- any bone's limits Symmetrize copies get their mirror image, not only a chain's
reset_scene()
sym = make_rig("Sym", [((0.2, 0, 1.5), (0.9, 0, 1.5)), ((0.9, 0, 1.5), (1.7, 0.3, 1.5))])
sym.data.bones["B0"].name, sym.data.bones["B1"].name = "upper.L", "fore.L"
fore, upper = sym.pose.bones["fore.L"].quat_ik, sym.pose.bones["upper.L"].quat_ik
fore.joint_type, fore.hinge_axis, fore.use_hinge_range = "HINGE", "Z", True
fore.hinge_min, fore.hinge_max = math.radians(-5.0), math.radians(140.0)
upper.joint_type, upper.use_twist_range = "BALL", True
upper.twist_min, upper.twist_max = math.radians(-20.0), math.radians(45.0)
symmetrize(sym)


def mirror_image(bone: str):
    mirrored, problem = submodule("operators.limit_tools").mirrored_limit(sym.pose.bones[bone], bone[:-1] + "R")
    return mirrored if mirrored is not None else problem


with checks.step("Symmetrize gives any bone the mirror image of its limits"):
    for bone in ("fore.L", "upper.L"):
        other = bone[:-1] + "R"
        checks.check(f"(the mirror image of {bone}'s limits differs)", mirror_image(bone) != limit_of(bone))
        checks.check(
            f"Symmetrize gives {other} the mirror image of {bone}'s limits", limit_of(other) == mirror_image(bone)
        )
    twist = tuple(round(angle, 3) for angle in limit_of("upper.L").twist_deg)
    checks.check("... and leaves the side it copied from as it was", twist == (-20.0, 45.0), twist)

with checks.step("limits alike on both sides before Edit Mode stay alike"):
    # Limits alike on both sides before Edit Mode (set so by hand) stay alike: no copy happened.
    submodule("limits.conversion").copy_limits(sym.pose.bones["upper.L"].quat_ik, sym.pose.bones["upper.R"].quat_ik)
    alike = limit_of("upper.R")
    bpy.context.view_layer.objects.active = sym
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check("limits already alike before Edit Mode stay", limit_of("upper.R") == alike == limit_of("upper.L"))

with checks.step("a bone duplicated to the other side gets the mirror image of its limits"):
    # A bone duplicated in Edit Mode and renamed to the other side gets the mirror image too.
    bpy.ops.object.mode_set(mode="EDIT")
    for bone in sym.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name == "fore.R"
    sym.data.edit_bones.active = sym.data.edit_bones["fore.R"]
    bpy.ops.armature.delete()
    for bone in sym.data.edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name == "fore.L"
    sym.data.edit_bones["upper.L"].select_tail = True  # a connected bone's head is its parent's tail
    sym.data.edit_bones.active = sym.data.edit_bones["fore.L"]
    bpy.ops.armature.duplicate()
    copy = sym.data.edit_bones.active
    copy.name = "fore.R"
    copy.head, copy.tail = (-0.9, 0.0, 1.5), (-1.7, 0.3, 1.5)
    copy.parent = sym.data.edit_bones["upper.R"]
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    checks.check(
        "a bone duplicated to the other side gets the mirror image of its limits",
        limit_of("fore.R") == mirror_image("fore.L"),
        (limit_of("fore.R"), mirror_image("fore.L")),
    )

with checks.step("a copied tip bone copies its chain"):
    # ---- a tip bone copied (as Duplicate copies a pose bone's properties) copies its chain
    reset_scene()
    rig = make_rig("Rig", ARM)
    empty("TargetL", (1.2, 0.7, 1.9))
    add_chain(rig, "B2", 2, "TargetL", mode="MANUAL", chain_name="Arm")
    object_mode()
    rig.pose.bones["B1"][records.RECORDS] = rig.pose.bones["B2"][records.RECORDS].to_dict()
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.object.mode_set(mode="OBJECT")
    update()
    copies = {chain.name: (chain.tip_bone, chain.chain_length) for chain in rig.quat_ik.chains}
    checks.check(
        "a copied tip bone gives a copy of its chain", copies == {"Arm": ("B2", 2), "Arm.001": ("B1", 2)}, copies
    )

with checks.step("three armatures joined at once keep a chain's target bone"):
    # ---- three armatures joined at once: a chain reaching for a bone of another joined one
    reset_scene()
    base = make_rig("Base", ARM)
    arm_rig = make_rig("ArmRig", [((0, 3, 1.5), (0.9, 3, 1.5)), ((0.9, 3, 1.5), (1.7, 3, 1.5))])
    controls = make_rig("Controls", [((1.2, 3.6, 1.9), (1.2, 3.6, 2.2))])
    controls.data.bones["B0"].name = "ik_hand"
    add_chain(arm_rig, "B1", 2, "Controls", target_bone="ik_hand", mode="MANUAL", chain_name="ArmIK")
    object_mode()
    join(base, arm_rig, controls)
    found = chains_of(base)
    reach = found.get("ArmIK")
    checks.check(
        "three joined at once: the chain reaches for the other joined armature's bone on the joined one",
        reach is not None and (reach.target_object, reach.target_bone) == (base, "ik_hand"),
        reach and (reach.target_object, reach.target_bone),
    )

with checks.step("two chains sharing a tip both come along with a Join"):
    # ---- two chains sharing a tip both come along with a Join
    reset_scene()
    left = make_rig("Left", ARM)
    empty("TargetL", (1.2, 0.7, 1.9))
    object_mode()
    right = make_rig("Right", ARM)
    add_chain(right, "B2", 3, "TargetL", mode="MANUAL", chain_name="Reach")
    add_chain(right, "B2", 2, "TargetL", mode="MANUAL", chain_name="Short")
    object_mode()
    join(left, right)
    checks.check(
        "two chains on one tip both come with a Join",
        sorted(chains_of(left)) == ["Reach", "Short"],
        sorted(chains_of(left)),
    )

with checks.step("an armature deleted while its chain held it is deleted"):
    # ---- an armature deleted while its chain reaches for its own bone is not saved
    solo = make_rig("Solo", ARM, extra_bones=[("Handle", (1.3, 0.6, 1.9), (1.3, 0.6, 2.2), None)])
    add_chain(solo, "B2", 3, "Solo", target_bone="Handle", mode="MANUAL", chain_name="SoloArm")
    object_mode()
    for ob in bpy.data.objects:
        ob.select_set(ob == solo)
    bpy.ops.object.delete()
    checks.check("a deleted armature its chain held is deleted, as Blender deletes one", "Solo" not in bpy.data.objects)

with checks.step("loading a file saved before chains had records records them"):
    # ---- a file saved before chains had records gets them on loading
    for pose_bone in left.pose.bones:
        if records.RECORDS in pose_bone:
            del pose_bone[records.RECORDS]
    for chain in left.quat_ik.chains:
        chain.uid = ""
    path = workdir / "old.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    left = bpy.data.objects["Left"]
    checks.check("... and is gone from the saved file", "Solo" not in bpy.data.objects, list(bpy.data.objects.keys()))
    first = left.quat_ik.chains[0]
    checks.check(
        "loading an older file records its chains",
        first.uid and first.uid in left.pose.bones[first.tip_bone].get(records.RECORDS, {}),
        (first.uid, first.tip_bone),
    )
checks.close()
