"""Our entries in Blender's own menus: one table, added on register and removed on unregister."""

import bpy


def _entries():
    """(Blender menu class name, our draw function) pairs."""
    from . import limits_panel, panels

    return (("VIEW3D_MT_pose_ik", panels.draw_pose_ik_menu), ("VIEW3D_MT_pose", limits_panel.draw_pose_menu))


def register() -> None:
    for name, draw in _entries():
        menu = getattr(bpy.types, name, None)
        if menu is not None:
            menu.append(draw)


def unregister() -> None:
    for name, draw in _entries():
        menu = getattr(bpy.types, name, None)
        if menu is not None:
            menu.remove(draw)
