"""Session: random bad input, one or two faults at a time, through Solve Now, Bake and Live.

Each of 60 cases builds a small rig (a hips bone and a three-bone chain with ball, hinge and
free limits, reaching for an empty), breaks one or two things drawn from the list below, and
runs Solve Now, a five-frame Bake and a Live update. Whatever the fault, each operator either
finishes with every channel finite, or fails with a message and leaves the scene as it was;
Live never raises out of its handler (the session bootstrap fails the run if one does) and
leaves every channel finite.

argv: WORKDIR
"""

import math

import bpy
import numpy as np
from mathutils import Vector

from tests.blender.sessions.common import (
    Checks,
    add_chain,
    channels_finite,
    empty,
    make_rig,
    pose_mode,
    reset_scene,
    scene_snapshot,
    snapshot_difference,
)

checks = Checks("random bad input: finish finite, or fail clearly with nothing changed")
CASES = 60
NAN, INF = float("nan"), float("inf")


def make_case():
    reset_scene()
    ob = make_rig(
        "Rig",
        [((0, 0, 1), (0, 0.1, 2)), ((0, 0.1, 2), (0, 0, 3)), ((0, 0, 3), (0, 0.1, 3.8))],
        parent_of_first="Hips",
        extra_bones=[("Hips", (0, 0, 0), (0, 0, 1), None)],
    )
    target = empty("Target", (0.6, 0.4, 2.9))
    pole = empty("Pole", (0.0, 2.0, 2.0))
    add_chain(ob, "B2", 3, "Target", mode="MANUAL")
    limits = [pb.quat_ik for pb in (ob.pose.bones[f"B{i}"] for i in range(3))]
    limits[0].joint_type = "BALL"
    window = limits[0].windows.add()
    window.shape, window.half_angle = "CONE", math.radians(60.0)
    limits[0].use_twist_range = True
    limits[1].joint_type, limits[1].hinge_axis = "HINGE", "X"
    limits[1].hinge_min, limits[1].hinge_max = 0.0, math.radians(140.0)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 5
    for frame in (1, 5):
        target.location = (0.6, 0.4 + 0.1 * frame, 2.9)
        target.keyframe_insert("location", frame=frame)
    return ob, ob.quat_ik.chains[0], target, pole, limits


def polygon(window, corners) -> None:
    window.shape = "POLYGON"
    window.vertices.clear()
    for corner in corners:
        window.vertices.add().angles = corner


# Each fault breaks one thing, as a user, a script or a damaged file might.
FAULTS = {
    "target at NaN": lambda ob, chain, target, pole, limits: setattr(target, "location", (NAN, 0.0, 2.0)),
    "target at infinity": lambda ob, chain, target, pole, limits: setattr(target, "location", (INF, 0.0, 2.0)),
    "target scaled to nothing": lambda ob, chain, target, pole, limits: setattr(target, "scale", (0.0, 0.0, 0.0)),
    "orientation from a target scaled to nothing": lambda ob, chain, target, pole, limits: (
        setattr(target, "scale", (0.0, 1.0, 1.0)),
        setattr(chain, "orientation_mode", "MATCH_TARGET"),
    ),
    "armature flat on X": lambda ob, chain, target, pole, limits: setattr(ob, "scale", (0.0, 1.0, 1.0)),
    "armature scaled to 1e-30": lambda ob, chain, target, pole, limits: setattr(ob, "scale", (1e-30,) * 3),
    "armature at NaN": lambda ob, chain, target, pole, limits: setattr(ob, "location", (NAN, 0.0, 0.0)),
    "chain longer than the bones": lambda ob, chain, target, pole, limits: setattr(chain, "chain_length", 50),
    "tip bone missing": lambda ob, chain, target, pole, limits: setattr(chain, "tip_bone", "Missing"),
    "target bone missing": lambda ob, chain, target, pole, limits: (
        setattr(chain, "target_object", ob),
        setattr(chain, "target_bone", "Nope"),
    ),
    "target a bone of the chain": lambda ob, chain, target, pole, limits: (
        setattr(chain, "target_object", ob),
        setattr(chain, "target_bone", "B1"),
    ),
    "no target": lambda ob, chain, target, pole, limits: setattr(chain, "target_object", None),
    "window centre zero": lambda ob, chain, target, pole, limits: setattr(limits[0].windows[0], "center", (0, 0, 0)),
    "window centre NaN": lambda ob, chain, target, pole, limits: setattr(limits[0].windows[0], "center", (NAN, 1, 0)),
    "polygon of two corners": lambda ob, chain, target, pole, limits: polygon(limits[0].windows[0], ((0.3, 0.3),) * 2),
    "polygon with a dent": lambda ob, chain, target, pole, limits: polygon(
        limits[0].windows[0], ((0.5, 0.5), (0.0, 0.1), (-0.5, 0.5), (-0.5, -0.5), (0.5, -0.5))
    ),
    "polygon all in one point": lambda ob, chain, target, pole, limits: polygon(
        limits[0].windows[0], ((0.2, 0.2),) * 4
    ),
    "hinge about a zero axis": lambda ob, chain, target, pole, limits: (
        setattr(limits[1], "hinge_axis", "CUSTOM"),
        setattr(limits[1], "hinge_custom_axis", (0.0, 0.0, 0.0)),
    ),
    "twist reference zero": lambda ob, chain, target, pole, limits: (
        setattr(limits[0], "use_twist_reference", True),
        setattr(limits[0], "twist_reference", (0.0, 0.0, 0.0, 0.0)),
    ),
    "hips posed to scale 0": lambda ob, chain, target, pole, limits: setattr(
        ob.pose.bones["Hips"], "scale", (0.0, 0.0, 0.0)
    ),
    "chain bone scaled unevenly": lambda ob, chain, target, pole, limits: setattr(
        ob.pose.bones["B1"], "scale", (1.0, 2.0, 0.5)
    ),
    "chain bone quaternion zero": lambda ob, chain, target, pole, limits: setattr(
        ob.pose.bones["B1"], "rotation_quaternion", (0.0, 0.0, 0.0, 0.0)
    ),
    "chain bone axis-angle with no axis": lambda ob, chain, target, pole, limits: (
        setattr(ob.pose.bones["B0"], "rotation_mode", "AXIS_ANGLE"),
        setattr(ob.pose.bones["B0"], "rotation_axis_angle", (1.0, 0.0, 0.0, 0.0)),
    ),
    "chain bone Euler NaN": lambda ob, chain, target, pole, limits: (
        setattr(ob.pose.bones["B2"], "rotation_mode", "XYZ"),
        setattr(ob.pose.bones["B2"], "rotation_euler", (NAN, 0.0, 0.0)),
    ),
    "pole on the target": lambda ob, chain, target, pole, limits: (
        setattr(chain, "pole_object", pole),
        setattr(pole, "location", target.location),
    ),
    "pole on the root": lambda ob, chain, target, pole, limits: (
        setattr(chain, "pole_object", pole),
        setattr(pole, "location", (0.0, 0.0, 1.0)),
    ),
    "effector offset 1e30": lambda ob, chain, target, pole, limits: setattr(chain, "effector_offset", (0, 1e30, 0)),
    "one iteration, no tolerance": lambda ob, chain, target, pole, limits: (
        setattr(chain, "iterations", 1),
        setattr(chain, "tolerance", 0.0),
    ),
}


def finite_unless_given(ob, given: bool) -> bool:
    """Every channel finite, unless the fault itself put a NaN in one (then it must stay NaN, untouched)."""
    return channels_finite(ob) or given


def run_operator(label: str, operator, ob, nan_given: bool, **kwargs) -> None:
    before = scene_snapshot()
    try:
        result = operator(**kwargs)
    except RuntimeError as error:  # the operator's ERROR report
        message = str(error).strip()
        checks.check(f"{label}: fails with a message", bool(message), message)
        difference = snapshot_difference(before, scene_snapshot())
        checks.check(f"{label}: failed with the scene unchanged", not difference, difference)
        return
    checks.check(
        f"{label}: finished, every channel finite",
        result == {"FINISHED"} and finite_unless_given(ob, nan_given),
        result,
    )


def run_case(case: int, chosen: list[str]) -> None:
    ob, chain, target, pole, limits = make_case()
    for name in chosen:
        FAULTS[name](ob, chain, target, pole, limits)
    nan_given = not channels_finite(ob)
    label = f"case {case} ({' + '.join(chosen)})"
    pose_mode(ob, "B2")
    run_operator(f"{label}, Solve Now", bpy.ops.quat_ik.solve, ob, nan_given)
    run_operator(f"{label}, Bake", bpy.ops.quat_ik.bake, ob, nan_given, frame_start=1, frame_end=5)
    chain.mode = "LIVE"
    target.location = Vector(target.location) + Vector((0.05, 0.0, 0.0))
    bpy.context.view_layer.update()
    checks.check(f"{label}, Live: every channel finite", finite_unless_given(ob, nan_given))
    checks.check(
        f"{label}, Live: a failed solve says why",
        chain.status_solved or bool(chain.status_message),
        (chain.status_solved, chain.status_message),
    )


rng = np.random.default_rng(7)
names = sorted(FAULTS)
with checks.step("every fault alone"):
    for case in range(len(names)):
        run_case(case, [names[case]])
with checks.step("random pairs of faults"):
    for case in range(len(names), CASES):
        run_case(case, list(rng.choice(names, size=2, replace=False)))

checks.close()
