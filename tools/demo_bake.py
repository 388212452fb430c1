"""The demo's Blender half: open a sample rig, bake it with Quat IK and with Blender's own IK,
and read what both did on every frame. Runs inside bpy with the add-on enabled.

Both bakes are read back the same way, from their keys: ``frame_set`` each frame and read the
chain bones' rotations, the effector's and the target's world positions and, for chains with
an orientation goal, the angle between the tip bone's rotation and the target's.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import bpy
import numpy as np

BLENDER_IK_NAME = "Blender IK (comparison)"  # sample_rigs/blender_build.py adds it, muted


@dataclass
class ChainRun:
    """One solver's answer for one chain over the frames (world space, scene units)."""

    rotations: np.ndarray  # (F, n, 4) pose rotations, wxyz
    effector: np.ndarray  # (F, 3)
    target: np.ndarray  # (F, 3)
    orientation_error: np.ndarray | None  # (F,) radians, chains with an orientation goal only


@dataclass
class ChainInfo:
    name: str
    bone_names: tuple[str, ...]
    chain: object  # the solver's Chain (limits included), read by the add-on's own rig reader
    orientation: bool


@dataclass
class RigRun:
    name: str
    frames: np.ndarray  # (F,) frame numbers
    chains: list[ChainInfo]
    bake_seconds: dict[str, float]  # "quat_ik", "blender_ik"
    runs: dict[str, list[ChainRun]]  # solver -> one ChainRun per chain
    baked_blend: Path | None = None
    quat_ik_steps: dict = field(default_factory=dict)  # the bake's own gather/solve/write times


def _addon_module(module: str, name: str):
    return importlib.import_module(f"{module}.blender.{name}")


def _armature_with_chains():
    found = [ob for ob in bpy.data.objects if ob.type == "ARMATURE" and len(ob.quat_ik.chains)]
    if len(found) != 1:
        raise RuntimeError(f"expected one armature with Quat IK chains, found {[ob.name for ob in found]}")
    return found[0]


def _blender_ik_constraints(ob):
    return [c for pb in ob.pose.bones for c in pb.constraints if c.type == "IK" and c.name == BLENDER_IK_NAME]


def _reset_pose(ob) -> None:
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
        pose_bone.rotation_euler = (0.0, 0.0, 0.0)
        pose_bone.rotation_axis_angle = (0.0, 0.0, 1.0, 0.0)


def _select_only(ob, names: set[str]) -> None:
    for pose_bone in ob.pose.bones:
        chosen = pose_bone.name in names
        if "select" in pose_bone.bl_rna.properties:  # 5.0 moved selection to the pose bone
            pose_bone.select = chosen
        else:
            pose_bone.bone.select = chosen


def _sample(ob, chains: list[ChainInfo], frames: np.ndarray, module: str) -> list[ChainRun]:
    """Per-frame rotations, effector, target (and orientation error) of every chain."""
    current_quaternion = _addon_module(module, "rig.rotation_modes").current_quaternion
    scene = bpy.context.scene
    props = {c.name: c for c in ob.quat_ik.chains}
    out = []
    data = {
        c.name: {"rot": np.zeros((len(frames), len(c.bone_names), 4)), "eff": [], "tgt": [], "ori": []} for c in chains
    }
    for f, frame in enumerate(frames):
        scene.frame_set(int(frame))
        world = ob.matrix_world
        for info in chains:
            d = data[info.name]
            for i, name in enumerate(info.bone_names):
                d["rot"][f, i] = tuple(current_quaternion(ob.pose.bones[name]))
            tip = ob.pose.bones[info.bone_names[-1]]
            offset = tip.matrix.to_3x3() @ _vector(props[info.name].effector_offset)
            d["eff"].append(tuple(world @ (tip.tail + offset)))
            target = props[info.name].target_object.matrix_world
            d["tgt"].append(tuple(target.translation))
            if info.orientation:
                tip_world = (world @ tip.matrix).to_quaternion()
                d["ori"].append(tip_world.rotation_difference(target.to_quaternion()).angle)
    for info in chains:
        d = data[info.name]
        orientation = np.array(d["ori"]) if info.orientation else None
        out.append(ChainRun(d["rot"], np.array(d["eff"]), np.array(d["tgt"]), orientation))
    return out


def _vector(values):
    from mathutils import Vector

    return Vector(tuple(values))


def bake_rig(blend_path: Path, out_dir: Path, module: str, say=print) -> RigRun:
    """Open ``blend_path``, bake Quat IK and Blender IK over the scene's frames, save the baked
    file to ``out_dir`` (Quat IK's action active, Blender's kept beside it) and return what
    both did."""
    rig_reader = _addon_module(module, "rig.reader")
    bpy.ops.wm.open_mainfile(filepath=str(blend_path))
    scene = bpy.context.scene
    ob = _armature_with_chains()
    bpy.context.view_layer.objects.active = ob
    frames = np.arange(scene.frame_start, scene.frame_end + 1)
    chains = []
    for chain in ob.quat_ik.chains:
        rig = rig_reader.read_chain_rig(ob, chain)
        chains.append(ChainInfo(chain.name, rig.bone_names, rig.chain, chain.orientation_mode != "NONE"))
    constraints = _blender_ik_constraints(ob)
    if len(constraints) != len(chains):
        raise RuntimeError(f"{blend_path.name}: {len(chains)} chains but {len(constraints)} '{BLENDER_IK_NAME}'")

    # The rig's own animation (rigify_body's walk keys its hips): Blender's bake plays a copy of
    # it, since Quat IK's bake keys the chains into the action itself.
    animation = ob.animation_data.action if ob.animation_data is not None else None
    own_keys = animation.copy() if animation is not None else None

    # Quat IK: the Bake button's operator, as a user runs it.
    session = _addon_module(module, "runtime.state").session
    started = time.perf_counter()
    result = bpy.ops.quat_ik.bake(armature=ob.name, frame_start=int(frames[0]), frame_end=int(frames[-1]))
    quat_ik_seconds = time.perf_counter() - started
    if result != {"FINISHED"}:
        raise RuntimeError(f"{blend_path.name}: quat_ik.bake returned {result}")
    ours_action = ob.animation_data.action
    ours_action.name = "Quat IK bake"
    ours = _sample(ob, chains, frames, module)

    # Blender's IK: same targets, its constraint unmuted, our chains off, baked with visual
    # keying. nla.bake keys frame by frame, so each frame starts from the previous frame's
    # answer; the first starts from the rest pose.
    compat = _addon_module(module, "compat")
    if own_keys is not None:
        own_keys.name = "Blender IK bake"
        compat.assign_action(ob, own_keys)
    else:
        ob.animation_data.action = None
    enabled = [chain.enabled for chain in ob.quat_ik.chains]
    for chain in ob.quat_ik.chains:
        chain.enabled = False
    _reset_pose(ob)
    for constraint in constraints:
        constraint.mute = False
    bpy.ops.object.mode_set(mode="POSE")
    _select_only(ob, {name for c in chains for name in c.bone_names})
    options = {"channel_types": {"ROTATION"}} if "channel_types" in bpy.ops.nla.bake.get_rna_type().properties else {}
    if own_keys is not None:  # key into the copy, so the hips keep their own animation
        options["use_current_action"] = True
    started = time.perf_counter()
    result = bpy.ops.nla.bake(
        frame_start=int(frames[0]),
        frame_end=int(frames[-1]),
        only_selected=True,
        visual_keying=True,
        bake_types={"POSE"},
        **options,
    )
    blender_seconds = time.perf_counter() - started
    if result != {"FINISHED"}:
        raise RuntimeError(f"{blend_path.name}: nla.bake returned {result}")
    for constraint in constraints:
        constraint.mute = True
    for chain, was_enabled in zip(ob.quat_ik.chains, enabled, strict=True):
        chain.enabled = was_enabled
    theirs_action = ob.animation_data.action
    theirs_action.name = "Blender IK bake"
    theirs = _sample(ob, chains, frames, module)
    bpy.ops.object.mode_set(mode="OBJECT")

    # The saved file plays Quat IK's bake; Blender's is kept (fake user) to switch to.
    theirs_action.use_fake_user = True
    compat.assign_action(ob, ours_action)
    scene.frame_set(int(frames[0]))
    out_dir.mkdir(parents=True, exist_ok=True)
    baked = out_dir / blend_path.name
    baked.unlink(missing_ok=True)
    bpy.ops.wm.save_as_mainfile(filepath=str(baked), compress=True, copy=True)
    return RigRun(
        name=blend_path.stem,
        frames=frames,
        chains=chains,
        bake_seconds={"quat_ik": quat_ik_seconds, "blender_ik": blender_seconds},
        runs={"quat_ik": ours, "blender_ik": theirs},
        baked_blend=baked,
        quat_ik_steps=dict(session.last_bake_seconds),
    )
