"""A body from a rig spec: the named chains merged into one ``Body`` in armature space."""

from __future__ import annotations

from dataclasses import replace

from .. import quaternion as quat
from ..body import Body, Stretch
from ..chain import Chain
from .rest_pose import spec_rest_matrices
from .spec import RigSpec


def body_from_rig_spec(rig: RigSpec, chain_names: list[str], stretch: dict[str, Stretch] | None = None) -> Body:
    """The named chains of a rig spec as one body whose root frame is armature space. A chain's
    first bone hangs from its parent where the body holds that bone; a chain whose root's
    parent lies outside the body has that parent at rest (as ``solve`` has it)."""
    chains = [Chain.from_rig_spec(rig, name) for name in chain_names]
    held = {bone for chain in chains for bone in chain.bone_names}
    attach: dict[str, str] = {}
    for k, chain in enumerate(chains):
        root = chain.bone_names[0]
        parent = rig.bone(root).parent
        if parent in held:
            attach[root] = parent
        elif parent is not None:  # its root frame is the parent's rest frame: put it in armature space
            frame = spec_rest_matrices(rig, [parent])[parent]
            turn = quat.from_matrix(frame[:3, :3])
            rest_rotations, rest_offsets = chain.rest_rotations.copy(), chain.rest_offsets.copy()
            rest_rotations[0] = quat.multiply(turn, rest_rotations[0])
            rest_offsets[0] = frame[:3, 3] + quat.rotate(turn, rest_offsets[0])
            chains[k] = replace(chain, rest_rotations=rest_rotations, rest_offsets=rest_offsets)
    return Body.from_chains(chains, stretch=stretch, attach=attach)
