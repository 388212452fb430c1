"""Session: random rigs whose chains hang from other chains, solved in one update.

Each of 16 cases is drawn from a seed: a spine chain of two or three bones from a hips bone,
matching its target's rotation, and one to three arm chains of two or three bones hanging
from its top bone (connected or not, rolled at random, each bone in a random rotation mode);
the armature moved, turned and scaled. Every bone is posed at random, the targets put where
that pose puts the chains' tips (the spine's also turned as its tip), the pose cleared; then
one depsgraph update in Live mode, and one frame change in Per Frame mode, must solve every
chain: the arms from where the spine's solve leaves them.

Checked from Blender's evaluation: every tip on its target (the spine's turned as its
target); updates with no edit then settle (the arms read their new parent pose once, staying
on their targets) and solve nothing more.

argv: WORKDIR
"""

import math

import bpy
import numpy as np
from mathutils import Quaternion, Vector

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    armature_in_edit_mode,
    empty,
    pose_mode,
    random_unit,
    reset_scene,
    set_rotation,
    submodule,
)

checks = Checks("random chain trees: every chain reaches in one update")
runtime = submodule("runtime.state").session
ROTATION_MODES = submodule("rig.rotation_modes").ROTATION_MODES
CASES = 16


def build(seed: int):
    rng = np.random.default_rng(300 + seed)
    ob = armature_in_edit_mode(f"Tree{seed}")
    bones = ob.data.edit_bones
    hips = bones.new("Hips")
    hips.head, hips.tail = (0.0, 0.0, 0.0), (0.0, 0.0, 0.4)
    chains = []  # (tip, length, orienting)
    parent, head = hips, Vector((0.0, 0.0, 0.4))
    spine = int(rng.integers(2, 4))
    for i in range(spine):
        bone = bones.new(f"S{i}")
        bone.head, bone.tail = (
            head,
            head + (Vector((0, 0, 1)) + random_unit(rng) * 0.3).normalized() * rng.uniform(0.4, 0.7),
        )
        bone.roll, bone.parent, bone.use_connect = rng.uniform(-math.pi, math.pi), parent, True
        parent, head = bone, bone.tail.copy()
    chains.append((f"S{spine - 1}", spine, True))
    top = parent
    for arm in range(int(rng.integers(1, 4))):
        parent = top
        head = top.tail + (random_unit(rng) * 0.2 if rng.random() < 0.6 else Vector())
        length = int(rng.integers(2, 4))
        for i in range(length):
            bone = bones.new(f"A{arm}_{i}")
            bone.head, bone.tail = head, head + random_unit(rng) * rng.uniform(0.3, 0.6)
            bone.roll, bone.parent = rng.uniform(-math.pi, math.pi), parent
            bone.use_connect = i > 0 or head == top.tail
            parent, head = bone, bone.tail.copy()
        chains.append((f"A{arm}_{length - 1}", length, False))
    bpy.ops.object.mode_set(mode="OBJECT")
    ob.location = tuple(rng.normal(size=3))
    ob.rotation_euler = tuple(rng.uniform(-math.pi, math.pi, size=3))
    ob.scale = (rng.uniform(0.7, 1.4),) * 3
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_mode = str(rng.choice(ROTATION_MODES))
    return ob, chains, rng


def tip_matrix(ob, tip: str):
    bpy.context.view_layer.update()
    evaluated = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bone = evaluated.pose.bones[tip]
    return evaluated.matrix_world @ bone.matrix, evaluated.matrix_world @ bone.tail


def check_reached(label: str, ob, chains, targets) -> None:
    misses = []
    for (tip, _length, orienting), target in zip(chains, targets, strict=True):
        matrix, tail = tip_matrix(ob, tip)
        distance = (tail - target.matrix_world.translation).length
        turned = matrix.to_quaternion().rotation_difference(target.matrix_world.to_quaternion()).angle
        if distance > 2e-3 or (orienting and abs((turned + math.pi) % (2 * math.pi) - math.pi) > 2e-3):
            misses.append(f"{tip}: {distance:.2e} off, {math.degrees(turned):.2f}° turned")
    checks.check(f"{label}: every chain on its target", not misses, "; ".join(misses))


with checks.step("every chain of a random tree reaches in one update"):
    reset_scene()
    scene = bpy.context.scene
    for seed in range(CASES):
        ob, chains, rng = build(seed)
        label = f"case {seed} (spine of {chains[0][1]}, {len(chains) - 1} arm(s))"
        # A pose every chain can reach: each bone turned at random, the tips where it puts them.
        for pose_bone in ob.pose.bones:
            if pose_bone.name != "Hips":
                set_rotation(pose_bone, Quaternion(random_unit(rng), rng.uniform(-1.2, 1.2)))
        targets = []
        for tip, _length, _orienting in chains:
            matrix, tail = tip_matrix(ob, tip)
            target = empty(f"T{seed}_{tip}", tail)
            target.rotation_mode = "QUATERNION"
            target.rotation_quaternion = matrix.to_quaternion()
            targets.append(target)
        for pose_bone in ob.pose.bones:
            set_rotation(pose_bone, Quaternion())
        for (tip, length, orienting), target in zip(chains, targets, strict=True):
            add_chain(ob, tip, length, target.name, mode="MANUAL")
            if orienting:
                ob.quat_ik.chains[-1].orientation_mode = "MATCH_TARGET"
                ob.quat_ik.chains[-1].orientation_weight = 1.0
        pose_mode(ob)

        # Live: one update after an edit solves the spine, then the arms from its new pose.
        for chain in ob.quat_ik.chains:
            chain.mode = "LIVE"
        runtime.stats.clear()
        for target in targets:
            target.location = target.location  # an edit to every target, as a drag would make
        bpy.context.view_layer.update()
        check_reached(f"{label}, Live", ob, chains, targets)
        # Updates with no edit settle: the chains below a solved one read their new parent pose on
        # the next update (solved once more, from where they are), then nothing is solved.
        solved = []
        for _ in range(3):
            runtime.stats.clear()
            ob.update_tag()
            bpy.context.view_layer.update()
            solved.append(runtime.stats["chains_solved"])
        checks.check(
            f"{label}, Live: updates with no edit settle", solved[1:] == [0, 0] and solved[0] < len(chains), solved
        )
        check_reached(f"{label}, Live, settled", ob, chains, targets)

        # Per Frame: from rest again, one frame change solves them all.
        for pose_bone in ob.pose.bones:
            set_rotation(pose_bone, Quaternion())
        for chain in ob.quat_ik.chains:
            chain.mode = "PER_FRAME"
        scene.frame_set(scene.frame_current)
        check_reached(f"{label}, Per Frame", ob, chains, targets)
        for chain in ob.quat_ik.chains:
            chain.mode = "MANUAL"
        bpy.ops.object.mode_set(mode="OBJECT")
        ob.hide_set(True)
        for target in targets:
            target.hide_set(True)

checks.close()
