"""Session: a chain's Time Limit cuts Solve Now's restarts short, keeps the best pose found and
says so in Last Solve; a limit that lasts changes nothing."""

import math

import bpy

from tests.blender.sessions.common import Checks, add_chain, empty, reset_scene, straight_rig


def _fcurves(ob):
    """The armature's action's F-curves, in every Blender this runs in (``compat`` knows how)."""
    from tests.blender.sessions.common import submodule

    return list(submodule("compat").object_fcurves(ob.animation_data.action, ob).values())


checks = Checks("the Time Limit of a solve")
with checks.step("a new chain has a time limit and restarts"):
    reset_scene()
    ob = straight_rig("Arm", 3)
    for bone in ob.pose.bones:  # hinges of 20°: the target below is within the arm's length, not its limits
        limits = bone.quat_ik
        limits.joint_type, limits.hinge_axis = "HINGE", "X"
        limits.use_hinge_range, limits.hinge_min, limits.hinge_max = True, 0.0, math.radians(20.0)
    empty("Target", (0.0, 2.0, 0.5))
    add_chain(ob, "B2", 3, "Target")
    chain = ob.quat_ik.chains[0]
    checks.check("a new chain's Time Limit is 0.25 s", math.isclose(chain.time_limit, 0.25, abs_tol=1e-6))
    checks.check("restarts are on", chain.restarts == 4, chain.restarts)

with checks.step("within the limit every restart round runs"):
    checks.check("Solve Now runs", bpy.ops.quat_ik.solve() == {"FINISHED"})
    checks.check(
        "within the limit every restart round runs", chain.status_restarts == chain.restarts, chain.status_restarts
    )
    checks.check("and nothing is said of the limit", "Time Limit" not in chain.status_message, chain.status_message)

with checks.step("a spent limit stops the restarts and says so"):
    chain.time_limit = 1e-6
    checks.check("Solve Now runs with a spent limit", bpy.ops.quat_ik.solve() == {"FINISHED"})
    checks.check("no restart round starts", chain.status_restarts == 0, chain.status_restarts)
    checks.check("Last Solve says the limit stopped it", "Time Limit" in chain.status_message, chain.status_message)
    checks.check(
        "the pose is written and finite",
        all(all(math.isfinite(v) for v in bone.rotation_quaternion) for bone in ob.pose.bones),
    )

# A bake: its Time Limit (0: none) bounds each chain's searches; the frames are all keyed.
with checks.step("a bake's time limit bounds its searches"):
    target = bpy.data.objects["Target"]
    for frame, x in ((1, -0.5), (12, 0.5)):
        target.location.x = x
        target.keyframe_insert("location", frame=frame)
    chain.time_limit = 0.25
    for limit, said in ((0.0, False), (1e-6, True)):
        result = bpy.ops.quat_ik.bake(frame_start=1, frame_end=12, time_limit=limit)
        checks.check(f"a bake with Time Limit {limit} runs", result == {"FINISHED"}, result)
        checks.check(
            f"Last Solve {'says' if said else 'does not say'} the bake's Time Limit stopped it",
            ("Time Limit" in chain.status_message) == said,
            chain.status_message,
        )
        curves = ob.animation_data.action and [c for c in _fcurves(ob) if "rotation_quaternion" in c.data_path]
        checks.check("every frame is keyed", bool(curves) and all(len(c.keyframe_points) == 12 for c in curves))
checks.close()
