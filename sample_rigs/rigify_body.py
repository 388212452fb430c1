"""The ``rigify_body`` sample (issue 36): Blender's Rigify human metarig walking two steps, solved
as whole bodies: both arms share the spine, the feet are pinned while they stand.

* **The walk** is keyed animation, not IK: the hips (the ``spine`` bone) move forward at a steady
  0.3 m/s, bob (lowest in double support, highest at mid-stance), turn with the swinging leg and
  drop on its side; ``spine.001`` turns the other way, so the chest keeps facing forward.
* **Feet**: chains thigh → shin → foot reach for targets on the feet's paths (the ball of the
  foot, and the foot's rotation: flat, pitched over the ball at toe-off, levelling out in the
  swing); while a foot stands, a **pin** holds it where it lands (its ankle and its rest
  rotation, flat on the floor), so the standing foot does not slide while the hips pass over it.
* **Arms**: chains from ``spine.002`` through ``spine.003``, the shoulder, upper arm, forearm and
  hand, so both arms share two spine bones and are solved as one body. The right hand rests on
  a handrail (position **and** rotation, priority 0); the left hand swings, then reaches for a
  door handle at the end of the walk that the arm alone cannot reach (priority 1): the spine
  leans toward it only as far as the right hand on the rail allows.

Everything is computed, nothing random. Targets that come from poses are Blender's own forward
kinematics of poses clamped into the limits, with the walk playing, so they are reachable.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import bpy
import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.limits.mirroring import mirror_limit, mirror_name
from quat_ik_addon.solver.limits.presets import load_preset
from quat_ik_addon.solver.limits.retarget import axes_frame as frame
from quat_ik_addon.solver.rig import spec as spec

from . import blender_build as bb
from .definitions import CLAVICLE, FRONT, ChainSetup, _rigify_left_limits, animate_target, bone_specs, chain_spec
from .rig_math import anatomical_chain_limits, smoothstep

# --------------------------------------------------------------------------- the walk

STEP_FRAMES = 40  # one step: 8 frames on both feet, then 32 with one foot swinging
DOUBLE_SUPPORT = 8
STEP_LENGTH = 0.45  # m between the feet in double support; each swing carries a foot 0.9 m
FRAMES = 2 * STEP_FRAMES + DOUBLE_SUPPORT  # two steps, standing on both feet at the start and end
HIP_SPEED = STEP_LENGTH / STEP_FRAMES  # m per frame (0.27 m/s at 24 fps: a slow stroll)
LIFT = 0.08  # m: how high the ball of a swinging foot rises
TOE_OFF = 0.25  # share of a swing spent rolling over the ball of the foot before it lifts
HEEL_RISE_DEG = 25.0  # how far the foot pitches over the ball of the foot at toe-off
HIP_DROP = 0.06  # m: the hips' mean height below the metarig's rest...
HIP_BOB = 0.025  # ...and the bob about it: lowest in double support (straight legs cannot reach)
HIP_YAW_DEG, HIP_ROLL_DEG, CHEST_COUNTER = 4.0, 3.0, 1.0  # spine.001 undoes the hips' yaw
LEG_REACH_SHARE = 0.965  # a standing leg's hip-to-ankle distance stays below this share of its length


@dataclass(frozen=True)
class Contact:
    """A foot standing still from ``start`` to ``end`` (frames, inclusive), ``offset`` metres
    along Y from where the metarig's foot stands at rest."""

    foot: str
    start: int
    end: int
    offset: float


# Left foot behind and right foot ahead at the start; the left swings past, then the right.
CONTACTS = (
    Contact("foot.L", 1, DOUBLE_SUPPORT, 0.5 * STEP_LENGTH),
    Contact("foot.L", STEP_FRAMES + 1, FRAMES, -1.5 * STEP_LENGTH),
    Contact("foot.R", 1, STEP_FRAMES + DOUBLE_SUPPORT, -0.5 * STEP_LENGTH),
    Contact("foot.R", 2 * STEP_FRAMES + 1, FRAMES, -2.5 * STEP_LENGTH),
)

ARM_BONES = ("spine.002", "spine.003", "shoulder.{s}", "upper_arm.{s}", "forearm.{s}", "hand.{s}")
LEG_BONES = ("thigh.{s}", "shin.{s}", "foot.{s}")
# Priorities: a hand on a prop is the goal an animator protects (a hand sliding on the rail or
# turning off it reads as a mistake at once); the free hand's reach may fall short. The legs
# are their own bodies (they share no bone with the arms), their pins above every goal.
PRIORITIES = {"arm.R": 0, "arm.L": 1, "leg.L": 0, "leg.R": 0}
ORIENTED = {"arm.R", "leg.L", "leg.R"}
DOOR_HANDLE = np.array((0.36, -1.80, 1.18))  # just beyond the left hand's reach at the end
REACH_FROM = 54  # the left hand stops swinging and reaches for the handle from this frame...
REACH_TO = 80  # ...and holds it from this one


def chain_bones(chain: str) -> tuple[str, ...]:
    kind, side = chain.split(".")
    return tuple(n.format(s=side) for n in (ARM_BONES if kind == "arm" else LEG_BONES))


def hips_motion(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hips' translation from rest (F, 3), their rotation (F, 4) about the ``spine`` bone's
    head and spine.001's counter-rotation (F, 4), both in armature axes."""
    middle_of_first = 0.5 * (1 + DOUBLE_SUPPORT)  # frame the hips pass the middle between the feet
    phase = 2.0 * math.pi * (frames - middle_of_first) / STEP_FRAMES  # 0 in double support
    travel = -HIP_SPEED * (frames - middle_of_first)
    height = -HIP_DROP - HIP_BOB * np.cos(phase)
    translation = np.stack((np.zeros_like(travel), travel, height), axis=1)
    # The swinging leg's side turns forward and drops: the left swings in the first step.
    swing = np.sin(0.5 * phase)  # +1 mid-way through the left swing, -1 through the right
    yaw = np.radians(HIP_YAW_DEG) * swing  # about +Z: the left hip comes forward (toward -Y)
    roll = np.radians(HIP_ROLL_DEG) * swing  # about -Y (forward): the left side drops
    hips = quat.multiply(
        quat.from_axis_angle(np.array((0.0, 0.0, 1.0)), yaw), quat.from_axis_angle(np.array((0.0, -1.0, 0.0)), roll)
    )
    chest = quat.from_axis_angle(np.array((0.0, 0.0, 1.0)), -CHEST_COUNTER * yaw)
    return translation, hips, chest


def foot_path(foot: str, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the ball of the foot is, as (F, 3) offsets from its rest position, and the foot's
    pitch (F,) in radians from flat (positive: heel up). Between contacts the ball stays while
    the heel rises (toe-off), then swings: eased along Y, lifted on a half sine, the foot
    levelling out by the time it is half-way and landing flat, as its next pin holds it."""
    contacts = [c for c in CONTACTS if c.foot == foot]
    offsets, pitch = np.zeros((len(frames), 3)), np.zeros(len(frames))
    for f, frame_number in enumerate(frames):
        for before, after in itertools.pairwise(contacts):
            if before.end < frame_number < after.start:
                share = (frame_number - before.end) / (after.start - before.end)
                t = max(0.0, (share - TOE_OFF) / (1.0 - TOE_OFF))
                offsets[f] = (
                    0.0,
                    before.offset + smoothstep(t) * (after.offset - before.offset),
                    LIFT * math.sin(math.pi * t),
                )
                rise = smoothstep(min(share / TOE_OFF, 1.0))
                level = smoothstep(min(t / 0.5, 1.0))
                pitch[f] = math.radians(HEEL_RISE_DEG) * rise * (1.0 - level)
        for contact in contacts:
            if contact.start <= frame_number <= contact.end:
                offsets[f] = (0.0, contact.offset, 0.0)
    return offsets, pitch


# --------------------------------------------------------------------------- limits


def _body_limits(ob) -> tuple[dict[str, spec.JointLimit], list[str]]:
    """rigify_human's limbs, plus the spine segments (the preset) and the clavicles (the
    inline sternoclavicular ranges human_arm uses), moved onto the metarig's rest frames."""
    left, notes = _rigify_left_limits(ob)
    rest = {b.name: np.array(b.matrix_local)[:3, :3] for b in ob.data.bones}
    for name in ("spine.002", "spine.003"):  # their anatomical zero is the metarig's upright rest
        axis = rest[name][:, 1]
        left[name] = anatomical_chain_limits(
            [rest[name]], [frame(axis, FRONT)], [load_preset("spine_segment")], [FRONT]
        )[0].limit
    clavicle = rest["shoulder.L"][:, 1]  # the clavicle's frame: +Y lateral along the bone, +Z front
    left["shoulder.L"] = anatomical_chain_limits([rest["shoulder.L"]], [frame(clavicle, FRONT)], [CLAVICLE], [FRONT])[
        0
    ].limit
    limits = dict(left)
    for name, limit in left.items():
        other = mirror_name(name)
        if other != name:
            limits[other] = mirror_limit(limit, rest[name], rest[other])
    return limits, notes


# --------------------------------------------------------------------------- keys and targets


def _key_walk(ob, frames: np.ndarray) -> None:
    """Key the hips (location and rotation of ``spine``) and the chest's counter-turn
    (``spine.001``) on every frame, linear in between."""
    translation, hips, chest = hips_motion(frames)
    spine, chest_bone = ob.pose.bones["spine"], ob.pose.bones["spine.001"]
    rest_spine = np.array(ob.data.bones["spine"].matrix_local)[:3, :3]
    rest_chest = np.array(ob.data.bones["spine.001"].matrix_local)[:3, :3]
    # A root bone's pose location is in its rest frame; a rotation W about the joint in
    # armature axes is the pose rotation Rᵀ W R (R the bone's rest rotation; the parent's turn
    # is already in its frame, so spine.001's counter-turn is relative to the hips).
    to_local = quat.from_matrix(rest_spine.T)
    chest_local = quat.from_matrix(rest_chest.T)
    for f, frame_number in enumerate(frames):
        spine.location = tuple(rest_spine.T @ translation[f])
        spine.rotation_quaternion = tuple(quat.multiply(quat.multiply(to_local, hips[f]), quat.conjugate(to_local)))
        chest_bone.rotation_quaternion = tuple(
            quat.multiply(quat.multiply(chest_local, chest[f]), quat.conjugate(chest_local))
        )
        spine.keyframe_insert("location", frame=int(frame_number))
        spine.keyframe_insert("rotation_quaternion", frame=int(frame_number))
        chest_bone.keyframe_insert("rotation_quaternion", frame=int(frame_number))
    for fcurve in bb._fcurves(ob.animation_data.action, ob):
        for key in fcurve.keyframe_points:
            key.interpolation = "LINEAR"


def _arm_pose(ob, rig: spec.RigSpec, chain: str, upper_deg: tuple[float, float], elbow_deg: float) -> np.ndarray:
    """Pose rotations (6, 4) of an arm chain: spine and clavicle at rest, the upper arm turned
    ``upper_deg`` = (down toward the body, forward) degrees about armature axes, the elbow
    bent ``elbow_deg`` beyond the metarig's rest bend, clamped into the limits."""
    names = chain_bones(chain)
    side = 1.0 if chain.endswith("L") else -1.0
    rest_upper = np.array(ob.data.bones[names[3]].matrix_local)[:3, :3]
    down, forward = (math.radians(a) for a in upper_deg)
    turn = quat.multiply(
        quat.from_axis_angle(np.array((1.0, 0.0, 0.0)), -forward),  # about +X: an arm pointing down swings to -Y
        quat.from_axis_angle(np.array((0.0, 1.0, 0.0)), -side * down),  # about Y: the arm comes down to the side
    )
    local = quat.from_matrix(rest_upper.T)
    pose = np.tile(quat.IDENTITY, (len(names), 1)).astype(float)
    pose[3] = quat.multiply(quat.multiply(local, turn), quat.conjugate(local))
    elbow = rig.limit_for(names[4])
    pose[4] = quat.from_axis_angle(np.asarray(elbow.axis, dtype=float), math.radians(elbow_deg))
    return Chain.from_rig_spec(rig, chain).clamp_to_limits(pose[None])[0]


def _hand_goal(ob, chain: str, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blender's own forward kinematics at the current frame: the hand's tail and rotation
    (world = armature space here) with the arm chain posed so."""
    names = chain_bones(chain)
    for name, q in zip(names, pose, strict=True):
        ob.pose.bones[name].rotation_quaternion = tuple(q)
    bpy.context.view_layer.update()
    hand = ob.pose.bones[names[-1]]
    tail, rotation = np.array(hand.tail), np.array(hand.matrix.to_quaternion())
    for name in names:
        ob.pose.bones[name].rotation_quaternion = (1.0, 0.0, 0.0, 0.0)
    return tail, rotation


def _check_legs_reach(ob, frames: np.ndarray) -> None:
    """Every standing foot's ankle within LEG_REACH_SHARE of its leg's length from its hip
    joint on every frame (the walk's hip height is chosen so), read from Blender's pose."""
    scene = bpy.context.scene
    for foot in ("foot.L", "foot.R"):
        side = foot[-1]
        thigh, shin = ob.data.bones[f"thigh.{side}"], ob.data.bones[f"shin.{side}"]
        length = thigh.length + shin.length
        ankle_rest = np.array(ob.data.bones[foot].head_local)
        for frame_number in frames:
            contact = next((c for c in CONTACTS if c.foot == foot and c.start <= frame_number <= c.end), None)
            if contact is None:
                continue
            scene.frame_set(int(frame_number))
            hip = np.array(ob.pose.bones[f"thigh.{side}"].head)
            distance = float(np.linalg.norm(ankle_rest + np.array((0.0, contact.offset, 0.0)) - hip))
            if distance > LEG_REACH_SHARE * length:
                raise RuntimeError(
                    f"rigify_body: frame {frame_number}: {foot}'s ankle is {distance:.3f} m from its hip, "
                    f"beyond {LEG_REACH_SHARE} of the leg's {length:.3f} m: lower the hips (HIP_DROP, HIP_BOB)"
                )


# --------------------------------------------------------------------------- the rig


def build_rigify_body(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """Blender's Rigify human metarig walking two steps, both arms and both legs solved as
    bodies (module docstring). ``frame_count`` must be ``FRAMES``: the walk is timed in steps."""
    import addon_utils

    if frame_count != FRAMES:
        raise ValueError(f"rigify_body's walk is {FRAMES} frames long, not {frame_count}")
    addon_utils.enable("rigify", default_set=True)  # its register() reads its preferences
    bpy.ops.object.armature_human_metarig_add()
    ob = bpy.context.object
    ob.show_in_front = True
    for pose_bone in ob.pose.bones:
        pose_bone.rotation_mode = "QUATERNION"
    limits, notes = _body_limits(ob)
    bb.set_limits(ob, limits)
    for note in notes:
        print(f"make_rigs: rigify_body: {note}")
    rig = _rig_spec(ob, limits)

    frames = np.arange(1, frame_count + 1)
    _key_walk(ob, frames)
    _check_legs_reach(ob, frames)
    scene = bpy.context.scene

    # Hands: the right one rests on a rail beside the walk, where it is at frame 1 with the arm
    # lowered and the elbow bent, and slides along it with the hips; the left swings against
    # the left leg, then reaches for the door handle.
    scene.frame_set(1)
    rail_start, rail_rotation = _hand_goal(ob, "arm.R", _arm_pose(ob, rig, "arm.R", (25.0, 10.0), 30.0))
    translation, _hips, _chest = hips_motion(frames)
    rail = rail_start + np.outer(translation[:, 1] - translation[0, 1], (0.0, 1.0, 0.0))
    reach = smoothstep(np.clip((frames - REACH_FROM) / (REACH_TO - REACH_FROM), 0.0, 1.0))
    swing_deg = 18.0 * np.cos(np.pi * (frames - 0.5 * (1 + DOUBLE_SUPPORT)) / STEP_FRAMES)  # forward with leg.R
    left = np.zeros((frame_count, 3))
    for f, frame_number in enumerate(frames):
        scene.frame_set(int(frame_number))
        swinging, _ = _hand_goal(ob, "arm.L", _arm_pose(ob, rig, "arm.L", (20.0, swing_deg[f]), 15.0))
        left[f] = (1.0 - reach[f]) * swinging + reach[f] * DOOR_HANDLE
    scene.frame_set(1)

    targets = {
        "arm.R": animate_target("arm.R_target", rail, np.tile(rail_rotation, (frame_count, 1)), size=0.06),
        "arm.L": animate_target("arm.L_target", left, size=0.05),
    }
    rest_tail = {foot: np.array(ob.data.bones[foot].tail_local) for foot in ("foot.L", "foot.R")}
    for side in "LR":
        offsets, pitch = foot_path(f"foot.{side}", frames)
        flat = quat.from_matrix(np.array(ob.data.bones[f"foot.{side}"].matrix_local)[:3, :3])
        heel_up = quat.from_axis_angle(np.array((1.0, 0.0, 0.0)), pitch)  # about +X: the toes turn down
        targets[f"leg.{side}"] = animate_target(
            f"leg.{side}_target", rest_tail[f"foot.{side}"] + offsets, quat.multiply(heel_up, flat), size=0.08
        )
    bb.block(
        "Rail",
        (rail_start[0] - 0.03, float(np.mean(rail[:, 1])), rail_start[2] - 0.03),
        (0.03, float(np.ptp(rail[:, 1])) + 0.4, 0.03),
    )
    bb.block("Door", (DOOR_HANDLE[0] + 0.1, DOOR_HANDLE[1] - 0.06, 1.0), (0.9, 0.04, 2.0))

    for chain_name in ("arm.R", "arm.L", "leg.L", "leg.R"):
        names = chain_bones(chain_name)
        bb.add_chain(
            ob,
            name=chain_name,
            tip=names[-1],
            length=len(names),
            target=targets[chain_name],
            orientation=chain_name in ORIENTED,
            **setup.options(),
        )
        ob.quat_ik.chains[chain_name].priority = PRIORITIES[chain_name]
    _add_pins(ob)
    return rig


def _add_pins(ob) -> None:
    """Pin each foot over each of its contacts, the user's way (Pin Bone with the foot active),
    holding where it lands: its ankle moved along the walk, its rest rotation (flat)."""
    bpy.context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="POSE")
    for contact in CONTACTS:
        ob.data.bones.active = ob.data.bones[contact.foot]
        result = bpy.ops.quat_ik.add_pin(frame_start=contact.start, frame_end=contact.end)
        if result != {"FINISHED"}:
            raise RuntimeError(f"quat_ik.add_pin({contact.foot}) returned {result}")
        pin = ob.quat_ik.pins[-1]
        rest = ob.data.bones[contact.foot].matrix_local
        pin.name = f"{contact.foot} {contact.start}-{contact.end}"
        pin.hold = "BOTH"
        pin.location = tuple(np.array(rest.to_translation()) + np.array((0.0, contact.offset, 0.0)))
        pin.rotation = tuple(rest.to_quaternion())
    bpy.ops.object.mode_set(mode="OBJECT")


def _rig_spec(ob, limits) -> spec.RigSpec:
    """The chains' bones, chains and limits in the rig-spec format. The format has no
    priorities, pins or keyed bones: those live in the .blend only."""
    bones, chains = {}, []
    for chain_name in ("arm.R", "arm.L", "leg.L", "leg.R"):
        names = chain_bones(chain_name)
        chains.append(chain_spec(chain_name, names[-1], len(names)))
        bones.update(bone_specs(ob, names))
    return spec.RigSpec(
        name="rigify_body", bones=tuple(bones.values()), chains=tuple(chains), limits={n: limits[n] for n in bones}
    )
