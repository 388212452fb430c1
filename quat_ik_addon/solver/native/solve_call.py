"""``qik_solve``'s argument struct, kept per chain and thread for single-row solves.

A single solve (a Live update's, one ``solve()`` of one target) is ~2 µs of kernel work; packing
its goals and settings structs, allocating its buffers and passing twelve arguments through
ctypes cost several times that. So each thread keeps, per chain object, one ``SolveCallStruct``
whose pointers lead into buffers that live as long as it does: a call copies its start and goal
in, points at the settings' struct (made once per settings object) and copies the answers out.
Batches build a struct per call (``batch_call``): their kernel work dwarfs the packing.
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import NamedTuple

import numpy as np

from . import abi
from .packing import pack_chain


def address(array: np.ndarray | None) -> int | None:
    """Where a C-contiguous array's numbers start (None for None)."""
    if array is None:
        return None
    try:  # a ctypes view of the buffer costs a third of ``array.ctypes.data``: a call passes several
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError, BufferError):  # read-only or empty: no writable buffer to view
        return array.ctypes.data


class Answers:
    """What ``qik_solve`` hands back for ``rows`` rows, as views of one block: the clamped
    starts, the poses, and each row's iterations, goal errors and effector; and whether each
    answer meets its goal."""

    __slots__ = ("effector", "iterations", "met", "orientation_error", "poses", "position_error", "starts")

    def __init__(self, block: np.ndarray, rows: int, n_bones: int) -> None:
        self.met = np.zeros(rows, dtype=bool)  # one byte a row, as the kernel writes it
        width = 4 * n_bones * rows
        self.starts = block[:width].reshape(rows, n_bones, 4)
        self.poses = block[width : 2 * width].reshape(rows, n_bones, 4)
        rest = block[2 * width :]
        self.iterations = rest[:rows].view(np.int64)
        self.position_error = rest[rows : 2 * rows]
        self.orientation_error = rest[2 * rows : 3 * rows]
        self.effector = rest[3 * rows :].reshape(rows, 3)

    @staticmethod
    def block_size(rows: int, n_bones: int) -> int:
        return rows * (8 * n_bones + 6)


class Solved(NamedTuple):
    """``qik_solve``'s answers as ``kernel_calls.solve`` returns them."""

    starts: np.ndarray  # (N, n, 4) the starts, brought inside the limits
    poses: np.ndarray  # (N, n, 4)
    iterations: np.ndarray  # (N,) int64
    measured: tuple[np.ndarray, np.ndarray, np.ndarray]  # position error, orientation error, effector
    met: np.ndarray  # (N,) bool


def _point_at_answers(call: abi.SolveCallStruct, answers: Answers) -> None:
    call.starts = address(answers.starts)
    call.rotations = address(answers.poses)
    call.iterations = address(answers.iterations)
    call.position_error = address(answers.position_error)
    call.orientation_error = address(answers.orientation_error)
    call.effector = address(answers.effector)
    call.met = address(answers.met)


class SingleRowCall:
    """One chain's reusable ``qik_solve`` arguments for one row (one thread's)."""

    def __init__(self, chain) -> None:
        n = chain.n_bones
        self.n_bones = n
        self.block = np.zeros(Answers.block_size(1, n))
        self.answers = Answers(self.block, 1, n)
        self.position = np.zeros((1, 3))
        self.orientation = np.zeros((1, 4))
        self.direction = np.zeros((1, 3))
        self.preferred = np.zeros((1, n, 4))
        self.goals = abi.GoalsStruct()
        self.goals.positions = address(self.position)
        self.goals.orientations = address(self.orientation)
        self.goals.directions = address(self.direction)
        self.packed = pack_chain(chain)  # kept alive with the call that points at it
        self.call = abi.SolveCallStruct()
        self.call.chain = ctypes.addressof(self.packed.struct)
        self.call.goals = ctypes.addressof(self.goals)
        self.call.rows = 1
        _point_at_answers(self.call, self.answers)
        self.call_address = ctypes.addressof(self.call)
        # The settings objects whose struct is in place (the struct kept alive while it is).
        self.settings = self.finishing = self.settings_struct = None
        self.preferred_address = address(self.preferred)

    def set_goal(self, goals) -> None:
        """Copy one goal in (kind, position, orientation or direction, aim axis, weights)."""
        struct = self.goals
        self.position[...] = goals.positions
        struct.position_weight = goals.position_weight
        if goals.orientations is None and goals.directions is None:
            struct.kind = abi.POSITION  # the aim axis and the orientation weight go unread
            return
        if goals.orientations is not None:
            self.orientation[...] = goals.orientations
            struct.kind = abi.ORIENTATION
        else:
            self.direction[...] = goals.directions
            struct.kind = abi.DIRECTION
        struct.aim_axis[:] = goals.aim_axis.tolist()
        struct.orientation_weight = goals.orientation_weight

    def set_settings(self, settings, finishing, make) -> None:
        """Point at the settings struct of these settings objects, made by ``make()`` when new."""
        if settings is not self.settings or finishing is not self.finishing:
            self.settings_struct = make()
            self.call.settings = ctypes.addressof(self.settings_struct)
            self.settings, self.finishing = settings, finishing

    def set_preferred(self, preferred: np.ndarray | None) -> None:
        if preferred is None:
            self.call.preferred = None
        else:
            self.preferred[...] = preferred
            self.call.preferred = self.preferred_address

    def run(self, kernel, start: np.ndarray, carry: bool) -> Solved | None:
        """Solve from ``start`` ((1, n, 4) or (n, 4)); the answers are copies, the caller's to keep."""
        answers = self.answers
        answers.starts[...] = start  # (n, 4) or (1, n, 4): broadcast
        self.call.carry_tip_twist = int(carry)
        if kernel.qik_solve(self.call_address) != abi.OK:
            return None
        errors = (answers.position_error.copy(), answers.orientation_error.copy(), answers.effector.copy())
        return Solved(
            answers.starts.copy(), answers.poses.copy(), answers.iterations.copy(), errors, answers.met.copy()
        )


_threads = threading.local()


def single_row_call(chain) -> SingleRowCall:
    """This thread's reusable call for ``chain`` (made on first use, dropped with the chain)."""
    # (weak reference to the chain, its call) of the last call: Live solves one chain again and again
    last = getattr(_threads, "last", None)
    if last is not None and last[0]() is chain:
        return last[1]
    calls = getattr(_threads, "calls", None)
    if calls is None:
        calls = _threads.calls = weakref.WeakKeyDictionary()
    call = calls.get(chain)
    if call is None:
        call = calls[chain] = SingleRowCall(chain)
    _threads.last = (weakref.ref(chain), call)
    return call


def batch_call(chain, goals_struct, settings_struct, starts: np.ndarray, preferred: int | None, carry: bool):
    """(call struct, answers) for a batch: the starts copied into a fresh answer block."""
    rows, n = len(starts), chain.n_bones
    answers = Answers(np.empty(Answers.block_size(rows, n)), rows, n)
    answers.starts[:] = starts
    call = abi.SolveCallStruct()
    call.chain = ctypes.addressof(pack_chain(chain).struct)
    call.goals = ctypes.addressof(goals_struct)
    call.settings = ctypes.addressof(settings_struct)
    call.rows = rows
    call.preferred = preferred
    call.carry_tip_twist = int(carry)
    _point_at_answers(call, answers)
    return call, answers
