"""Session: a Live update solves only the chains whose inputs changed, and the chains that
hang below one it solves; a Live chain on an armature with Per Frame chains catches up with
a frame change at the next edit.

argv: WORKDIR
"""

import sys
import time
from pathlib import Path

import bpy

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    addon,
    effector_world,
    empty,
    make_rig,
    reset_scene,
    submodule,
)

workdir = Path(sys.argv[1])
checks = Checks("Live solves the chains whose inputs changed")
runtime = submodule("runtime.state").session
reset_scene()


def update() -> None:
    bpy.context.view_layer.update()


def rotations(ob, names) -> list:
    return [tuple(ob.pose.bones[name].rotation_quaternion) for name in names]


def reach_error(ob, tip: str, target) -> float:
    return (effector_world(ob, tip) - target.matrix_world.translation).length


def check_one_solve(label: str, chain_count: int) -> None:
    solved = (runtime.stats["solves"], runtime.stats["chains_solved"])
    checks.check(label, solved == (1, chain_count), dict(runtime.stats))


# A spine of two bones with an arm of two bones on each side of its top.
armature = bpy.data.armatures.new("Body")
body = bpy.data.objects.new("Body", armature)
bpy.context.scene.collection.objects.link(body)
bpy.context.view_layer.objects.active = body
bpy.ops.object.mode_set(mode="EDIT")
layout = {
    "S0": ((0, 0, 0), (0, 0, 1), None),
    "S1": ((0, 0, 1), (0, 0, 2), "S0"),
    "L0": ((0, 0, 2), (1, 0, 2), "S1"),
    "L1": ((1, 0, 2), (2, 0, 2), "L0"),
    "R0": ((0, 0, 2), (-1, 0, 2), "S1"),
    "R1": ((-1, 0, 2), (-2, 0, 2), "R0"),
}
for name, (head, tail, parent) in layout.items():
    bone = armature.edit_bones.new(name)
    bone.head, bone.tail = head, tail
    if parent:
        bone.parent = armature.edit_bones[parent]
        bone.use_connect = name in ("S1", "L1", "R1")
bpy.ops.object.mode_set(mode="OBJECT")

spine_target = empty("SpineTarget", (0.3, 0.2, 1.9))
left_target = empty("LeftTarget", (1.5, 0.6, 2.3))
right_target = empty("RightTarget", (-1.4, -0.5, 1.6))
bystander = empty("Bystander", (5, 5, 5))
with checks.step("three Live chains are added in priority order"):
    for tip, target in (("S1", "SpineTarget"), ("L1", "LeftTarget"), ("R1", "RightTarget")):
        result = add_chain(body, tip, 2, target, mode="LIVE")
        checks.check(f"chain on {tip} added (Live)", result == {"FINISHED"}, result)
    update()
    spine, left, right = body.quat_ik.chains
    checks.check(
        "chains in priority order spine, left, right", [c.tip_bone for c in (spine, left, right)] == ["S1", "L1", "R1"]
    )

with checks.step("one hand's moved target solves that arm alone"):
    # ---- one hand's target moves: that arm alone is solved
    runtime.stats.clear()
    right_before = rotations(body, ("R0", "R1"))
    spine_before = rotations(body, ("S0", "S1"))
    left_target.location = (1.3, 0.9, 2.6)
    update()
    check_one_solve("one solve with one chain in it", 1)
    checks.check(
        "the left arm follows its target",
        reach_error(body, "L1", left_target) < 1e-3,
        reach_error(body, "L1", left_target),
    )
    checks.check(
        "the right arm and the spine are not touched",
        rotations(body, ("R0", "R1")) == right_before and rotations(body, ("S0", "S1")) == spine_before,
    )

with checks.step("a hand-posed chain whose inputs did not change keeps its pose"):
    # A pose given by hand to a chain whose inputs did not change stays while another chain solves.
    body.pose.bones["R0"].rotation_quaternion = (0.96, 0.0, 0.28, 0.0)
    update()
    hand_made = rotations(body, ("R0", "R1"))
    left_target.location.x += 0.1
    update()
    checks.check(
        "a hand-posed chain whose inputs did not change keeps its pose", rotations(body, ("R0", "R1")) == hand_made
    )

with checks.step("the spine's moved target solves the spine and both arms in one update"):
    # ---- the spine's target moves: the spine is solved, and both arms with it (they hang below it)
    runtime.stats.clear()
    spine_target.location = (0.4, 0.3, 1.8)
    update()
    check_one_solve("one solve with all three chains in it", 3)
    errors = {
        tip: reach_error(body, tip, target)
        for tip, target in (("S1", spine_target), ("L1", left_target), ("R1", right_target))
    }
    checks.check(
        "the spine and both arms on it reach their targets in that one update", max(errors.values()) < 1e-3, errors
    )
    runtime.stats.clear()
    for _ in range(3):
        update()
    checks.check("nothing more to solve after it", runtime.stats["solves"] == 0, dict(runtime.stats))

with checks.step("an arm listed above its spine lags and says so, sorting fixes the order"):
    # ---- the spine listed last: the arms are solved before it moves them, so they lag one
    # update behind and say so; Sort by Dependency lists the spine first again
    bpy.context.view_layer.objects.active = body
    body.quat_ik.active_chain_index = 0
    for _ in range(2):
        bpy.ops.quat_ik.move_chain(direction="DOWN")
    checks.check("the spine now listed last", [c.tip_bone for c in body.quat_ik.chains] == ["L1", "R1", "S1"])
    update()
    spine_target.location = (0.2, -0.3, 1.95)
    update()
    lagging = reach_error(body, "L1", left_target)
    checks.check("an arm listed above its spine chain lags behind it", lagging > 1e-2, lagging)
    left = body.quat_ik.chains["L1"]
    checks.check(
        "... and its status says to move it below", "move it below 'S1'" in left.status_message, left.status_message
    )
    body.quat_ik.chains[1].name = "L1"  # the right arm's chain named as the left's: sorting goes by place
    result = bpy.ops.quat_ik.sort_chains()
    checks.check("sorting by dependency finishes", result == {"FINISHED"}, result)
    for chain in body.quat_ik.chains:
        chain.name = chain.tip_bone
    checks.check(
        "... and lists the spine first, the arms in their order after it",
        [c.tip_bone for c in body.quat_ik.chains] == ["S1", "L1", "R1"],
        [c.tip_bone for c in body.quat_ik.chains],
    )
    checks.check("... keeping the active chain", body.quat_ik.chains[body.quat_ik.active_chain_index].tip_bone == "S1")
    update()
    errors = {
        tip: reach_error(body, tip, target)
        for tip, target in (("S1", spine_target), ("L1", left_target), ("R1", right_target))
    }
    checks.check("... after which every chain reaches in one update", max(errors.values()) < 1e-3, errors)
    spine_target.location = (0.35, 0.1, 1.85)
    update()
    errors = {tip: reach_error(body, tip, target) for tip, target in (("L1", left_target), ("R1", right_target))}
    checks.check("... also when the spine moves again", max(errors.values()) < 1e-3, errors)
    checks.check(
        "... with no warning left",
        not body.quat_ik.chains["L1"].status_message,
        body.quat_ik.chains["L1"].status_message,
    )
    result = bpy.ops.quat_ik.sort_chains()
    checks.check("sorting chains already in order changes nothing", result == {"CANCELLED"}, result)
    spine, left, right = body.quat_ik.chains  # (moving items moves what a reference to one reads)

with checks.step("a Live arm beside a Per Frame one catches up at the next edit"):
    # ---- Per Frame on one chain, Live on another: a frame change solves the Per Frame chain;
    # the Live chain, whose animated target moved, catches up at the next edit anywhere
    left.mode = "PER_FRAME"
    right_target.location = (-1.4, -0.5, 1.6)
    right_target.keyframe_insert("location", frame=1)
    right_target.location = (-1.1, 0.7, 2.4)
    right_target.keyframe_insert("location", frame=10)
    scene = bpy.context.scene
    scene.frame_set(1)
    update()
    bystander.location.x += 1.0  # Live catches up with frame 1
    update()
    checks.check(
        "the Live arm reaches its animated target at frame 1",
        reach_error(body, "R1", right_target) < 1e-3,
        reach_error(body, "R1", right_target),
    )
    scene.frame_set(10)
    still = reach_error(body, "R1", right_target)
    checks.check("a frame change alone leaves the Live arm (no depsgraph update for it)", still > 0.1, still)
    bystander.location.x += 1.0
    update()
    error = reach_error(body, "R1", right_target)
    checks.check("the next edit anywhere catches the Live arm up", error < 1e-3, error)

with checks.step("a Per Frame spine carries the Live arms below it"):
    # ---- a Per Frame spine carries Live arms: a frame change solves the spine, and the arms
    # hanging below it with it
    left.mode, spine.mode = "LIVE", "PER_FRAME"
    right_target.animation_data_clear()
    right_target.location = (-1.2, -0.4, 1.8)
    spine_target.location = (0.3, 0.2, 1.9)
    spine_target.keyframe_insert("location", frame=1)
    spine_target.location = (0.2, 0.4, 1.85)
    spine_target.keyframe_insert("location", frame=10)
    update()
    for frame in (1, 10):
        scene.frame_set(frame)
        errors = {
            tip: reach_error(body, tip, target)
            for tip, target in (("S1", spine_target), ("L1", left_target), ("R1", right_target))
        }
        checks.check(f"frame {frame}: the spine and the Live arms on it reach", max(errors.values()) < 1e-3, errors)
    spine.mode = "LIVE"
    spine_target.animation_data_clear()

with checks.step("on the kernel an arm short of its target is solved in full at once"):
    # ---- as in a window, on the native kernel: a Live update solves in full, so an arm short of
    # its target has nothing left to wait for
    handlers = submodule("runtime.handlers")
    left.mode = "LIVE"
    right_target.animation_data_clear()
    update()
    runtime.finish_at_rest = True
    right_target.location = (-4.0, 0.0, 2.0)  # out of the arm's reach
    update()
    checks.check(
        "on the kernel an arm short of its target is solved in full at once",
        right.status_solver == "native kernel"
        and not right.status_converged
        and body.name_full not in runtime.resting_due,
        (right.status_solver, right.status_converged, list(runtime.resting_due)),
    )
    right_target.location = (-4.0, 0.0, 2.1)

with checks.step("on numpy an arm short of its target waits for its full solve"):
    # ---- as in a window, on numpy (a Live update solves lightly, a timer finishes what it left
    # short): another chain's update does not forget a chain still waiting for its full solve
    preferences = bpy.context.preferences.addons[addon().__name__].preferences
    preferences.native_kernel = False
    update()
    waiting = runtime.resting_due.get(body.name_full)
    checks.check(
        "an arm short of its target waits for its full solve",
        waiting is not None and waiting[2] == ("R1",),
        waiting and waiting[2],
    )
    left_target.location.z -= 0.1
    update()
    waiting = runtime.resting_due.get(body.name_full)
    checks.check(
        "... and still waits after the other arm was solved",
        left.status_converged and waiting is not None and waiting[2] == ("R1",),
        (left.status_converged, waiting and waiting[2]),
    )
    runtime.stats.clear()
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check("the resting solve runs", runtime.stats["resting_solves"] == 1, dict(runtime.stats))

with checks.step("an arm below a dragged spine gets its full solve once its inputs rest"):
    # An arm short of its target below the spine: dragging the spine's target solves both, and
    # writing the spine moves the arm's inputs; that is no reason to skip the arm's full solve.
    spine_target.location.x += 0.05
    update()
    waiting = runtime.resting_due.get(body.name_full)
    checks.check(
        "the arm below the dragged spine waits for its full solve",
        waiting is not None and "R1" in waiting[2],
        waiting and waiting[2],
    )
    right_target.location.x += 0.05  # moved, not yet evaluated
    runtime.stats.clear()
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check(
        "no full solve for inputs moved since the last update",
        runtime.stats["resting_solves"] == 0,
        dict(runtime.stats),
    )
    update()
    runtime.stats.clear()
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check("... and one once they rest", runtime.stats["resting_solves"] == 1, dict(runtime.stats))
    spine_target.location.x -= 0.05
    update()
    runtime.stats.clear()
    handlers.run_resting(now=time.monotonic() + 1.0)
    checks.check(
        "also after a drag of the spine alone, whose write moves the arm",
        runtime.stats["resting_solves"] == 1,
        dict(runtime.stats),
    )
    runtime.finish_at_rest = None
    preferences.native_kernel = True

# ---- a rig whose chain reaches for a bone of its own armature solves in armature space:
# moving the whole rig solves nothing (and the chain still reaches), moving the control does
rig_data = bpy.data.armatures.new("Rig")
rig = bpy.data.objects.new("Rig", rig_data)
scene.collection.objects.link(rig)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.mode_set(mode="EDIT")
for name, head, tail, parent in (
    ("A0", (0, 0, 0), (0, 0, 1), None),
    ("A1", (0, 0, 1), (0, 0, 2), "A0"),
    ("Ctrl", (0.8, 0.3, 1.2), (0.8, 0.3, 1.5), None),
):
    bone = rig_data.edit_bones.new(name)
    bone.head, bone.tail = head, tail
    if parent:
        bone.parent, bone.use_connect = rig_data.edit_bones[parent], True
bpy.ops.object.mode_set(mode="OBJECT")
add_chain(rig, "A1", 2, "Rig", target_bone="Ctrl", mode="LIVE")
update()


def control_error() -> float:
    ctrl_head = rig.matrix_world @ rig.pose.bones["Ctrl"].head
    return (effector_world(rig, "A1") - ctrl_head).length


with checks.step("a chain reaching for a bone of its own armature solves in armature space"):
    checks.check("the chain reaches its control bone", control_error() < 1e-3, control_error())
    runtime.stats.clear()
    rig.location, rig.rotation_euler, rig.scale = (2.0, -1.0, 0.5), (0.3, 0.0, 1.2), (1.5, 1.5, 1.5)
    update()
    checks.check(
        "moving, turning and scaling the whole rig solves nothing", runtime.stats["solves"] == 0, dict(runtime.stats)
    )
    checks.check("... and the chain still reaches its control", control_error() < 1e-3 * 1.5, control_error())
    rig.pose.bones["Ctrl"].location = (0.2, -0.3, 0.1)
    update()
    checks.check("moving the control solves", runtime.stats["solves"] == 1, dict(runtime.stats))
    checks.check("... and the chain reaches it", control_error() < 1e-3 * 1.5, control_error())

with checks.step("a setting of one rig's chain or bone solves that rig's chains only"):
    # ---- a setting of one rig's chain or bone re-solves that rig's Live chains only
    reset_scene()
    rigs = []
    for number in range(3):
        arm = bpy.data.objects.new(f"Rig{number}", bpy.data.armatures.new(f"Rig{number}"))
        bpy.context.scene.collection.objects.link(arm)
        bpy.context.view_layer.objects.active = arm
        bpy.ops.object.mode_set(mode="EDIT")
        for name, head, tail in (("A0", (number, 0, 0), (number, 0, 1)), ("A1", (number, 0, 1), (number, 0, 2))):
            bone = arm.data.edit_bones.new(name)
            bone.head, bone.tail = head, tail
            if name == "A1":
                bone.parent, bone.use_connect = arm.data.edit_bones["A0"], True
        bpy.ops.object.mode_set(mode="OBJECT")
        empty(f"T{number}", (number + 0.5, 0.3, 1.5))
        add_chain(arm, "A1", 2, f"T{number}", mode="LIVE")
        bpy.ops.object.mode_set(mode="OBJECT")
        rigs.append(arm)
    update()
    runtime.stats.clear()
    rigs[1].quat_ik.chains[0].tolerance = 0.002
    update()
    checks.check(
        "a chain's setting re-solves its rig's chain only", runtime.stats["chains_solved"] == 1, dict(runtime.stats)
    )
    runtime.stats.clear()
    rigs[2].pose.bones["A0"].quat_ik.stiffness = 0.5
    update()
    checks.check(
        "a bone's limit re-solves its rig's chain only", runtime.stats["chains_solved"] == 1, dict(runtime.stats)
    )

# ---- a rig in two scenes shown at once (two windows, different frames): each window's
# update reads other inputs; once each is solved, updates with no edit solve nothing
reset_scene()
first = bpy.context.scene
rig = make_rig("Shared", [((0, 0, 1.5), (0.9, 0, 1.5)), ((0.9, 0, 1.5), (1.7, 0, 1.5))])
target = empty("Moving", (1.2, 0.7, 1.9))
add_chain(rig, "B1", 2, "Moving", mode="LIVE")
bpy.ops.object.mode_set(mode="OBJECT")
for frame, where in ((1, (1.2, 0.7, 1.9)), (50, (0.6, -0.5, 1.2))):
    target.location = where
    target.keyframe_insert("location", frame=frame)
second = bpy.data.scenes.new("Second")
second.collection.objects.link(rig)
second.collection.objects.link(target)
first.frame_set(1)
second.frame_current = 50
layers = (first.view_layers[0], second.view_layers[0])


def both_windows_redraw():
    # What a window does after another's handler wrote the shared pose: evaluate again.
    for layer in layers:
        rig.update_tag()
        layer.update()


with checks.step("a rig shown in two scenes at once solves nothing without an edit"):
    both_windows_redraw()
    both_windows_redraw()
    runtime.stats.clear()
    for _ in range(4):
        both_windows_redraw()
    checks.check(
        "a rig shown in two scenes at once solves nothing without an edit",
        runtime.stats["solves"] == 0 and runtime.stats["depsgraph_calls"] == 8,
        dict(runtime.stats),
    )

checks.close()
