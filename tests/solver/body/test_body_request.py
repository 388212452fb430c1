"""The body pipeline (``body.request``): rows switched off, grouping, pins on a frame range,
shots kept smooth, the time limit, warm starts, and what it refuses."""

import numpy as np
import pytest
from body_helpers import LIMIT_SLACK, tails

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import BodySettings, Goal, Pin
from quat_ik_addon.solver.body.reference_bodies import legs, upper_body
from quat_ik_addon.solver.body.request import (
    DEFAULT_BODY_SETTINGS,
    BodyOptions,
    BodyRequest,
    solve_body_request,
)
from quat_ik_addon.solver.solve import pose_distance

ROWS = 12
NO_RESTARTS = BodySettings(restarts=0, top_restarts=0)
# The most a row's rotations may differ solved in a group and alone: rounding, which numpy's batched
# and one-row arithmetic (and its narrow-SIMD build in `make test`) do in other orders, and the
# damped steps carry over a solve's iterations.
SAME_ANSWER = 1e-8


def reachable_hands(body, rng, count):
    """Both hands' tails at ``count`` random poses inside the limits (goals every row can meet)."""
    pose = body.forward_kinematics(body.random_poses(rng, count))
    return tails(body, pose, "hand.L"), tails(body, pose, "hand.R"), pose


def assert_honest(body, result):
    """Every row's pose is finite and inside the limits, and what it reports met is within the
    tolerances."""
    assert np.all(np.isfinite(result.rotations))
    assert body.limit_violation(result.rotations).max() <= LIMIT_SLACK
    met_goals = np.all(result.level_met, axis=1)
    assert np.all(result.position_error[met_goals] <= result.tolerance)
    assert np.all(result.pin_position_error[result.pins_held] <= result.tolerance)


def test_a_goal_switched_off_on_a_row_counts_as_met_with_zero_error(upper_body, rng):
    left, right, _ = reachable_hands(upper_body, rng, ROWS)
    right[[2, 5, 9]] = np.nan
    goals = [Goal("hand.L", position=left), Goal("hand.R", position=right, level=1)]
    result = solve_body_request(upper_body, BodyRequest(goals))
    assert result.rotations.shape == (ROWS, upper_body.n_bones, 4)
    assert result.levels == (0, 1)
    assert np.all(result.position_error[[2, 5, 9], 1] == 0.0)
    assert np.all(result.level_met[[2, 5, 9], 1])
    assert_honest(upper_body, result)
    # Where the right hand is switched off, only the left hand's goal was solved for.
    alone = solve_body_request(upper_body, BodyRequest([Goal("hand.L", position=left[[2, 5, 9]])]))
    np.testing.assert_allclose(result.position_error[[2, 5, 9], 0], alone.position_error[:, 0], atol=1e-12)


def test_a_row_with_every_task_switched_off_stays_at_its_start(upper_body):
    start = upper_body.clamp_rotations(upper_body.random_poses(np.random.default_rng(1), 1))[0]
    goal = Goal("hand.L", position=[[np.nan] * 3, [-0.6, 0.7, 0.1]])
    result = solve_body_request(upper_body, BodyRequest([goal], start=start))
    np.testing.assert_allclose(result.rotations[0], start, atol=1e-12)
    assert result.iterations[0] == 0 and result.all_met[0]


@pytest.mark.parametrize("settings", [NO_RESTARTS, DEFAULT_BODY_SETTINGS], ids=["no restarts", "defaults"])
def test_rows_grouped_by_their_active_tasks_solve_as_each_row_alone(upper_body, rng, settings):
    left, right, pose = reachable_hands(upper_body, rng, ROWS)
    right[::3] = np.nan
    chest = pose.heads[:, upper_body.index("chest")].copy()
    chest[6:] = np.nan
    goals = [Goal("hand.L", position=left), Goal("hand.R", position=right)]
    pins = [Pin("chest", position=chest)]
    options = BodyOptions(settings=settings)
    together = solve_body_request(upper_body, BodyRequest(goals, pins), options)
    for row in range(ROWS):
        one = BodyRequest(
            [Goal(goal.effector, position=np.asarray(goal.position)[row]) for goal in goals],
            [Pin("chest", position=chest[row])],
        )
        alone = solve_body_request(upper_body, one, options)
        assert together.all_met[row] == alone.all_met[0]
        np.testing.assert_allclose(together.position_error[row], alone.position_error[0], atol=upper_body.size * 1e-6)
        # Restart candidates are drawn per batch: rows that needed none give the same pose.
        if together.restarts[row] == 0 and alone.restarts[0] == 0:
            assert pose_distance(together.rotations[row], alone.rotations[0]) <= SAME_ANSWER


def test_a_pin_holds_on_its_frame_range_and_is_free_elsewhere(rng):
    body = legs()
    frames = 10
    pose = body.forward_kinematics(body.random_poses(rng, frames))
    hips = body.index("hips")
    held = quat.from_axis_angle([0.0, 0.0, 1.0], np.radians(25.0))  # the hips tilted 25° about Z
    rotation = np.tile(held, (frames, 1))
    rotation[:3] = rotation[7:] = np.nan  # held on frames 3-6 only
    goals = [Goal("foot.L", position=tails(body, pose, "foot.L")), Goal("foot.R", position=tails(body, pose, "foot.R"))]
    result = solve_body_request(body, BodyRequest(goals, [Pin("hips", rotation=rotation)]))
    assert_honest(body, result)
    hips_frames = body.forward_kinematics(result.rotations).rotations[:, hips]
    turned = quat.angle_between(hips_frames, held)
    assert np.all(result.pins_held[3:7]) and np.all(turned[3:7] <= result.angle_tolerance * 10)
    assert np.all(result.pin_rotation_error[[0, 1, 2, 7, 8, 9]] == 0.0)
    # Free elsewhere: the feet's goals (made by random poses) are met there, hips turned as they need.
    assert np.all(result.all_met[[0, 1, 2, 7, 8, 9]])
    assert np.all(turned[[0, 1, 2, 7, 8, 9]] > np.radians(1.0))


# --------------------------------------------------------------------------- shots


def witness_shot(body, seed, frames=80, amplitude=0.6):
    """A smooth pose path inside the limits (rotation vectors swinging about a random pose, each
    joint's clamped into its limit) and its largest joint change per frame: a motion that meets
    goals made from it by forward kinematics, so a smooth answer exists."""
    rng = np.random.default_rng(seed)
    centre = quat.rotation_vector(body.random_poses(rng, 1)[0])
    swing = rng.uniform(-amplitude, amplitude, (body.n_bones, 3))
    phase = rng.uniform(0.0, 2.0 * np.pi, (body.n_bones, 3))
    time = np.linspace(0.0, 2.0 * np.pi, frames)[:, None, None]
    path = body.clamp_rotations(quat.from_rotation_vector(centre + swing * np.sin(time + phase)))
    return path, float(pose_distance(path[1:], path[:-1]).max())


def shot_goals(body, path, effectors):
    """Goals following the path: each effector's tail, the first also its orientation."""
    pose = body.forward_kinematics(path)
    return [
        Goal(
            name, position=tails(body, pose, name), orientation=pose.rotations[:, body.index(name)] if k == 0 else None
        )
        for k, name in enumerate(effectors)
    ]


SMOOTH_SHOTS = {  # name: (body, seed, effectors)
    "upper body, hands": (upper_body, 0, ("hand.L", "hand.R")),
    "upper body, hands, other swing": (upper_body, 5, ("hand.L", "hand.R")),
    "legs, feet": (legs, 1, ("foot.L", "foot.R")),
    "legs, feet, other swing": (legs, 4, ("foot.L", "foot.R")),
}
SMOOTH = 2.0  # the largest joint change per frame, at most this × the witness's largest


@pytest.mark.parametrize("name", SMOOTH_SHOTS)
def test_a_smooth_shot_stays_smooth(name, record_property):
    make_body, seed, effectors = SMOOTH_SHOTS[name]
    body = make_body()
    path, witness_step = witness_shot(body, seed)
    goals = shot_goals(body, path, effectors)
    result = solve_body_request(body, BodyRequest(goals, shot=True))
    assert_honest(body, result)
    assert result.all_met.all()
    largest_step = float(pose_distance(result.rotations[1:], result.rotations[:-1]).max())
    record_property("largest_step_over_witness", largest_step / witness_step)
    assert largest_step <= SMOOTH * witness_step, (np.degrees(largest_step), np.degrees(witness_step))


def test_without_continuity_the_same_shot_jumps_between_branches():
    body = upper_body()
    path, _ = witness_shot(body, 0)
    goals = shot_goals(body, path, ("hand.L", "hand.R"))
    result = solve_body_request(body, BodyRequest(goals, shot=True), BodyOptions(continuity=False))
    largest_jump_deg = 10.0  # a pop a viewer sees
    assert pose_distance(result.rotations[1:], result.rotations[:-1]).max() > np.radians(largest_jump_deg)


def test_a_shot_solved_from_the_answer_again_stays_there(upper_body):
    path, _ = witness_shot(upper_body, 5, frames=20)
    goals = shot_goals(upper_body, path, ("hand.L", "hand.R"))
    first = solve_body_request(upper_body, BodyRequest(goals, shot=True))
    again = solve_body_request(upper_body, BodyRequest(goals, start=first.rotations))  # as Live passes it
    assert again.all_met.all()
    assert pose_distance(again.rotations, first.rotations).max() <= np.radians(0.1)
    assert again.iterations.max() <= 5


def test_a_warm_solve_of_its_own_answer_out_of_reach_gives_it_back(upper_body):
    """Live solves again after its own write: where the goals cannot all be met, the answer
    from the answer must be that answer (a drift along the goals' freedom would write a new pose
    on every update, and Live would never settle), and no worse than it ever."""
    far = [Goal("hand.L", position=[0.9, 1.2, 1.9]), Goal("hand.R", position=[-0.8, 1.3, 1.8])]
    options = BodyOptions(settings=BodySettings(relative_tolerance=1e-4), time_limit=0.25)
    first = solve_body_request(upper_body, BodyRequest(far), options)
    assert not first.all_met.any()  # out of reach, or this checks nothing
    again = solve_body_request(upper_body, BodyRequest(far, start=first.rotations[0]), options)
    unchanged = 1e-12  # (the start is brought inside the limits again: rounding, far below a pose write's 1e-9)
    assert np.abs(again.rotations - first.rotations).max() <= unchanged
    assert np.all(again.position_error <= first.position_error + 1e-12)


# --------------------------------------------------------------------------- time limit and starts


def test_a_spent_time_limit_keeps_complete_answers_and_says_so(upper_body):
    far = Goal("hand.L", position=np.array([[3.0, 0.0, 0.0], [0.0, 3.0, 0.0]]))  # out of reach: restarts would run
    result = solve_body_request(upper_body, BodyRequest([far]), BodyOptions(time_limit=0.0))
    assert result.out_of_time
    assert np.all(result.restarts == 0)
    assert_honest(upper_body, result)
    untimed = solve_body_request(upper_body, BodyRequest([far]))
    assert not untimed.out_of_time and np.all(untimed.restarts > 0)


def test_a_time_limit_that_lasts_solves_as_well_as_none(upper_body, rng):
    left, right, _ = reachable_hands(upper_body, rng, ROWS)
    goals = [Goal("hand.L", position=left), Goal("hand.R", position=right)]
    timed = solve_body_request(upper_body, BodyRequest(goals), BodyOptions(time_limit=60.0))
    assert not timed.out_of_time
    assert timed.all_met.all()


@pytest.mark.parametrize("shape", ["one pose", "a pose per row"])
def test_rows_start_from_the_pose_given(upper_body, rng, shape):
    start = upper_body.random_poses(rng, 3)
    goal = Goal("hand.L", position=tails(upper_body, upper_body.forward_kinematics(start), "hand.L"))
    given = start[0] if shape == "one pose" else start
    result = solve_body_request(upper_body, BodyRequest([goal], start=given), BodyOptions(settings=NO_RESTARTS))
    if shape == "a pose per row":  # every row starts where its goal is met
        assert np.all(result.iterations == 0)
        np.testing.assert_allclose(result.rotations, start, atol=1e-12)
    assert result.all_met.all()


# --------------------------------------------------------------------------- refused


GOAL = Goal("hand.L", position=[-0.6, 0.7, 0.1])


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: BodyRequest(), "give at least one goal or pin"),
        (lambda: BodyRequest(["hand.L"]), "goals must be Goal objects"),
        (lambda: BodyRequest([GOAL], ["hips"]), "pins must be Pin objects"),
        (lambda: BodyRequest([GOAL], shot=1), "shot must be True or False"),
        (
            lambda: BodyRequest([Goal("hand.L", position=[[0, 1, 0], [0, 1, np.nan]])]),
            "goal 0 ('hand.L'): position: row 1 must be finite numbers (or all NaN to switch it off)",
        ),
        (lambda: BodyRequest([Goal("hand.L", position=[0, 1, np.inf])]), "row 0 must be finite numbers"),
        (lambda: BodyRequest([Goal("hand.L", position=[[0, 1]])]), "position must have shape (3,) or (rows, 3)"),
        (lambda: BodyRequest([Goal("hand.L", position=["a", 1, 2])]), "position must be numbers"),
        (lambda: BodyRequest([Goal("hand.L", position=[1j, 1, 2])]), "must be real numbers, not complex"),
        (lambda: BodyRequest([Goal("hand.L", orientation=[0, 0, 0, 0])]), "orientation: row 0 is the zero quaternion"),
        (lambda: BodyRequest([Goal("hand.L", direction=[0, 0, 0])]), "direction: row 0 is the zero vector"),
        (
            lambda: BodyRequest(pins=[Pin("chest", position=[1e60, 0, 0])]),
            "the pin of 'chest': position must lie within",
        ),
        (
            lambda: BodyRequest([Goal("hand.L", position=[[0, 1, 0], [np.nan] * 3, [1e60, 0, 0]])]),
            "goal 0 ('hand.L'): position must lie within",
        ),
        (
            lambda: BodyRequest(
                [Goal("hand.L", position=[[0, 1, 0], [np.nan] * 3], orientation=[[1, 0, 0, 0], [1, 0, 0, 0]])]
            ),
            "goal 0 ('hand.L'): row 1 switches some targets off (NaN) but not all",
        ),
        (
            lambda: BodyRequest([Goal("hand.L", position=np.zeros((3, 3))), Goal("hand.R", position=np.zeros((2, 3)))]),
            "goals, pins, poles and start give different numbers of rows: [2, 3]",
        ),
        (lambda: BodyRequest([GOAL], start=np.zeros((8, 4))), "start rotations contain a zero quaternion"),
        (lambda: BodyRequest([GOAL], start=np.ones((8, 3))), "start rotations must have shape"),
        (lambda: BodyRequest([GOAL], start=np.full((8, 4), np.nan)), "start rotations must be finite"),
        (lambda: BodyOptions(settings={}), "settings must be BodySettings"),
        (lambda: BodyOptions(time_limit=-1.0), "time_limit must be a finite number of seconds >= 0"),
        (lambda: BodyOptions(time_limit=True), "time_limit must be a finite number of seconds >= 0"),
        (lambda: BodyOptions(continuity="yes"), "continuity must be True or False"),
    ],
)
def test_a_bad_request_is_refused_in_one_line_naming_what_is_wrong(make, message):
    with pytest.raises(ValueError) as refused:
        make()
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (BodyRequest([Goal("tail", position=[0, 1, 0])]), "the body has no bone 'tail'"),
        (BodyRequest(pins=[Pin("tail", position=[0, 1, 0])]), "the body has no bone 'tail'"),
        (BodyRequest([GOAL], start=np.tile([1.0, 0, 0, 0], (5, 1))), "start rotations must have shape (8, 4)"),
        (BodyRequest([GOAL]), "options must be BodyOptions"),
        ("a request", "request must be a BodyRequest"),
    ],
)
def test_a_request_that_does_not_fit_the_body_is_refused_in_one_line(upper_body, request_, message):
    options = {} if message == "options must be BodyOptions" else None
    with pytest.raises(ValueError) as refused:
        solve_body_request(upper_body, request_, options)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_body_is_checked_before_anything_is_solved():
    with pytest.raises(ValueError, match="solve_body_request needs a Body"):
        solve_body_request("body", BodyRequest([GOAL]))


def test_measuring_a_solved_pose_gives_the_solve_its_own_errors(upper_body, rng):
    """``measure_body`` (how a start meets the tasks, unsolved) reports for a solved pose what
    the solve did: the warm start check compares answers against it."""
    from quat_ik_addon.solver.body.solve import measure_body, solve_body

    left, right, _ = reachable_hands(upper_body, rng, ROWS)
    goals = [Goal("hand.L", position=left), Goal("hand.R", position=right + 0.5)]  # the right out of reach
    solved = solve_body(upper_body, goals)
    measured = measure_body(upper_body, goals, (), solved.rotations, BodySettings())
    assert np.allclose(measured.position_error, solved.position_error, rtol=0.0, atol=1e-12)
    assert np.array_equal(measured.level_met, solved.level_met)
    assert np.all(measured.iterations == 0)
