"""Session: a chain's rig, read on every Live update and frame, is built once and kept while
nothing it is built from changes (the same ``ChainRig``, so the same solver ``Chain``, packed once
for the kernel; a chain's mode is no part of it), and built again after each thing that changes it: a joint limit (from the panel
or a script), a chain setting, a bone's rest frame, roll or parent in Edit Mode, a rename, pose
location and scale, locked channels, constraints and drivers, the target's parenting, a loaded
file. A Live chain follows each such change with its next update. The root frame's inverse
(plain arithmetic, not LAPACK) matches numpy's.

argv: WORKDIR
"""

import sys
from pathlib import Path

import bpy
import numpy as np

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    effector_world,
    empty,
    make_rig,
    reset_scene,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("the rig read is kept until what it is built from changes")
rig_reader = submodule("rig.reader")
errors = submodule("errors")
reset_scene()

ob = make_rig(
    "Arm",
    [((0, 0, 1), (0, 0, 2)), ((0, 0, 2), (0, 0, 3)), ((0, 0, 3), (0, 0, 4))],
    connected=[False, True, True],
    parent_of_first="Root",
    extra_bones=[("Root", (0, 0, 0), (0, 0, 1), None)],
)
for pose_bone in ob.pose.bones:
    if pose_bone.name != "Root":
        pose_bone.quat_ik.joint_type = "BALL"
        window = pose_bone.quat_ik.windows.add()
        window.shape, window.half_angle = "CONE", np.radians(70.0)
target = empty("Target", (1.0, 0.5, 3.2))
add_chain(ob, "B2", 3, "Target", mode="LIVE")
chain = ob.quat_ik.chains[0]


def update() -> None:
    bpy.context.view_layer.update()


def read():
    return rig_reader.read_chain_rig(ob, chain)


def reaches() -> float:
    effector = effector_world(ob, chain.tip_bone, tuple(chain.effector_offset))
    return (effector - target.matrix_world.translation).length


def in_edit_mode(change) -> None:
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    change(ob.data.edit_bones)
    bpy.ops.object.mode_set(mode="OBJECT")
    update()


with checks.step("the same rig while nothing it is built from changes"):
    first = read()
    checks.check("read again with nothing changed: the same rig", read() is first)
    update()
    checks.check("... also after an update that changed nothing", read() is first)
    target.location.x -= 0.1
    update()
    checks.check("... and after a drag of the target, which the rig does not hold", read() is first)
with checks.step("a chain's mode keeps the rig, and the chain made Live again follows"):
    first = read()
    chain.mode = "MANUAL"
    target.location.x += 0.1
    update()
    checks.check("Manual: the same rig", read() is first)
    chain.mode = "LIVE"
    update()
    checks.check("... Live again: the same rig", read() is first)
    checks.check("... and the Live chain reaches the target it did not follow in Manual", reaches() < 1e-3, reaches())


def check_rebuilt(what: str, change, expect=None, *, followed: bool = True) -> None:
    """``change`` makes the next read a new rig (``expect(before, after)`` true), and the Live
    chain follows it (``followed``: nothing else moves its bones)."""
    before = read()
    change()
    update()
    after = read()
    ok = after is not before and (expect is None or expect(before, after))
    checks.check(f"{what}: a new rig", ok, (after is before, after.chain.lengths, after.warnings))
    checks.check(f"{what}: read again, the same", read() is after)
    target.location.y += 0.05  # a drag: the Live chain solves with the new rig
    update()
    if followed:
        checks.check(f"{what}: the Live chain reaches the target", reaches() < 1e-3, reaches())


def window(bone: str):
    return ob.pose.bones[bone].quat_ik.windows[0]


with checks.step("a changed window makes a new rig"):
    narrower = np.radians(50.0)
    check_rebuilt(
        "a narrower window (a slider)",
        lambda: setattr(window("B1"), "half_angle", narrower),
        lambda before, after: after.chain.fingerprint != before.chain.fingerprint,
    )
    check_rebuilt(
        "a window removed by a script",
        lambda: ob.pose.bones["B0"].quat_ik.windows.remove(0),
        lambda before, after: after.chain.fingerprint != before.chain.fingerprint,
    )
with checks.step("a chain setting, pose scale and pose location make a new rig"):
    check_rebuilt("a chain setting (Effector Offset)", lambda: setattr(chain, "effector_offset", (0.0, 0.1, 0.0)))
    check_rebuilt(
        "a pose scale on the tip",
        lambda: setattr(ob.pose.bones["B2"], "scale", (1.2, 1.2, 1.2)),
        lambda before, after: abs(after.chain.lengths[-1] - 1.2 * before.chain.lengths[-1]) < 1e-6,
    )
    check_rebuilt(
        "a pose location on the unconnected root", lambda: setattr(ob.pose.bones["B0"], "location", (0.1, 0, 0))
    )
with checks.step("a constraint makes a new rig, and muting it too"):
    check_rebuilt(
        "a constraint on a chain bone",
        lambda: ob.pose.bones["B1"].constraints.new("COPY_SCALE"),
        lambda _before, after: any("constraint" in warning for warning in after.warnings),
    )
    check_rebuilt(
        "... muted",
        lambda: setattr(ob.pose.bones["B1"].constraints[0], "mute", True),
        lambda _before, after: not any("constraint" in warning for warning in after.warnings),
    )
with checks.step("a driver and a locked channel make a new rig"):
    check_rebuilt(
        "a driver on a chain bone's rotation",
        lambda: ob.pose.bones["B1"].driver_add("rotation_quaternion", 2),
        lambda _before, after: any("driver" in warning for warning in after.warnings),
        followed=False,  # (the driver sets the rotation)
    )
    ob.animation_data.drivers.remove(ob.animation_data.drivers[0])
    update()
    check_rebuilt(
        "a locked rotation channel",
        lambda: setattr(ob.pose.bones["B1"], "lock_rotation", (True, False, False)),
        lambda before, after: after.chain.fingerprint != before.chain.fingerprint,
    )
    ob.pose.bones["B1"].lock_rotation = (False, False, False)
    update()
with checks.step("edits in edit mode make a new rig"):
    check_rebuilt(
        "a bone rolled in Edit Mode",
        lambda: in_edit_mode(lambda bones: setattr(bones["B1"], "roll", 0.7)),
        lambda before, after: not np.allclose(after.chain.rest_rotations, before.chain.rest_rotations),
    )
    check_rebuilt(
        "a bone moved in Edit Mode",
        lambda: in_edit_mode(lambda bones: setattr(bones["B2"], "tail", (0.0, 0.3, 4.2))),
        lambda before, after: after.chain.lengths[-1] != before.chain.lengths[-1],
    )
    check_rebuilt(
        "a middle bone renamed",
        lambda: in_edit_mode(lambda bones: setattr(bones["B1"], "name", "Forearm")),
        lambda _before, after: after.bone_names == ("B0", "Forearm", "B2"),
    )
    check_rebuilt(
        "the root re-parented in Edit Mode",
        lambda: in_edit_mode(lambda bones: setattr(bones["B0"], "parent", None)),
        lambda _before, after: after.root_parent is None,
    )

# What the rig is checked against is read on every read, kept rig or not.
with checks.step("a target parented into the chain is refused"):
    before = read()
    target.parent, target.parent_type, target.parent_bone = ob, "BONE", "B2"
    update()
    try:
        read()
        refused = ""
    except errors.ChainError as error:
        refused = str(error)
    checks.check(
        "a target parented into the chain is refused on the next read", "parented to the chain" in refused, refused
    )
with checks.step("a bone that stops inheriting rotation is refused"):
    target.parent = None
    update()
    ob.data.bones["Forearm"].use_inherit_rotation = False  # (a Bone setting outside Edit Mode)
    try:
        read()
        refused = ""
    except errors.ChainError as error:
        refused = str(error)
    checks.check("a bone that stops inheriting rotation is refused", "inherit" in refused, refused)
    ob.data.bones["Forearm"].use_inherit_rotation = True
    update()

# A loaded file: the rig read holds the loaded objects.
with checks.step("a loaded file's rig holds the loaded objects"):
    blend = workdir / "rig_cache.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    ob, target = bpy.data.objects["Arm"], bpy.data.objects["Target"]
    chain = ob.quat_ik.chains[0]
    loaded = read()
    checks.check(
        "after a file loads the rig holds the loaded armature and target",
        loaded.armature == ob and loaded.target_object == target and loaded is not before,
    )
    target.location.z -= 0.1
    update()
    checks.check("... and the Live chain follows its target", reaches() < 1e-3, reaches())

# ---- the root frame is inverted in plain arithmetic (``matrices.affine_inverse``): as
# np.linalg.inv does, and a bake's frames bit for bit as each frame alone (Live, Per Frame)
with checks.step("the root frame's inverse matches numpy's"):
    chain_solve = submodule("solving.matrices")
    rng = np.random.default_rng(7)
    frames = np.zeros((6, 4, 4))
    frames[:, :3, :] = rng.normal(size=(6, 3, 4))
    frames[:, 3, 3] = 1.0
    together = chain_solve.affine_inverse(frames)
    alone = np.concatenate([chain_solve.affine_inverse(frames[i : i + 1]) for i in range(len(frames))])
    checks.check(
        "affine inverses match np.linalg.inv", np.allclose(together, np.linalg.inv(frames), rtol=0, atol=1e-12)
    )
    checks.check("... and a frame inverted alone is the same to the bit", np.array_equal(together, alone))
    flat = frames[:1].copy()
    flat[0, :3, 2] = 0.0
    checks.check("a matrix of zero scale has no inverse", chain_solve.affine_inverse(flat) is None)

checks.close()
