"""The Solver settings as the panel and the Add Chain dialog draw them."""

from __future__ import annotations

import bpy


def draw_solver_settings(layout, data) -> None:
    """The Solver settings of a chain (``data``: the panel's chain) or of the Add Chain dialog."""
    col = layout.column(align=True)
    col.prop(data, "iterations")
    col.prop(data, "tolerance")
    col = layout.column()
    col.prop(data, "sweep_order")
    col.prop(data, "clamp_mode")
    col.prop(data, "method")
    col.prop(data, "restarts")
    col.prop(data, "time_limit")
    row = col.row(align=True)
    row.prop(data, "use_learned_start")
    if isinstance(data, bpy.types.PropertyGroup):  # the panel, not the add-chain dialog
        from ..chains import learned_store  # (imported on first draw: the solver behind it is heavy)

        row.operator("quat_ik.learn_start_poses", text="", icon="FILE_REFRESH")
        col.label(text=f"Start poses: {learned_store.describe(data)}")
        body = learned_store.describe_body(data)
        if body is not None:
            col.label(text=f"Start poses, {body}")
