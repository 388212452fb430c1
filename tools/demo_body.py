"""What the demo measures on a rig solved as bodies (``rigify_body``, issue 36), from both bakes'
keys: how far each pinned bone slips over its frames, the highest-priority goals' errors, the
lower goals' errors, and the largest joint change per frame beside what the animation needs.

Runs inside bpy with the add-on enabled, on the baked file ``tools/demo_bake.py`` saves (Quat
IK's action active, "Blender IK bake" beside it). Blender's IK has no pins: its "slip" is how far
the same bone drifts from where the pin holds it, on the same frames, with only the targets.
"""

from __future__ import annotations

import importlib
import itertools
from dataclasses import dataclass

import bpy
import numpy as np

from tools.demo_metrics import REACHED_ANGLE, REACHED_DISTANCE

BLENDER_ACTION = "Blender IK bake"  # tools/demo_bake.py names Blender's bake so
SOLVERS = ("quat_ik", "blender_ik")
PIN_GOAL = 1e-4  # a pin holds its bone to this share of its body's size (issue 36)


@dataclass(frozen=True)
class PinSlip:
    """One pin over its frames: the largest distance of its bone's head from where the pin
    holds it and the largest turn from the held rotation, per solver."""

    pin: str
    bone: str
    frames: tuple[int, int]
    body_size: float  # m: the longest root-to-tip path at rest of the chains holding the bone
    slip_mm: dict[str, float]
    turn_deg: dict[str, float]

    @property
    def slip_share(self) -> float:
        """Quat IK's slip over the body's size (the goal: at most PIN_GOAL)."""
        return self.slip_mm["quat_ik"] * 1e-3 / self.body_size


@dataclass(frozen=True)
class GoalErrors:
    """One chain's goal over the frames, per solver: tip distance (median, max) and, with an
    orientation goal, the largest angle; and the share of frames it is met (within the demo's
    1 mm and 1°)."""

    chain: str
    priority: int
    top: bool  # no chain of its body has a higher priority (a lower number)
    error_mm: dict[str, tuple[float, float]]
    orientation_deg: dict[str, float] | None
    met_share: dict[str, float]


@dataclass(frozen=True)
class BodyFigures:
    pins: tuple[PinSlip, ...]
    goals: tuple[GoalErrors, ...]
    bake_seconds: dict[str, float]
    limit_breach_deg: dict[str, float]  # largest joint angle outside OUR limits
    frames_breaching: dict[str, int]
    jump_deg: dict[str, tuple[float, int]]  # largest joint change per frame, and the frame
    needed_deg: tuple[float, int]  # what the animation needs: see ``needed_turns``

    @property
    def pin_slip_share(self) -> float:
        return max((p.slip_share for p in self.pins), default=0.0)

    def top_met_share(self, solver: str) -> float:
        """Share of frames where every top-priority goal is met."""
        top = [g for g in self.goals if g.top]
        return min((g.met_share[solver] for g in top), default=1.0)


def is_body_rig(ob) -> bool:
    """The rig has pins, or chains that share bones (solved as bodies)."""
    return len(ob.quat_ik.pins) > 0 or len(_bodies(ob)) < len(ob.quat_ik.chains)


def body_figures(run, stats: dict, module: str) -> BodyFigures:
    """Open ``run.baked_blend`` and measure both bakes (``run``: tools/demo_bake.RigRun;
    ``stats``: tools/demo_metrics.SolverStats by solver, for limits and jumps)."""
    compat = importlib.import_module(f"{module}.blender.compat")
    bpy.ops.wm.open_mainfile(filepath=str(run.baked_blend))
    scene = bpy.context.scene
    ob = next(o for o in bpy.data.objects if o.type == "ARMATURE" and len(o.quat_ik.chains))
    actions = {"quat_ik": ob.animation_data.action, "blender_ik": bpy.data.actions[BLENDER_ACTION]}
    pins = [p for p in ob.quat_ik.pins if p.enabled and p.bone]
    frames = run.frames
    held = {solver: np.zeros((len(pins), len(frames), 2)) for solver in SOLVERS}  # (slip m, turn rad)
    needed = np.zeros(len(frames))
    roots = {c.name: _root_parent(ob, c) for c in ob.quat_ik.chains}
    previous = None
    for solver in SOLVERS:
        compat.assign_action(ob, actions[solver])
        for f, frame in enumerate(frames):
            scene.frame_set(int(frame))
            for k, pin in enumerate(pins):
                if pin.frame_start <= frame <= pin.frame_end:
                    matrix = ob.pose.bones[pin.bone].matrix
                    slip = (matrix.to_translation() - _vector(pin.location)).length
                    turn = matrix.to_quaternion().rotation_difference(_quaternion(pin.rotation)).angle
                    held[solver][k, f] = (slip, min(turn, 2 * np.pi - turn))
            if solver == "quat_ik":
                goals = {name: _goal_seen_from_root(ob, chain, *roots[name]) for name, chain in _chains(ob)}
                if previous is not None:
                    needed[f] = max(_turn(previous[name], goals[name]) for name in goals)
                previous = goals
    compat.assign_action(ob, actions["quat_ik"])
    scene.frame_set(int(frames[0]))

    slips = tuple(
        PinSlip(
            pin=pin.name,
            bone=pin.bone,
            frames=(pin.frame_start, pin.frame_end),
            body_size=_body_size(ob, pin.bone),
            slip_mm={s: float(1e3 * np.max(held[s][k, :, 0])) for s in SOLVERS},
            turn_deg={s: float(np.degrees(np.max(held[s][k, :, 1]))) for s in SOLVERS},
        )
        for k, pin in enumerate(pins)
    )
    bodies = _bodies(ob)
    goals = []
    for i, info in enumerate(run.chains):
        chain = ob.quat_ik.chains[info.name]
        body = next(b for b in bodies if info.name in b)
        top = chain.priority == min(ob.quat_ik.chains[n].priority for n in body)
        errors = {s: np.linalg.norm(run.runs[s][i].effector - run.runs[s][i].target, axis=1) for s in SOLVERS}
        met = {s: errors[s] <= REACHED_DISTANCE for s in SOLVERS}
        orientation = None
        if info.orientation:
            angles = {s: run.runs[s][i].orientation_error for s in SOLVERS}
            orientation = {s: float(np.degrees(np.max(angles[s]))) for s in SOLVERS}
            met = {s: met[s] & (angles[s] <= REACHED_ANGLE) for s in SOLVERS}
        goals.append(
            GoalErrors(
                chain=info.name,
                priority=int(chain.priority),
                top=bool(top),
                error_mm={s: (float(1e3 * np.median(errors[s])), float(1e3 * np.max(errors[s]))) for s in SOLVERS},
                orientation_deg=orientation,
                met_share={s: float(np.mean(met[s])) for s in SOLVERS},
            )
        )
    worst = int(np.argmax(needed))
    return BodyFigures(
        pins=slips,
        goals=tuple(goals),
        bake_seconds={s: float(stats[s].bake_seconds) for s in SOLVERS},
        limit_breach_deg={s: float(stats[s].violation_max_deg) for s in SOLVERS},
        frames_breaching={s: int(stats[s].frames_violating) for s in SOLVERS},
        jump_deg={s: (float(stats[s].jump_max_deg), int(stats[s].jump_frame)) for s in SOLVERS},
        needed_deg=(float(np.degrees(needed[worst])), int(frames[worst])),
    )


def to_json(figures: BodyFigures) -> dict:
    return {
        "pin_goal_share": PIN_GOAL,
        "pin_slip_max_share": figures.pin_slip_share,
        "pins": [
            {
                "pin": p.pin,
                "bone": p.bone,
                "frames": list(p.frames),
                "body_size_m": p.body_size,
                "slip_max_mm": p.slip_mm,
                "turn_max_deg": p.turn_deg,
                "slip_share": p.slip_share,
            }
            for p in figures.pins
        ],
        "goals": [
            {
                "chain": g.chain,
                "priority": g.priority,
                "top": g.top,
                "error_mm_median_max": g.error_mm,
                "orientation_max_deg": g.orientation_deg,
                "met_share": g.met_share,
            }
            for g in figures.goals
        ],
        "top_met_share": {s: figures.top_met_share(s) for s in SOLVERS},
        "bake_seconds": figures.bake_seconds,
        "limit_breach_max_deg": figures.limit_breach_deg,
        "frames_breaching": figures.frames_breaching,
        "largest_joint_change_deg": {s: list(v) for s, v in figures.jump_deg.items()},
        "animation_needs_deg": list(figures.needed_deg),
    }


def markdown(name: str, figures: BodyFigures) -> str:
    """The summary's body table for one rig: one row per figure, Quat IK beside Blender's IK."""
    rows = [
        f"| `{name}` | Quat IK | Blender IK |",
        "|---|---|---|",
        f"| bake, s | {figures.bake_seconds['quat_ik']:.2f} | {figures.bake_seconds['blender_ik']:.2f} |",
    ]
    for p in figures.pins:
        rows.append(
            f"| pin {p.pin}: largest slip mm / turn ° (body {p.body_size:.2f} m) "
            f"| {p.slip_mm['quat_ik']:.3g} / {p.turn_deg['quat_ik']:.2g} "
            f"| {p.slip_mm['blender_ik']:.3g} / {p.turn_deg['blender_ik']:.2g} (no pins: targets only) |"
        )
    rows.append(f"| largest pin slip / body size (goal ≤ {PIN_GOAL:g}) | {figures.pin_slip_share:.2g} | – |")
    for g in figures.goals:
        level = "top" if g.top else "lower"
        orientation = {s: "" if g.orientation_deg is None else f", {g.orientation_deg[s]:.2g}° max" for s in SOLVERS}
        rows.append(
            f"| {g.chain} (priority {g.priority}, {level}): error mm median / max, met "
            + "".join(
                f"| {g.error_mm[s][0]:.3g} / {g.error_mm[s][1]:.3g}{orientation[s]}, {100 * g.met_share[s]:.0f}% "
                for s in SOLVERS
            )
            + "|"
        )
    rows.append(
        "| every top-priority goal met (share of frames) "
        + "".join(f"| {100 * figures.top_met_share(s):.0f}% " for s in SOLVERS)
        + "|"
    )
    rows.append(
        "| limit breach ° (max, frames) "
        + "".join(f"| {figures.limit_breach_deg[s]:.2g} ({figures.frames_breaching[s]}) " for s in SOLVERS)
        + "|"
    )
    rows.append(
        "| largest joint change per frame ° (frame) "
        + "".join(f"| {figures.jump_deg[s][0]:.1f} ({figures.jump_deg[s][1]}) " for s in SOLVERS)
        + "|"
    )
    rows.append(
        f"| what the animation needs per frame ° (frame) | {figures.needed_deg[0]:.1f} ({figures.needed_deg[1]}) | |"
    )
    return "\n".join(rows)


# --------------------------------------------------------------------------- helpers


def _chains(ob):
    return [(c.name, c) for c in ob.quat_ik.chains if c.enabled]


def _chain_bone_names(ob, chain) -> list[str]:
    """Tip to root."""
    names, bone = [], ob.data.bones.get(chain.tip_bone)
    while bone is not None and len(names) < chain.chain_length:
        names.append(bone.name)
        bone = bone.parent
    return names


def _bodies(ob) -> list[set[str]]:
    """Chain names grouped by shared bones (transitively), as the add-on groups bodies."""
    groups: list[tuple[set[str], set[str]]] = []
    for name, chain in _chains(ob):
        bones, members = set(_chain_bone_names(ob, chain)), {name}
        for other in [g for g in groups if g[0] & bones]:
            groups.remove(other)
            bones |= other[0]
            members |= other[1]
        groups.append((bones, members))
    return [members for _bones, members in groups]


def _body_size(ob, bone: str) -> float:
    """The longest path at rest from a root's head along the bones to a tip's tail, over the
    chains holding ``bone`` (the add-on's ``Body.size``)."""
    sizes = []
    for _name, chain in _chains(ob):
        names = _chain_bone_names(ob, chain)[::-1]
        if bone not in names:
            continue
        bones = [ob.data.bones[n] for n in names]
        path = sum((b.head_local - a.head_local).length for a, b in itertools.pairwise(bones))
        sizes.append(path + bones[-1].length)
    return max(sizes, default=1.0)


def _root_parent(ob, chain) -> tuple[str | None, str]:
    names = _chain_bone_names(ob, chain)
    root = ob.data.bones[names[-1]]
    return (root.parent.name if root.parent else None), root.name


def _goal_seen_from_root(ob, chain, parent: str | None, root: str):
    """The goal as the chain's root joint sees it, in its parent bone's frame: the unit
    direction to the target and, with an orientation goal, the target's rotation."""
    frame = ob.matrix_world @ (ob.pose.bones[parent].matrix if parent else ob.matrix_world.copy().identity())
    to_parent = frame.inverted()
    head = ob.matrix_world @ ob.pose.bones[root].head
    target = chain.target_object.matrix_world
    direction = to_parent.to_3x3() @ (target.translation - head)
    rotation = (to_parent @ target).to_quaternion() if chain.orientation_mode != "NONE" else None
    return direction.normalized(), rotation


def _turn(before, after) -> float:
    angle = before[0].angle(after[0], 0.0)
    if before[1] is not None and after[1] is not None:
        turn = before[1].rotation_difference(after[1]).angle
        angle = max(angle, min(turn, 2 * np.pi - turn))
    return float(angle)


def _vector(values):
    from mathutils import Vector

    return Vector(tuple(values))


def _quaternion(values):
    from mathutils import Quaternion

    return Quaternion(tuple(values))
