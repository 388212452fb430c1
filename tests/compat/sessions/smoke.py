"""Session for every supported Blender (bpy 4.2, 4.5, 5.0 modules; Debian's 3.4 binary, headless):
the user's path end to end, once.

Install the zip (an extension from 4.2, a legacy add-on before) and enable it, add a chain with
the operator, solve, bake over a range, save, reload the file, check the chain, its keys and a
fresh solve came back, then disable the add-on and check Blender is back to how it was before
installing. Prints ``VERSION <x.y.z>`` first so the test can tell which Blender really ran.

Each step goes through a branch of ``compat.py`` where versions differ: keys into the active
action (``Action.fcurves`` before 4.4, a slot's channelbag after), into a new NLA strip (its
action slot from 4.4), bone selection for "Selected Bones" (``PoseBone.select`` in 5.0,
``Bone.select`` before), an Euler bone, and the Live / Per Frame handlers.

argv: ZIP WORKDIR
"""

import sys
from pathlib import Path

import bpy  # first: in the bpy module, importing bpy is what puts addon_utils on sys.path

# isort: split
import addon_utils

from tests.addon_footprint import difference, snapshot
from tests.blender.sessions.common import (
    Checks,
    action_keys,
    add_chain,
    effector_world,
    empty,
    straight_rig,
    submodule,
)
from tools.blender_session import install_addon

zip_path, workdir = sys.argv[1], Path(sys.argv[2])
print("VERSION " + ".".join(str(v) for v in bpy.app.version[:3]), flush=True)
checks = Checks(f"version-matrix smoke in Blender {bpy.app.version_string}")

with checks.step("installed and enabled"):
    before = snapshot()
    module = install_addon(zip_path)
    checks.check("installed and enabled", addon_utils.check(module) == (True, True), module)

scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 12
ob = straight_rig("Arm", 3)
ob.pose.bones["B1"].rotation_mode = "ZXY"  # keys go to rotation_euler on this one
target = empty("Target", (1.0, 0.5, 2.0))
target.keyframe_insert("location", frame=1)
target.location = (-0.5, 1.0, 1.5)
target.keyframe_insert("location", frame=12)
scene.frame_set(1)


def miss(frame: int) -> float:
    scene.frame_set(frame)
    return (effector_world(ob, "B2") - target.matrix_world.translation).length


with checks.step("add chain and solve"):
    checks.check("add chain", add_chain(ob, "B2", 3, "Target", mode="MANUAL") == {"FINISHED"})
    checks.check("one chain on B2", [(c.tip_bone, c.chain_length) for c in ob.quat_ik.chains] == [("B2", 3)])
    checks.check("solve", bpy.ops.quat_ik.solve() == {"FINISHED"})
    checks.near("solved tip reaches the target", miss(1), 0.0, 1e-3)

with checks.step("bake keys every chain bone and follows the target"):
    checks.check("bake", bpy.ops.quat_ik.bake(frame_start=1, frame_end=12) == {"FINISHED"})
    action = ob.animation_data.action if ob.animation_data else None
    keys = action_keys(action) if action is not None else {}
    checks.check(
        "baked keys: 12 per rotation channel of every chain bone",
        sorted({(path, len(k)) for (path, _index), k in keys.items()})
        == [
            ('pose.bones["B0"].rotation_quaternion', 12),
            ('pose.bones["B1"].rotation_euler', 12),
            ('pose.bones["B2"].rotation_quaternion', 12),
        ],
        sorted({(path, len(k)) for (path, _index), k in keys.items()}),
    )
    errors = [miss(frame) for frame in (1, 6, 12)]
    checks.check("baked pose follows the moving target", max(errors) < 1e-3, errors)

# A user's key outside the range, with free handles, survives a re-bake exactly (Blender 3.4
# cannot read or write handle types in bulk: compat.keyframes_foreach_get/set).
with checks.step("a re-bake keeps a key outside the range"):
    W_CHANNEL = ('pose.bones["B0"].rotation_quaternion', 0)
    w_curve = next(
        fc for fc in submodule("compat").all_action_fcurves(action) if (fc.data_path, fc.array_index) == W_CHANNEL
    )
    user_key = w_curve.keyframe_points.insert(30, 0.9)
    user_key.handle_left_type = user_key.handle_right_type = "FREE"
    user_key.handle_left, user_key.handle_right = (27.0, 0.5), (33.0, 1.2)
    outside = action_keys(action)[W_CHANNEL][-1]
    checks.check("re-bake over the same range", bpy.ops.quat_ik.bake(frame_start=1, frame_end=12) == {"FINISHED"})
    rebaked = action_keys(action)
    checks.check("a key outside the range keeps its handles", rebaked[W_CHANNEL][-1] == outside, rebaked[W_CHANNEL][-1])
    rebaked[W_CHANNEL] = rebaked[W_CHANNEL][:-1]
    checks.check("the re-bake writes the same keys", rebaked == keys)
    w_curve.keyframe_points.remove(w_curve.keyframe_points[-1])  # back to the plain bake
    w_curve.update()

# The same chain into a new NLA strip, chosen by bone selection ("Selected Bones").
with checks.step("bake selected bones into an NLA strip and a new action"):
    for pose_bone in ob.pose.bones:  # 5.0 keeps selection on the pose bone, earlier versions on the bone
        selectable = pose_bone if "select" in pose_bone.bl_rna.properties else pose_bone.bone
        selectable.select = pose_bone.name == "B1"
    checks.check(
        "bake selected bones into an NLA strip",
        bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, chains="SELECTED", destination="NLA") == {"FINISHED"},
    )
    strips = [s for track in ob.animation_data.nla_tracks for s in track.strips]
    spans = [(s.frame_start, s.frame_end) for s in strips]
    checks.check("one strip over the baked frames", spans == [(1.0, 12.0)], spans)
    strip_keys = action_keys(strips[0].action) if len(strips) == 1 and strips[0].action is not None else {}
    checks.check("the strip's action holds the same keys", strip_keys == keys, f"{len(strips)} strips")
    if "action_slot" in strips[0].bl_rna.properties:  # 4.4+: a strip plays one slot of its action
        checks.check("the strip plays the object's slot", strips[0].action_slot is not None, strips[0].action_slot)
    ob.animation_data.action = None
    errors = [miss(frame) for frame in (1, 6, 12)]
    checks.check("the NLA strip alone follows the target", max(errors) < 1e-3, errors)
    checks.check(
        "bake into a new action",
        bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, destination="NEW_ACTION") == {"FINISHED"},
    )
    new_action = ob.animation_data.action
    checks.check(
        "a new action with the same keys",
        new_action is not None and new_action != action and action_keys(new_action) == keys,
        getattr(new_action, "name", None),
    )
    ob.animation_data.action = action

with checks.step("chain, keys and strip survive save and reload"):
    blend = workdir / "smoke_matrix.blend"
    scene.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    bpy.ops.wm.read_homefile(use_empty=True)  # so only the file on disk can bring anything back
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    ob, target, scene = bpy.data.objects["Arm"], bpy.data.objects["Target"], bpy.context.scene
    chains = [(c.tip_bone, c.chain_length, c.mode) for c in ob.quat_ik.chains]
    checks.check("chain survives save and reload", chains == [("B2", 3, "MANUAL")], chains)
    reloaded = action_keys(ob.animation_data.action) if ob.animation_data and ob.animation_data.action else {}
    checks.check("keys survive save and reload", reloaded == keys, f"{len(reloaded)} curves vs {len(keys)}")
    tracks = [(t.name, len(t.strips)) for t in ob.animation_data.nla_tracks] if ob.animation_data else []
    checks.check("NLA strip survives save and reload", tracks == [("Quat IK Bake", 1)], tracks)

# Solving after a reload: clear the keys' hold on the pose, move the target, solve again.
with checks.step("solve after reload"):
    ob.animation_data_clear()
    target.animation_data_clear()
    target.location = (0.8, -0.6, 1.8)
    bpy.context.view_layer.objects.active = ob
    checks.check("solve after reload", bpy.ops.quat_ik.solve() == {"FINISHED"})
    checks.near("tip reaches the moved target", miss(1), 0.0, 1e-3)

# Live: the depsgraph handler re-solves when the target moves; Per Frame: frame changes solve.
with checks.step("live and per frame chains follow the target"):
    chain = ob.quat_ik.chains[0]
    chain.mode = "LIVE"
    target.location = (0.3, 0.9, 2.1)
    bpy.context.view_layer.update()
    checks.near("live chain follows a moved target", miss(1), 0.0, 1e-3)
    chain.mode = "PER_FRAME"
    target.location = (1.0, 0.5, 2.0)
    target.keyframe_insert("location", frame=1)
    target.location = (-0.5, 1.0, 1.5)
    target.keyframe_insert("location", frame=12)
    errors = [miss(frame) for frame in (4, 9)]
    checks.check("per-frame chain follows the animated target", max(errors) < 1e-3, errors)
    chain.mode = "MANUAL"

# Snap: the target goes to the tip of a hand-made pose; Auto Keying keys it and Solve Now's bones.
with checks.step("snap target and auto keying"):
    scene.frame_set(5)
    target.animation_data_clear()
    ob.pose.bones["B1"].rotation_euler = (0.4, 0.3, 0.2)
    tool_settings = scene.tool_settings
    tool_settings.use_keyframe_insert_auto = True
    checks.check("snap target", bpy.ops.quat_ik.snap_target() == {"FINISHED"})
    checks.near("the snapped target sits on the tip", miss(5), 0.0, 1e-5)
    checks.check("solve keys with Auto Keying", bpy.ops.quat_ik.solve() == {"FINISHED"})
    auto_keyed = action_keys(ob.animation_data.action) if ob.animation_data and ob.animation_data.action else {}
    checks.check(
        "Auto Keying: target location and the chain's rotations keyed at frame 5",
        action_keys(target.animation_data.action)[("location", 0)][0][0][0] == 5.0
        and auto_keyed[('pose.bones["B1"].rotation_euler', 0)][0][0][0] == 5.0,
        sorted(auto_keyed),
    )
    tool_settings.use_keyframe_insert_auto = False
    checks.check("compat module in use", submodule("compat").VERSION == tuple(bpy.app.version[:3]))

with checks.step("disabling leaves nothing behind"):
    bpy.ops.object.mode_set(mode="OBJECT")
    checks.check("disable", bpy.ops.preferences.addon_disable(module=module) == {"FINISHED"})
    checks.check("disabled", addon_utils.check(module)[1] is False, addon_utils.check(module))
    leftovers = difference(before, snapshot())
    checks.check("disabling leaves nothing behind", not leftovers, leftovers)
checks.close()
