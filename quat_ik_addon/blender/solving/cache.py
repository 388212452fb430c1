"""Solves from a fixed start remembered by their inputs, so playing frames again costs no solving.

A Per Frame chain (and *Solve Now* from its neutral pose) solves each frame from the same
start (``solver.start_poses.cold_start``), so the outcome is a function of the solve's inputs alone: the chain (``Chain.fingerprint``: bones,
rest frames, lengths, limits), the goals, poles and pole angles in its root frame, and the
solver options. A digest of them keys the outcome: a frame played before is answered from
here, and anything that changes an input (a moved target, a parent, an edited limit or
setting) is a different key, so nothing is ever stale. Outcomes are kept packed (one array
each) and the least recently used are dropped beyond ``MAX_BYTES``. Live solves (warm from the current pose), bakes (a sequence)
and chains with learned start poses are always solved. Bodies (``solve_body``) are remembered
the same way when they start from rest (or their learned start poses, which the key holds) and
are not a shot: a Per Frame body played again.

No ``bpy`` here.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter, OrderedDict
from dataclasses import replace

import numpy as np

from ...solver.body import Body
from ...solver.body.request import BodyOptions, BodyRequest, BodyRequestResult, solve_body_request
from ...solver.chain import Chain
from ...solver.request import SolveOptions, SolveRequest, solve_request
from ...solver.settings import SolveResult

# What the remembered outcomes may take: a four-chain character's 3-bone limbs remember
# about 150,000 solves (37,000 frames), ten 10-bone chains 10,000 frames. (An outcome object
# took ~1.4 KB whatever its size, and a count of 20,000 of them thrashed on a scrub through
# 2,500 frames of ten chains: playing it again solved every frame again.)
MAX_BYTES = 64 * 2**20
ENTRY_OVERHEAD = 250  # bytes besides the packed numbers: the array object, the key, the dict's link

# key -> ``_packed`` chain outcome, or a body's result (its arrays are read-only)
_outcomes: OrderedDict[bytes, np.ndarray | BodyRequestResult] = OrderedDict()
_held_bytes = 0
stats: Counter = Counter()  # "hits" and "misses", for tests and the benchmark


def _packed(outcome: SolveResult) -> np.ndarray:
    """An outcome as one read-only float64 array (``_unpacked`` restores it)."""
    packed = np.concatenate(
        (
            outcome.rotations.ravel(),
            outcome.effector.ravel(),
            outcome.position_error,
            outcome.orientation_error,
            outcome.iterations,
            outcome.restarts,
            outcome.converged,
            (outcome.tolerance, outcome.wrap_jump, outcome.out_of_time),
        ),
        dtype=float,
    )
    packed.setflags(write=False)  # shared by every later hit
    return packed


def _unpacked(packed: np.ndarray, frames: int, n_bones: int) -> SolveResult:
    size = frames * n_bones * 4
    per_frame = packed[size + 3 * frames : -3].reshape(5, frames)
    return SolveResult(
        rotations=packed[:size].reshape(frames, n_bones, 4),
        effector=packed[size : size + 3 * frames].reshape(frames, 3),
        position_error=per_frame[0],
        orientation_error=per_frame[1],
        iterations=per_frame[2].astype(np.int64),
        restarts=per_frame[3].astype(np.int64),
        converged=per_frame[4] > 0.5,
        tolerance=float(packed[-3]),
        wrap_jump=float(packed[-2]),
        out_of_time=bool(packed[-1]),
    )


def request_key(chain: Chain, request: SolveRequest, options: SolveOptions):
    """The digest of a solve's inputs when it starts from the fixed start; else None."""
    if request.start is not None or request.shot or options.learned_starts is not None:
        return None
    digest = hashlib.blake2b(chain.fingerprint, digest_size=16)
    goals = request.goals
    digest.update(repr((goals.position_weight, goals.orientation_weight)).encode())
    for array in (
        goals.positions,
        goals.orientations,
        goals.directions,
        goals.aim_axis,
        request.poles,
        request.pole_angles,
    ):
        if array is None:
            digest.update(b"-")
        else:
            array = np.ascontiguousarray(array, dtype=float)
            digest.update(repr(array.shape).encode() + array.tobytes())
    digest.update(_options_text(options))
    return digest.digest()


@functools.lru_cache(maxsize=256)  # options are frozen and hashable (without learned start poses)
def _options_text(options: SolveOptions) -> bytes:
    return repr(replace(options, learned_starts=None)).encode()


def solve(chain: Chain, request: SolveRequest, options: SolveOptions) -> SolveResult:
    """``solver.request.solve_request``, answered from the cache when these inputs were solved before."""
    key = request_key(chain, request, options)
    if key is None:
        return solve_request(chain, request, options)
    frames = request.goals.count
    packed = _outcomes.get(key)
    if packed is not None:
        _outcomes.move_to_end(key)
        stats["hits"] += 1
        return _unpacked(packed, frames, chain.n_bones)
    stats["misses"] += 1
    outcome = solve_request(chain, request, options)
    _remember(key, _packed(outcome))
    return _unpacked(_outcomes[key], frames, chain.n_bones)


def _nbytes(value) -> int:
    if isinstance(value, np.ndarray):
        return value.nbytes
    return sum(getattr(value, name).nbytes for name in vars(value) if isinstance(getattr(value, name), np.ndarray))


def _remember(key: bytes, packed) -> None:
    """Keep ``packed``; drop the least recently used outcomes beyond ``MAX_BYTES``."""
    global _held_bytes
    _outcomes[key] = packed
    _held_bytes += _nbytes(packed) + ENTRY_OVERHEAD
    while _held_bytes > MAX_BYTES and len(_outcomes) > 1:
        _key, dropped = _outcomes.popitem(last=False)
        _held_bytes -= _nbytes(dropped) + ENTRY_OVERHEAD


@functools.lru_cache(maxsize=64)  # a Body is hashed by identity, and ``body_jobs`` keeps each one
def body_request_key(body: Body, request: BodyRequest, options: BodyOptions):
    """The digest of a body solve's inputs when it starts from rest and is no shot; else None."""
    if request.start is not None or request.shot:
        return None
    digest = hashlib.blake2b(body.fingerprint, digest_size=16)
    arrays = []
    for pin in request.pins:
        digest.update(repr(("pin", pin.bone)).encode())
        arrays += [pin.position, pin.rotation]
    for goal in request.goals:
        weights = (goal.position_weight, goal.orientation_weight, goal.level)
        digest.update(repr(("goal", goal.effector.bone, weights)).encode())
        arrays += [goal.effector.offset, goal.position, goal.orientation, goal.direction, goal.aim_axis]
    for pole in request.poles:
        digest.update(repr(("pole", pole.bones, pole.facing)).encode())
        arrays += [pole.position, pole.angle]
    for array in arrays:
        if array is None:
            digest.update(b"-")
        else:
            array = np.ascontiguousarray(array, dtype=float)
            digest.update(repr(array.shape).encode() + array.tobytes())
    learned = options.learned_starts
    digest.update(repr(replace(options, learned_starts=None)).encode())
    if learned is not None:  # (its arrays, not their repr)
        digest.update(learned.body_key)
        for array in learned.starts.to_arrays().values():
            digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
    return digest.digest()


def solve_body(body: Body, request: BodyRequest, options: BodyOptions) -> BodyRequestResult:
    """``solver.body.request.solve_body_request``, answered from the cache when these inputs
    were solved before (from rest, not a shot: Per Frame)."""
    key = body_request_key(body, request, options)
    if key is None:
        return solve_body_request(body, request, options)
    found = _outcomes.get(key)
    if found is not None:
        _outcomes.move_to_end(key)
        stats["hits"] += 1
        return found
    stats["misses"] += 1
    result = solve_body_request(body, request, options)
    for value in vars(result).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)  # shared by every later hit
    _remember(key, result)
    return result


def held_bytes() -> int:
    """What the remembered outcomes take, as counted against ``MAX_BYTES``."""
    return _held_bytes


def clear() -> None:
    global _held_bytes
    _outcomes.clear()
    _held_bytes = 0
    stats.clear()
