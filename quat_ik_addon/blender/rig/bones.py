"""A chain's bones, followed up the parents from its tip bone."""

from __future__ import annotations

from ..errors import ChainError


def follow_parents(ob, tip_bone: str, chain_length: int) -> tuple[str, ...]:
    """Bone names root to tip: ``chain_length`` bones up the parents from ``tip_bone``."""
    bones = ob.data.bones
    if not tip_bone:
        raise ChainError("The chain has no tip bone")
    bone = bones.get(tip_bone)
    if bone is None:
        raise ChainError(f"Bone '{tip_bone}' not found in armature '{ob.name}' (renamed or deleted?)")
    names = []
    while bone is not None and len(names) < chain_length:
        names.append(bone.name)
        bone = bone.parent
    if len(names) < chain_length:
        raise ChainError(
            f"A chain of {chain_length} bones does not fit: '{tip_bone}' has only {len(names)} bone(s) "
            "from itself up to the top of its hierarchy"
        )
    return tuple(reversed(names))
