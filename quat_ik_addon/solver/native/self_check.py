"""Canned problems the kernel must answer as the numpy solver did before it is trusted.

``library.load()`` runs ``check(kernel)`` once per process: clamps of poses far outside every
limit shape, solves of reachable goals by each method, and a shot's follow over those goals
(``qik_follow``, the loop the shot entry points share their per-step solve with), and a body's
stage with stretch (``qik_body_stage``) and its task errors, compared with
the numpy solver's answers stored in ``self_check.json``. A library miscompiled for its platform, or built from
sources that drifted from the numpy reference, fails here and the numpy path runs instead.
``tests/solver/native/test_self_check.py`` keeps the stored answers equal to what numpy
answers today (regenerate them with ``python -m quat_ik_addon.solver.native.self_check``).
"""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np

from ..goals import Goals

ANSWERS = Path(__file__).with_name("self_check.json")
CLAMP_MATCH = 1e-9  # a clamp is one closed-form step: rounding only
SOLVE_MATCH = 1e-6  # a converged solve: rounding amplified by the iterations, far below a miss
METHODS = ("ccd", "dls", "dls_ccd")
BODY = "upper_body"  # the body problem's key among the chains' in self_check.json


def _body_problem():
    """An upper body with stretchy arms: each hand to where a pose inside the limits has it (the
    left at level 0, the right at level 1), the spine's frame pinned, solved with stretch in use
    from that pose with every joint turned by up to 0.3 radians (as Live starts); three rows,
    every goal reachable, so the answers do not hang on where a stalled level stopped.
    Returns the body, its tasks, starts and stretch."""
    from .. import quaternion as quat
    from ..body.goals import Goal, Pin, lay_out
    from ..body.reference_bodies import upper_body

    body = upper_body(stretchy_arms=True)
    rng = np.random.default_rng(20261128)
    rotations = body.random_poses(rng, 3)
    pose = body.forward_kinematics(rotations)
    hands = np.array([body.index("hand.L"), body.index("hand.R")])
    tails = pose.points(hands, np.array([[0.0, body.lengths[b], 0.0] for b in hands]))
    goals = [Goal("hand.L", position=tails[:, 0]), Goal("hand.R", position=tails[:, 1], level=1)]
    tasks = lay_out(body, goals, [Pin("spine", rotation=pose.rotations[:, 0])])
    turns = quat.from_rotation_vector(rng.uniform(-0.3, 0.3, (3, body.n_bones, 3)) / np.sqrt(3.0))
    starts = body.clamp_rotations(quat.multiply(turns, rotations))
    return body, tasks, starts, np.ones((3, body.n_bones))


def _body_settings(kernel: str):
    from ..body.settings import BodySettings

    return BodySettings(kernel=kernel)


def _problems():
    """(name, chain, rotations to clamp, goal positions, start poses) for each canned chain."""
    from ..rig import reference_chains

    rng = np.random.default_rng(20261128)
    for name, chain in (("arm3", reference_chains.arm3()), ("limited6", reference_chains.limited_chain(6))):
        far = rng.normal(size=(8, chain.n_bones, 4))
        poses = chain.random_poses(rng, 4)
        goals = chain.forward_kinematics(poses).effector
        yield name, chain, far / np.linalg.norm(far, axis=-1, keepdims=True), goals, chain.centre_pose()


def _settings(method: str):
    from ..settings import SolveSettings

    return SolveSettings(method=method)


def _follow(chain, goals, start, kernel: ctypes.CDLL | None) -> np.ndarray:
    """``sequence._follow`` of one piece from ``start`` through the goals: the poses between and
    the arrival, (goals − 1, n, 4). On numpy where ``kernel`` is None, else on ``kernel``."""
    from ..methods.ladder import finishing
    from ..shots import sequence
    from . import shot_calls

    frames = sequence._Frames(chain, Goals(goals), _settings("dls_ccd"))
    count = len(goals)
    followed, poses, poses_met = np.arange(count), np.zeros((count, chain.n_bones, 4)), np.zeros(count, dtype=bool)
    begins, ends, starts, started = np.zeros(1, dtype=np.intp), np.full(1, count - 1), start[None].copy(), [True]
    if kernel is None:
        arrival, _ = sequence._follow(frames, followed, poses, poses_met, begins, ends, starts, started)
    else:
        met_settings, tracking = frames.coarse, frames.coarse_tracking
        answer = shot_calls.follow(
            frames,
            met_settings,
            finishing(met_settings),
            tracking,
            finishing(tracking),
            followed,
            begins,
            ends,
            starts,
            np.array(started),
            poses,
            poses_met,
            kernel=kernel,
        )
        if answer is None:
            return np.full((count - 1, chain.n_bones, 4), np.nan)
        arrival = answer[0]
    return np.concatenate((poses[1:-1], arrival))


def numpy_answers() -> dict:
    """The numpy solver's answers (what ``self_check.json`` stores)."""
    from ..methods.ladder import run_method
    from . import library

    found = {}
    with library.numpy_only():
        for name, chain, far, goals, start in _problems():
            starts = np.repeat(start[None], len(goals), axis=0)
            solved = {
                method: run_method(chain, Goals(goals), starts.copy(), _settings(method))[0] for method in METHODS
            }
            found[name] = {
                "clamped": np.abs(chain.clamp_to_limits(far)),
                "solved": solved,
                "followed": _follow(chain, goals, start, None),
            }
        from ..body.goals import task_errors
        from ..body.solve import _stage

        body, tasks, starts, stretch = _body_problem()
        settings = _body_settings("numpy")
        rotations, stretch, _, _ = _stage(
            body, tasks, starts, stretch, settings, body.stretchy_bones, settings.max_iterations
        )
        errors = task_errors(tasks, body.forward_kinematics(rotations, stretch), body.size)
        found[BODY] = {"rotations": np.abs(rotations), "stretch": stretch, "errors": np.stack(errors)}
    return found


def kernel_answers(kernel: ctypes.CDLL) -> dict:
    """The same problems on ``kernel``, called directly: it is not the solver's kernel yet."""
    from ..methods.ladder import finishing
    from .kernel_calls import clamp_with, run_method

    found = {}
    for name, chain, far, goals, start in _problems():
        starts = np.repeat(start[None], len(goals), axis=0)
        solved = {}
        for method in METHODS:
            settings = _settings(method)
            answer = run_method(kernel, chain, Goals(goals), starts.copy(), settings, finishing(settings), None)
            solved[method] = np.full(starts.shape, np.nan) if answer is None else answer[0]
        clamped = clamp_with(kernel, chain, far)
        found[name] = {
            "clamped": np.full(far.shape, np.nan) if clamped is None else np.abs(clamped),
            "solved": solved,
            "followed": _follow(chain, goals, start, kernel),
        }
    found[BODY] = _body_answers(kernel)
    return found


def _body_answers(kernel: ctypes.CDLL) -> dict:
    from ..body.solve import CREEP
    from . import body_calls

    body, tasks, starts, stretch = _body_problem()
    settings = _body_settings("auto")
    answer = body_calls.stage(
        kernel,
        body,
        tasks,
        starts,
        stretch,
        settings,
        use_stretch=True,
        max_iterations=settings.max_iterations,
        lean=False,
        creep=CREEP,
    )
    errors = None if answer is None else body_calls.task_errors(kernel, body, tasks, answer[0], answer[1])
    if answer is None or errors is None:
        return {"rotations": np.full(starts.shape, np.nan), "stretch": stretch * np.nan, "errors": np.nan}
    return {"rotations": np.abs(answer[0]), "stretch": answer[1], "errors": np.stack(errors)}


def check(kernel: ctypes.CDLL) -> str | None:
    """None when ``kernel`` answers every canned problem as stored, else what differs."""
    stored = json.loads(ANSWERS.read_text())
    found = kernel_answers(kernel)
    for name, expected in stored.items():
        if name == BODY:
            for part in ("rotations", "stretch", "errors"):
                differ = np.abs(np.asarray(found[BODY][part]) - np.asarray(expected[part]))
                if not np.all(differ <= SOLVE_MATCH):
                    return f"{BODY}: a body stage's {part} differ from numpy's by {np.nanmax(differ):.3g}"
            continue
        clamped = np.abs(found[name]["clamped"] - np.asarray(expected["clamped"]))
        if not np.all(clamped <= CLAMP_MATCH):  # written so that NaN fails too
            return f"{name}: clamps differ from numpy's by {np.nanmax(clamped):.3g}"
        for method, rotations in expected["solved"].items():
            solved = np.abs(np.abs(found[name]["solved"][method]) - np.abs(np.asarray(rotations)))
            if not np.all(solved <= SOLVE_MATCH):
                return f"{name}: {method} solves differ from numpy's by {np.nanmax(solved):.3g}"
        followed = np.abs(np.abs(found[name]["followed"]) - np.abs(np.asarray(expected["followed"])))
        if not np.all(followed <= SOLVE_MATCH):
            return f"{name}: a followed shot differs from numpy's by {np.nanmax(followed):.3g}"
    return None


def _as_json(found: dict) -> dict:
    return {
        name: {part: values.tolist() for part, values in parts.items()}
        if name == BODY
        else {
            "clamped": parts["clamped"].tolist(),
            "solved": {m: r.tolist() for m, r in parts["solved"].items()},
            "followed": parts["followed"].tolist(),
        }
        for name, parts in found.items()
    }


if __name__ == "__main__":
    ANSWERS.write_text(json.dumps(_as_json(numpy_answers()), indent=1) + "\n")
    print(f"self_check: wrote {ANSWERS}")
