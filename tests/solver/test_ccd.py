"""Batched CCD: limits hold, errors are honest, reachable targets are reached."""

import numpy as np
import pytest
from chain_targets import reachable_targets

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.learned_starts import learn_start_poses
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow
from quat_ik_addon.solver.methods.ccd import solve_ccd
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import METHODS, SolveSettings
from quat_ik_addon.solver.shots.cycles import solve_cycle
from quat_ik_addon.solver.shots.sequence import solve_sequence
from quat_ik_addon.solver.solve import solve


def assert_result_is_honest(chain, result, targets):
    """Inside every limit, unit quaternions, and the reported error is what FK gives."""
    assert np.all(np.isfinite(result.rotations))
    np.testing.assert_allclose(np.linalg.norm(result.rotations, axis=-1), 1.0, atol=1e-12)
    assert np.all(result.rotations[..., 0] >= 0.0)  # canonical: w ≥ 0
    assert np.max(chain.limit_violation(result.rotations)) < 1e-9
    effector = chain.forward_kinematics(result.rotations).effector
    np.testing.assert_allclose(np.linalg.norm(effector - targets, axis=1), result.position_error, atol=1e-12)
    # (Orientation met within the turn that moves a point at the chain's reach by the tolerance.)
    met = (result.position_error <= result.tolerance) & (result.orientation_error <= result.tolerance / chain.reach)
    np.testing.assert_array_equal(result.converged, met)


@pytest.mark.parametrize("order", ["tip_to_base", "base_to_tip"])
def test_limits_hold_after_every_solve(limited_chain, rng, order):
    targets = rng.uniform(-1.2, 1.2, size=(300, 3)) * limited_chain.reach
    result = solve_ccd(limited_chain, targets, settings=SolveSettings(order=order, max_iterations=40))
    assert_result_is_honest(limited_chain, result, targets)


@pytest.mark.parametrize(
    ("n_bones", "order", "floor"),
    [
        # Two bones converge sublinearly at full stretch (the workspace boundary): a few stall.
        (2, "tip_to_base", 0.98),
        (3, "tip_to_base", 0.99),
        (10, "tip_to_base", 0.99),
        (30, "tip_to_base", 0.99),
        # Base to tip has a fixed point in a straight chain aimed at the target (nothing bends),
        # so it only shines on long chains.
        (10, "base_to_tip", 0.99),
        (30, "base_to_tip", 0.99),
    ],
)
def test_free_chains_reach_reachable_targets_cold(rng, n_bones, order, floor):
    chain = reference_chains.free_chain(n_bones)
    targets, _ = reachable_targets(chain, rng, 500)
    result = solve_ccd(chain, targets, settings=SolveSettings(order=order, max_iterations=500))
    assert_result_is_honest(chain, result, targets)
    assert result.tolerance == pytest.approx(1e-6 * chain.reach)
    assert result.success_rate >= floor, result.success_rate


def test_limited_chains_with_room_reach_reachable_targets(rng):
    """Joints with wide limits leave CCD room: cold solves converge like free ones."""
    roomy = BallJoint((ConeWindow(np.array([0, 1.0, 0]), np.radians(120)),), AngleRange(-2.5, 2.5))
    chain = reference_chains.free_chain(4)
    chain = Chain(chain.bone_names, chain.rest_rotations, chain.rest_offsets, chain.lengths, (roomy,) * 4)
    targets, _ = reachable_targets(chain, rng, 500)
    result = solve_ccd(chain, targets, settings=SolveSettings(max_iterations=500))
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate >= 0.98, result.success_rate


def test_reference_chain_success_rates_are_reported(limited_chain, rng, record_property):
    """Part 1 reports cold-CCD reach on the reference chains; restarts raise it (part 2)."""
    targets, _ = reachable_targets(limited_chain, rng, 400)
    result = solve_ccd(limited_chain, targets, settings=SolveSettings(max_iterations=200))
    assert_result_is_honest(limited_chain, result, targets)
    record_property("cold_ccd_success_rate", result.success_rate)
    print(f"{limited_chain.n_bones} bones: cold CCD reaches {result.success_rate:.1%} of reachable targets")
    assert result.success_rate > 0.3  # a floor far below what these chains reach: fails if most stop reaching


def test_warm_start_from_the_answer_converges_at_once(limited_chain, rng):
    targets, poses = reachable_targets(limited_chain, rng, 100)
    result = solve_ccd(limited_chain, targets, start_rotations=poses)
    assert np.all(result.converged)
    assert np.all(result.iterations == 0)


def test_unreachable_targets_get_the_best_pose_flagged_and_never_nan():
    chain = reference_chains.arm3()
    far = np.array([[0, 10.0, 0], [5.0, 5.0, 5.0], [0, -3, 0]])
    result = solve_ccd(chain, far)
    assert_result_is_honest(chain, result, far)
    assert not np.any(result.converged)
    # Best pose toward (0, 10, 0): the straight arm, which rest already is.
    assert result.position_error[0] == pytest.approx(10.0 - chain.reach, abs=1e-6)


def test_target_on_a_joint_and_straight_behind(rng):
    chain = reference_chains.arm3()
    heads = chain.forward_kinematics(chain.rest_pose(1)).heads[0]
    targets = np.concatenate((heads, [[0, -0.5, 0], [0, -0.68, 0], [0, 0, 0]]))
    result = solve_ccd(chain, targets)
    assert_result_is_honest(chain, result, targets)


def test_antiparallel_first_step_on_a_free_chain_stays_finite():
    chain = reference_chains.free_chain(3)
    # Straight up at rest, target straight down: the first turns are antiparallel, and the
    # chain can fold onto the line through its root and the target, where no joint has a turn
    # left (whether it does is decided by rounding): restarts get out of that.
    targets = np.array([[0.0, -0.5, 0.0], [0.0, -1.0 + 1e-9, 0.0], [0.0, -1.0, 0.0]])
    result = solve_ccd(chain, targets, settings=SolveSettings(max_iterations=300))
    assert_result_is_honest(chain, result, targets)
    restarted = solve(chain, targets, settings=SolveSettings(max_iterations=300, restarts=2))
    assert_result_is_honest(chain, restarted, targets)
    assert np.all(restarted.converged)


def test_zero_length_offsets_and_effector_offset():
    # Bones sharing a head (zero offset) and an effector offset off the tip.
    chain = Chain(
        ("a", "b"),
        np.tile(quat.IDENTITY, (2, 1)),
        [[0, 0, 0], [0, 0, 0]],
        [0.5, 0.5],
        (HingeJoint(np.array([1.0, 0, 0])), BallJoint()),
        effector_offset=[0.1, 0.0, 0.0],
    )
    # Both joints sit at the origin, so the effector stays on a sphere of radius |tip vector|.
    on_sphere = quat.rotate(quat.from_axis_angle(np.array([0.6, 0.0, 0.8]), 1.1), chain.tip_vector)
    targets = np.array([on_sphere, [0.0, 0.0, 0.0]])
    result = solve_ccd(chain, targets, settings=SolveSettings(max_iterations=200))
    assert_result_is_honest(chain, result, targets)
    assert result.converged[0]


def test_start_pose_outside_the_limits_is_brought_inside():
    chain = reference_chains.arm3()
    start = quat.normalize(np.array([[0.1, 0.9, 0.2, 0.3]] * 3))  # far outside the elbow hinge
    assert np.max(chain.limit_violation(start)) > 0.5
    result = solve_ccd(chain, [[0.2, 0.3, 0.1]], start_rotations=start, settings=SolveSettings(max_iterations=0))
    assert np.max(chain.limit_violation(result.rotations)) < 1e-9


@pytest.mark.parametrize("method", METHODS)
def test_a_rest_pose_outside_the_limits_is_never_returned(method):
    """No start given: the solve starts from rest brought inside, even where the goal is met
    at rest (the straight knee's own effector) or no step beats rest (a target out of reach)."""
    knee = HingeJoint([1.0, 0.0, 0.0], AngleRange(np.radians(10.0), np.radians(90.0)))
    chain = Chain(("a", "b"), np.tile([1.0, 0, 0, 0], (2, 1)), [[0, 0, 0], [0, 1, 0]], [1.0, 1.0], (BallJoint(), knee))
    at_rest = chain.forward_kinematics(chain.rest_pose(1)).effector
    targets = np.vstack([at_rest, [[0.0, 5.0, 0.0]]])
    result = solve(chain, targets, settings=SolveSettings(method=method))
    assert_result_is_honest(chain, result, targets)
    assert not result.converged[1]
    for shot in (
        solve_sequence(chain, np.repeat(at_rest, 5, axis=0)),
        solve_cycle(chain, np.repeat(targets, 3, axis=0)),
    ):
        assert np.max(chain.limit_violation(shot.rotations)) < 1e-9


def test_bad_input_gets_a_clear_message():
    chain = reference_chains.arm3()
    with pytest.raises(ValueError, match="NaN"):
        solve_ccd(chain, [[np.nan, 0, 0]])
    with pytest.raises(ValueError, match=r"\(N, 3\)"):
        solve_ccd(chain, [[1, 2]])
    with pytest.raises(ValueError, match="start rotations"):
        solve_ccd(chain, [[0, 0.5, 0]], start_rotations=np.ones((2, 4)))
    with pytest.raises(ValueError, match="order"):
        SolveSettings(order="sideways")
    with pytest.raises(ValueError, match="beyond"):
        solve_ccd(chain, [[1e160, 0, 0]])  # its error would overflow to infinity
    with pytest.raises(ValueError, match="complex"):
        solve_ccd(chain, np.array([[0.1 + 1j, 0, 0]]))
    with pytest.raises(ValueError, match="aim axis"):
        Goals(np.zeros((1, 3)), directions=[[0, 0, 1]], aim_axis=[0, 0, 0])
    with pytest.raises(ValueError, match="hinge axis"):
        HingeJoint([0.0, 0.0, 0.0])
    for bad in ({"seed": -1}, {"max_iterations": 2.5}, {"restarts": True}, {"stall_ratio": np.nan}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            SolveSettings(**bad)
    with pytest.raises(ValueError, match="samples"):
        learn_start_poses(chain, samples=0)
    with pytest.raises(ValueError, match="nothing to reach"):  # the effector on the only joint
        Chain(("eye",), [[1.0, 0, 0, 0]], [[0, 0, 0]], [1.0], effector_offset=[0.0, -1.0, 0.0])


def test_batched_and_single_solves_agree(rng):
    chain = reference_chains.arm3()
    targets, _ = reachable_targets(chain, rng, 20)
    batched = solve_ccd(chain, targets)
    for i in range(0, 20, 5):
        single = solve_ccd(chain, targets[i])
        # The same answer up to rounding (BLAS may round a batch and a single row differently,
        # which can shift the sweep at which a solve stops by one).
        assert single.converged[0] == batched.converged[i]
        assert np.max(quat.angle_between(single.rotations[0], batched.rotations[i])) < 1e-5


def test_chain_fingerprint_changes_with_everything_a_solve_reads():
    base = reference_chains.arm3()
    assert base.fingerprint == reference_chains.arm3().fingerprint  # by value, not identity
    elbow = HingeJoint(np.array([1.0, 0.0, 0.0]), AngleRange(0.0, np.radians(149.0)))  # 150° in arm3
    changed = {
        "a limit": Chain(
            base.bone_names,
            base.rest_rotations,
            base.rest_offsets,
            base.lengths,
            (base.limits[0], elbow, base.limits[2]),
        ),
        "a clamp mode": reference_chains.arm3(clamp_mode="boundary"),
        "a rest frame": Chain(
            base.bone_names,
            quat.normalize(base.rest_rotations + np.array([0.0, 0.0, 1e-6, 0.0])),
            base.rest_offsets,
            base.lengths,
            base.limits,
        ),
        "a length": Chain(base.bone_names, base.rest_rotations, base.rest_offsets, base.lengths * 1.001, base.limits),
        "the effector offset": Chain(
            base.bone_names,
            base.rest_rotations,
            base.rest_offsets,
            base.lengths,
            base.limits,
            effector_offset=np.array([0.0, 0.0, 0.01]),
        ),
        "a name": Chain(("a", "b", "c"), base.rest_rotations, base.rest_offsets, base.lengths, base.limits),
    }
    for what, chain in changed.items():
        assert chain.fingerprint != base.fingerprint, what
