"""What a Live update must solve: the chains whose inputs changed, and the chains below them.

Each chain's inputs are summed up by ``rig.reader.input_fingerprint`` (matrices only, cheap);
the handlers keep the fingerprints a chain was last solved with, under the settings
generation they were read in (``session.generation``: a changed setting, undo or a loaded
file solves every chain again). Dragging one hand's target then solves that arm alone, not
every chain of the character.

A chain hanging below a solved one (an arm on a spine chain), or aiming at a bone that
does, is solved with it: ``solving.chain_jobs`` corrects its inputs by how the chains before it
moved, within the same update, where its own fingerprint (read before the solve) has not
changed yet. Writing the solved pose then moves the posed part of those chains' inputs (the
root parent's pose, target bones of the armature): the Live timer, which finishes a chain
left short once the inputs rest, compares only what our writes do not move
(``unmoved_by``, ``same_inputs``).
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import ChainError
from ..rig import reader
from .state import session


class Fingerprints(NamedTuple):
    """An armature's solved-from inputs: the settings generation and, per chain (by its place,
    name and tip), its input fingerprint (own inputs, posed inputs) or why it cannot be read."""

    generation: tuple[int, int]  # ``session.generation_of`` the armature
    chains: dict


def chain_key(index: int, chain) -> tuple:
    return (index, chain.name, chain.tip_bone)


def fingerprints(ob, chains, depsgraph) -> Fingerprints:
    found = {}
    for index, chain in enumerate(chains):
        try:
            found[chain_key(index, chain)] = reader.input_fingerprint(ob, chain, depsgraph)
        except ChainError as error:
            found[chain_key(index, chain)] = str(error)
    return Fingerprints(session.generation_of(ob), found)


def _changed(chains, now: Fingerprints, before: Fingerprints | None) -> set[int]:
    """Places of the chains whose inputs differ from ``before`` (all of them after a settings
    change, or when nothing was solved before)."""
    if before is None or before.generation != now.generation:
        return set(range(len(chains)))
    return {
        index
        for index, chain in enumerate(chains)
        if before.chains.get(chain_key(index, chain)) != now.chains[chain_key(index, chain)]
    }


def upstream_bones(ob, chain, names) -> set[str]:
    """Bones of ``ob`` whose motion moves this chain's inputs (``names``, its bones): the
    ancestors of its root bone and of the bones its target, orientation target and pole move
    with (``anchor_bone``), those included."""
    root_parent = ob.data.bones[names[0]].parent
    anchors = [
        reader.anchor_bone(ob, target, bone)
        for target, bone in (
            (chain.target_object, chain.target_bone),
            (chain.orientation_object, chain.orientation_bone),
            (chain.pole_object, chain.pole_bone),
        )
    ]
    return reader.with_ancestors(ob, (root_parent.name if root_parent else None, *anchors))


def _walk(ob, chains, moves) -> list[bool]:
    """Per chain (priority order): does it hang below a chain before it for which
    ``moves(index, chain, below)`` said True (a chain solved, whose writes move what hangs
    below it)? A chain that cannot be read hangs below nothing and moves nothing."""
    moved: set[str] = set()
    below_flags = []
    for index, chain in enumerate(chains):
        try:
            names = reader.chain_bone_names(ob, chain.tip_bone, chain.chain_length)
            below = bool(moved) and not moved.isdisjoint(upstream_bones(ob, chain, names))
        except ChainError:
            names, below = (), False
        below_flags.append(below)
        if moves(index, chain, below):
            moved.update(names)
    return below_flags


def with_chains_below(ob, chains, picked: set[int]) -> list:
    """The chains at the places ``picked`` and every later chain whose inputs move with one
    of those before it (priority order)."""
    chosen = []

    def moves(index, chain, below):
        if index in picked or below:
            chosen.append(chain)
            return True
        return False

    _walk(ob, chains, moves)
    return chosen


def chains_to_solve(ob, chains, now: Fingerprints, before: Fingerprints | None) -> list:
    """The chains (priority order) whose inputs changed since ``before``, and every later
    chain whose inputs move with one solved before it."""
    return with_chains_below(ob, chains, _changed(chains, now, before))


def unmoved_by(ob, chains, now: Fingerprints, solved) -> Fingerprints:
    """``now`` less what writing the pose of ``solved`` moves: the posed part of the chains
    that hang below one of them. What is left still says whether anything else has changed
    after the write (``same_inputs``)."""
    solved_ids = {id(chain) for chain in solved}
    below = _walk(ob, chains, lambda _index, chain, _below: id(chain) in solved_ids)
    kept = {}
    for index, chain in enumerate(chains):
        key = chain_key(index, chain)
        value = now.chains[key]
        kept[key] = (value[0], None) if below[index] and isinstance(value, tuple) else value
    return Fingerprints(now.generation, kept)


def same_inputs(now: Fingerprints, kept: Fingerprints) -> bool:
    """Whether the inputs ``kept`` (``unmoved_by``) are the same ``now``."""
    if now.generation != kept.generation or now.chains.keys() != kept.chains.keys():
        return False
    for key, value in kept.chains.items():
        current = now.chains[key]
        if isinstance(value, tuple) and value[1] is None:
            current = (current[0], None) if isinstance(current, tuple) else current
        if current != value:
            return False
    return True


def solved_now(before: Fingerprints | None, now: Fingerprints, solved) -> Fingerprints:
    """What the chains were last solved with after ``solved`` (a Per Frame solve) were solved
    from ``now``: the others keep what they had ``before`` (nothing, after a settings change)."""
    solved_names = {(chain.name, chain.tip_bone) for chain in solved}
    kept = before.chains if before is not None and before.generation == now.generation else {}
    merged = {key: kept[key] for key in now.chains if key in kept}
    merged.update({key: value for key, value in now.chains.items() if key[1:] in solved_names})
    return Fingerprints(now.generation, merged)
