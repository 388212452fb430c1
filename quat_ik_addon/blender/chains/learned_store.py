"""Learned start poses (Blow 2002's preprocess) kept on the chain, so they save with the file.

They are stored as an ID property of the chain (plain lists plus shapes) together with a
signature of the chain's rest frames and limits: after the rig or its limits change they
are stale and ignored (the chain says so) until learned again. A body's (the chains solved as
one, ``solver.body.learned_starts``) are kept on its first chain under their own key, with the
body's fingerprint, which the body solve checks.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ...solver.body.learned_starts import BodyLearnedStarts
from ...solver.learned_starts import LearnedStarts

KEY = "learned_start_poses"
BODY_KEY = "learned_body_start_poses"
NUMBERS = ("start_rotations", "centroids", "centroid_start", "coverage", "accuracy")


def signature(rig) -> str:
    chain = rig.chain
    digest = hashlib.sha1()
    for array in (chain.rest_rotations, chain.rest_offsets, chain.lengths, chain.effector_offset):
        digest.update(np.ascontiguousarray(array, dtype=float).tobytes())
    digest.update(repr(chain.limits).encode())
    return digest.hexdigest()


def _packed(learned: LearnedStarts) -> dict:
    arrays = learned.to_arrays()
    return {
        **{f"{name}_shape": list(np.shape(arrays[name])) for name in NUMBERS},
        **{name: np.ravel(arrays[name]).astype(float).tolist() for name in NUMBERS},
    }


def _unpacked(data) -> dict[str, np.ndarray]:
    arrays = {}
    for name in NUMBERS:
        shape = tuple(int(v) for v in data[f"{name}_shape"])
        arrays[name] = np.array(data[name], dtype=float).reshape(shape)
    arrays["centroid_start"] = arrays["centroid_start"].astype(np.int64)
    return arrays


def store(chain_props, rig, learned) -> None:
    chain_props[KEY] = {"signature": signature(rig), **_packed(learned)}


def store_body(chain_props, learned: BodyLearnedStarts) -> None:
    """Keep a body's learned starts on its first chain (``chain_props``)."""
    chain_props[BODY_KEY] = {
        "body_key": learned.body_key.hex(),
        "effector_bones": [effector.bone for effector in learned.effectors],
        "effector_offsets": np.ravel([effector.offset for effector in learned.effectors]).astype(float).tolist(),
        **_packed(learned.starts),
    }


def load_body(chain_props) -> BodyLearnedStarts | None:
    """The body learned starts kept on the chain (checked against the body when it is solved)."""
    data = chain_props.get(BODY_KEY)
    if data is None:
        return None
    arrays = _unpacked(data)
    arrays["body_key"] = np.array(str(data["body_key"]))
    arrays["effector_bones"] = np.array([str(bone) for bone in data["effector_bones"]])
    arrays["effector_offsets"] = np.array(data["effector_offsets"], dtype=float)
    return BodyLearnedStarts.from_arrays(arrays)


def describe_body(chain_props) -> str | None:
    """'K poses for chains …' when a body's learned starts are kept on the chain, else None."""
    data = chain_props.get(BODY_KEY)
    if data is None:
        return None
    count = int(data["start_rotations_shape"][0])
    coverage = float(data["coverage"][0]) if len(data["coverage"]) else float("nan")
    return f"body: {count} poses, {coverage:.0%} coverage"


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
    return LearnedStarts.from_arrays(_unpacked(data)), None
