"""Session: the add-on preference *Native Kernel* switches the solver between the native kernel
and numpy, both ways; the preferences and each chain's Last Solve box say which path ran.

argv: WORKDIR [--save-off]  (the latter leaves the preference off and saves the user
preferences, for a later session started on them)
"""

import sys
from types import SimpleNamespace

import bpy

from tests.blender.sessions.common import Checks, add_chain, addon, empty, reset_scene, straight_rig, submodule

NUMPY_BY_PREFERENCE = "numpy (kernel disabled in the add-on's preferences)"


class LabelLayout:
    """A stand-in ``UILayout`` that keeps the text of every label drawn into it or its parts."""

    def __init__(self, texts: list[str] | None = None) -> None:
        self.texts = [] if texts is None else texts

    def label(self, *, text: str = "", **_options) -> None:
        self.texts.append(text)

    def __getattr__(self, name):  # row(), column(), box(), prop(), operator(), ...
        return lambda *_arguments, **_options: LabelLayout(self.texts)


def drawn_text(cls, context, **attributes) -> str:
    """The labels ``cls.draw`` shows, joined by spaces (a long line wraps over several labels)."""
    layout = LabelLayout()
    cls.draw(SimpleNamespace(layout=layout, **attributes), context)
    return " ".join(layout.texts)


checks = Checks("the Native Kernel preference")
package = addon().__name__
library = sys.modules[f"{package}.solver.native.library"]
preferences_module = submodule("ui.preferences")
panels = submodule("ui.panels")
preferences = bpy.context.preferences.addons[package].preferences

reset_scene()
ob = straight_rig("Arm", 3)
target = empty("Target", (0.8, 0.4, 2.2))
add_chain(ob, "B2", 3, "Target")
chain = ob.quat_ik.chains[0]


def solve_and_read(label: str) -> tuple[str, str, str]:
    """Move the target, Solve Now, then what the chain records, its Last Solve box shows and the
    preferences show."""
    target.location.x -= 0.2
    checks.check(f"{label}: Solve Now runs", bpy.ops.quat_ik.solve() == {"FINISHED"})
    last_solve = drawn_text(panels.QUATIK_PT_chain_status, bpy.context)
    shown = drawn_text(preferences_module.QuatIKPreferences, bpy.context, native_kernel=preferences.native_kernel)
    return chain.status_solver, last_solve, shown


with checks.step("the kernel runs with the preference on by default"):
    checks.check("the preference is on by default", preferences.native_kernel is True, preferences.native_kernel)
    status = library.load()[1]
    checks.check("with it on, the kernel runs (it loads on this machine)", status.active, status.describe())

with checks.step("turned off, numpy runs and each place says so"):
    preferences.native_kernel = False
    status = library.load()[1]
    checks.check("turned off, the solver runs numpy", status.describe() == NUMPY_BY_PREFERENCE, status.describe())
    recorded, last_solve, shown = solve_and_read("off")
    checks.check("... the chain records numpy and why", recorded == NUMPY_BY_PREFERENCE, recorded)
    checks.check("... Last Solve names it", f"Solver: {NUMPY_BY_PREFERENCE}" in last_solve, last_solve)
    checks.check("... the preferences say so", f"Solver: {NUMPY_BY_PREFERENCE}" in shown, shown)

with checks.step("turned on again, the kernel runs and each place says so"):
    preferences.native_kernel = True
    status = library.load()[1]
    checks.check("turned on again, the kernel runs", status.active, status.describe())
    recorded, last_solve, shown = solve_and_read("on")
    checks.check("... the chain records the kernel", recorded == "native kernel", recorded)
    checks.check("... Last Solve names it", "Solver: native kernel" in last_solve, last_solve)
    checks.check("... the preferences say which", f"Solver: {status.describe()}" in shown, shown)

with checks.step("a locked channel runs numpy and says why"):
    ob.pose.bones["B1"].lock_rotation[0] = True  # a lock wraps the limit in one the kernel does not know
    recorded, last_solve, _shown = solve_and_read("a locked channel")
    checks.check(
        "... the chain records numpy and why", recorded.startswith("numpy (locked rotation channels"), recorded
    )
    checks.check("... Last Solve names it", "Solver: numpy (locked rotation channels" in last_solve, last_solve)

if "--save-off" in sys.argv:
    preferences.native_kernel = False
    bpy.ops.wm.save_userpref()
checks.close()
