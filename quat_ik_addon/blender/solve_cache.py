"""Solves from a fixed start remembered by their inputs, so playing frames again costs no solving.

A Per Frame chain (and *Solve Now* from its neutral pose) solves each frame from the same
start (``solve_adapter.cold_start``), so the outcome is a function of the solve's inputs alone: the chain (``Chain.fingerprint``: bones,
rest frames, lengths, limits), the goals, poles and pole angles in its root frame, and the
solver options. A digest of them keys the outcome: a frame played before is answered from
here, and anything that changes an input (a moved target, a parent, an edited limit or
setting) is a different key, so nothing is ever stale. The least recently used outcomes are
dropped beyond ``MAX_ENTRIES``. Live solves (warm from the current pose), bakes (a sequence)
and chains with learned start poses are always solved.

No ``bpy`` here.
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import replace

import numpy as np

from ..solver.chain import Chain
from . import solve_adapter

MAX_ENTRIES = 20_000  # a four-chain character over 5,000 frames; an entry is well under 1 KB

_outcomes: OrderedDict[bytes, solve_adapter.SolveOutcome] = OrderedDict()
stats: Counter = Counter()  # "hits" and "misses", for tests and the benchmark


def request_key(chain: Chain, request: solve_adapter.SolveRequest, options: solve_adapter.SolverOptions):
    """The digest of a solve's inputs when it starts from the fixed start; else None."""
    if request.start is not None or request.sequence or options.learned_starts is not None:
        return None
    digest = hashlib.blake2b(chain.fingerprint, digest_size=16)
    for array in (request.positions, request.orientations, request.poles, request.pole_angles):
        if array is None:
            digest.update(b"-")
        else:
            array = np.ascontiguousarray(array, dtype=float)
            digest.update(repr(array.shape).encode() + array.tobytes())
    digest.update(repr(replace(options, learned_starts=None)).encode())
    return digest.digest()


def solve(
    chain: Chain, request: solve_adapter.SolveRequest, options: solve_adapter.SolverOptions
) -> solve_adapter.SolveOutcome:
    """``solve_adapter.solve``, answered from the cache when these inputs were solved before."""
    key = request_key(chain, request, options)
    if key is None:
        return solve_adapter.solve(chain, request, options)
    outcome = _outcomes.get(key)
    if outcome is not None:
        _outcomes.move_to_end(key)
        stats["hits"] += 1
        return outcome
    stats["misses"] += 1
    outcome = solve_adapter.solve(chain, request, options)
    for array in (outcome.rotations, outcome.position_error, outcome.orientation_error, outcome.converged):
        array.setflags(write=False)  # shared by every later hit
    _outcomes[key] = outcome
    if len(_outcomes) > MAX_ENTRIES:
        _outcomes.popitem(last=False)
    return outcome


def clear() -> None:
    _outcomes.clear()
    stats.clear()
