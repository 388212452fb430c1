"""Learned start poses (Blow 2002's preprocess) kept on the chain, so they save with the file.

They are stored as an ID property of the chain (plain lists plus shapes) together with a
signature of the chain's rest frames and limits: after the rig or its limits change they
are stale and ignored (the chain says so) until learned again.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...solver.learned_starts import LearnedStarts

KEY = "learned_start_poses"


def signature(rig) -> str:
    chain = rig.chain
    digest = hashlib.sha1()
    for array in (chain.rest_rotations, chain.rest_offsets, chain.lengths, chain.effector_offset):
        digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
    digest.update(repr(chain.limits).encode())
    return digest.hexdigest()


def store(chain_props, rig, learned) -> None:
    arrays = learned.to_arrays()
    chain_props[KEY] = {
        "signature": signature(rig),
        **{f"{name}_shape": list(np.shape(value)) for name, value in arrays.items()},
        **{name: np.ravel(value).astype(float).tolist() for name, value in arrays.items()},
    }


def describe(chain_props, rig=None) -> str:
    data = chain_props.get(KEY)
    if data is None:
        return "none learned"
    count = int(data["start_rotations_shape"][0])
    stale = rig is not None and data["signature"] != signature(rig)
    coverage = float(data["coverage"][0]) if len(data["coverage"]) else float("nan")
    return f"{count} poses, {coverage:.0%} coverage" + (" (stale: rig or limits changed)" if stale else "")


def load(chain_props, rig):
    """The chain's LearnedStarts, or (None, why not)."""
    data = chain_props.get(KEY)
    if data is None:
        return None, "no learned start poses yet (Learn Start Poses in the Solver panel)"
    if data["signature"] != signature(rig):
        return None, "learned start poses are stale (the rig or its limits changed): learn them again"
    arrays = {}
    for name in ("start_rotations", "centroids", "centroid_start", "coverage", "accuracy"):
        shape = tuple(int(v) for v in data[f"{name}_shape"])
        arrays[name] = np.array(data[name], dtype=float).reshape(shape)
    arrays["centroid_start"] = arrays["centroid_start"].astype(np.int64)
    return LearnedStarts.from_arrays(arrays), None
