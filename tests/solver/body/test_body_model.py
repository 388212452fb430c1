"""The body: merging chains by bone name, forward kinematics, stretch, and what it refuses."""

import numpy as np
import pytest
from body_helpers import tails

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import Body, Effector, Stretch, reference_bodies
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.limits.joints import FixedJoint
from quat_ik_addon.solver.rig.reference_chains import arm3, limited_chain


def _branch(shared: Chain, bones: int, names: tuple[str, ...]) -> Chain:
    """A chain holding ``bones`` of ``shared``'s bones, then bones of its own."""
    own = limited_chain(len(names))
    return Chain(
        shared.bone_names[:bones] + names,
        np.concatenate((shared.rest_rotations[:bones], own.rest_rotations)),
        np.concatenate((shared.rest_offsets[:bones], [[0.05, shared.lengths[bones - 1], 0.0]], own.rest_offsets[1:])),
        np.concatenate((shared.lengths[:bones], own.lengths)),
        shared.limits[:bones] + own.limits,
    )


@pytest.mark.parametrize("stretched", [False, True])
def test_points_of_one_pose_are_the_forward_kinematics_points(rng, stretched):
    """``Body.points_at`` follows one pose in plain floats, several through ``forward_kinematics``."""
    for _ in range(10):
        body = reference_bodies.random_body(rng, 4, n_bones=20, stretch_share=0.3)
        bones = rng.integers(0, body.n_bones, 5)
        local = rng.normal(size=(5, 3))
        for count in (1, 3):
            rotations = body.random_poses(rng, count)
            low, high = body.stretch_bounds
            stretch = rng.uniform(low, high, (count, body.n_bones)) if stretched else None
            expected = body.forward_kinematics(rotations, stretch).points(bones, local)
            found = body.points_at(rotations, stretch, bones, local)
            np.testing.assert_allclose(found, expected, rtol=0.0, atol=1e-12)


def test_one_chain_body_moves_as_the_chain(rng):
    chain = arm3()
    body = Body.from_chains([chain])
    poses = chain.random_poses(rng, 32)
    chain_pose = chain.forward_kinematics(poses)
    body_pose = body.forward_kinematics(poses)
    np.testing.assert_allclose(body_pose.heads, chain_pose.heads, atol=1e-12)
    effector = Effector.of_chain(chain)
    tip = body.index(effector.bone)
    points = body_pose.points(np.array([tip]), np.array([[0.0, body.lengths[tip], 0.0]]) + effector.offset)
    np.testing.assert_allclose(points[:, 0], chain_pose.effector, atol=1e-12)


def test_chains_sharing_bones_merge_into_one_tree(rng):
    trunk = limited_chain(4)
    branch = _branch(trunk, 2, ("left_a", "left_b"))
    body = Body.from_chains([trunk, branch])
    assert body.n_bones == 6
    assert [body.bone_names[p] if p >= 0 else None for p in body.parents] == [
        None,
        "bone_00",
        "bone_01",
        "bone_02",
        "bone_01",
        "left_a",
    ]
    # Each chain's own forward kinematics is the body's on the chain's bones.
    poses = body.random_poses(rng, 16)
    pose = body.forward_kinematics(poses)
    for chain in (trunk, branch):
        bones = [body.index(name) for name in chain.bone_names]
        np.testing.assert_allclose(pose.heads[:, bones], chain.forward_kinematics(poses[:, bones]).heads, atol=1e-12)


def test_a_shared_bone_must_agree_in_every_chain():
    trunk = limited_chain(4)
    branch = _branch(trunk, 2, ("left_a",))
    longer = Chain(branch.bone_names, branch.rest_rotations, branch.rest_offsets, branch.lengths * 1.1, branch.limits)
    with pytest.raises(ValueError, match="bone 'bone_00' has different rest frames or lengths"):
        Body.from_chains([trunk, longer])
    stiff = Chain(branch.bone_names, branch.rest_rotations, branch.rest_offsets, branch.lengths, (FixedJoint(),) * 3)
    with pytest.raises(ValueError, match="bone 'bone_00' has different joint limits"):
        Body.from_chains([trunk, stiff])


def test_a_bone_hanging_from_two_parents_is_refused():
    trunk = limited_chain(3)
    rows = [2, 1]  # bone_02 as the trunk has it, then a bone of its own
    limits = (trunk.limits[2], trunk.limits[1])
    other = Chain(("bone_02", "x"), trunk.rest_rotations[rows], trunk.rest_offsets[rows], trunk.lengths[rows], limits)
    elsewhere = Chain(("y", "x"), trunk.rest_rotations[rows], trunk.rest_offsets[rows], trunk.lengths[rows], limits)
    with pytest.raises(ValueError, match="bone 'x' hangs from 'bone_02' in chain 1 but from 'y' in chain 2"):
        Body.from_chains([trunk, other, elsewhere])


def test_stretch_moves_the_children_along_the_bone(upper_body, rng):
    poses = upper_body.random_poses(rng, 8)
    stretch = np.ones((8, upper_body.n_bones))
    upper_arm = upper_body.index("upper_arm.L")
    stretch[:, upper_arm] = 1.3
    plain = upper_body.forward_kinematics(poses)
    stretched = upper_body.forward_kinematics(poses, stretch)
    forearm = upper_body.index("forearm.L")
    along = quat.rotate_y_axis(plain.rotations[:, upper_arm])
    # The forearm's head is 0.3 along the upper arm: 0.3 × 1.3 stretched.
    np.testing.assert_allclose(stretched.heads[:, forearm] - plain.heads[:, forearm], 0.09 * along, atol=1e-12)
    np.testing.assert_allclose(stretched.rotations, plain.rotations, atol=1e-15)
    hand_moved = tails(upper_body, stretched, "hand.L") - tails(upper_body, plain, "hand.L")
    np.testing.assert_allclose(hand_moved, 0.09 * along, atol=1e-12)
    right_hand = tails(upper_body, stretched, "hand.R") - tails(upper_body, plain, "hand.R")
    np.testing.assert_allclose(right_hand, 0.0, atol=1e-15)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"parents": (-1, 2, 1)}, "parent index 2 must name a bone listed before it"),
        ({"bone_names": ("a", "a", "c")}, "bone names must be unique"),
        ({"lengths": [1.0, 0.0, 1.0]}, "bone lengths must be positive"),
        ({"rest_offsets": np.full((3, 3), np.nan)}, "rest offsets must be finite"),
        ({"limits": (FixedJoint(),)}, "needs 3 limits, not 1"),
        ({"stretch": (None, 1.2, None)}, "stretch must be a Stretch or None"),
    ],
)
def test_a_body_refuses_what_it_cannot_hold(change, message):
    fields = {
        "bone_names": ("a", "b", "c"),
        "parents": (-1, 0, 1),
        "rest_rotations": np.tile(quat.IDENTITY, (3, 1)),
        "rest_offsets": np.zeros((3, 3)),
        "lengths": np.ones(3),
    }
    with pytest.raises(ValueError, match=message):
        Body(**{**fields, **change})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ((1.1, 1.5), "stretch minimum must be in"),
        ((0.5, 0.9), "stretch maximum must be in"),
        ((0.5, 1.5, 2.0), "stretch stiffness must be in"),
        ((float("nan"), 1.5), "stretch minimum must be finite"),
    ],
)
def test_a_stretch_range_must_hold_the_rest_length(arguments, message):
    with pytest.raises(ValueError, match=message):
        Stretch(*arguments)
