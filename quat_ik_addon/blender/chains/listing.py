"""Listing chains on an armature: a new chain with a unique name, made the active one.

Add Chain, Mirror Chain and Quat IK Chain from IK Constraint list chains through here, and
``records`` lists the chains that Join or Symmetrize brought with their bones.
"""

from __future__ import annotations

from ..runtime.state import session
from .tip_records import new_uid


def create_chain(
    ob,
    tip: str,
    length: int,
    target,
    *,
    target_bone: str = "",
    name: str = "",
    mode: str = "LIVE",
    orientation_mode: str = "NONE",
    orientation=None,
    orientation_bone: str = "",
    solver_settings: dict | None = None,
):
    """Append a chain (checked by the caller) to the armature's list and make it the active one."""
    settings = ob.quat_ik
    chain = settings.chains.add()
    chain.uid = new_uid()
    chain.name = unique_chain_name(settings.chains, name or tip, exclude=chain)
    chain.tip_bone, chain.chain_length = tip, length
    chain.target_object, chain.target_bone = target, target_bone
    chain.orientation_mode = orientation_mode
    chain.orientation_object, chain.orientation_bone = orientation, orientation_bone
    for setting, value in (solver_settings or {}).items():
        setattr(chain, setting, value)
    chain.mode = mode
    settings.active_chain_index = len(settings.chains) - 1
    session.bump(ob)
    return chain


def unique_chain_name(chains, base: str, exclude=None) -> str:
    """``base``, or ``base.001``... where another chain has that name."""
    names = {c.name for c in chains if exclude is None or c != exclude}
    name, i = base, 1
    while name in names:
        name, i = f"{base}.{i:03d}", i + 1
    return name
