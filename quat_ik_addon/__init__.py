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
    from .blender.chains import settings as chain_settings
    from .blender.limits import settings as limit_settings
    from .blender.operators import (
        bake,
        chain,
        convert_ik,
        fit_limits,
        jumps,
        limit_tools,
        limits,
        mirror_chain,
        pins,
        pole,
        presets,
        rig_limits,
        snap,
        windows,
    )
    from .blender.ui import limits_panel, news, panels, preferences

    return (
        *preferences.CLASSES,
        *limit_settings.CLASSES,
        *chain_settings.CLASSES,
        *chain.CLASSES,
        *pole.CLASSES,
        *pins.CLASSES,
        *snap.CLASSES,
        *mirror_chain.CLASSES,
        *convert_ik.CLASSES,
        *limits.CLASSES,
        *limit_tools.CLASSES,
        *rig_limits.CLASSES,
        *fit_limits.CLASSES,
        *presets.CLASSES,
        *windows.CLASSES,
        *bake.CLASSES,
        *jumps.CLASSES,
        *news.CLASSES,
        *panels.CLASSES,
        *limits_panel.CLASSES,
    )


def register() -> None:
    import bpy

    from .blender import overrides
    from .blender.chains import settings as chain_settings
    from .blender.limits import settings as limit_settings
    from .blender.runtime import handlers
    from .blender.ui import menus, overlays, preferences

    for cls in _registered_classes():
        if issubclass(cls, bpy.types.PropertyGroup):
            overrides.make_overridable(cls)
        bpy.utils.register_class(cls)
    preferences.apply_stored()  # before anything can solve (see its docstring for why here)
    chain_settings.attach()
    limit_settings.attach()
    menus.register()
    handlers.register()
    overlays.register()


def unregister() -> None:
    import bpy

    from .blender.chains import settings as chain_settings
    from .blender.limits import settings as limit_settings
    from .blender.runtime import handlers
    from .blender.ui import menus, overlays, preferences

    overlays.unregister()
    handlers.unregister()
    menus.unregister()
    limit_settings.detach()
    chain_settings.detach()
    for cls in reversed(_registered_classes()):
        bpy.utils.unregister_class(cls)
    preferences.forget()
