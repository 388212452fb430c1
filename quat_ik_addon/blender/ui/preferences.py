"""The add-on's preferences (Edit > Preferences > Add-ons > Quat IK): the native kernel switch.

The solver runs its inner loops in a C kernel where one loads for this platform and passes its
self-check, else on numpy (``solver/native/library.py``). The checkbox lets a user choose numpy
(the reference: the same answers, slower), and the line below it says which path runs and why.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ...solver.native import library

# The name Blender files this add-on's preferences under: the top package, whatever it is called
# where it runs (``bl_ext.<repo>.quat_ik`` as an extension in 4.2+, ``quat_ik`` as a legacy add-on
# in 3.4-4.1, ``quat_ik_addon`` when ``python -m quat_ik_addon`` registers the checkout itself).
ADDON_PACKAGE = __package__.rsplit(".", 2)[0]  # (this module lies in <package>.blender.ui)


def _native_kernel_changed(self, context) -> None:
    """Runs when the checkbox changes (a click, or a script setting it): tells the solver only.
    Must not touch scene data; the next solve, and the status line, see the new choice."""
    library.set_preference(self.native_kernel)


class QuatIKPreferences(bpy.types.AddonPreferences):
    """Quat IK's preferences: which solver path runs"""

    bl_idname = ADDON_PACKAGE

    native_kernel: BoolProperty(
        name="Native Kernel",
        description=(
            "Solve with the add-on's compiled C kernel where it loads on this computer. "
            "Off: the numpy solver, which gives the same answers, more slowly"
        ),
        default=True,
        update=_native_kernel_changed,
    )

    def draw(self, context):
        layout = self.layout
        layout.prop(self, "native_kernel")
        status = library.load()[1]
        layout.label(text=f"Solver: {status.describe()}", icon="CHECKMARK" if status.active else "INFO")


def stored_native_kernel() -> bool:
    """The stored checkbox, or True (its default) where Blender holds no preferences for the
    add-on: just enabled (its entry is made after ``register()``), or registered by
    ``python -m quat_ik_addon`` without being enabled."""
    addon = bpy.context.preferences.addons.get(ADDON_PACKAGE)
    preferences = getattr(addon, "preferences", None)
    return True if preferences is None else bool(preferences.native_kernel)


def apply_stored() -> None:
    """Hand the stored choice to the solver. Runs in ``register()``, straight away.

    ``bpy.context`` in ``register()`` is restricted in 3.4 (no scene, no window), but
    ``bpy.context.preferences`` is not: Blender reads the user preferences, this add-on's stored
    values with them, before it enables the add-ons they list. So reading here sees the saved
    choice at startup in 3.4 and 5.0 alike (tests/blender/test_preferences.py starts sessions
    on saved preferences to check it). A ``bpy.app.timers`` callback would not do: timers never
    run in background mode, where render-farm bakes run. Applying it lazily on the first solve
    would need every solving entry point to remember to.
    """
    library.set_preference(stored_native_kernel())


def forget() -> None:
    """Runs in ``unregister()``: the solver, still importable without the add-on, decides alone again."""
    library.set_preference(True)


CLASSES = (QuatIKPreferences,)
