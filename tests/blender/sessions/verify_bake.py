"""Session: open a baked file and check chain bone keys cover a frame range and reach the target.

argv: WORKDIR BLEND ARMATURE TIP START END [SOLVER]  (SOLVER: the start of the solver path the
bake's Last Solve names, e.g. "native kernel" or "numpy (")
"""

import sys

import bpy

from tests.blender.sessions.common import Checks, effector_world, submodule

_workdir, blend, armature, tip, start, end = sys.argv[1:7]
start, end = int(start), int(end)
checks = Checks(f"verify bake in {blend}")
with checks.step("the bake keyed the tip over the range"):
    bpy.ops.wm.open_mainfile(filepath=blend)
    ob = bpy.data.objects[armature]
    chain = ob.quat_ik.chains[0]
    anim = ob.animation_data
    checks.check("the armature has an action", anim is not None and anim.action is not None, anim)
    curves = submodule("compat").all_action_fcurves(anim.action)
    frames = sorted({k.co[0] for fc in curves if f'"{tip}"' in fc.data_path for k in fc.keyframe_points})
    checks.check(f"tip keyed on frames {start}-{end}", frames == [float(f) for f in range(start, end + 1)], frames)
    checks.check("chain set to Manual by the bake", chain.mode == "MANUAL", chain.mode)
    if len(sys.argv) > 7:
        solver = sys.argv[7]
        checks.check(f"the bake solved on {solver}", chain.status_solver.startswith(solver), chain.status_solver)
with checks.step("baked frames reach the target"):
    target = chain.target_object
    for frame in (start, (start + end) // 2, end):
        bpy.context.scene.frame_set(frame)
        error = (effector_world(ob, tip) - target.matrix_world.translation).length
        checks.check(f"frame {frame} reaches the target", error < 1e-3, error)
checks.close()
