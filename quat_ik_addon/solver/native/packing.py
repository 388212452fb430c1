"""A solver ``Chain`` as the kernel's structs (``abi.py``, ``kernel/qik.h``), packed once per chain.

The packed chain owns every array its struct points into, so the struct stays valid while the
``PackedChain`` lives. It is kept beside the chain in a weak-keyed table rather than on the
chain itself: ctypes objects cannot be pickled, and chains are.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from ..limits.joints import BallJoint, FixedJoint, FreeJoint, HingeJoint
from ..limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow
from . import abi

if TYPE_CHECKING:  # chain.py calls the kernel through this package: no import at run time
    from ..chain import Chain

Array = NDArray[np.float64]

# Exact classes only: a subclass may clamp differently from what the kernel does.
# The kernel implements exactly these limit and window classes (a subclass may behave otherwise).
_JOINT_KINDS = {FreeJoint: abi.FREE, FixedJoint: abi.FIXED, HingeJoint: abi.HINGE, BallJoint: abi.BALL}
_WINDOW_KINDS = {ConeWindow: abi.CONE, EllipticConeWindow: abi.ELLIPSE, PolygonWindow: abi.POLYGON}

_double_p = ctypes.POINTER(ctypes.c_double)


@dataclass(frozen=True, eq=False)
class PackedChain:
    """A chain's ``abi.ChainStruct`` and everything it points into."""

    struct: abi.ChainStruct
    pointer: ctypes._Pointer  # ctypes.pointer(struct), what the kernel's functions take
    arrays: tuple[object, ...]  # the numpy arrays and ctypes arrays the struct points into


def unsupported_reason(chain: Chain) -> str | None:
    """Why the kernel cannot run this chain (the numpy path does), or None when it can."""
    for name, limit in zip(chain.bone_names, chain.limits, strict=True):
        kind = type(limit)
        if kind not in _JOINT_KINDS:
            if hasattr(limit, "inner"):  # limits/channel_locks.py's wrappers hold the limit they lock
                return f"locked rotation channels ({kind.__name__}) run on numpy"
            return f"bone {name!r}: a {kind.__name__} limit runs on numpy"
        for window in getattr(limit, "windows", ()):
            if type(window) not in _WINDOW_KINDS:
                return f"bone {name!r}: a {type(window).__name__} reach window runs on numpy"
            if _WINDOW_KINDS[type(window)] == abi.POLYGON and len(window.corner_directions) < 3:
                return f"bone {name!r}: a polygon window of fewer than 3 corners runs on numpy"
    return None


_packed: weakref.WeakKeyDictionary[Chain, PackedChain] = weakref.WeakKeyDictionary()
_packing = threading.Lock()


def pack_chain(chain: Chain) -> PackedChain:
    """The chain's structs, built on the first call for this chain object and kept with it.

    Raises ValueError for a chain the kernel cannot run (``unsupported_reason``)."""
    with _packing:
        packed = _packed.get(chain)
        if packed is None:
            packed = _pack(chain)
            _packed[chain] = packed
        return packed


def _doubles(values: object, shape: tuple[int, ...]) -> Array:
    return np.ascontiguousarray(np.asarray(values, dtype=np.float64).reshape(shape))


def _pointer(array: Array) -> ctypes._Pointer:
    return array.ctypes.data_as(_double_p) if array.size else _double_p()


def _pack(chain: Chain) -> PackedChain:
    reason = unsupported_reason(chain)
    if reason is not None:
        raise ValueError(f"the native kernel cannot run this chain: {reason}")
    n = chain.n_bones
    shares = chain.step_shares
    joints, window_table, corner_directions, edge_normals = limit_tables(chain.limits, shares)

    rest_rotations = _doubles(chain.rest_rotations, (n, 4))
    rest_offsets = _doubles(chain.rest_offsets, (n, 3))
    step_vectors = _doubles(chain._step_vectors, (n, 3))
    struct = abi.ChainStruct(
        n_bones=n,
        n_windows=len(window_table),
        n_corners=len(corner_directions),
        has_shares=int(shares is not None),
        rest_rotations=_pointer(rest_rotations),
        rest_offsets=_pointer(rest_offsets),
        step_vectors=_pointer(step_vectors),
        joints=ctypes.cast(joints, ctypes.POINTER(abi.Joint)),
        windows=ctypes.cast(window_table, ctypes.POINTER(abi.Window))
        if len(window_table)
        else ctypes.POINTER(abi.Window)(),
        corner_directions=_pointer(corner_directions),
        edge_normals=_pointer(edge_normals),
        reach=float(chain.reach),
    )
    arrays = (rest_rotations, rest_offsets, step_vectors, corner_directions, edge_normals, joints, window_table)
    return PackedChain(struct=struct, pointer=ctypes.pointer(struct), arrays=arrays)


def limit_tables(limits, shares: Array | None):
    """The kernel's joint table for ``limits`` (one per bone), their window table and the
    polygon windows' corner and wall-normal tables; ``shares``: each joint's step share (None: 1)."""
    windows: list[abi.Window] = []
    corners: list[Array] = []
    normals: list[Array] = []
    joints = (abi.Joint * len(limits))()
    for i, limit in enumerate(limits):
        joint = joints[i]
        joint.kind = _JOINT_KINDS[type(limit)]
        joint.stiffness = float(limit.stiffness)
        joint.share = 1.0 if shares is None else float(shares[i])
        if joint.kind == abi.HINGE:
            joint.axis[:] = limit.axis.tolist()
            _set_range(joint, limit.angle_range)
        elif joint.kind == abi.BALL:
            _set_range(joint, limit.twist_range)
            joint.window_first, joint.window_count = len(windows), len(limit.windows)
            windows.extend(_window(window, corners, normals) for window in limit.windows)
            if limit.clamp_mode == "boundary":
                joint.flags |= abi.BOUNDARY_MODE
            if limit.use_fast_paths:
                joint.flags |= abi.FAST_PATHS
            if limit.twist_reference is not None:
                joint.flags |= abi.TWIST_REFERENCE
                joint.twist_reference[:] = np.asarray(limit.twist_reference, dtype=float).tolist()
    corner_directions = _doubles(np.concatenate(corners) if corners else np.zeros((0, 3)), (-1, 3))
    edge_normals = _doubles(np.concatenate(normals) if normals else np.zeros((0, 3)), (-1, 3))
    window_table = (abi.Window * len(windows))(*windows)
    return joints, window_table, corner_directions, edge_normals


def _set_range(joint: abi.Joint, angle_range) -> None:
    """A hinge's angle range or a ball's twist range; a full circle limits nothing and is left out."""
    if angle_range is None or angle_range.is_full_circle:
        return
    joint.flags |= abi.HAS_RANGE
    joint.range_min, joint.range_max = float(angle_range.minimum), float(angle_range.maximum)


def _window(window, corners: list[Array], normals: list[Array]) -> abi.Window:
    """One reach window's row of the window table; a polygon's corners and wall normals are
    appended to the chain's shared tables."""
    packed = abi.Window(kind=_WINDOW_KINDS[type(window)])
    packed.center[:] = window.center.tolist()
    packed.accept_axis[:] = np.asarray(window.accept_axis, dtype=float).tolist()
    packed.accept_cos = float(window.accept_cos)
    packed.reference[:] = np.asarray(window.reference, dtype=float).tolist()
    if packed.kind == abi.CONE:
        packed.half_angle = float(window.half_angle)
        return packed
    packed.plane_x[:] = window.plane_x.tolist()
    packed.plane_y[:] = window.plane_y.tolist()
    if packed.kind == abi.ELLIPSE:
        packed.radii[:] = window._radii.tolist()
        packed.orthonormal = int(window._basis is not None)
        return packed
    packed.corner_first = sum(len(block) for block in corners)
    packed.corner_count = len(window.corner_directions)
    corners.append(_doubles(window.corner_directions, (-1, 3)))
    normals.append(_doubles(window.edge_normals, (-1, 3)))
    return packed
