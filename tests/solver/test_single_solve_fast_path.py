"""The shortcuts a warm single solve takes (one target checked in plain Python, one start pose
viewed rather than broadcast, one goal compared without numpy, the kernel's structs and
addresses kept or looked up cheaply) give what the general path gives, and refuse what it refuses.
``tests/solver/native/test_method_parity.py`` checks a whole single solve on the kernel against
the same target in a batch."""

import numpy as np
import pytest

from quat_ik_addon.solver import time_budget
from quat_ik_addon.solver.goals import MAX_COORDINATE, Goals
from quat_ik_addon.solver.methods.ladder import finishing
from quat_ik_addon.solver.native import kernel_calls
from quat_ik_addon.solver.rig import reference_chains
from quat_ik_addon.solver.settings import SolveSettings
from quat_ik_addon.solver.solve import solve
from quat_ik_addon.solver.start_poses import initial_poses


@pytest.fixture
def arm3():
    return reference_chains.arm3()


def test_one_target_as_a_row_a_vector_or_a_list_makes_the_same_goals(rng):
    for target in rng.uniform(-5.0, 5.0, size=(20, 3)):
        checked = Goals(target[None].copy())
        for given in (target[None], target, target.tolist(), [target.tolist()]):
            goals = Goals.of(given)
            assert np.array_equal(goals.positions, checked.positions)
            assert goals.positions.shape == (1, 3)
            assert np.array_equal(goals.aim_axis, checked.aim_axis)
            assert goals.orientations is None and goals.directions is None
            assert (goals.position_weight, goals.orientation_weight) == (1.0, 1.0)


def test_goals_made_from_one_target_do_not_share_their_aim_axis():
    first, second = Goals.of(np.zeros((1, 3))), Goals.of(np.ones((1, 3)))
    first.aim_axis[0] = 0.5
    assert second.aim_axis.tolist() == [0.0, 1.0, 0.0]


BAD_TARGETS = {
    "nan": np.array([[0.0, np.nan, 1.0]]),
    "infinity": np.array([np.inf, 0.0, 1.0]),
    "beyond the largest coordinate": np.array([[0.0, 0.0, 10 * MAX_COORDINATE]]),
    "negative beyond it": np.array([-10 * MAX_COORDINATE, 0.0, 0.0]),
    "two numbers": np.array([1.0, 2.0]),
    "four numbers": np.array([[1.0, 2.0, 3.0, 4.0]]),
    "three dimensions": np.zeros((1, 1, 3)),
    "complex": np.array([[1.0 + 1.0j, 0.0, 0.0]]),
    "a list with nan": [0.0, float("nan"), 0.0],
}


@pytest.mark.parametrize("name", BAD_TARGETS)
def test_a_bad_target_is_refused_with_the_full_checks_message(arm3, name):
    bad = BAD_TARGETS[name]
    with pytest.raises(ValueError) as full:
        Goals(np.asarray(bad))
    with pytest.raises(ValueError) as quick:
        Goals.of(bad)
    assert str(quick.value) == str(full.value)
    with pytest.raises(ValueError) as solving:
        solve(arm3, bad, start_rotations=arm3.rest_pose())
    assert str(solving.value) == str(full.value)


def test_one_start_pose_is_the_broadcast_one_read_only(arm3, rng):
    start = arm3.random_poses(rng, 1)[0]
    broadcast = np.broadcast_to(start, (1, arm3.n_bones, 4))
    for given, count in ((start, 1), (start[None], 1), (start, 3), (np.repeat(start[None], 3, axis=0), 3)):
        poses = initial_poses(arm3, given, count, clamp=False)
        assert poses.shape == (count, arm3.n_bones, 4)
        assert np.array_equal(poses, np.broadcast_to(broadcast, poses.shape))
        assert not poses.flags.writeable, "a view of the caller's numbers must not be written through"
        assert np.array_equal(initial_poses(arm3, given, count), arm3.clamp_to_limits(poses))


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("where", [(0, 0), (2, 3), (1, 1)])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_start_pose_with_nan_or_infinity_is_refused(arm3, count, where, bad):
    start = arm3.rest_pose()
    start[where] = bad
    with pytest.raises(ValueError, match="start rotations contain NaN or infinity"):
        initial_poses(arm3, start, count)


@pytest.mark.parametrize("shape", [(4,), (2, 4), (3, 3), (2, 3, 4), (1, 1, 3, 4)])
def test_a_start_pose_of_the_wrong_shape_is_refused(arm3, shape):
    with pytest.raises(ValueError, match=r"start rotations must be shaped \(3, 4\) or \(1, 3, 4\)"):
        initial_poses(arm3, np.zeros(shape), 1)


def test_a_large_batch_of_starts_is_checked_too(arm3, rng):
    starts = arm3.random_poses(rng, 100)
    starts[57, 1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        initial_poses(arm3, starts, 100)


def test_one_goal_is_met_exactly_as_a_batch_of_goals_is(rng):
    settings, tolerance, reach = SolveSettings(), 1e-3, 2.0
    angle = settings.angle_tolerance(tolerance, reach)
    special = [0.0, tolerance, np.nextafter(tolerance, 1.0), angle, np.nextafter(angle, 1.0), np.nan, np.inf]
    values = np.concatenate([special, rng.uniform(0.0, 2e-3, size=40)])
    position_errors, orientation_errors = np.meshgrid(values, values)
    position_errors, orientation_errors = position_errors.ravel(), orientation_errors.ravel()
    batch = settings.reached(position_errors, orientation_errors, tolerance, reach)
    for row in range(len(position_errors)):
        one = settings.reached(position_errors[row : row + 1], orientation_errors[row : row + 1], tolerance, reach)
        assert one.dtype == np.bool_ and one.shape == (1,)
        assert one[0] == batch[row], (position_errors[row], orientation_errors[row])


def test_one_single_precision_goal_is_compared_at_its_own_precision():
    settings = SolveSettings()
    position_error = np.array([0.1], dtype=np.float32)
    expected = (position_error <= 0.1) & (np.zeros(1, dtype=np.float32) <= 1.0)
    assert settings.reached(position_error, np.zeros(1, dtype=np.float32), 0.1, 1.0).tolist() == expected.tolist()


def test_addresses_are_where_numpy_keeps_the_numbers():
    block = np.arange(24.0)
    read_only = block.copy()
    read_only.flags.writeable = False
    for array in (block, block[5:], block.reshape(4, 6)[1:], read_only, read_only[3:], np.empty(0)):
        assert kernel_calls._address(array) == array.ctypes.data
    assert kernel_calls._address(None) is None


@pytest.mark.parametrize("count", [0, 1, 5])
def test_the_kernels_outputs_are_apart_and_where_their_addresses_say(count):
    measured = kernel_calls._Measured(count)
    arrays = (measured.iterations, measured.position_error, measured.orientation_error, measured.effector)
    assert [a.shape for a in arrays] == [(count,), (count,), (count,), (count, 3)]
    assert measured.iterations.dtype == np.int64
    assert all(a.flags.c_contiguous and a.flags.writeable for a in arrays)
    if count:
        assert list(measured.addresses()) == [a.ctypes.data for a in arrays]
        for k, a in enumerate(arrays):
            assert not any(np.shares_memory(a, b) for b in arrays[k + 1 :])


def test_settings_structs_follow_each_settings_object():
    reach = 1.7
    for max_iterations in range(3 * kernel_calls.RECENT_SETTINGS):  # past the table's size: it is emptied
        settings = SolveSettings(max_iterations=max_iterations % 7, damping=0.01 * (1 + max_iterations % 5))
        struct = kernel_calls.settings_struct(settings, finishing(settings), reach)
        assert struct.max_iterations == settings.max_iterations
        assert struct.damping == settings.damping * reach
        equal = SolveSettings(max_iterations=settings.max_iterations, damping=settings.damping)
        assert bytes(kernel_calls.settings_struct(equal, finishing(equal), reach)) == bytes(struct)


def test_a_solve_that_raises_leaves_no_budget_behind(arm3):
    with pytest.raises(ValueError):
        solve(arm3, [[np.nan, 0.0, 0.0]], settings=SolveSettings(time_limit=0.0))
    assert not time_budget.spent(), "the spent budget of a solve that raised must not outlive it"
    with time_budget.spending(None) as outer, time_budget.spending(0.0) as inner:
        assert inner is outer
