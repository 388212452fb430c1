"""Session: what Live remembers from one update to the next (the rig and solver chain, the body and
its effectors, the kernel's task layout, a target's turn, the solve options) never answers for
what changed. Two copies of a rig are posed alike and their targets dragged alike: one solved
Live before a change (whatever it remembers was made for the old settings), the other built with
the change already made. After each change, a joint limit, a chain setting, a pin, a bone's rest
length in Edit Mode, a target turned and turned back, both answer the same drag alike, and
differently from before the change. For a body (two arms sharing a spine, the spine pinned) and a
chain alone reaching for its target's rotation.

argv: WORKDIR
"""

import math

import bpy
import numpy as np
from mathutils import Euler

from tests.blender.sessions.common import (
    TORSO_BONES,
    Checks,
    connected_armature,
    empty,
    pose_mode,
    reset_scene,
    submodule,
)

checks = Checks("what Live remembers never answers for what changed")
session = submodule("runtime.state").session
reset_scene()

ARM = (
    ("A0", (0, 0, 0), (0, 0, 1), None),
    ("A1", (0, 0, 1), (0, 0, 2), "A0"),
    ("A2", (0, 0, 2), (0, 0, 2.6), "A1"),
)
# Float32 channels written from the same float64 answers agree to rounding; a change that
# reaches the answer moves it far more.
SAME = 1e-5
MOVED = 1e-3


def armature(name: str, bones) -> bpy.types.Object:
    ob = connected_armature(name, bones)
    for pose_bone in ob.pose.bones:
        limits = pose_bone.quat_ik
        limits.joint_type = "BALL"
        window = limits.windows.add()
        window.shape, window.half_angle = "CONE", math.radians(60.0)
    return ob


def add_chain(ob, tip: str, length: int, target, **settings):
    pose_mode(ob, tip)
    bpy.ops.quat_ik.add_chain(chain_length=length, target=target.name, mode="LIVE")
    chain = ob.quat_ik.chains[-1]
    for name, value in settings.items():
        setattr(chain, name, value)
    return chain


def body(name: str):
    """The torso, its arms Live toward their targets (the right hand's turn too), Spine2 pinned."""
    ob = armature(name, TORSO_BONES)
    left, right = empty(f"{name}.L", (1.2, 1.0, 2.8)), empty(f"{name}.R", (-1.5, 0.8, 2.4))
    right.rotation_euler = (0.3, 0.0, 0.4)
    add_chain(ob, "L2", 4, left, priority=1)
    add_chain(ob, "R2", 4, right, orientation_mode="MATCH_TARGET", orientation_weight=0.5)
    pin = ob.quat_ik.pins.add()
    pin.bone, pin.hold, pin.location = "Spine2", "LOCATION", (0.0, 0.0, 1.5)
    return ob, (left, right)


def arm(name: str):
    """A 3-bone chain Live toward its target's position and turn."""
    ob = armature(name, ARM)
    target = empty(f"{name}.T", (0.9, 0.6, 1.9))
    target.rotation_euler = (0.5, 0.2, 0.0)
    add_chain(ob, "A2", 3, target, orientation_mode="MATCH_TARGET", orientation_weight=0.5)
    return ob, (target,)


def pose(ob) -> np.ndarray:
    return np.array([tuple(pose_bone.rotation_quaternion) for pose_bone in ob.pose.bones])


def drag(rigs, step: float) -> list[np.ndarray]:
    """Every rig from rest, its targets moved by ``step`` (one Live update): the poses solved."""
    with session.suspend_solving():
        for ob, _targets in rigs:
            for pose_bone in ob.pose.bones:
                pose_bone.rotation_mode, pose_bone.rotation_quaternion = "QUATERNION", (1.0, 0.0, 0.0, 0.0)
        bpy.context.view_layer.update()
    for _ob, targets in rigs:
        for target in targets:
            target.location.x += step
    bpy.context.view_layer.update()
    return [pose(ob) for ob, _targets in rigs]


def follows(what: str, kept, build, change, made: list) -> None:
    """``change(ob, targets)`` on the rig ``kept`` solved Live before it; a rig built with the
    changes ``made`` so far and this one answers the same drag alike, and differently from
    before the change. ``change`` joins ``made``."""
    before = drag([kept], 0.02)[0]
    drag([kept], -0.02)  # (solved again and again: everything Live remembers is made)
    change(*kept)
    made.append(change)
    fresh = build(f"{kept[0].name}.fresh")
    for each in made:
        each(*fresh)
    after, answer = drag([kept, fresh], 0.02)
    drag([kept, fresh], -0.02)
    difference = float(np.max(np.abs(after - answer)))
    checks.check(f"{what}: answered as a rig built with it", difference <= SAME, f"largest difference {difference:.2g}")
    moved = float(np.max(np.abs(after - before)))
    checks.check(f"{what}: the answer moved", moved > MOVED, f"largest change {moved:.2g}")
    for ob in (fresh[0], *fresh[1]):
        bpy.data.objects.remove(ob)


def in_edit_mode(ob, change) -> None:
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    change(ob.data.edit_bones)
    bpy.ops.object.mode_set(mode="OBJECT")


def setting(owner_of, name: str, value):
    """A change that sets ``owner_of(ob).name`` to ``value``."""
    return lambda ob, _targets: setattr(owner_of(ob), name, value)


def lengthened(ob, _targets) -> None:
    in_edit_mode(ob, lambda bones: setattr(bones["Spine2"], "tail", (0.0, 0.0, 3.0)))


def turn(euler):
    """A change that turns the last target to ``euler``."""
    return lambda _ob, targets: setattr(targets[-1], "rotation_euler", Euler(euler))


torso, torso_changes = body("Torso"), []

with checks.step("a body follows a narrowed window, a chain setting and a pin"):
    spine2_window = setting(lambda ob: ob.pose.bones["Spine2"].quat_ik.windows[0], "half_angle", math.radians(15.0))
    follows("Spine2's window narrowed", torso, body, spine2_window, torso_changes)
    offset = setting(lambda ob: ob.quat_ik.chains[1], "effector_offset", (0.0, 0.4, 0.0))
    follows("the right arm's Effector Offset", torso, body, offset, torso_changes)
    priority = setting(lambda ob: ob.quat_ik.chains[0], "priority", 0)
    follows("the left arm's Priority", torso, body, priority, torso_changes)
    pin_moved = setting(lambda ob: ob.quat_ik.pins[0], "location", (0.3, 0.1, 1.45))
    follows("the pin moved", torso, body, pin_moved, torso_changes)

with checks.step("a body follows a bone's rest length changed in Edit Mode"):
    follows("Spine2 lengthened", torso, body, lengthened, torso_changes)

with checks.step("a body follows its target's turn, and turned back"):
    follows("the right target turned", torso, body, turn((0.9, -0.3, 1.1)), torso_changes)
    follows("... and turned back", torso, body, turn((0.3, 0.0, 0.4)), torso_changes)

arm_alone, arm_changes = arm("Arm"), []

with checks.step("a chain alone follows its target's turn, a window and a chain setting"):
    follows("the target turned", arm_alone, arm, turn((0.9, -0.3, 1.1)), arm_changes)
    follows("... and turned back", arm_alone, arm, turn((0.5, 0.2, 0.0)), arm_changes)
    a1_window = setting(lambda ob: ob.pose.bones["A1"].quat_ik.windows[0], "half_angle", math.radians(20.0))
    follows("A1's window narrowed", arm_alone, arm, a1_window, arm_changes)
    weight = setting(lambda ob: ob.quat_ik.chains[0], "orientation_weight", 2.0)
    follows("Orientation Weight", arm_alone, arm, weight, arm_changes)

checks.close()
