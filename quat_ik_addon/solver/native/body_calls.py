"""A body solve's stages on the native kernel (``qik_body_stage``): one crossing per stage.

``body/solve.py``'s ``_stage`` (the iterations, then the polish) runs here for every row at
once; Python keeps the rest (the stages' order, restarts, the result). The numpy stage is the
reference. A body with a limit the kernel does not know, the kernel switched off
(``BodySettings(kernel="numpy")``, ``QUAT_IK_NATIVE=0``, the add-on preference), or a row the
kernel could not finish all mean ``None``, and the caller runs the numpy stage.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from . import abi, library
from .packing import limit_tables, unsupported_reason

if TYPE_CHECKING:  # the body package calls the kernel through this module: no import at run time
    from ..body.goals import Tasks
    from ..body.settings import BodySettings
    from ..body.skeleton import Body

Array = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class PackedBody:
    """A body's ``abi.BodyStruct`` (with its limits' ``abi.ChainStruct``) and what they point into."""

    struct: abi.BodyStruct
    pointer: ctypes._Pointer
    arrays: tuple[object, ...]


_packed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Body -> PackedBody or None
_packing = threading.Lock()


def _doubles(values, shape: tuple[int, ...]) -> Array:
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(shape))


def _int32(values) -> NDArray[np.int32]:
    return np.ascontiguousarray(np.asarray(values, dtype=np.int32).reshape(-1))


def pack_body(body: Body) -> PackedBody | None:
    """The body's structs, built once per body object; None for a body the kernel cannot run."""
    with _packing:
        if body not in _packed:
            _packed[body] = _pack(body) if unsupported_reason(body) is None else None
        return _packed[body]


def _pack(body: Body) -> PackedBody:
    n = body.n_bones
    joints, window_table, corner_directions, edge_normals = limit_tables(body.limits, None)
    rest_rotations = _doubles(body.rest_rotations, (n, 4))
    rest_offsets = _doubles(body.rest_offsets, (n, 3))
    unused_steps = np.zeros((n, 3))  # the limit table's chain: only its joints and windows are read
    empty = ctypes.POINTER(ctypes.c_double)()
    limits = abi.ChainStruct(
        n_bones=n,
        n_windows=len(window_table),
        n_corners=len(corner_directions),
        has_shares=0,
        rest_rotations=rest_rotations.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        rest_offsets=rest_offsets.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        step_vectors=unused_steps.ctypes.data_as(ctypes.POINTER(ctypes.c_double)),
        joints=ctypes.cast(joints, ctypes.POINTER(abi.Joint)),
        windows=ctypes.cast(window_table, ctypes.POINTER(abi.Window)) if len(window_table) else None,
        corner_directions=corner_directions.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        if corner_directions.size
        else empty,
        edge_normals=edge_normals.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) if edge_normals.size else empty,
        reach=float(body.size),
    )
    hinge_axes = np.zeros((n, 3))
    hinge_axes[body.hinge_bones] = body.hinge_axes
    low, high = body.stretch_bounds
    arrays = {
        "parents": _int32(body.parents),
        "stretchy": _int32(body.stretchy_bones),
        "rest_rotations": rest_rotations,
        "rest_offsets": rest_offsets,
        "lengths": _doubles(body.lengths, (n,)),
        "turn_shares": _doubles(body.turn_shares, (n,)),
        "hinge_axes": _doubles(hinge_axes, (n, 3)),
        "stretch_low": _doubles(low, (n,)),
        "stretch_high": _doubles(high, (n,)),
        "stretch_shares": _doubles(body.stretch_shares, (n,)),
    }
    struct = abi.BodyStruct(
        n_bones=n,
        n_stretchy=len(arrays["stretchy"]),
        limits=ctypes.pointer(limits),
        size=float(body.size),
        **{name: array.ctypes.data for name, array in arrays.items()},
    )
    kept = (limits, joints, window_table, corner_directions, edge_normals, unused_steps, *arrays.values())
    return PackedBody(struct=struct, pointer=ctypes.pointer(struct), arrays=kept)


def kernel_for(body: Body, settings: BodySettings) -> ctypes.CDLL | None:
    """The loaded kernel when it may run this body with these settings, else None."""
    if settings.kernel == "numpy":
        return None
    kernel, _ = library.load()
    if kernel is None or pack_body(body) is None:
        return None
    return kernel


# What the tasks of one layout share (``Tasks.take`` keeps them; only the targets differ):
# their arrays as the kernel reads them and a struct pointing at them, by the layout's
# ``bones`` array (held in the entry, so no other array can take its id).
_LAYOUTS_KEPT = 16
_layouts: dict[int, tuple] = {}
_SHARED = ("bones", "points", "aim_axes", "position_weights", "orientation_weights", "level_of")


def _tasks_struct(tasks: Tasks) -> tuple[abi.BodyTasksStruct, list[np.ndarray]]:
    template, shared = _layout(tasks)
    targets = [np.ascontiguousarray(tasks.positions, dtype=np.float64)]
    targets += [np.ascontiguousarray(tasks.orientations, dtype=np.float64)]
    targets += [np.ascontiguousarray(tasks.directions, dtype=np.float64)]
    struct = abi.BodyTasksStruct.from_buffer_copy(template)
    struct.positions, struct.orientations, struct.directions = (array.ctypes.data for array in targets)
    return struct, [*shared, *targets]


def _layout(tasks: Tasks) -> tuple[abi.BodyTasksStruct, list[np.ndarray]]:
    """The struct of ``tasks`` without its targets, and the arrays it points at (made once per layout)."""
    entry = _layouts.get(id(tasks.bones))
    if entry is not None and all(kept is getattr(tasks, name) for kept, name in zip(entry[0], _SHARED, strict=True)):
        return entry[1], entry[2]
    # A task asks for a position (an orientation, a direction) on every row or on none.
    flags = (
        np.where(tasks.has_position, abi.TASK_POSITION, 0)
        + np.where(tasks.has_orientation, abi.TASK_ORIENTATION, 0)
        + np.where(tasks.has_direction, abi.TASK_DIRECTION, 0)
    )
    arrays = {
        "bones": _int32(tasks.bones),
        "flags": _int32(flags),
        "level_of": _int32(tasks.level_of),
        "points": _doubles(tasks.points, (-1, 3)),
        "aim_axes": _doubles(tasks.aim_axes, (-1, 3)),
        "position_weights": _doubles(tasks.position_weights, (-1,)),
        "orientation_weights": _doubles(tasks.orientation_weights, (-1,)),
    }
    template = abi.BodyTasksStruct(
        n_tasks=len(tasks.bones),
        n_levels=len(tasks.levels),
        **{name: array.ctypes.data for name, array in arrays.items()},
    )
    if len(_layouts) >= _LAYOUTS_KEPT:
        _layouts.clear()
    shared = list(arrays.values())
    _layouts[id(tasks.bones)] = (tuple(getattr(tasks, name) for name in _SHARED), template, shared)
    return template, shared


def _settings_struct(
    settings: BodySettings, size: float, use_stretch: bool, max_iterations: int, lean: bool, creep: float
) -> abi.BodySettingsStruct:
    tolerance, angle_tolerance = settings.tolerances(size)
    working, working_angle = settings.working_tolerances(size)
    return abi.BodySettingsStruct(
        max_iterations=max_iterations,
        polish_iterations=settings.polish_iterations,
        stall_iterations=settings.stall_iterations,
        lean=int(lean),
        use_stretch=int(use_stretch),
        damping=settings.damping * size,
        stall_ratio=settings.stall_ratio,
        noticeable=tolerance**2,
        creep=creep,
        working_tolerance=working,
        working_angle_tolerance=working_angle,
        tolerance=tolerance,
        angle_tolerance=angle_tolerance,
    )


def stage(
    kernel: ctypes.CDLL,
    body: Body,
    tasks: Tasks,
    rotations: Array,
    stretch: Array,
    settings: BodySettings,
    *,
    use_stretch: bool,
    max_iterations: int,
    lean: bool,
    creep: float,
) -> tuple[Array, Array, NDArray[np.int64], Array] | None:
    """``body.solve._stage`` on the kernel: (rotations, stretch, iterations, excess), the excess
    (N, levels + 1) each level's over the strict tolerances at the answer and the stretch
    level's (0 without stretch); None where the kernel refused or a row did not finish."""
    packed = pack_body(body)
    if packed is None:
        return None
    count = len(rotations)
    rotations = np.array(rotations, dtype=np.float64, order="C", copy=True).reshape(count, body.n_bones, 4)
    stretch = np.array(stretch, dtype=np.float64, order="C", copy=True).reshape(count, body.n_bones)
    iterations = np.zeros(count, dtype=np.int64)
    excess = np.zeros((count, len(tasks.levels) + 1))
    tasks_struct, _kept_alive = _tasks_struct(tasks)
    settings_struct = _settings_struct(settings, body.size, use_stretch, max_iterations, lean, creep)
    status = kernel.qik_body_stage(
        packed.pointer,
        ctypes.byref(tasks_struct),
        ctypes.byref(settings_struct),
        count,
        rotations.ctypes.data,
        stretch.ctypes.data,
        iterations.ctypes.data,
        excess.ctypes.data,
    )
    return None if status != abi.OK else (rotations, stretch, iterations, excess)


def clamp(body: Body, rotations: Array) -> Array | None:
    """``body.clamp_rotations`` on the kernel (``qik_clamp`` on the body's limit table): (N, B, 4)
    rotations inside every limit, or None where the kernel does not run this body or met a
    non-finite value."""
    kernel, _ = library.load()
    packed = None if kernel is None else pack_body(body)
    if packed is None:
        return None
    clamped = np.array(rotations, dtype=np.float64, order="C", copy=True)
    if clamped.ndim != 3 or clamped.shape[1:] != (body.n_bones, 4):
        return None
    status = kernel.qik_clamp(packed.struct.limits, len(clamped), clamped.ctypes.data)
    return clamped if status == abi.OK else None


def task_errors(
    kernel: ctypes.CDLL, body: Body, tasks: Tasks, rotations: Array, stretch: Array
) -> tuple[Array, Array] | None:
    """``goals.task_errors`` at the poses (N, B, 4) with stretch (N, B) on the kernel: (N, T)
    position and orientation errors, or None where the kernel refused."""
    packed = pack_body(body)
    if packed is None:
        return None
    count = len(rotations)
    rotations = np.ascontiguousarray(rotations, dtype=np.float64)
    stretch = np.ascontiguousarray(stretch, dtype=np.float64)
    if rotations.shape != (count, body.n_bones, 4) or stretch.shape != (count, body.n_bones):
        return None
    errors = np.empty((2, count, len(tasks.bones)))
    tasks_struct, _kept_alive = _tasks_struct(tasks)
    status = kernel.qik_body_task_errors(
        packed.pointer,
        ctypes.byref(tasks_struct),
        count,
        rotations.ctypes.data,
        stretch.ctypes.data,
        errors[0].ctypes.data,
        errors[1].ctypes.data,
    )
    return None if status != abi.OK else (errors[0], errors[1])
