"""The joint-limit overlay: a POST_VIEW draw callback that uploads and draws the meshes
``solver.limits.overlay_geometry`` builds (reach windows, twist arc, hinge fan, bone direction).

Three stages, so everything but the last runs (and is tested) without a GPU:

1. :func:`overlay_bones` — which pose bones to draw: the active bone of the active armature
   in Pose Mode (also in Object Mode when asked), or every bone of the Quat IK chains
   through it. Nothing for other objects or modes.
2. :func:`bone_overlay` — one bone's meshes in its limit frame (joint at the origin, bone
   along +Y) plus the 4×4 world matrix of that frame. The settings are validated into a
   rig-spec limit once per distinct settings (``limits.conversion.cached_spec_limit``). Window, outline and
   hinge meshes depend only on the limit and the bone length, so they are cached
   (:data:`_static_cache`); the twist arc and direction follow the pose and are rebuilt
   when it changed, exactly as :func:`solver.limits.overlay_geometry.limit_overlay` builds them (a test
   compares the two).
3. :func:`draw_commands` turns overlays into plain draw commands (primitive, vertices,
   indices, RGBA, line width, matrix) and :func:`execute_commands` uploads them as
   ``gpu`` batches (cached per static mesh) and draws them.

The draw callback never raises (a failure is printed once per message) and costs one
property read when the overlay is off. Shaders are created on first draw, never at import
or register: in background mode the ``gpu`` module raises until something has rendered.
Builtin shaders ``UNIFORM_COLOR`` and ``POLYLINE_UNIFORM_COLOR`` exist in 3.4 to 5.0.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import bpy
import numpy as np

from ..runtime.state import session

# Keyword arguments of solver.limits.overlay_geometry.limit_overlay this module draws with (its defaults).
SIZES = {"window_scale": 0.6, "twist_radius_scale": 0.15, "twist_height_scale": 0.3, "segments": 48}
AT_LIMIT_TOLERANCE = math.radians(1.0)

# RGB per colour role; surfaces take the opacity setting, lines are opaque.
COLORS = {
    "window": (0.25, 0.6, 1.0),
    "window_outline": (0.35, 0.75, 1.0),
    "twist": (1.0, 0.8, 0.2),
    "hinge": (0.35, 0.95, 0.45),
    "direction": (1.0, 1.0, 1.0),
    "warning": (1.0, 0.22, 0.12),
}
LINE_WIDTHS = {"window_outline": 1.5, "twist": 1.5, "hinge": 1.5, "direction": 3.0, "warning": 3.0}

_handle = None  # the SpaceView3D draw handler while the add-on is enabled (tests check it is gone after)
stats: Counter = Counter()  # "calls", "drawn" (callbacks that drew), "bones", "errors", "batches_built"
_static_cache: dict = {}  # (limit spec, bone length) -> (solver limit, static meshes); pure numpy
_batch_cache: dict = {}  # (static key, mesh index, primitive) -> gpu batch; freed on unregister
_pose_cache: dict = {}  # (object, bone) -> ((static key, pose), (pose meshes, contact)) of the last redraw
_shaders: dict = {}
_STATIC_CACHE_SIZE = 256


@dataclass(frozen=True)
class BoneOverlay:
    """One bone's overlay: meshes in the limit frame and the frame's world matrix."""

    bone_name: str
    matrix_world: object  # mathutils.Matrix 4×4: limit frame -> world
    static_key: tuple  # identifies static_meshes in the caches
    static_meshes: tuple  # OverlayMesh: windows, outlines, hinge fan (cached)
    pose_meshes: tuple  # OverlayMesh: twist arc and marker, direction (rebuilt each redraw)
    at_limit: bool
    swing_at_limit: bool


@dataclass(frozen=True)
class DrawCommand:
    """One batch to draw: the GPU boundary (everything up to here is plain data)."""

    primitive: str  # "TRIS" or "LINES"
    vertices: np.ndarray  # float32 (K, 3), limit frame
    indices: np.ndarray  # int32 (N, 3) or (N, 2)
    color: tuple[float, float, float, float]
    line_width: float
    matrix_world: object
    cache_key: tuple | None  # None: rebuilt every redraw (pose meshes)


# --------------------------------------------------------------------------- registration


def register() -> None:
    """Install the draw callback once (a second register() replaces, never duplicates, it)."""
    global _handle
    unregister()
    _handle = bpy.types.SpaceView3D.draw_handler_add(draw_callback, (), "WINDOW", "POST_VIEW")


def unregister() -> None:
    """Remove the draw callback and drop every cached batch and shader."""
    global _handle
    if _handle is not None:
        handle, _handle = _handle, None
        bpy.types.SpaceView3D.draw_handler_remove(handle, "WINDOW")
    _batch_cache.clear()
    _shaders.clear()
    _static_cache.clear()
    _pose_cache.clear()


# --------------------------------------------------------------------------- the callback


def draw_callback() -> None:
    """Runs in every 3D view's main region after the scene is drawn (POST_VIEW), in view space.

    Must never raise into Blender and must not change any data; with the overlay off it reads
    one property and returns.
    """
    stats["calls"] += 1
    try:
        context = bpy.context
        settings = getattr(context.scene, "quat_ik", None)
        if settings is None or not settings.show_limit_overlay:
            return
        space = getattr(context, "space_data", None)
        overlay = getattr(space, "overlay", None)
        if overlay is not None and not overlay.show_overlays:
            return
        overlays = [item for item in (bone_overlay(ob, pb) for ob, pb in overlay_bones(context)) if item]
        if not overlays:
            return
        execute_commands(draw_commands(overlays, settings), in_front=settings.overlay_in_front)
        stats["drawn"] += 1
        stats["bones"] += len(overlays)
    except Exception as error:  # a draw callback must never raise into Blender
        stats["errors"] += 1
        session.report_once(("overlay",), f"joint-limit overlay failed: {error!r}")


# --------------------------------------------------------------------------- stage 1: which bones


def overlay_bones(context) -> list:
    """(armature object, pose bone) pairs to draw, root first; [] when the overlay is off."""
    settings = getattr(context.scene, "quat_ik", None)
    if settings is None or not settings.show_limit_overlay:
        return []
    ob = context.active_object
    if ob is None or ob.type != "ARMATURE" or ob.pose is None:
        return []
    if ob.mode != "POSE" and not (ob.mode == "OBJECT" and settings.overlay_outside_pose_mode):
        return []
    active = ob.data.bones.active
    if active is None or active.name not in ob.pose.bones:
        return []
    names = [active.name]
    if settings.overlay_chain_bones:
        names = chain_bone_names(ob, active.name) or names
    return [(ob, ob.pose.bones[name]) for name in names]


def chain_bone_names(ob, bone_name: str) -> list[str]:
    """Bones of every Quat IK chain of ``ob`` through ``bone_name``, root first, no repeats."""
    found: list[str] = []
    for chain in ob.quat_ik.chains:
        bone = ob.data.bones.get(chain.tip_bone)
        lineage = []
        while bone is not None and len(lineage) < chain.chain_length:
            lineage.append(bone.name)
            bone = bone.parent
        if bone_name in lineage:
            found.extend(name for name in reversed(lineage) if name not in found)
    return found


# --------------------------------------------------------------------------- stage 2: geometry


def bone_overlay(ob, pose_bone) -> BoneOverlay | None:
    """The bone's overlay meshes (limit frame) and frame matrix; None if its limits are invalid.

    Frame: ``matrix_world @ pose_bone.matrix @ pose_bone.matrix_basis⁻¹`` (the bone's pose
    matrix without its own pose transform, which is how ``solver.limits.overlay_geometry`` wants it).
    """
    from ..rig.rotation_modes import current_quaternion

    limit = _spec_limit_cached(pose_bone.quat_ik)
    if isinstance(limit, str):  # invalid: the panel says why; the overlay skips the bone
        session.report_once(("overlay", ob.name_full, pose_bone.name), f"not drawing '{pose_bone.name}': {limit}")
        return None
    length = float(pose_bone.bone.length)
    q = tuple(current_quaternion(pose_bone))
    static_key, solver, static = static_meshes(limit, length)
    bone_key = (ob.name_full, pose_bone.name)
    cached = _pose_cache.get(bone_key)
    if cached is not None and cached[0] == (static_key, q):
        pose, contact = cached[1]  # a redraw without a pose change (orbiting the view)
    else:
        pose, contact = pose_meshes(solver, q, length)
        if len(_pose_cache) >= _STATIC_CACHE_SIZE:
            _pose_cache.clear()
        _pose_cache[bone_key] = ((static_key, q), (pose, contact))
    matrix = ob.matrix_world @ pose_bone.matrix @ pose_bone.matrix_basis.inverted_safe()
    return BoneOverlay(
        bone_name=pose_bone.name,
        matrix_world=matrix,
        static_key=static_key,
        static_meshes=static,
        pose_meshes=pose,
        at_limit=contact.at_limit,
        swing_at_limit=contact.swing or contact.hinge,
    )


def _spec_limit_cached(limits):
    """The rig-spec limit of a bone's settings, or the error message of invalid settings."""
    from ..limits.conversion import cached_spec_limit

    try:
        return cached_spec_limit(limits)
    except ValueError as error:  # RigSpecError
        return str(error)


def static_meshes(limit, bone_length: float) -> tuple[tuple, object, tuple]:
    """(cache key, solver limit, window/outline/hinge meshes) for a rig-spec limit, cached."""
    from ...solver.limits.overlay_geometry import shape_meshes
    from ...solver.rig.spec_chain import solver_limit

    key = (limit, round(bone_length, 9))
    cached = _static_cache.get(key)
    if cached is None:
        solver = solver_limit(limit)
        radius = SIZES["window_scale"] * bone_length
        meshes = shape_meshes(solver, radius, SIZES["segments"])
        if len(_static_cache) >= _STATIC_CACHE_SIZE:
            _static_cache.clear()
            _batch_cache.clear()
        cached = _static_cache[key] = (solver, meshes)
    return key, cached[0], cached[1]


def pose_meshes(solver, pose_rotation, bone_length: float) -> tuple[tuple, object]:
    """(twist arc and marker, direction) for the current pose, and the limit contact.

    The same meshes ``solver.limits.overlay_geometry.limit_overlay`` builds for the pose (it rebuilds the
    windows too; this is its pose-dependent half).
    """
    from ...solver import quaternion as quat
    from ...solver.limits.overlay_geometry import direction_mesh, limit_contact, pose_twist_meshes

    q = quat.normalize(np.asarray(pose_rotation, dtype=np.float64))
    contact = limit_contact(solver, q, AT_LIMIT_TOLERANCE)
    radius = SIZES["twist_radius_scale"] * bone_length
    height = SIZES["twist_height_scale"] * bone_length
    meshes = list(pose_twist_meshes(solver, q, radius, height, contact.twist, SIZES["segments"]))
    role = "warning" if (contact.swing or contact.hinge) else "direction"
    meshes.append(direction_mesh(quat.rotate_y_axis(q), bone_length, role))
    return tuple(meshes), contact


# --------------------------------------------------------------------------- stage 3: draw commands


def draw_commands(overlays: list[BoneOverlay], settings) -> list[DrawCommand]:
    """Surfaces first (translucent), then lines, for every bone; plain data, no ``gpu``."""
    opacity = float(settings.overlay_opacity)
    surfaces, lines = [], []
    for overlay in overlays:
        meshes = [(mesh, (overlay.static_key, i)) for i, mesh in enumerate(overlay.static_meshes)]
        meshes += [(mesh, None) for mesh in overlay.pose_meshes]
        for mesh, key in meshes:
            role = mesh.color_role
            if role == "window_outline" and overlay.swing_at_limit:
                role = "warning"  # the joint sits on a window's rim
            rgb = COLORS.get(role, COLORS["direction"])
            if len(mesh.triangles) and opacity > 0.0:
                surfaces.append(
                    DrawCommand(
                        "TRIS",
                        mesh.vertices,
                        mesh.triangles,
                        (*rgb, opacity),
                        1.0,
                        overlay.matrix_world,
                        None if key is None else (*key, "TRIS"),
                    )
                )
            if len(mesh.lines):
                lines.append(
                    DrawCommand(
                        "LINES",
                        mesh.vertices,
                        mesh.lines,
                        (*rgb, 1.0),
                        LINE_WIDTHS.get(role, 1.5),
                        overlay.matrix_world,
                        None if key is None else (*key, "LINES"),
                    )
                )
    return surfaces + lines


def execute_commands(commands: list[DrawCommand], *, in_front: bool = True) -> None:
    """Upload (or reuse) a batch per command and draw it; restores the gpu state it changed."""
    import gpu

    shaders = _get_shaders()
    viewport = gpu.state.viewport_get()
    size = (float(max(viewport[2], 1)), float(max(viewport[3], 1)))
    previous = _state_get()
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_mask_set(False)
    gpu.state.depth_test_set("NONE" if in_front else "LESS_EQUAL")
    gpu.state.face_culling_set("NONE")
    try:
        for command in commands:
            shader = shaders[command.primitive]
            batch = _batch(shader, command)
            shader.bind()
            shader.uniform_float("color", command.color)
            if command.primitive == "LINES":
                shader.uniform_float("viewportSize", size)
                shader.uniform_float("lineWidth", command.line_width)
            with gpu.matrix.push_pop():
                gpu.matrix.multiply_matrix(command.matrix_world)
                batch.draw(shader)
    finally:
        _state_set(previous)


def _get_shaders() -> dict:
    if not _shaders:
        import gpu

        _shaders["TRIS"] = gpu.shader.from_builtin("UNIFORM_COLOR")
        _shaders["LINES"] = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    return _shaders


def _batch(shader, command: DrawCommand):
    from gpu_extras.batch import batch_for_shader

    if command.cache_key is not None:
        batch = _batch_cache.get(command.cache_key)
        if batch is not None:
            return batch
    batch = batch_for_shader(shader, command.primitive, {"pos": command.vertices}, indices=command.indices)
    stats["batches_built"] += 1
    if command.cache_key is not None:
        _batch_cache[command.cache_key] = batch
    return batch


def _state_get() -> tuple:
    import gpu

    state = gpu.state
    return (
        state.blend_get() if hasattr(state, "blend_get") else "NONE",
        state.depth_mask_get() if hasattr(state, "depth_mask_get") else True,
        state.depth_test_get() if hasattr(state, "depth_test_get") else "LESS_EQUAL",
        state.face_culling_get() if hasattr(state, "face_culling_get") else "NONE",
    )


def _state_set(previous: tuple) -> None:
    import gpu

    blend, depth_mask, depth_test, culling = previous
    gpu.state.blend_set(blend)
    gpu.state.depth_mask_set(depth_mask)
    gpu.state.depth_test_set(depth_test)
    gpu.state.face_culling_set(culling)
