"""Sort by Dependency's order (``chains.order.dependency_order``), without Blender.

The rig: hips > spine > chest, with an arm (shoulder > upper > fore > hand) on the chest.
A chain's ``moved_by`` is its root's parent with its ancestors (and its targets' anchors)."""

from __future__ import annotations

from quat_ik_addon.blender.chains.order import dependency_order

SPINE = {"spine", "chest"}
ARM = {"upper", "fore", "hand"}
HEAD = {"neck", "head"}
ABOVE_SPINE = {"hips"}
ABOVE_ARM = {"shoulder", "chest", "spine", "hips"}
ABOVE_HEAD = {"chest", "spine", "hips"}


def test_a_chain_goes_after_the_chain_it_hangs_from() -> None:
    assert dependency_order([ARM, SPINE], [ABOVE_ARM, ABOVE_SPINE]) == [1, 0]


def test_the_listed_order_stays_where_nothing_moves_another() -> None:
    assert dependency_order([SPINE, ARM, HEAD], [ABOVE_SPINE, ABOVE_ARM, ABOVE_HEAD]) == [0, 1, 2]
    # The arm and the head both hang from the spine, not from each other: their order stays.
    assert dependency_order([HEAD, ARM, SPINE], [ABOVE_HEAD, ABOVE_ARM, ABOVE_SPINE]) == [2, 0, 1]


def test_a_chain_of_dependencies_listed_backwards_is_turned_round() -> None:
    hand = {"finger1", "finger2"}
    above_hand = {"hand", *ARM, *ABOVE_ARM}
    assert dependency_order([hand, ARM, SPINE], [above_hand, ABOVE_ARM, ABOVE_SPINE]) == [2, 1, 0]


def test_a_target_on_another_chains_bone_counts_as_moving_it() -> None:
    other_arm = {"upper.R", "fore.R", "hand.R"}
    # The right hand reaches for a bone under the left hand: it goes after the left arm.
    reaching = {"shoulder.R", "chest", "spine", "hips", "hand", *ARM, "shoulder"}
    assert dependency_order([other_arm, ARM], [reaching, ABOVE_ARM]) == [1, 0]


def test_chains_sharing_bones_keep_their_order() -> None:
    # An arm chain from the chest shares the chest with the spine chain and hangs from it:
    # the list says which turns the chest last, and that stays the animator's choice.
    arm_from_chest = {"chest", "shoulder", *ARM}
    assert dependency_order([arm_from_chest, SPINE], [{"spine", "hips"}, ABOVE_SPINE]) == [0, 1]


def test_chains_moving_each_other_keep_their_order() -> None:
    # Each reaches for a bone of the other: no order serves both, the list's stays.
    left, right = {"a1", "a2"}, {"b1", "b2"}
    assert dependency_order([left, right], [{"b2"}, {"a2"}]) == [0, 1]
    # ... and round a loop of three, too, while a chain outside the loop still goes first.
    third = {"c1", "c2"}
    root = {"r"}
    loop = dependency_order([left, right, third, root], [{"c2", "r"}, {"a2", "r"}, {"b2", "r"}, set()])
    assert loop[0] == 3 and sorted(loop) == [0, 1, 2, 3]


def test_unreadable_chains_and_an_empty_list() -> None:
    assert dependency_order([], []) == []
    assert dependency_order([set(), ARM, SPINE], [set(), ABOVE_ARM, ABOVE_SPINE]) == [0, 2, 1]
