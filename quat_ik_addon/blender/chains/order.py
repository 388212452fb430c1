"""The order an armature's chains are best solved in: each after the chains that move its inputs.

Chains are solved in list order, and a chain's inputs (its root's parent, the bones its
targets and pole move with) are read before the chains after it turn their bones: an arm
chain listed above the spine chain it hangs from is solved from where the spine was, and
catches up only at the next update (the panel warns of it, ``solving.chain_jobs``). Sorting puts
every chain after the chains that move it, keeping the listed order wherever that already
holds. Chains sharing bones keep their order: there the list is the animator's priority
(the later chain turns the shared bones last), not a dependency.
"""

from __future__ import annotations

from collections.abc import Sequence

ORDER_HINT = "move it below"  # in a chain's warning, where the panel then offers to sort


def dependency_order(bones: Sequence[set[str]], moved_by: Sequence[set[str]]) -> list[int]:
    """Places of the chains in the order to solve them: chain i after chain j wherever i's
    inputs move with j's bones (``moved_by[i]`` meets ``bones[j]``) and j's do not move with
    i's, unless the two share bones. Of the chains free to go next, the one listed first goes
    (Kahn's topological sort, smallest first: the listed order wherever it can stay); chains
    that move each other round a longer loop keep their listed order there."""
    count = len(bones)
    before = [
        {
            j
            for j in range(count)
            if j != i
            and bones[i].isdisjoint(bones[j])
            and not moved_by[i].isdisjoint(bones[j])
            and moved_by[j].isdisjoint(bones[i])
        }
        for i in range(count)
    ]
    order: list[int] = []
    placed: set[int] = set()
    while len(order) < count:
        left = [i for i in range(count) if i not in placed]
        ready = [i for i in left if before[i] <= placed]
        chosen = ready[0] if ready else left[0]
        order.append(chosen)
        placed.add(chosen)
    return order


def chain_dependencies(ob) -> tuple[list[set[str]], list[set[str]]]:
    """Per chain of armature ``ob`` (list order): its bones, and the bones whose motion moves its
    inputs (``runtime.live_inputs.upstream_bones``). A chain that cannot be read has neither."""
    from ..errors import ChainError
    from ..rig.reader import chain_bone_names
    from ..runtime.live_inputs import upstream_bones

    bones, moved_by = [], []
    for chain in ob.quat_ik.chains:
        try:
            names = chain_bone_names(ob, chain.tip_bone, chain.chain_length)
            upstream = upstream_bones(ob, chain, names)
        except ChainError:
            names, upstream = (), set()
        bones.append(set(names))
        moved_by.append(set(upstream))
    return bones, moved_by
