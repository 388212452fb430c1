"""quat-ik: quaternion CCD inverse kinematics with swing/twist reach-window joint limits.

This file holds registration only. Importing the package must not import ``bpy`` (the
solver in ``quat_ik_addon.solver`` is used without Blender), so every Blender-facing
module is imported inside ``register()`` / ``unregister()``.
"""

# Read by Blender 3.4-4.1, which load the package as a legacy add-on; 4.2+ read
# blender_manifest.toml instead and ignore this.
bl_info = {
    "name": "Quat IK",
    "author": "quat-ik developers",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > Quat IK",
    "description": "Quaternion CCD inverse kinematics with swing/twist reach-window joint limits",
    "category": "Animation",
}


def _registered_classes() -> tuple:
    """The one table of classes, in registration order (property groups before users)."""
    from .blender import (
        limits_panel,
        limits_properties,
        news,
        operators_bake,
        operators_chain,
        operators_convert_ik,
        operators_fit_limits,
        operators_jumps,
        operators_limit_tools,
        operators_limits,
        operators_mirror_chain,
        operators_pole,
        operators_presets,
        operators_rig_limits,
        operators_snap,
        operators_windows,
        panels,
        preferences,
        properties,
    )

    return (
        *preferences.CLASSES,
        *limits_properties.CLASSES,
        *properties.CLASSES,
        *operators_chain.CLASSES,
        *operators_pole.CLASSES,
        *operators_snap.CLASSES,
        *operators_mirror_chain.CLASSES,
        *operators_convert_ik.CLASSES,
        *operators_limits.CLASSES,
        *operators_limit_tools.CLASSES,
        *operators_rig_limits.CLASSES,
        *operators_fit_limits.CLASSES,
        *operators_presets.CLASSES,
        *operators_windows.CLASSES,
        *operators_bake.CLASSES,
        *operators_jumps.CLASSES,
        *news.CLASSES,
        *panels.CLASSES,
        *limits_panel.CLASSES,
    )


def register() -> None:
    import bpy

    from .blender import handlers, limits_properties, menus, overlay_draw, overrides, preferences, properties

    for cls in _registered_classes():
        if issubclass(cls, bpy.types.PropertyGroup):
            overrides.make_overridable(cls)
        bpy.utils.register_class(cls)
    preferences.apply_stored()  # before anything can solve (see its docstring for why here)
    properties.attach()
    limits_properties.attach()
    menus.register()
    handlers.register()
    overlay_draw.register()


def unregister() -> None:
    import bpy

    from .blender import handlers, limits_properties, menus, overlay_draw, preferences, properties

    overlay_draw.unregister()
    handlers.unregister()
    menus.unregister()
    limits_properties.detach()
    properties.detach()
    for cls in reversed(_registered_classes()):
        bpy.utils.unregister_class(cls)
    preferences.forget()
