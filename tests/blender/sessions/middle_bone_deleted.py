"""Session: a chain whose bones change while its settings do not says so. Deleting a middle
bone makes the chain follow the tip's new parents up to the next ancestor; subdividing one
moves its root down. Either is reported once (the console and the window's report) and shown in
Last Solve until a setting of the chain changes, also after the file is saved and reopened;
renaming bones changes nothing the chain spans and says nothing.

argv: WORKDIR
"""

import contextlib
import io
import sys
from pathlib import Path

import bpy

from tests.blender.sessions.common import Checks, add_chain, effector_world, empty, make_rig, reset_scene, submodule

workdir = Path(sys.argv[1])
checks = Checks("a chain whose bones change says so")
chain_records = submodule("chains.tip_records")
reset_scene()

ob = make_rig(
    "Arm",
    [((0, 0, 1), (0, 0, 2)), ((0, 0, 2), (0, 0, 3)), ((0, 0, 3), (0, 0, 4))],
    parent_of_first="Shoulder",
    extra_bones=[("Shoulder", (0, 0, 0), (0, 0, 1), None)],
)
target = empty("Target", (1.2, 0.3, 3.0))
add_chain(ob, "B2", 3, "Target", mode="LIVE")
chain = ob.quat_ik.chains[0]


def update() -> None:
    bpy.context.view_layer.update()


def record() -> dict:
    return ob.pose.bones[chain.tip_bone][chain_records.RECORDS][chain.uid].to_dict()


def edit(change) -> list[str]:
    """Run ``change`` on the edit bones in Edit Mode, leave it, update; the lines the add-on told."""
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    change(ob.data.edit_bones)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bpy.ops.object.mode_set(mode="OBJECT")
        update()
        update()
    return [line for line in out.getvalue().splitlines() if line.startswith("Quat IK")]


def delete(name: str):
    def change(edit_bones) -> None:
        for bone in edit_bones:
            bone.select = bone.select_head = bone.select_tail = bone.name == name
        bpy.ops.armature.delete()

    return change


with checks.step("the record holds the bones the chain spans"):
    checks.check("the record holds the bones the chain spans", record().get("bones") == ["B0", "B1", "B2"], record())

# ---- a middle bone deleted: the chain reaches up to the shoulder now, and says so
with checks.step("a deleted middle bone is reported and the chain still solves"):
    told = edit(delete("B1"))
    checks.check("B1 is gone, B2 hangs from B0", ob.data.bones["B2"].parent.name == "B0", ob.data.bones["B2"].parent)
    expected = "it spans Shoulder > B0 > B2 now, not B0 > B1 > B2 ('B1' deleted); Chain Length 2 keeps its root at 'B0'"
    checks.check(
        "the report says what the chain spans now, what was deleted and how to keep its root",
        len(told) == 1 and expected in told[0] and "'B2' of 'Arm'" in told[0],
        told,
    )
    checks.check("Last Solve says so", expected in chain.status_message, chain.status_message)
    checks.check("the record keeps the notice", expected in record().get("notice", ""), record())
    error = (effector_world(ob, "B2") - target.matrix_world.translation).length
    checks.check("the chain still solves", chain.status_solved and error < 1e-3, (chain.status_message, error))

with checks.step("told once and kept in last solve"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        target.location.x -= 0.2
        update()
    checks.check("told once: a later solve reports nothing", "Quat IK" not in out.getvalue(), out.getvalue())
    checks.check("... and Last Solve still says so", expected in chain.status_message, chain.status_message)

# ---- saved and reopened: the notice stays
with checks.step("reopened, last solve still says so"):
    blend = workdir / "deleted.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    ob, target = bpy.data.objects["Arm"], bpy.data.objects["Target"]
    chain = ob.quat_ik.chains[0]
    target.location.x += 0.1
    update()
    checks.check("reopened, Last Solve still says so", expected in chain.status_message, chain.status_message)

# ---- a setting changed (the length that keeps the root): the notice goes
with checks.step("a changed chain length clears the notice"):
    chain.chain_length = 2
    update()
    checks.check(
        "Chain Length 2: the chain spans B0 > B2 and Last Solve says nothing of it",
        record().get("bones") == ["B0", "B2"] and "spans" not in chain.status_message and "notice" not in record(),
        (record(), chain.status_message),
    )

# ---- renamed bones: the chain spans the same bones, nothing to say
with checks.step("renamed bones tell nothing"):
    told = edit(lambda edit_bones: setattr(edit_bones["B0"], "name", "Upper"))
    checks.check(
        "a renamed middle bone: nothing told, nothing in Last Solve",
        not told and record().get("bones") == ["Upper", "B2"] and chain.status_message == "",
        (told, record(), chain.status_message),
    )
    told = edit(lambda edit_bones: setattr(edit_bones["B2"], "name", "Hand"))
    checks.check(
        "a renamed tip: followed, nothing told",
        not told and chain.tip_bone == "Hand" and record().get("bones") == ["Upper", "Hand"],
        (told, chain.tip_bone, record()),
    )


# ---- a middle bone subdivided: the root moves down the arm, and that is said too
def subdivide(edit_bones) -> None:
    for bone in edit_bones:
        bone.select = bone.select_head = bone.select_tail = bone.name == "Upper"
    bpy.ops.armature.subdivide()


with checks.step("a subdivided root bone is told"):
    told = edit(subdivide)
    checks.check(
        "a subdivided root bone: told, with the length that keeps the root",
        len(told) == 1 and "it spans Upper.001 > Hand now, not Upper > Hand" in told[0] and "Chain Length 3" in told[0],
        told,
    )
    checks.check("... and in Last Solve", "Upper.001 > Hand" in chain.status_message, chain.status_message)

# ---- a bone deleted outside the chain: nothing to say
with checks.step("a bone deleted above the chain tells nothing"):
    chain.chain_length = 3  # (Upper > Upper.001 > Hand: the notice goes with the setting)
    update()
    told = edit(delete("Shoulder"))
    checks.check(
        "a bone above the chain deleted: nothing told",
        not told and chain.status_message == "" and record().get("bones") == ["Upper", "Upper.001", "Hand"],
        (told, chain.status_message, record()),
    )

checks.close()
