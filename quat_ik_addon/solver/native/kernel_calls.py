"""``methods.run_method`` on the native kernel: the same answers as the numpy methods, one crossing.

The numpy solver is the reference. This module only decides whether the kernel may take a
call, packs its inputs as the C ABI wants them (``abi.py``), and unpacks the answers: a chain
with a limit the kernel does not know, goals it cannot read, the kernel switched off, or a row
the kernel could not finish (it never hands back NaN) all mean ``None``, and the caller runs
the numpy path.
"""

from __future__ import annotations

import ctypes
import functools
import weakref

import numpy as np
from numpy.typing import NDArray

from ..identity_memo import IdentityMemo
from . import abi, library, solve_call
from .packing import pack_chain, unsupported_reason

Array = NDArray[np.float64]


_address = solve_call.address


def _contiguous(array: np.ndarray | None, shape: tuple[int, ...] | None = None) -> np.ndarray | None:
    if array is None:
        return None
    array = np.ascontiguousarray(array, dtype=np.float64)
    return array if shape is None else array.reshape(shape)


# Per chain object: whether the kernel knows all its limits (chains are immutable).
_supported: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def kernel_for(chain, settings=None) -> ctypes.CDLL | None:
    """The loaded kernel when it may run this chain (with these settings), else None."""
    if settings is not None and settings.kernel == "numpy":
        return None
    kernel, _ = library.load()
    if kernel is None:
        return None
    supported = _supported.get(chain)
    if supported is None:
        supported = _supported[chain] = unsupported_reason(chain) is None
    return kernel if supported else None


def clamp(chain, rotations) -> Array | None:
    """``chain.clamp_to_limits`` on the kernel: (..., n, 4) rotations inside every limit, or
    None where the kernel does not run this chain or met a non-finite value."""
    kernel = kernel_for(chain)
    return None if kernel is None else clamp_with(kernel, chain, rotations)


def clamp_with(kernel: ctypes.CDLL, chain, rotations) -> Array | None:
    """``clamp`` on the given kernel."""
    clamped = np.array(rotations, dtype=np.float64, order="C", copy=True)
    if clamped.ndim < 2 or clamped.shape[-2:] != (chain.n_bones, 4):
        return None
    status = kernel.qik_clamp(pack_chain(chain).pointer, clamped.size // (4 * chain.n_bones), clamped.ctypes.data)
    return clamped if status == abi.OK else None


def violation(chain, rotations) -> Array | None:
    """``chain.limit_violation`` on the kernel: radians outside each limit (..., n), or None."""
    kernel = kernel_for(chain)
    rotations = np.ascontiguousarray(rotations, dtype=np.float64)
    if kernel is None or rotations.ndim < 2 or rotations.shape[-2:] != (chain.n_bones, 4):
        return None
    outside = np.empty(rotations.shape[:-1])
    rows = rotations.size // (4 * chain.n_bones)
    status = kernel.qik_violation(pack_chain(chain).pointer, rows, rotations.ctypes.data, outside.ctypes.data)
    return outside if status == abi.OK else None


def measure(chain, goals, rotations) -> tuple[Array, Array, Array] | None:
    """``measurements.goal_errors`` on the kernel (``qik_measure``): position error, orientation
    error and effector of (N, n, 4) poses, one goal a row; None where the kernel does not run
    this chain or the poses are not one a goal."""
    kernel = kernel_for(chain)
    if kernel is None or np.shape(rotations) != (goals.count, chain.n_bones, 4):
        return None
    rotations = np.ascontiguousarray(rotations, dtype=np.float64)
    count = len(rotations)
    measured = np.empty(count), np.empty(count), np.empty((count, 3))
    packed_goals, _kept_alive = goals_struct(goals)
    status = kernel.qik_measure(
        pack_chain(chain).pointer, ctypes.byref(packed_goals), count, _address(rotations), *map(_address, measured)
    )
    return measured if status == abi.OK else None


def pose_distance(a: np.ndarray, b: np.ndarray) -> Array | None:
    """``solve.pose_distance`` on the kernel (``qik_pose_distance_rows``) for two batches of poses
    of one shape (..., n, 4); None where the kernel is not loaded or the shapes differ."""
    kernel, _ = library.load()
    if kernel is None or a.shape != b.shape or a.ndim < 2 or a.shape[-1] != 4 or a.shape[-2] < 1:
        return None
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    distance = np.empty(a.shape[:-2])
    status = kernel.qik_pose_distance_rows(a.shape[-2], distance.size, _address(a), _address(b), _address(distance))
    return distance if status == abi.OK else None


RECENT_SETTINGS = 64  # (settings, finishing, reach) triples whose structs are looked up by identity
_recent_settings: IdentityMemo[abi.SettingsStruct] = IdentityMemo(RECENT_SETTINGS)


def settings_struct(settings, finishing, reach: float) -> abi.SettingsStruct:
    """The settings as the kernel reads them (made once per settings and chain size)."""
    return _recent_settings.get((settings, finishing), lambda: _settings_struct(settings, finishing, reach), reach)


@functools.lru_cache(maxsize=64)
def _settings_struct(settings, finishing, reach: float) -> abi.SettingsStruct:
    tolerance = settings.absolute_tolerance(reach)
    return abi.SettingsStruct(
        method=abi.METHODS[settings.method],
        order=abi.ORDERS[settings.order],
        max_iterations=settings.max_iterations,
        stall_iterations=settings.stall_iterations,
        ccd_iterations_before_dls=settings.ccd_iterations_before_dls,
        finish_max_iterations=finishing.max_iterations,
        finish_stall_iterations=finishing.stall_iterations,
        tolerance=tolerance,
        angle_tolerance=settings.angle_tolerance(tolerance, reach),
        stall_ratio=settings.stall_ratio,
        finish_stall_ratio=finishing.stall_ratio,
        damping=settings.damping * reach,
        rest_pull=settings.rest_pull,
    )


def goals_struct(goals) -> tuple[abi.GoalsStruct, list[np.ndarray]]:
    positions = _contiguous(goals.positions)
    orientations = _contiguous(goals.orientations)
    directions = _contiguous(goals.directions)
    # Filled field by field: the keyword constructor costs three times as much. Zeroed, so the
    # addresses of goals not given are null.
    struct = abi.GoalsStruct()
    struct.kind = (
        abi.ORIENTATION if orientations is not None else abi.DIRECTION if directions is not None else abi.POSITION
    )
    struct.positions = _address(positions)
    if orientations is not None:
        struct.orientations = _address(orientations)
    if directions is not None:
        struct.directions = _address(directions)
    struct.aim_axis[:] = goals.aim_axis.tolist()
    struct.position_weight = goals.position_weight
    struct.orientation_weight = goals.orientation_weight
    return struct, [a for a in (positions, orientations, directions) if a is not None]


class _Measured:
    """The per-row outputs both solving entry points fill: iterations, and the errors and
    effector of the poses they return (``goal_errors``)."""

    __slots__ = ("address", "effector", "iterations", "orientation_error", "position_error")

    def __init__(self, count: int) -> None:
        # Views of one block (iterations as int64, the same 8 bytes a row): one address to look up.
        block = np.empty(6 * count)
        self.iterations = block[:count].view(np.int64)
        self.position_error = block[count : 2 * count]
        self.orientation_error = block[2 * count : 3 * count]
        self.effector = block[3 * count :].reshape(count, 3)
        self.address = _address(block)

    def addresses(self) -> tuple[int, int, int, int]:
        first, row_bytes = self.address, 8 * len(self.iterations)
        return first, first + row_bytes, first + 2 * row_bytes, first + 3 * row_bytes

    def errors(self) -> tuple[Array, Array, Array]:
        return self.position_error, self.orientation_error, self.effector


def _call_inputs(chain, goals, settings, finishing, preferred: Array | None, count: int):
    """The chain, goals and settings structs of a solving call, the preferred poses' address,
    and the arrays the goals struct points into (kept alive through the call)."""
    preferred = (
        None if preferred is None or settings.rest_pull == 0.0 else _contiguous(preferred, (count, chain.n_bones, 4))
    )
    packed_goals, kept_alive = goals_struct(goals)
    structs = (
        pack_chain(chain).pointer,
        ctypes.byref(packed_goals),
        ctypes.byref(settings_struct(settings, finishing, chain.reach)),
    )
    return structs, _address(preferred), (kept_alive, packed_goals, preferred)


def solve(
    kernel: ctypes.CDLL, chain, goals, starts: Array, settings, finishing, preferred: Array | None, carry: bool
) -> solve_call.Solved | None:
    """``solve.solve`` short of its restarts in one crossing (``qik_solve``): the starts clamped,
    the method run, the answers unit with w ≥ 0, and with ``carry`` the tip's unseen twist
    carried from its start. None where a row did not finish (run numpy instead)."""
    count = len(starts)
    pulled = preferred is not None and settings.rest_pull != 0.0
    if count == 1:  # one target (Live's, a single solve): the thread's kept call for this chain
        call = solve_call.single_row_call(chain)
        call.set_goal(goals)
        call.set_settings(settings, finishing, lambda: settings_struct(settings, finishing, chain.reach))
        call.set_preferred(preferred if pulled else None)
        return call.run(kernel, starts, carry)
    packed_goals, _kept_alive = goals_struct(goals)
    preferred = _contiguous(preferred, (count, chain.n_bones, 4)) if pulled else None
    packed_settings = settings_struct(settings, finishing, chain.reach)
    call, answers = solve_call.batch_call(chain, packed_goals, packed_settings, starts, _address(preferred), carry)
    if kernel.qik_solve(ctypes.addressof(call)) != abi.OK:
        return None
    errors = (answers.position_error, answers.orientation_error, answers.effector)
    return solve_call.Solved(answers.starts, answers.poses, answers.iterations, errors, answers.met)


def run_method(
    kernel: ctypes.CDLL, chain, goals, rotations: Array, settings, finishing, preferred: Array | None
) -> tuple[Array, NDArray[np.int64], tuple[Array, Array, Array]] | None:
    """``methods.run_method`` on the kernel: (poses, iterations, (position error, orientation
    error, effector)), or None where the kernel could not finish a row (run numpy instead).
    ``finishing``: the settings CCD finishes DLS's misses with (``methods.finishing``)."""
    count = len(rotations)
    poses = np.array(rotations, dtype=np.float64, order="C", copy=True).reshape(count, chain.n_bones, 4)
    measured = _Measured(count)
    structs, preferred_address, _kept_alive = _call_inputs(chain, goals, settings, finishing, preferred, count)
    status = kernel.qik_run_method(*structs, count, _address(poses), preferred_address, *measured.addresses())
    return None if status != abi.OK else (poses, measured.iterations, measured.errors())


def restart_round(
    kernel: ctypes.CDLL,
    chain,
    goals,
    settings,
    finishing,
    rotations: Array,
    errors: tuple[Array, Array],
    iterations: NDArray[np.int64],
    unmet: NDArray[np.intp],
    starts: Array,
    reference: Array | None,
    preferred: Array | None,
    take_rule: int,
    switch_gain: float,
    tie: float,
) -> NDArray[np.bool_] | None:
    """``solve._restart``'s round in one crossing (``qik_restart_round``): the ``starts`` of every
    unmet row's candidates (a row's together) solved with ``settings``, ranked, and the best taken
    by ``take_rule`` (``abi.TAKE_*``), written into ``rotations``, ``errors`` (position,
    orientation) and ``iterations`` in place. Returns which unmet rows took a candidate, or None
    (nothing written) where the kernel refused or an answer was not finite."""
    arrays = (rotations, *errors, iterations)
    rows, shape = len(rotations), (len(rotations), chain.n_bones, 4)
    if not all(a.flags.c_contiguous and a.flags.writeable for a in arrays) or rotations.shape != shape:
        return None
    if rotations.dtype != np.float64 or iterations.dtype != np.int64 or iterations.shape != (rows,):
        return None
    if any(e.dtype != np.float64 or e.shape != (rows,) for e in errors):
        return None
    unmet = np.ascontiguousarray(unmet, dtype=np.int64)
    starts = np.array(starts, dtype=np.float64, order="C", copy=True)
    reference = _contiguous(reference)
    preferred = None if preferred is None or settings.rest_pull == 0.0 else _contiguous(preferred)
    if len(unmet) == 0 or starts.ndim != 3 or starts.shape[1:] != shape[1:] or len(starts) % len(unmet):
        return None
    if any(poses is not None and poses.shape != shape for poses in (reference, preferred)):
        return None
    taken = np.zeros(len(unmet), dtype=np.uint8)
    packed_goals, _kept_alive = goals_struct(goals)
    request = abi.RestartStruct(
        rows,
        *map(_address, arrays),
        _address(reference),
        _address(preferred),
        len(unmet),
        _address(unmet),
        len(starts) // len(unmet),
        _address(starts),
        take_rule,
        0,
        switch_gain,
        tie,
        _address(taken),
    )
    status = kernel.qik_restart_round(
        pack_chain(chain).pointer,
        ctypes.byref(packed_goals),
        ctypes.byref(settings_struct(settings, finishing, chain.reach)),
        ctypes.byref(request),
    )
    return taken.astype(bool) if status == abi.OK else None


def carry_tip_twist(chain, rotations: Array, starts: Array) -> Array | None:
    """``free_twist``'s carry and twist range for the tip on the kernel: (N, n, 4), or None."""
    kernel = kernel_for(chain)
    if kernel is None:
        return None
    carried = np.array(rotations, dtype=np.float64, order="C", copy=True)
    starts = np.ascontiguousarray(starts, dtype=np.float64)
    if carried.shape != starts.shape or carried.ndim != 3:
        return None
    status = kernel.qik_carry_tip_twist(
        pack_chain(chain).pointer, len(carried), carried.ctypes.data, starts.ctypes.data
    )
    return carried if status == abi.OK else None
