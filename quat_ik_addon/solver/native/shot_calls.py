"""A shot's frame-by-frame loops (``sequence``) on the native kernel, one crossing each.

``sequence`` keeps its numpy loops: they are the reference these calls are tested against and
the path wherever the kernel does not run. Each call writes the shot's own arrays in place (a
copy of a long shot's poses per call cost more than the loop: 10 MB for 30 bones at 10,000
frames). The kernel checks everything it could refuse before its first write, so a refusal
(``None``: the caller runs the numpy loop) leaves the shot untouched; a step whose solve came
out non-finite counts as a miss there and writes nothing, so the shot stays finite.
"""

from __future__ import annotations

import ctypes
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from . import abi, kernel_calls
from .packing import pack_chain

Array = NDArray[np.float64]
Rows = NDArray[np.intp]


class Shot(Protocol):
    """What ``sequence._Frames`` holds of a shot being solved."""

    chain: object
    goals: object
    rotations: Array
    met: NDArray[np.bool_]
    solved: NDArray[np.bool_]
    iterations: NDArray[np.int64]
    answers: Array
    answer_errors: tuple[Array, Array, Array]


def _crossed(entry, chain, goals_struct, settings_pairs, shot_struct, request) -> bool:
    """Call one of the kernel's shot loops (chain, goals, one settings struct per (settings,
    finishing) pair, the shot, the loop's request): False where it refused its input (then it
    wrote nothing and the numpy loop runs)."""
    settings = [
        ctypes.byref(kernel_calls.settings_struct(solve, finish, chain.reach)) for solve, finish in settings_pairs
    ]
    status = entry(
        pack_chain(chain).pointer,
        ctypes.byref(goals_struct),
        *settings,
        ctypes.byref(shot_struct),
        ctypes.byref(request),
    )
    return status != abi.BAD_INPUT


def _indices(values) -> np.ndarray | None:
    return None if values is None else np.ascontiguousarray(values, dtype=np.int64)


def _address(array: np.ndarray | None) -> int | None:
    return None if array is None else array.ctypes.data


def _shot_struct(shot: Shot) -> abi.ShotStruct | None:
    """The shot's own arrays as the kernel reads and writes them, or None where one is not laid
    out as it needs (never for ``sequence._Frames``)."""
    arrays = (shot.rotations, shot.met, shot.solved, shot.iterations, shot.answers, *shot.answer_errors)
    kinds = (np.float64, np.bool_, np.bool_, np.int64, np.float64, np.float64, np.float64, np.float64)
    if not all(a.dtype == kind and a.flags.c_contiguous for a, kind in zip(arrays, kinds, strict=True)):
        return None
    return abi.ShotStruct(len(shot.met), *(a.ctypes.data for a in arrays))


def walk_out(
    shot: Shot,
    met_settings,
    met_finishing,
    tracking_settings,
    tracking_finishing,
    order: Rows,
    seeds: Rows,
    directions: Rows,
    until: Rows,
    margin: float,
) -> bool:
    """``sequence._walk_out`` in one crossing (``qik_walk_out``), the shot's arrays written as the
    numpy loop writes them. False where the kernel does not run this chain and these settings
    or refused (the shot is then untouched)."""
    chain, goals = shot.chain, shot.goals
    kernel = kernel_calls.kernel_for(chain, met_settings)
    if kernel is None or kernel_calls.kernel_for(chain, tracking_settings) is None:
        return False
    order, seeds, directions, until = (_indices(a) for a in (order, seeds, directions, until))
    shot_struct = _shot_struct(shot)
    if shot_struct is None:
        return False
    goals_struct, _kept_alive = kernel_calls.goals_struct(goals)
    request = abi.WalkStruct(
        len(order), order.ctypes.data, len(seeds), seeds.ctypes.data, directions.ctypes.data, until.ctypes.data, margin
    )
    both = [(met_settings, met_finishing), (tracking_settings, tracking_finishing)]
    return _crossed(kernel.qik_walk_out, chain, goals_struct, both, shot_struct, request)


def repair_jumps(
    shot: Shot,
    settings,
    finishing,
    order: Rows,
    carry_frames: int,
    blend_rounds: int,
    jump_slack: float,
    visible_jump: float,
) -> bool:
    """``sequence._repair_jumps`` in one crossing (``qik_repair_jumps``), the shot's arrays written as
    the numpy loop writes them. False where the kernel does not run this chain and settings or
    refused (the shot is then untouched)."""
    chain, goals = shot.chain, shot.goals
    kernel = kernel_calls.kernel_for(chain, settings)
    if kernel is None:
        return False
    order = _indices(order)
    shot_struct = _shot_struct(shot)
    if shot_struct is None:
        return False
    goals_struct, _kept_alive = kernel_calls.goals_struct(goals)
    request = abi.RepairStruct(
        len(order), order.ctypes.data, int(carry_frames), int(blend_rounds), float(jump_slack), float(visible_jump)
    )
    return _crossed(kernel.qik_repair_jumps, chain, goals_struct, [(settings, finishing)], shot_struct, request)


def fill_between(
    shot: Shot,
    met_settings,
    met_finishing,
    tracking_settings,
    tracking_finishing,
    followed: Rows,
    between: Rows,
    guesses: Array,
    carry_tip_twist: bool,
    margin: float,
) -> bool:
    """``sequence._fill_between`` after its guesses, in one crossing (``qik_fill_between``), the shot's
    arrays written as the numpy steps write them. False where the kernel does not run this chain and
    these settings or refused (the shot is then untouched)."""
    chain, goals = shot.chain, shot.goals
    kernel = kernel_calls.kernel_for(chain, met_settings)
    if kernel is None or kernel_calls.kernel_for(chain, tracking_settings) is None:
        return False
    followed, between = _indices(followed), _indices(between)
    guesses = np.ascontiguousarray(guesses, dtype=np.float64)
    shot_struct = _shot_struct(shot)
    if shot_struct is None or guesses.shape != (len(between), chain.n_bones, 4):
        return False
    goals_struct, _kept_alive = kernel_calls.goals_struct(goals)
    request = abi.FillStruct(
        len(followed),
        followed.ctypes.data,
        len(between),
        between.ctypes.data,
        guesses.ctypes.data,
        int(carry_tip_twist),
        0,
        margin,
    )
    both = [(met_settings, met_finishing), (tracking_settings, tracking_finishing)]
    return _crossed(kernel.qik_fill_between, chain, goals_struct, both, shot_struct, request)


def follow(
    shot: Shot,
    met_settings,
    met_finishing,
    tracking_settings,
    tracking_finishing,
    followed: Rows,
    begins: Rows,
    ends: Rows,
    starts: Array,
    started_met: NDArray[np.bool_],
    poses: Array,
    poses_met: NDArray[np.bool_],
    kernel: ctypes.CDLL | None = None,
) -> tuple[Array, NDArray[np.bool_]] | None:
    """``sequence._follow`` in one crossing (``qik_follow``): the poses between go into ``poses``
    and ``poses_met`` (by followed index), the shot's solve record written; returns each piece's
    arrival and whether it met that goal. None where the kernel does not run this chain and
    these settings or refused (nothing is then written). ``kernel``: this library rather than
    the loaded one (the loader's self-check, before it trusts a library)."""
    chain, goals = shot.chain, shot.goals
    if kernel is None:
        kernel = kernel_calls.kernel_for(chain, met_settings)
        if kernel is None or kernel_calls.kernel_for(chain, tracking_settings) is None:
            return None
    followed, begins, ends = _indices(followed), _indices(begins), _indices(ends)
    pose = np.array(starts, dtype=np.float64, order="C", copy=True)
    met = np.asarray(started_met, dtype=np.uint8).copy()
    shot_struct = _shot_struct(shot)
    laid_out = poses.dtype == np.float64 and poses_met.dtype == np.bool_
    if shot_struct is None or not (laid_out and poses.flags.c_contiguous and poses_met.flags.c_contiguous):
        return None
    goals_struct, _kept_alive = kernel_calls.goals_struct(goals)
    request = abi.FollowStruct(
        len(followed),
        followed.ctypes.data,
        len(begins),
        *(a.ctypes.data for a in (begins, ends, pose, met, poses, poses_met)),
    )
    both = [(met_settings, met_finishing), (tracking_settings, tracking_finishing)]
    if not _crossed(kernel.qik_follow, chain, goals_struct, both, shot_struct, request):
        return None
    return pose, met.astype(bool)


def carry_tip_twist_along(chain, rotations: Array, start: Array, settings=None) -> Array | None:
    """``free_twist.within_tip_twist_range(chain, carry_tip_twist_along(rotations, start))`` in one
    crossing (``qik_carry_tip_twist_along``): (F, n, 4), or None where the kernel does not run
    this chain (with these settings) or met a non-finite value."""
    kernel = kernel_calls.kernel_for(chain, settings)
    if kernel is None:
        return None
    carried = np.array(rotations, dtype=np.float64, order="C", copy=True)
    start = np.ascontiguousarray(start, dtype=np.float64)
    if carried.ndim != 3 or carried.shape[1:] != (chain.n_bones, 4) or start.shape != (chain.n_bones, 4):
        return None
    status = kernel.qik_carry_tip_twist_along(
        pack_chain(chain).pointer, len(carried), carried.ctypes.data, start.ctypes.data
    )
    return carried if status == abi.OK else None
