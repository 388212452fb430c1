"""Session started on user preferences saved with *Native Kernel* off (``preferences.py
--save-off``): the add-on's ``register()`` hands the saved choice to the solver, so the first
solve runs numpy without the preference being touched.

The Blender binary reads the user preferences, and enables the add-ons they list, at startup;
the bpy module does neither on import, so this session asks for it as startup does
(``wm.read_userpref``).

argv: WORKDIR
"""

import sys

import bpy

from tests.blender.sessions.common import Checks, add_chain, empty, reset_scene, straight_rig
from tools.blender_session import EXTENSION_ID, EXTENSION_REPO

NUMPY_BY_PREFERENCE = "numpy (kernel disabled in the add-on's preferences)"

checks = Checks(f"a saved Native Kernel preference at startup in Blender {bpy.app.version_string}")
with checks.step("the saved preferences enable the add-on"):
    names = (f"bl_ext.{EXTENSION_REPO}.{EXTENSION_ID}", EXTENSION_ID)
    if not any(name in sys.modules for name in names):
        bpy.ops.wm.read_userpref()
    package = next((name for name in names if name in sys.modules), None)
    checks.check("the saved preferences enabled the add-on", package is not None, names)
with checks.step("the preference saved off runs numpy from the start"):
    library = sys.modules[f"{package}.solver.native.library"]
    preferences = bpy.context.preferences.addons[package].preferences
    checks.check("the preference was saved off", preferences.native_kernel is False, preferences.native_kernel)
    status = library.load()[1]
    checks.check("the solver runs numpy from the start", status.describe() == NUMPY_BY_PREFERENCE, status.describe())

with checks.step("the first solve runs numpy"):
    reset_scene()
    ob = straight_rig("Arm", 3)
    empty("Target", (0.8, 0.4, 2.2))
    add_chain(ob, "B2", 3, "Target")
    bpy.ops.quat_ik.solve()
    recorded = ob.quat_ik.chains[0].status_solver
    checks.check("... and so does the first solve", recorded == NUMPY_BY_PREFERENCE, recorded)

with checks.step("turned on, the kernel runs"):
    preferences.native_kernel = True
    status = library.load()[1]
    checks.check("turned on, the kernel runs", status.active, status.describe())
checks.close()
