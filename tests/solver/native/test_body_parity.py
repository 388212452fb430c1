"""The body solver on the native kernel (``qik_body_stage``, ``qik_body_task_errors``) against the
numpy reference: random bodies of 1-5 effectors, the reference bodies, pins, stretch, goals out
of reach, orientations and directions.

Both paths keep every limit to 1e-9 and every stretch inside its range, hold the pins and meet
the top level alike. Elsewhere the poses agree to ``POSE_MATCH`` except on rows where the
prioritised iterations part ways: their lexicographic tests compare excesses of levels out of
reach that a step changes by rounding only, so a difference in the last bit can take another
branch. Such a row counts as explained when numpy parts from itself there too, given targets
nudged by ``NUDGE`` (relative) one way or the other (how far rounding carries a row depends on
the way it is nudged); the message lists every parted row and why.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.body import BodySettings, Effector, Goal, Pin, solve_body
from quat_ik_addon.solver.body.goals import lay_out, task_errors
from quat_ik_addon.solver.body.reference_bodies import legs, random_body, tip_bones, upper_body
from quat_ik_addon.solver.native import body_calls

LIMIT_SLACK = 1e-9  # radians outside a limit, by its own measure
POSE_MATCH = 1e-8  # rotations of rows that took the same branches: rounding, amplified by the iterations
NUDGE = 1e-14  # relative: how far numpy's targets move to show that a row's branches hang on rounding
UNEXPLAINED_SHARE = 0.02  # rows that part ways while numpy does not part from itself there
ERRORS_MATCH = 1e-12  # the task errors of one pose: forward kinematics, rounding only
NO_RESTARTS = {"restarts": 0, "top_restarts": 0}


def _tail(body, pose, name: str):
    bone = body.index(name)
    return pose.points(np.array([bone]), np.array([[0.0, body.lengths[bone], 0.0]]))[:, 0]


def random_problem(rng: np.random.Generator, effectors: int, rows: int, pinned: bool, scatter: float = 0.3):
    """A random body of about 20 bones, a fifth of them stretchy; level 0 asks the first tip for
    where a pose inside the limits has it, the others (levels 1-2) for points scattered about
    theirs (many out of reach together), one of them for an orientation or a direction too."""
    body = random_body(rng, effectors, n_bones=20, stretch_share=0.2)
    pose = body.forward_kinematics(body.random_poses(rng, rows))
    goals = []
    for rank, name in enumerate(tip_bones(body)):
        tail = _tail(body, pose, name)
        if rank == 0:
            goals.append(Goal(name, position=tail))
            continue
        extra = {}
        if rank == 1:
            frame = pose.rotations[:, body.index(name)]
            turned = quat.multiply(quat.from_rotation_vector(rng.normal(0.0, 0.3, (rows, 3))), frame)
            extra = {"orientation": turned, "orientation_weight": 0.5}
        elif rank == 2:
            extra = {"direction": rng.normal(size=(rows, 3)), "orientation_weight": 0.3}
        goals.append(Goal(name, position=tail + rng.normal(0.0, scatter, (rows, 3)), level=1 + rank % 2, **extra))
    pins = [Pin(body.bone_names[1], position=pose.heads[:, 1], rotation=pose.rotations[:, 1])] if pinned else []
    return body, goals, pins


def upper_body_problem(rng: np.random.Generator, rows: int):
    """Both hands out of the arms' reach (the stretchy arms' work), the spine's frame pinned."""
    body = upper_body(stretchy_arms=True)
    pose = body.forward_kinematics(body.random_poses(rng, rows))
    goals = [
        Goal("hand.L", position=_tail(body, pose, "hand.L") * 1.3),
        Goal("hand.R", position=_tail(body, pose, "hand.R") + rng.normal(0.0, 0.2, (rows, 3)), level=1),
        Goal("chest", direction=rng.normal(size=(rows, 3)), level=2),
    ]
    return body, goals, [Pin("spine", rotation=pose.rotations[:, 0])]


def legs_problem(rng: np.random.Generator, rows: int):
    """Both feet planted where a pose has them (position and orientation), the hips pulled."""
    body = legs()
    pose = body.forward_kinematics(body.random_poses(rng, rows))
    goals = [
        Goal(
            "foot.L",
            position=_tail(body, pose, "foot.L"),
            orientation=pose.rotations[:, body.index("foot.L")],
        ),
        Goal("foot.R", position=_tail(body, pose, "foot.R"), level=1),
        Goal("hips", position=pose.heads[:, 0] + rng.normal(0.0, 0.3, (rows, 3)) + [0, 0.2, 0], level=2),
    ]
    return body, goals, [Pin("hips", position=pose.heads[:, 0])]


def _nudged(goals, nudge_by: float):
    def nudge(value):
        return None if value is None else np.asarray(value) * (1.0 + nudge_by)

    return [
        Goal(
            g.effector,
            position=nudge(g.position),
            orientation=g.orientation,
            direction=g.direction,
            aim_axis=g.aim_axis,
            position_weight=g.position_weight,
            orientation_weight=g.orientation_weight,
            level=g.level,
        )
        for g in goals
    ]


def compare(body, goals, pins, **settings) -> tuple[int, int, list[str]]:
    """Solve on both paths and check them (see the module docstring); returns (rows, rows that
    parted ways unexplained, a reason per parted row)."""
    native = solve_body(body, goals, pins, settings=BodySettings(**settings))
    reference = solve_body(body, goals, pins, settings=BodySettings(kernel="numpy", **settings))
    for name, result in (("kernel", native), ("numpy", reference)):
        assert np.all(np.isfinite(result.rotations)), name
        assert body.limit_violation(result.rotations).max() <= LIMIT_SLACK, name
        assert body.stretch_violation(result.stretch).max() == 0.0, name
    assert np.array_equal(native.pins_held, reference.pins_held), "pins held on one path only"
    if native.level_met.shape[1]:
        assert np.array_equal(native.level_met[:, 0], reference.level_met[:, 0]), "top level met on one path only"
    differ = np.max(np.abs(np.abs(native.rotations) - np.abs(reference.rotations)), axis=(1, 2))
    differ = np.maximum(differ, np.max(np.abs(native.stretch - reference.stretch), axis=1))
    verdicts = np.any(native.level_met != reference.level_met, axis=1)
    parted = np.nonzero((differ > POSE_MATCH) | verdicts)[0]
    reasons, unexplained = [], 0
    if parted.size:
        rows_only = [_row(g, parted) for g in goals]
        pins_only = [Pin(p.bone, _rows_of(p.position, parted), _rows_of(p.rotation, parted)) for p in pins]
        own = np.zeros(parted.size)
        verdict_moved = np.zeros(parted.size, dtype=bool)
        for nudge_by in (NUDGE, -NUDGE):
            again = solve_body(
                body, _nudged(rows_only, nudge_by), pins_only, settings=BodySettings(kernel="numpy", **settings)
            )
            moved = np.max(np.abs(np.abs(again.rotations) - np.abs(reference.rotations[parted])), axis=(1, 2))
            own = np.maximum(own, moved)
            verdict_moved |= np.any(again.level_met != reference.level_met[parted], axis=1)
        for i, row in enumerate(parted):
            explained = own[i] > POSE_MATCH or verdict_moved[i]
            unexplained += not explained
            reasons.append(
                f"row {row}: poses {differ[row]:.1e} apart, iterations {native.iterations[row]} vs "
                f"{reference.iterations[row]}, numpy nudged by ±{NUDGE:g} moves {own[i]:.1e}"
                + ("" if explained else " (UNEXPLAINED)")
            )
    return len(native.rotations), unexplained, reasons


def _rows_of(value, rows):
    if value is None:
        return None
    value = np.asarray(value)
    return value[rows] if value.ndim == 2 else value


def _row(goal: Goal, rows) -> Goal:
    return Goal(
        goal.effector,
        position=_rows_of(goal.position, rows),
        orientation=_rows_of(goal.orientation, rows),
        direction=_rows_of(goal.direction, rows),
        aim_axis=goal.aim_axis,
        position_weight=goal.position_weight,
        orientation_weight=goal.orientation_weight,
        level=goal.level,
    )


@pytest.mark.parametrize("effectors", [1, 2, 3, 4, 5])
def test_random_bodies_match_numpy(kernel, effectors):
    rng = np.random.default_rng([20261128, effectors])
    rows_total, unexplained_total, reasons = 0, 0, []
    for body_index in range(2):
        body, goals, pins = random_problem(rng, effectors, rows=6, pinned=body_index == 1)
        rows, unexplained, why = compare(body, goals, pins, **NO_RESTARTS)
        rows_total += rows
        unexplained_total += unexplained
        reasons += [f"body {body_index}, {reason}" for reason in why]
    assert unexplained_total <= UNEXPLAINED_SHARE * rows_total, f"{len(reasons)} of {rows_total} parted: {reasons}"


@pytest.mark.parametrize("problem", [upper_body_problem, legs_problem])
def test_reference_bodies_match_numpy(kernel, problem):
    body, goals, pins = problem(np.random.default_rng(20261128), 8)
    rows, unexplained, reasons = compare(body, goals, pins, **NO_RESTARTS)
    assert unexplained <= UNEXPLAINED_SHARE * rows, f"{len(reasons)} of {rows} parted: {reasons}"


def test_restarts_draw_the_same_candidates_on_both_paths(kernel):
    body, goals, pins = random_problem(np.random.default_rng(7), 3, rows=3, pinned=True, scatter=0.5)
    rows, unexplained, reasons = compare(body, goals, pins, restarts=1, top_restarts=1, restart_candidates=3)
    assert unexplained <= UNEXPLAINED_SHARE * rows, f"{len(reasons)} of {rows} parted: {reasons}"


def test_a_warm_start_out_of_reach_matches_numpy(kernel):
    """Live: the previous answer with every joint turned a little, a goal out of reach."""
    rng = np.random.default_rng(11)
    body, goals, pins = random_problem(rng, 4, rows=4, pinned=True)
    first = solve_body(body, goals, pins, settings=BodySettings(**NO_RESTARTS))
    turns = quat.from_rotation_vector(rng.normal(0.0, 0.03, (4, body.n_bones, 3)))
    start = quat.multiply(turns, first.rotations)
    native = solve_body(body, goals, pins, start_rotations=start, settings=BodySettings(**NO_RESTARTS))
    reference = solve_body(
        body, goals, pins, start_rotations=start, settings=BodySettings(kernel="numpy", **NO_RESTARTS)
    )
    same = np.max(np.abs(np.abs(native.rotations) - np.abs(reference.rotations)), axis=(1, 2)) <= POSE_MATCH
    assert np.array_equal(native.iterations[same], reference.iterations[same])
    assert np.array_equal(native.level_met[same], reference.level_met[same])


def test_task_errors_are_numpys(kernel):
    body, goals, pins = random_problem(np.random.default_rng(5), 4, rows=5, pinned=True)
    tasks = lay_out(body, goals, pins)
    rotations = body.random_poses(np.random.default_rng(6), 5)
    low, high = body.stretch_bounds
    stretch = np.random.default_rng(8).uniform(low, high, (5, body.n_bones))
    found = body_calls.task_errors(kernel, body, tasks, rotations, stretch)
    expected = task_errors(tasks, body.forward_kinematics(rotations, stretch), body.size)
    assert found is not None
    for f, e in zip(found, expected, strict=True):
        np.testing.assert_allclose(f, e, rtol=0.0, atol=ERRORS_MATCH)


def test_the_rows_of_a_layout_and_another_layout_measure_as_numpy(kernel):
    """The kernel's tasks struct is made once per layout and shared by the rows taken from it:
    rows taken measure as numpy measures them, and so does another layout (other points)."""
    body, goals, pins = random_problem(np.random.default_rng(11), 4, rows=6, pinned=True)
    rotations = body.random_poses(np.random.default_rng(12), 6)
    stretch = np.ones((6, body.n_bones))
    tasks = lay_out(body, goals, pins)
    moved = [replace(goal, effector=Effector(goal.effector.bone, offset=[0.1, 0.05, -0.02])) for goal in goals]
    rows = np.array([4, 1])
    for measured, at, stretched in (
        (tasks, rotations, stretch),
        (tasks.take(rows), rotations[rows], stretch[rows]),
        (lay_out(body, moved, pins), rotations, stretch),
        (tasks, rotations, stretch),
    ):
        found = body_calls.task_errors(kernel, body, measured, at, stretched)
        expected = task_errors(measured, body.forward_kinematics(at, stretched), body.size)
        assert found is not None
        for f, e in zip(found, expected, strict=True):
            np.testing.assert_allclose(f, e, rtol=0.0, atol=ERRORS_MATCH)


def test_rows_solve_alike_alone_and_in_a_batch(kernel):
    """Rows of a batch never mix: a row solved alone answers what it answers in a batch."""
    body, goals, pins = random_problem(np.random.default_rng(9), 3, rows=4, pinned=True)
    batch = solve_body(body, goals, pins, settings=BodySettings(**NO_RESTARTS))
    for row in range(4):
        alone = solve_body(
            body,
            [_row(g, [row]) for g in goals],
            [Pin(p.bone, _rows_of(p.position, [row]), _rows_of(p.rotation, [row])) for p in pins],
            settings=BodySettings(**NO_RESTARTS),
        )
        assert np.array_equal(alone.rotations[0], batch.rotations[row])
        assert np.array_equal(alone.stretch[0], batch.stretch[row])


def test_kernel_numpy_runs_the_numpy_stage(kernel, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("BodySettings(kernel='numpy') must not cross into the kernel")

    monkeypatch.setattr(body_calls, "stage", refuse)
    monkeypatch.setattr(body_calls, "task_errors", refuse)
    body, goals, pins = upper_body_problem(np.random.default_rng(1), 2)
    solve_body(body, goals, pins, settings=BodySettings(kernel="numpy", **NO_RESTARTS))


def test_a_refused_stage_leaves_the_solve_to_numpy(kernel, monkeypatch):
    """A stage the kernel does not finish (None) runs on numpy: the answer is numpy's."""
    body, goals, pins = upper_body_problem(np.random.default_rng(2), 2)
    reference = solve_body(body, goals, pins, settings=BodySettings(kernel="numpy", **NO_RESTARTS))
    monkeypatch.setattr(body_calls, "stage", lambda *args, **kwargs: None)
    monkeypatch.setattr(body_calls, "task_errors", lambda *args, **kwargs: None)
    fallen_back = solve_body(body, goals, pins, settings=BodySettings(**NO_RESTARTS))
    np.testing.assert_allclose(fallen_back.rotations, reference.rotations, rtol=0.0, atol=1e-12)


def test_the_kernel_refuses_broken_tasks(kernel):
    """Bad inputs the Python side would never send are a status, not a crash."""
    body, goals, pins = upper_body_problem(np.random.default_rng(3), 1)
    tasks = lay_out(body, goals, pins)
    broken = tasks.take(np.array([0]))
    object.__setattr__(broken, "bones", np.array([0, 1, body.n_bones + 5]))
    rotations = body.rest_pose(1)
    answer = body_calls.stage(
        kernel,
        body,
        broken,
        rotations,
        np.ones((1, body.n_bones)),
        BodySettings(),
        use_stretch=True,
        max_iterations=10,
        lean=False,
        creep=1e-3,
    )
    assert answer is None


def test_a_body_with_a_limit_the_kernel_does_not_know_runs_on_numpy(kernel, monkeypatch):
    from quat_ik_addon.solver.body import Body
    from quat_ik_addon.solver.limits.channel_locks import LockedComponentsJoint
    from quat_ik_addon.solver.limits.joints import FreeJoint

    arm = upper_body()
    locked = LockedComponentsJoint(FreeJoint(), (False, True, False, False), (1.0, 0.0, 0.0, 0.0))
    body = Body(
        arm.bone_names,
        arm.parents,
        arm.rest_rotations,
        arm.rest_offsets,
        arm.lengths,
        (locked, *arm.limits[1:]),
        arm.stretch,
    )
    assert body_calls.kernel_for(body, BodySettings()) is None

    def refuse(*args, **kwargs):
        raise AssertionError("a body with a locked-channel limit must not cross into the kernel")

    monkeypatch.setattr(body_calls, "stage", refuse)
    pose = body.forward_kinematics(body.random_poses(np.random.default_rng(4), 2))
    result = solve_body(body, [Goal("hand.L", position=_tail(body, pose, "hand.L"))], settings=BodySettings())
    assert np.all(np.isfinite(result.rotations))
