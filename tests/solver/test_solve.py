"""Part 2 of the solver: restarts, orientation goals, DLS, stiffness, rest pull, learned starts."""

from pathlib import Path

import numpy as np
import pytest
from chain_targets import reachable_targets
from test_ccd import assert_result_is_honest

import quat_ik_addon.solver.methods.ladder as methods_module
import quat_ik_addon.solver.solve as solve_module
from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.learned_starts import LearnedStarts, learn_start_poses
from quat_ik_addon.solver.limits.joints import AngleRange, FreeJoint, HingeJoint
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.rig.spec import load_rig_spec
from quat_ik_addon.solver.settings import METHODS, SolveSettings
from quat_ik_addon.solver.solve import _restart, pose_distance, solve

Y_AXIS = np.array([0.0, 1.0, 0.0])
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("method", METHODS)
def test_limits_hold_for_every_method_with_orientation_stiffness_and_restarts(limited_chain, rng, method):
    targets, poses = reachable_targets(limited_chain, rng, 60)
    wanted = limited_chain.forward_kinematics(poses).rotations[:, -1]
    goals = Goals(targets + rng.normal(scale=0.2, size=targets.shape), orientations=wanted)
    settings = SolveSettings(method=method, restarts=1, restart_candidates=2, max_iterations=30, rest_pull=0.2)
    result = solve(limited_chain, goals, settings=settings, preferred_rotations=limited_chain.rest_pose())
    assert_result_is_honest(limited_chain, result, goals.positions)
    # (Measured on the kernel's forward kinematics where it runs: numpy's to rounding.)
    np.testing.assert_allclose(
        result.orientation_error,
        goals.orientation_error(limited_chain.forward_kinematics(result.rotations).rotations[:, -1]),
        atol=1e-12,
    )


@pytest.mark.parametrize("name", ["arm3", "chain10", "chain30"])
def test_restarts_reach_nearly_every_reachable_target(name, rng, record_property):
    chain = reference_chains.REFERENCE_CHAINS[name]()
    targets, _ = reachable_targets(chain, rng, 1000)
    result = solve(chain, targets, settings=SolveSettings(method="dls", restarts=4))
    assert_result_is_honest(chain, result, targets)
    record_property("success_rate", result.success_rate)
    assert result.success_rate >= 0.995, result.success_rate
    assert np.max(result.position_error[result.converged]) <= 1e-6 * chain.reach


def test_ccd_with_restarts_reaches_nearly_every_reachable_target_on_arm3(rng):
    chain = reference_chains.arm3()
    targets, _ = reachable_targets(chain, rng, 1000)
    settings = SolveSettings(method="ccd", restarts=4, max_iterations=300, restart_iterations=300)
    result = solve(chain, targets, settings=settings)
    assert result.success_rate >= 0.995, result.success_rate
    assert np.any(result.restarts > 0)  # restarts did the work


def test_random_poses_drawn_again_are_the_draws_and_leave_the_generator_as_they_do(limited_chain):
    """A chain keeps a few rows it drew (restart rounds draw the same ones from the same seed):
    drawn again from the same state they are what a chain that kept nothing draws, and the
    generator goes on alike."""

    def keeping_nothing() -> Chain:
        c = limited_chain
        return Chain(c.bone_names, c.rest_rotations, c.rest_offsets, c.lengths, c.limits, c.effector_offset)

    for count in (8, 3, 8):
        drawn = limited_chain.random_poses(np.random.default_rng(11), count)
        drawn[:] = 0.0  # (the caller's to change: what is kept is not)
        kept, fresh, other = np.random.default_rng(11), np.random.default_rng(11), keeping_nothing()
        for _ in range(2):  # from memory, then from the state it left the generator in
            np.testing.assert_array_equal(limited_chain.random_poses(kept, count), other.random_poses(fresh, count))
        np.testing.assert_array_equal(kept.normal(size=5), fresh.normal(size=5))


def test_straight_rest_on_the_elbow_limit_does_not_get_stuck(rng):
    """The case that defeats Blender's IK: rest is straight, exactly on the elbow's 0° limit,
    and targets need the elbow bent; a solver that starts from rest finds no gradient to bend."""
    chain = reference_chains.arm3()
    assert chain.limits[1].angle_range.minimum == 0.0
    targets, _ = reachable_targets(chain, rng, 1000)
    bent = np.linalg.norm(targets, axis=1) < 0.9 * chain.reach
    result = solve(chain, targets[bent], settings=SolveSettings(restarts=4))
    assert result.success_rate >= 0.995, result.success_rate


@pytest.mark.parametrize("method", ["ccd_dls", "dls"])
def test_full_orientation_targets_are_reached_where_a_pose_exists(rng, method):
    chain = reference_chains.arm3()  # 7 degrees of freedom: a point and a frame are reachable
    poses = chain.random_poses(rng, 300)
    fk = chain.forward_kinematics(poses)
    goals = Goals(fk.effector, orientations=fk.rotations[:, -1])
    result = solve(chain, goals, settings=SolveSettings(method=method, restarts=4))
    assert result.success_rate >= 0.99, result.success_rate
    met = result.converged
    assert np.max(result.orientation_error[met]) <= 1e-6
    assert np.max(result.position_error[met]) <= 1e-6 * chain.reach


def test_direction_targets_point_the_tip_axis(rng):
    chain = reference_chains.arm3()
    poses = chain.random_poses(rng, 300)
    fk = chain.forward_kinematics(poses)
    aim = np.array([0.0, 0.0, 1.0])
    goals = Goals(fk.effector, directions=quat.rotate(fk.rotations[:, -1], aim), aim_axis=aim)
    result = solve(chain, goals, settings=SolveSettings(restarts=4))
    assert result.success_rate >= 0.99
    reached_aim = quat.rotate(chain.forward_kinematics(result.rotations).rotations[:, -1], aim)
    assert np.max(quat.direction_angle(reached_aim[result.converged], goals.directions[result.converged])) <= 1e-6


def non_redundant_arm() -> Chain:
    """Yaw, pitch, elbow hinges with ranges that leave exactly one solution per target."""
    z_axis, x_axis = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    base = reference_chains.free_chain(3)
    limits = (
        HingeJoint(Y_AXIS, AngleRange(-1.2, 1.2)),
        HingeJoint(x_axis, AngleRange(0.1, 1.4)),
        HingeJoint(z_axis * 0 + x_axis, AngleRange(0.2, 2.4)),
    )
    offsets = np.array([[0, 0, 0], [0, 0.0, 0], [0, 0.5, 0]])
    return Chain(("yaw", "pitch", "elbow"), base.rest_rotations, offsets, np.array([1e-3, 0.5, 0.5]), limits)


def test_dls_and_ccd_agree_on_well_posed_targets(rng):
    chain = non_redundant_arm()
    targets, poses = reachable_targets(chain, rng, 200)
    settings = dict(restarts=4, max_iterations=400, restart_iterations=400)
    by_ccd = solve(chain, targets, settings=SolveSettings(method="ccd", **settings))
    by_dls = solve(chain, targets, settings=SolveSettings(method="dls", **settings))
    both = by_ccd.converged & by_dls.converged
    assert np.mean(both) >= 0.98
    assert np.max(pose_distance(by_ccd.rotations[both], by_dls.rotations[both])) < 1e-4
    assert np.max(pose_distance(by_dls.rotations[both], poses[both])) < 1e-4


@pytest.mark.parametrize(
    ("name", "iterations", "needed"), [("elliptic3", 20, 0.85), ("arm3", 20, 0.80), ("chain10", 10, 0.95)]
)
def test_dls_slides_joints_along_the_limits_they_press_on(name, iterations, needed):
    """Goals made by poses whose joints sit on their limits, from starts nudged off them: DLS
    keeps a joint its limit turned back off that direction while the descent still pushes it
    out, so the other joints make up for it. (Clamping alone, each step partly clamped away,
    met 67%, 65% and 83% of these.)"""
    chain = reference_chains.elliptic_chain(3) if name == "elliptic3" else reference_chains.REFERENCE_CHAINS[name]()
    rng = np.random.default_rng(1)
    count, n = 400, chain.n_bones
    wild = quat.from_axis_angle(quat.normalize(rng.normal(size=(count, n, 3))), rng.uniform(1.0, 2.5, (count, n)))
    on_limits = chain.clamp_to_limits(wild)
    targets = chain.forward_kinematics(on_limits).effector
    nudge = quat.from_axis_angle(quat.normalize(rng.normal(size=(count, n, 3))), np.full((count, n), 0.25))
    starts = chain.clamp_to_limits(quat.multiply(nudge, on_limits))
    settings = SolveSettings(method="dls", max_iterations=iterations, tolerance=1e-4 * chain.reach)
    result = solve(chain, targets, start_rotations=starts, settings=settings)
    assert_result_is_honest(chain, result, targets)
    assert result.success_rate >= needed


def with_root_stiffness(chain: Chain, stiffness: float) -> Chain:
    limits = tuple(type(limit)(stiffness=stiffness if i == 0 else 0.0) for i, limit in enumerate(chain.limits))
    return Chain(chain.bone_names, chain.rest_rotations, chain.rest_offsets, chain.lengths, limits)


@pytest.mark.parametrize("method", METHODS)
def test_stiff_joints_move_less(rng, method):
    loose = reference_chains.free_chain(6)
    stiff = with_root_stiffness(loose, 0.9)
    assert loose.step_shares is None and stiff.step_shares[0] == pytest.approx(0.1)
    targets, _ = reachable_targets(loose, rng, 200)
    settings = SolveSettings(method=method, max_iterations=300)
    loose_result, stiff_result = solve(loose, targets, settings=settings), solve(stiff, targets, settings=settings)
    loose_root = quat.angle_between(loose_result.rotations[:, 0], quat.IDENTITY)
    stiff_root = quat.angle_between(stiff_result.rotations[:, 0], quat.IDENTITY)
    assert np.mean(stiff_root) < 0.7 * np.mean(loose_root)
    # The other joints make up for it: the goals are met as often.
    assert np.mean(stiff_result.converged) >= np.mean(loose_result.converged) - 0.02


@pytest.mark.parametrize("method", METHODS)
def test_a_joint_of_stiffness_one_stays_where_it_starts_even_through_restarts(rng, method):
    chain = with_root_stiffness(reference_chains.free_chain(4), 1.0)
    start = chain.random_poses(rng, 1)[0]
    poses = chain.random_poses(rng, 60)
    poses[:30, 0] = start[0]  # reachable with the root held
    targets = chain.forward_kinematics(poses).effector  # the rest need the root turned: restarts run
    settings = SolveSettings(method=method, restarts=2, restart_candidates=4, max_iterations=60)
    result = solve(chain, targets, start_rotations=start, settings=settings)
    assert result.restarts[30:].any()
    np.testing.assert_allclose(quat.angle_between(result.rotations[:, 0], start[0]), 0.0, atol=1e-7)
    assert np.mean(result.converged[:30]) >= 0.9  # the other joints make up for the root


def test_rest_pull_keeps_redundant_chains_nearer_the_preferred_pose(rng):
    chain = reference_chains.free_chain(8)
    targets, _ = reachable_targets(chain, rng, 200)
    preferred = chain.rest_pose()
    free = solve(chain, targets, settings=SolveSettings(method="ccd", max_iterations=300))
    pulled = solve(
        chain,
        targets,
        settings=SolveSettings(method="ccd", max_iterations=300, rest_pull=0.3),
        preferred_rotations=preferred,
    )
    assert pulled.success_rate >= 0.95  # the pull fades as goals are met, so they are still met
    assert np.mean(pose_distance(pulled.rotations, preferred)) < np.mean(pose_distance(free.rotations, preferred))


def test_restarts_prefer_the_solution_nearest_the_reference(rng):
    chain = reference_chains.free_chain(4)
    targets, poses = reachable_targets(chain, rng, 100)
    goals = Goals(targets)
    settings = SolveSettings(method="dls", restarts=1, restart_candidates=16)
    # Every goal unmet at rest, so every goal restarts; the reference is the generating pose.
    picked = {}
    for label, reference in (("with", poses), ("without", None)):
        rotations = chain.rest_pose(len(targets))
        restarts = _restart(chain, goals, rotations, np.zeros(len(targets), dtype=np.int64), settings, reference, None)
        assert np.all(restarts == 1)
        picked[label] = rotations
    assert np.mean(pose_distance(picked["with"], poses)) < 0.85 * np.mean(pose_distance(picked["without"], poses))


def test_unreachable_goals_report_restarts_and_stay_finite():
    chain = reference_chains.arm3()
    # Within reach but not within the limits (straight back through the shoulder): restarted.
    behind = solve(chain, [[0.0, -0.5, 0.0]], settings=SolveSettings(restarts=2))
    assert not behind.converged[0] and behind.restarts[0] == 2
    assert np.all(np.isfinite(behind.rotations))
    # Beyond reach no start can help: not restarted.
    result = solve(chain, [[0.0, 3.0, 0.0]], settings=SolveSettings(restarts=2))
    assert not result.converged[0] and result.restarts[0] == 0
    assert np.all(np.isfinite(result.rotations))
    assert result.position_error[0] == pytest.approx(3.0 - chain.reach, abs=1e-6)  # straight up: the best


def test_learned_start_poses_cover_the_workspace_and_round_trip_as_arrays(rng):
    chain = reference_chains.arm3()
    settings = SolveSettings(method="dls")  # learn with the settings the solves will use
    learned = learn_start_poses(chain, samples=1000, candidates=16, max_starts=6, settings=settings, seed=1)
    assert 1 <= len(learned.start_rotations) <= 6
    assert learned.coverage >= 0.99
    assert learned.accuracy >= 0.95  # the nearest centroid's start converges on the sample targets
    restored = LearnedStarts.from_arrays({k: np.array(v) for k, v in learned.to_arrays().items()})
    targets, _ = reachable_targets(chain, rng, 1000)
    np.testing.assert_array_equal(restored.starts_for(targets), learned.starts_for(targets))
    from_rest = solve(chain, targets, settings=settings)
    from_learned = solve(chain, targets, learned_starts=restored, settings=settings)
    assert from_learned.success_rate >= from_rest.success_rate
    assert np.max(chain.limit_violation(from_learned.rotations)) < 1e-9


def test_learned_starts_reject_inconsistent_arrays():
    with pytest.raises(ValueError, match="start pose that does not exist"):
        LearnedStarts.from_arrays(
            {"start_rotations": np.zeros((1, 3, 4)), "centroids": np.zeros((1, 3)), "centroid_start": [3]}
        )


def test_goal_validation_messages():
    with pytest.raises(ValueError, match="not both"):
        Goals(np.zeros((1, 3)), orientations=[[1, 0, 0, 0]], directions=[[0, 1, 0]])
    with pytest.raises(ValueError, match="zero vector"):
        Goals(np.zeros((1, 3)), directions=[[0, 0, 0]])
    with pytest.raises(ValueError, match="NaN"):
        Goals(np.zeros((2, 3)), orientations=[[1, 0, 0, 0], [np.nan, 0, 0, 0]])
    with pytest.raises(ValueError, match="method"):
        SolveSettings(method="magic")


@pytest.mark.parametrize("method", METHODS)
def test_ranges_through_180_are_reached_and_held_by_every_method(rng, method):
    """A hinge folding back past 180° and a twist range round the back of the circle: every
    reachable target is met inside them, never by the shorter way round through 0."""
    bent = HingeJoint(np.array([1.0, 0.0, 0.0]), AngleRange(np.radians(140.0), np.radians(230.0)))
    twisted = reference_chains.BallJoint(
        (reference_chains.ConeWindow(Y_AXIS, np.radians(50.0)),), AngleRange(np.radians(-200.0), np.radians(-150.0))
    )
    chain = Chain(
        ("base", "fold", "tip"),
        np.tile(quat.IDENTITY, (3, 1)),
        np.array([[0.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.4, 0.0]]),
        np.array([0.5, 0.4, 0.3]),
        (twisted, bent, twisted),
    )
    targets, _ = reachable_targets(chain, rng, 200)
    result = solve(chain, targets, settings=SolveSettings(method=method, restarts=3, max_iterations=80))
    assert_result_is_honest(chain, result, targets)
    # Jacobian transpose converges slowly on any range (0.7 here, 0.1 on -45°..45°): honesty only.
    assert method == "jacobian_transpose" or result.success_rate >= 0.95, result.success_rate
    folds = np.degrees(bent.angle(result.rotations[:, 1]))
    assert np.all(np.abs(folds) >= 130.0 - 1e-6), folds  # 140° … 180° and −180° … −130°


def test_ccd_finishing_leaves_what_it_cannot_finish_to_the_restarts(monkeypatch):
    """CCD finishing the goals DLS left unmet creeps on some for its whole budget (the sample
    human arm matching a rotation: 64 sweeps, ~90 ms, where a restart meets the goal). When
    restarts follow it stops after ``FINISH_SWEEPS`` and every goal is still met; without
    restarts it keeps its budget, the only way left towards the goal."""
    chain = Chain.from_rig_spec(load_rig_spec(REPO / "sample_rigs" / "human_arm.rig.json"), "arm.L")
    # Random goals; DLS leaves a few to CCD, and it cannot finish one of them.
    poses = chain.random_poses(np.random.default_rng(4), 40)
    posed = chain.forward_kinematics(poses)
    goals = Goals(posed.effector, orientations=posed.rotations[:, -1], orientation_weight=0.5)
    finishing_sweeps: list[int] = []
    real_ccd = methods_module.run_ccd

    def counting_ccd(chain, goals, rotations, settings, *rest):
        rotations, sweeps = real_ccd(chain, goals, rotations, settings, *rest)
        if settings.stall_iterations == methods_module.FINISH_STALL_SWEEPS:
            finishing_sweeps.append(int(sweeps.max()))
        return rotations, sweeps

    monkeypatch.setattr(methods_module, "run_ccd", counting_ccd)
    for restarts in (2, 0):
        finishing_sweeps.clear()
        # The numpy path, whose CCD calls can be counted (the kernel's parity tests cover its own).
        settings = SolveSettings(tolerance=1e-4, orientation_tolerance=1e-6, restarts=restarts, kernel="numpy")
        met = [
            solve(chain, goals.take(np.array([i])), start_rotations=chain.centre_pose(), settings=settings).converged[0]
            for i in range(goals.count)
        ]
        if restarts:
            assert all(met)
            assert 0 < max(finishing_sweeps) <= methods_module.FINISH_SWEEPS
        else:
            assert max(finishing_sweeps) > methods_module.FINISH_SWEEPS


def test_restarts_break_ties_between_equal_misses_by_candidate_order():
    # Values within the slack of a row's least are ties, which go to the first candidate.
    values = np.array([[0.3 + 1e-15, 0.3, 0.5], [np.inf, 2.0, 1.0], [np.inf, np.inf, np.inf]])
    assert solve_module._first_least(values, 1e-9).tolist() == [0, 2, 0]
    # A free shoulder and an elbow that cannot straighten (60°-150°): a target at 1.95 of the
    # chain's 2 lies out of the limits' reach, and the closest misses (1.95 - 2 cos 30°) run in
    # a circle round the line to it, where restarts land all round at the same miss. A last-bit
    # change of the goal must not change which one is kept (Blender 3.4's numpy rounds by where
    # arrays lie in memory: kept by the last bit, Per Frame poses can move up to 320° on a replay).
    elbow = HingeJoint(np.array([1.0, 0.0, 0.0]), AngleRange(np.radians(60.0), np.radians(150.0)))
    chain = Chain(
        ("upper", "fore"),
        np.tile(quat.IDENTITY, (2, 1)),
        np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
        np.array([1.0, 1.0]),
        (FreeJoint(), elbow),
    )
    settings = SolveSettings(method="dls", restarts=2, restart_candidates=8)
    target = np.array([0.6, 1.7, 0.5]) * 1.95 / np.linalg.norm([0.6, 1.7, 0.5])
    poses = []
    for nudge in (0.0, 1.0, -1.0, 2.0):
        nudged = target.copy()
        nudged[0] = target[0] + nudge * np.spacing(target[0])
        result = solve(chain, Goals(nudged[None]), start_rotations=chain.centre_pose(), settings=settings)
        assert result.restarts[0] == 2 and not result.converged[0]
        assert result.position_error[0] == pytest.approx(1.95 - 2.0 * np.cos(np.radians(30.0)), abs=1e-4)
        poses.append(result.rotations[0])
    for pose in poses[1:]:
        assert pose_distance(pose, poses[0]) < 1e-6
