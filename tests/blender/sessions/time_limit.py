"""Session: a chain's Time Limit cuts Solve Now's restarts short, keeps the best pose found and
says so in Last Solve; a limit that lasts changes nothing."""

import math

import bpy

from tests.blender.sessions.common import Checks, add_chain, empty, reset_scene, straight_rig

checks = Checks("the Time Limit of a solve")
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

checks.check("Solve Now runs", bpy.ops.quat_ik.solve() == {"FINISHED"})
checks.check(
    "within the limit every restart round runs", chain.status_restarts == chain.restarts, chain.status_restarts
)
checks.check("and nothing is said of the limit", "Time Limit" not in chain.status_message, chain.status_message)

chain.time_limit = 1e-6
checks.check("Solve Now runs with a spent limit", bpy.ops.quat_ik.solve() == {"FINISHED"})
checks.check("no restart round starts", chain.status_restarts == 0, chain.status_restarts)
checks.check("Last Solve says the limit stopped it", "Time Limit" in chain.status_message, chain.status_message)
checks.check(
    "the pose is written and finite",
    all(all(math.isfinite(v) for v in bone.rotation_quaternion) for bone in ob.pose.bones),
)
checks.close()
