"""The six sample rigs: bones, joint limits, chains and target paths (see sample_rigs/README.md).

Each ``build_*`` function fills a fresh, empty scene and returns the rig spec it used (written
beside the .blend as ``<name>.rig.json``). Coordinates are Blender's: Z up, characters face
−Y, so a character's left is +X. Everything is computed, nothing random: running the builder
twice gives the same rigs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import bpy
import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.limits.mirroring import mirror_limit, mirror_name
from quat_ik_addon.solver.limits.presets import load_preset
from quat_ik_addon.solver.limits.retarget import axes_frame as frame
from quat_ik_addon.solver.limits.window_shapes import cone_window, range_of_motion_window
from quat_ik_addon.solver.rig import spec as spec

from . import blender_build as bb
from .rig_math import (
    anatomical_chain_limits,
    key_pose_path,
    roll_for_z,
    rotation_x,
    rotation_y,
    swing_twist_pose,
)

DOWN, UP, FRONT = (0.0, 0.0, -1.0), (0.0, 0.0, 1.0), (0.0, -1.0, 0.0)
LEFT, RIGHT = (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0)


@dataclass(frozen=True)
class ChainSetup:
    """How a rig's chains are solved: the add-chain operator's options (the panel's settings)."""

    method: str = "COMBINED"  # the add-on's default: damped least squares, then CCD
    iterations: int = 64
    restarts: int = 2  # a frame the first solve misses is solved again from other start poses
    mode: str = "PER_FRAME"  # opening the file and scrubbing the timeline solves it

    def options(self) -> dict:
        return {"method": self.method, "iterations": self.iterations, "restarts": self.restarts, "mode": self.mode}


# --------------------------------------------------------------------------- shared pieces


def bone(name, parent, head, tail, z_hint=None) -> spec.BoneSpec:
    roll = 0.0 if z_hint is None else roll_for_z(head, tail, z_hint)
    return spec.BoneSpec(name=name, parent=parent, head=tuple(head), tail=tuple(tail), roll_deg=roll)


def frames_of(count: int) -> np.ndarray:
    return np.arange(1, count + 1)


def fk_targets(rig: spec.RigSpec, chain_name: str, poses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Effector positions and tip-bone orientations (armature space = world here) of poses.

    Poses are clamped into the limits first, so every target is exactly reachable.
    """
    chain = Chain.from_rig_spec(rig, chain_name)
    fk = chain.forward_kinematics(chain.clamp_to_limits(poses))
    return fk.effector, quat.canonical(fk.rotations[:, -1])


def continuous(quaternions: np.ndarray) -> np.ndarray:
    """Flip signs so consecutive quaternions agree (keyed curves then interpolate the short way)."""
    out = np.array(quaternions, dtype=float)
    for i in range(1, len(out)):
        if np.dot(out[i], out[i - 1]) < 0.0:
            out[i] = -out[i]
    return out


def animate_target(name: str, positions: np.ndarray, rotations=None, *, size: float) -> bpy.types.Object:
    target = bb.target_empty(name, size=size, oriented=rotations is not None)
    frames = frames_of(len(positions))
    bb.key_path(target, frames, positions, None if rotations is None else continuous(rotations))
    bb.path_curve(f"{name}_path", positions)
    return target


def rig_spec(name: str, bones, chains, limits) -> spec.RigSpec:
    return spec.RigSpec(name=name, bones=tuple(bones), chains=tuple(chains), limits=dict(limits))


def chain_spec(name: str, tip: str, length: int) -> spec.ChainSpec:
    return spec.ChainSpec(name=name, tip=tip, length=length)


def build_from_spec(rig: spec.RigSpec, name: str) -> bpy.types.Object:
    ob = bb.armature_from_spec(rig, name)
    bb.set_limits(ob, {bone.name: rig.limit_for(bone.name) for bone in rig.bones})
    return ob


# --------------------------------------------------------------------------- arm3


def build_arm3(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """Blow 2002's Figure 1: a 3-segment arm anchored at a block. Ball shoulder through a
    pentagonal reach window with twist ±70°, hinge elbow 0–150° (straight at rest, on its
    limit), ball wrist in a 60° cone with twist ±40° (the reference chain ``arm3``)."""
    base = np.array([0.0, 0.0, 1.0])
    lengths = (0.30, 0.28, 0.10)
    ends = base + np.outer(np.cumsum((0.0, *lengths)), [0.0, 1.0, 0.0])
    names = ("shoulder", "elbow", "wrist")  # bones named by the joint at their head, as in the article
    bones = [bone(n, names[i - 1] if i else None, ends[i], ends[i + 1]) for i, n in enumerate(names)]
    pentagon = spec.PolygonWindow(vertices_deg=((-40, -30), (70, -35), (80, 45), (-30, 60), (-50, 20)))
    limits = {
        "shoulder": spec.BallLimit(windows=(pentagon,), twist_deg=(-70.0, 70.0)),
        "elbow": spec.HingeLimit(axis=(1.0, 0.0, 0.0), range_deg=(0.0, 150.0)),
        "wrist": spec.BallLimit(windows=(cone_window(60.0),), twist_deg=(-40.0, 40.0)),
    }
    rig = rig_spec("arm3", bones, [chain_spec("arm", "wrist", 3)], limits)
    ob = build_from_spec(rig, "Arm3")
    bb.block("Anchor", base - (0.0, 0.1, 0.0), (0.2, 0.2, 0.2))

    # Key poses at the window's corners, the elbow straight (its lower limit) and fully bent,
    # the wrist at its cone's rim: the path makes every limit bite in turn.
    keys = [
        (swing_twist_pose(0, 0), 30, swing_twist_pose(0, 0)),
        (swing_twist_pose(78, 43, 60), 0, swing_twist_pose(55, 20)),
        (swing_twist_pose(-28, 58, -65), 95, swing_twist_pose(0, 58, 38)),
        (swing_twist_pose(-48, 19), 148, swing_twist_pose(-40, -40, -38)),
        (swing_twist_pose(68, -33, 30), 60, swing_twist_pose(30, -50)),
        (swing_twist_pose(0, 0), 30, swing_twist_pose(0, 0)),
    ]
    key_poses = np.array([[s, quat.from_axis_angle([1.0, 0.0, 0.0], math.radians(e)), w] for s, e, w in keys])
    key_frames = np.linspace(1, frame_count, len(keys))
    positions, _ = fk_targets(rig, "arm", key_pose_path(key_poses, key_frames, frames_of(frame_count)))
    target = animate_target("arm_target", positions, size=0.03)
    bb.add_chain(ob, name="arm", tip="wrist", length=3, target=target, **setup.options())
    return rig


# --------------------------------------------------------------------------- human_arm

# The sternoclavicular joint has no preset in the library; its ranges, as summarised in
# D. A. Neumann, Kinesiology of the Musculoskeletal System (3rd ed., 2017), ch. 5: elevation
# about 45°, depression about 10°, protraction and retraction 15–30° each (15° used), posterior
# (axial) rotation 20–35° (30° used; anterior rotation: back to neutral only). The clavicle's
# frame: +Y lateral along the bone, +Z to the front, so +X points down.
CLAVICLE = spec.BallLimit(
    windows=(range_of_motion_window(minus_u_deg=45.0, plus_u_deg=10.0, minus_v_deg=15.0, plus_v_deg=15.0),),
    twist_deg=(-30.0, 0.0),
    stiffness=0.6,  # the clavicle follows the arm only a little (Zhong 2000's damping)
)


def _human_arm_spec() -> spec.RigSpec:
    x = 0.18  # the arm hangs in the anatomical position: straight down, palm forward
    joints = {"sternum": (0.02, -0.03, 1.44), "shoulder": (x, 0.0, 1.46)}
    bones = [
        bone("clavicle", None, joints["sternum"], joints["shoulder"], FRONT),
        bone("upper_arm", "clavicle", joints["shoulder"], (x, 0.0, 1.16), FRONT),
        bone("forearm", "upper_arm", (x, 0.0, 1.16), (x, 0.0, 1.03), FRONT),
        # The twist bone's zero is the forearm's mid-position (thumb forward, palm toward the
        # body), so it and the hand have local +Z toward the palm, i.e. medial (−X).
        bone("forearm_twist", "forearm", (x, 0.0, 1.03), (x, 0.0, 0.90), RIGHT),
        bone("hand", "forearm_twist", (x, 0.0, 0.90), (x, 0.0, 0.81), RIGHT),
    ]
    limits = {
        "clavicle": CLAVICLE,
        "upper_arm": load_preset("shoulder"),
        "forearm": load_preset("elbow"),
        "forearm_twist": load_preset("forearm_twist"),
        "hand": load_preset("wrist"),
    }
    return rig_spec("human_arm", bones, [chain_spec("arm.L", "hand", 5)], limits)


def build_human_arm(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """A left arm in the anatomical position: clavicle (inline limits, above), shoulder, elbow
    hinge, forearm twist bone and wrist from the preset library. The hand also matches the
    target's rotation, which is what the forearm twist is for."""
    rig = _human_arm_spec()
    ob = build_from_spec(rig, "HumanArm")
    # Everyday reaches, each near some limit: forward palm down (pronation), hand to mouth
    # (elbow flexion), overhead (shoulder flexion, clavicle elevation), across the body
    # (horizontal adduction), behind the back (extension with internal rotation).
    # Per key: clavicle (toward X, toward Z, twist), shoulder (toward X, toward Z, twist),
    # elbow flexion, pronation, wrist (toward X, toward Z).
    keys = [
        ((0, 0, 0), (0, 0, 0), 10, 0, (0, 0)),
        ((0, 12, -5), (-5, 88, 10), 10, 75, (0, -15)),
        ((-5, 5, 0), (-10, 45, 5), 140, 10, (5, 25)),
        ((-35, 0, -25), (-20, 165, -20), 5, 40, (0, -55)),
        ((0, 14, 0), (40, 85, 30), 40, 60, (-15, 10)),
        ((-5, -12, 0), (5, -45, 60), 95, 70, (10, 40)),
        ((0, 0, 0), (0, 0, 0), 10, 0, (0, 0)),
    ]
    key_poses = np.array(
        [
            [
                swing_twist_pose(*clavicle),
                swing_twist_pose(*shoulder),
                quat.from_axis_angle([1.0, 0.0, 0.0], math.radians(elbow)),
                quat.from_y_angle(math.radians(pronation)),
                swing_twist_pose(*wrist),
            ]
            for clavicle, shoulder, elbow, pronation, wrist in keys
        ]
    )
    poses = key_pose_path(key_poses, np.linspace(1, frame_count, len(keys)), frames_of(frame_count))
    positions, rotations = fk_targets(rig, "arm.L", poses)
    target = animate_target("hand_target", positions, rotations, size=0.06)
    bb.add_chain(ob, name="arm.L", tip="hand", length=5, target=target, orientation=True, **setup.options())
    return rig


# --------------------------------------------------------------------------- leg


def ground_height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The uneven ground: bumps and slopes up to about ±9 cm."""
    return 0.05 * np.sin(6.0 * x + 0.7) * np.cos(5.0 * y) + 0.04 * np.sin(9.0 * y + 1.0) + 0.04


def ground_normal(x: float, y: float, h: float = 1e-4) -> np.ndarray:
    dx = (ground_height(x + h, y) - ground_height(x - h, y)) / (2 * h)
    dy = (ground_height(x, y + h) - ground_height(x, y - h)) / (2 * h)
    normal = np.array([-dx, -dy, 1.0])
    return normal / np.linalg.norm(normal)


def build_leg(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """A left leg (hip ball in an elliptic-ish cone from the preset library, knee hinge, ankle)
    whose foot steps from spot to spot on uneven ground, resting flat on the slope it lands
    on: the target gives both the ball of the foot's position and the foot's orientation."""
    hip, knee, ankle, ball = (0.0, 0.0, 0.86), (0.0, 0.0, 0.45), (0.0, 0.0, 0.08), (0.0, -0.15, 0.0)
    bones = [
        bone("thigh", None, hip, knee, FRONT),
        bone("shin", "thigh", knee, ankle, FRONT),
        bone("foot", "shin", ankle, ball, UP),
    ]
    rest = {name: m[:3, :3] for name, m in _rest_matrices(bones).items()}
    # The foot bone runs down to the ball of the foot, so its rest frame is pitched 28° from the
    # ankle preset's (foot flat, +Y forward, +Z up): the preset is turned to match.
    anatomical = anatomical_chain_limits(
        [rest["thigh"], rest["shin"], rest["foot"]],
        [frame(DOWN, FRONT), frame(DOWN, FRONT), ("after_parent", rotation_x(90.0))],
        [load_preset("hip"), load_preset("knee"), load_preset("ankle")],
        z_hints=[FRONT, FRONT, UP],
    )
    limits = dict(zip(("thigh", "shin", "foot"), (a.limit for a in anatomical), strict=True))
    rig = rig_spec("leg", bones, [chain_spec("leg.L", "foot", 3)], limits)
    ob = build_from_spec(rig, "Leg")

    xs, ys = np.linspace(-0.45, 0.45, 37), np.linspace(-0.6, 0.45, 43)
    bb.height_field("Ground", xs, ys, ground_height(xs[None, :], ys[:, None]))
    # Spots to step on (x, y of the ball of the foot) and the foot's heading there.
    spots = [(0.0, -0.15, 0), (0.10, -0.30, 15), (-0.08, -0.26, -20), (0.05, 0.02, 10), (-0.12, -0.08, -30),
             (0.12, -0.18, 25), (0.0, -0.15, 0)]  # fmt: skip
    foot_rest = rest["foot"]  # how the foot bone sits on flat ground, to carry onto each slope
    on_flat = frame(FRONT, UP).T @ foot_rest
    frames = frames_of(frame_count)
    hold, count = 0.35, len(spots) - 1  # share of each step spent standing on the spot
    positions, rotations = np.zeros((frame_count, 3)), np.zeros((frame_count, 4))
    for f, frame_number in enumerate(frames):
        s = (frame_number - 1) / (frame_count - 1) * count
        k = min(int(s), count - 1)
        t = np.clip((s - k - hold) / (1.0 - hold), 0.0, 1.0)
        t = t * t * (3 - 2 * t)
        (x0, y0, h0), (x1, y1, h1) = spots[k], spots[k + 1]
        x, y, heading = x0 + t * (x1 - x0), y0 + t * (y1 - y0), h0 + t * (h1 - h0)
        lift = 0.12 * math.sin(math.pi * t)
        positions[f] = (x, y, float(ground_height(x, y)) + lift)
        forward = quat.to_matrix(quat.from_axis_angle(np.array(UP), math.radians(heading))) @ np.array(FRONT)
        ground = frame(np.cross(ground_normal(x, y), np.cross(forward, ground_normal(x, y))), ground_normal(x, y))
        tilt_back = rotation_x(-10.0 * math.sin(math.pi * t))  # toes down a little while the foot swings
        rotations[f] = quat.from_matrix(ground @ tilt_back @ on_flat)
    target = animate_target("foot_target", positions, rotations, size=0.08)
    bb.add_chain(ob, name="leg.L", tip="foot", length=3, target=target, orientation=True, **setup.options())
    return rig


def _rest_matrices(bones) -> dict[str, np.ndarray]:
    from quat_ik_addon.solver.rig.rest_pose import spec_rest_matrices

    return spec_rest_matrices(rig_spec("rest", bones, [], {}))


# --------------------------------------------------------------------------- robot5


def build_robot5(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """A 5-DoF arm (base yaw, shoulder, elbow and wrist pitch, tool roll: five hinges) whose
    tool touches points on a table from a given direction: straight down, then tipped 35°
    away from the base. A 5-DoF arm can take any such approach direction in its own vertical
    plane, with the tool's roll free, so position and orientation are both reachable."""
    points = [(0, 0, 0), (0, 0, 0.30), (0, 0, 0.75), (0, 0, 1.15), (0, 0, 1.25), (0, 0, 1.40)]
    names = ("base", "shoulder", "elbow", "wrist", "tool")
    bones = [bone(n, names[i - 1] if i else None, points[i], points[i + 1]) for i, n in enumerate(names)]
    x_axis, y_axis = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)
    limits = {
        "base": spec.HingeLimit(axis=y_axis, range_deg=(-170.0, 170.0)),
        "shoulder": spec.HingeLimit(axis=x_axis, range_deg=(-20.0, 110.0)),
        "elbow": spec.HingeLimit(axis=x_axis, range_deg=(0.0, 150.0)),
        "wrist": spec.HingeLimit(axis=x_axis, range_deg=(-120.0, 120.0)),
        "tool": spec.HingeLimit(axis=y_axis),  # rolls all the way round
    }
    rig = rig_spec("robot5", bones, [chain_spec("arm", "tool", 5)], limits)
    ob = build_from_spec(rig, "Robot5")
    bb.block("Table", (0.0, -0.55, 0.20), (1.0, 0.5, 0.40))

    frames = frames_of(frame_count)
    phase = 2.0 * math.pi * (frames - 1) / (frame_count - 1)
    positions = np.stack(
        (0.30 * np.sin(phase), -0.55 + 0.10 * np.sin(2.0 * phase), np.full(frame_count, 0.40)), axis=1
    )  # a figure eight on the table top, within reach of the wrist when the tool points down
    tilt = np.radians(35.0) * np.clip(1.5 * np.sin(0.5 * phase) ** 2 - 0.25, 0.0, 1.0)
    rotations = np.zeros((frame_count, 4))
    for f, (p, angle) in enumerate(zip(positions, tilt, strict=True)):
        radial = np.array([p[0], p[1], 0.0]) / np.hypot(p[0], p[1])  # away from the base
        approach = -math.cos(angle) * np.array(UP) + math.sin(angle) * radial  # down, tipped outward
        heading = quat.to_matrix(quat.from_axis_angle(np.array(UP), 0.6 * math.sin(phase[f]))) @ np.array(LEFT)
        rotations[f] = quat.from_matrix(frame(approach, np.cross(heading, approach)))
    target = animate_target("tool_target", positions, rotations, size=0.1)
    bb.add_chain(ob, name="arm", tip="tool", length=5, target=target, orientation=True, **setup.options())
    return rig


# --------------------------------------------------------------------------- tentacle30


def build_tentacle30(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """30 bones (3 m) standing up from the floor, each a ball joint in a 12° cone with ±8° of
    twist, following a target that loops around it fast (about 10 cm a frame)."""
    count, length = 30, 3.0
    names = [f"segment_{i:02d}" for i in range(count)]
    ends = np.outer(np.linspace(0.0, length, count + 1), UP)
    bones = [bone(n, names[i - 1] if i else None, ends[i], ends[i + 1]) for i, n in enumerate(names)]
    limits = {n: spec.BallLimit(windows=(cone_window(12.0),), twist_deg=(-8.0, 8.0)) for n in names}
    rig = rig_spec("tentacle30", bones, [chain_spec("tentacle", names[-1], count)], limits)
    ob = build_from_spec(rig, "Tentacle30")

    t = 2.0 * math.pi * (frames_of(frame_count) - 1) / (frame_count - 1)
    positions = np.stack(
        (1.5 * np.sin(2.0 * t), 1.2 * np.sin(3.0 * t + 0.5), 1.9 + 0.6 * np.cos(2.0 * t)), axis=1
    )  # a Lissajous knot around the tentacle, up to about 20 cm per frame
    target = animate_target("tentacle_target", positions, size=0.1)
    bb.add_chain(ob, name="tentacle", tip=names[-1], length=count, target=target, **setup.options())
    return rig


# --------------------------------------------------------------------------- rigify_human

RIGIFY_CHAINS = {  # chain: bones root to tip in Blender's human metarig
    "arm.L": ("upper_arm.L", "forearm.L", "hand.L"),
    "leg.L": ("thigh.L", "shin.L", "foot.L"),
}


def _rigify_left_limits(ob) -> tuple[dict[str, spec.JointLimit], list[str]]:
    """The preset limits moved onto the metarig's rest pose (module rig_math), left side.

    The metarig has no forearm twist bone: its hand carries the forearm's pronation, so the
    hand's twist range is the wrist's plus the forearm's, about the mid-position."""
    rest = {name: np.array(ob.data.bones[name].matrix_local)[:3, :3] for c in RIGIFY_CHAINS.values() for name in c}
    wrist = load_preset("wrist")
    forearm = load_preset("forearm_twist")
    hand = spec.BallLimit(
        windows=wrist.windows,
        twist_deg=(wrist.twist_deg[0] + forearm.range_deg[0], wrist.twist_deg[1] + forearm.range_deg[1]),
    )
    # Where anatomy's +Z points on each bone at the metarig's rest, whatever Rigify's roll says:
    # for the upper arm and forearm, the way the (slightly bent) elbow flexes, so the elbow's
    # hinge axis is the normal of the arm's bend plane; the front of the body for the thigh and
    # shin; the instep for the foot; for the hand the palm, from the hand's own geometry: a
    # left palm faces (finger direction) × (toward the thumb: index minus little knuckle).
    bones = ob.data.bones
    upper, fore = rest["upper_arm.L"][:, 1], rest["forearm.L"][:, 1]
    flexes_toward = fore - np.dot(fore, upper) * upper
    thumb_side = np.array(bones["palm.01.L"].head_local) - np.array(bones["palm.04.L"].head_local)
    palm = np.cross(rest["hand.L"][:, 1], thumb_side)
    setups = {
        "arm.L": (
            [frame(DOWN, FRONT), ("after_parent", np.eye(3)), ("after_parent", rotation_y(90.0))],
            [load_preset("shoulder"), load_preset("elbow"), hand],
            [flexes_toward, flexes_toward, palm],
        ),
        "leg.L": (
            [frame(DOWN, FRONT), ("after_parent", np.eye(3)), ("after_parent", rotation_x(90.0))],
            [load_preset("hip"), load_preset("knee"), load_preset("ankle")],
            [FRONT, FRONT, UP],
        ),
    }
    limits, notes = {}, []
    for chain, (zeros, presets, hints) in setups.items():
        chain_bones = RIGIFY_CHAINS[chain]
        moved = anatomical_chain_limits([rest[n] for n in chain_bones], zeros, presets, hints)
        for name, result in zip(chain_bones, moved, strict=True):
            limits[name] = result.limit
            if result.twist_error_deg > 0.5 or result.twist_error_other_windows_deg > 0.5:
                other = result.twist_error_other_windows_deg
                notes.append(
                    f"{name}: twist range exact to ±{result.twist_error_deg:.0f}° over its main window"
                    + (f", ±{other:.0f}° over its others" if other > 0.5 else "")
                )
            if result.hinge_residual_deg > 0.5:
                notes.append(f"{name}: the rest pose is {result.hinge_residual_deg:.1f}° off the hinge")
    return limits, notes


def build_rigify_human(frame_count: int, setup: ChainSetup) -> spec.RigSpec:
    """Blender's bundled Rigify human metarig, untouched, with Quat IK on both arms and legs
    and the preset library's anatomical limits moved onto its rest pose (A-pose arms, Rigify's
    bone rolls). Hands wave and reach; feet march in place."""
    import addon_utils

    addon_utils.enable("rigify", default_set=True)  # its register() reads its preferences
    bpy.ops.object.armature_human_metarig_add()
    ob = bpy.context.object
    ob.show_in_front = True
    left, notes = _rigify_left_limits(ob)
    limits = dict(left)
    for name, limit in left.items():
        other = mirror_name(name)
        limits[other] = mirror_limit(
            limit, np.array(ob.data.bones[name].matrix_local), np.array(ob.data.bones[other].matrix_local)
        )
    bb.set_limits(ob, limits)
    for note in notes:
        print(f"make_rigs: rigify_human: {note}")

    t = 2.0 * math.pi * (frames_of(frame_count) - 1) / (frame_count - 1)
    wave = np.stack((0.30 + 0.12 * np.cos(2 * t), -0.28 + 0.10 * np.sin(2 * t), 1.45 + 0.22 * np.sin(t)), axis=1)
    reach = np.stack((-0.22 - 0.08 * np.sin(t), -0.30 - 0.12 * np.sin(t) ** 2, 1.25 + 0.60 * np.sin(t) ** 2), axis=1)
    step = np.maximum(0.0, np.sin(2 * t))
    march_left = np.stack((0.10 + 0 * t, -0.10 - 0.20 * step, 0.02 + 0.30 * step), axis=1)
    march_right = np.stack((-0.10 + 0 * t, -0.10 + 0.15 * np.maximum(0.0, -np.sin(2 * t)), 0.02 + 0 * t), axis=1)
    paths = {"arm.L": wave, "arm.R": reach, "leg.L": march_left, "leg.R": march_right}
    chains, bones = [], {}
    for chain_name, path in paths.items():
        side = chain_name[-1]
        names = [n[:-1] + side for n in RIGIFY_CHAINS[chain_name[:-1] + "L"]]
        target = animate_target(f"{chain_name}_target", path, size=0.05)
        bb.add_chain(ob, name=chain_name, tip=names[-1], length=3, target=target, **setup.options())
        chains.append(chain_spec(chain_name, names[-1], 3))
        bones.update(bone_specs(ob, names))
    return rig_spec("rigify_human", bones.values(), chains, {n: limits[n] for n in bones})


def bone_specs(ob, names) -> dict[str, spec.BoneSpec]:
    """The rig spec of the armature's bones ``names`` (a chain, root first), as they rest: a
    bone's parent only where it is one of ``names``."""
    specs = {}
    for n in names:
        b = ob.data.bones[n]
        specs[n] = spec.BoneSpec(
            name=n,
            parent=b.parent.name if b.parent is not None and b.parent.name in names else None,
            head=tuple(round(c, 6) for c in b.head_local),
            tail=tuple(round(c, 6) for c in b.tail_local),
            roll_deg=round(math.degrees(_bone_roll(b)), 6),
        )
    return specs


def _bone_roll(b) -> float:
    """Edit-bone roll of a (non-edit) bone, from its rest matrix (``Bone.AxisRollFromMatrix``)."""
    return bpy.types.Bone.AxisRollFromMatrix(b.matrix_local.to_3x3(), axis=b.vector.normalized())[1]
