"""Canned problems the kernel must answer as the numpy solver did before it is trusted.

``library.load()`` runs ``check(kernel)`` once per process: clamps of poses far outside every
limit shape, solves of reachable goals by each method, and a shot's follow over those goals
(``qik_follow``, the loop the shot entry points share their per-step solve with), compared with
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
    return found


def check(kernel: ctypes.CDLL) -> str | None:
    """None when ``kernel`` answers every canned problem as stored, else what differs."""
    stored = json.loads(ANSWERS.read_text())
    found = kernel_answers(kernel)
    for name, expected in stored.items():
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
        name: {
            "clamped": parts["clamped"].tolist(),
            "solved": {m: r.tolist() for m, r in parts["solved"].items()},
            "followed": parts["followed"].tolist(),
        }
        for name, parts in found.items()
    }


if __name__ == "__main__":
    ANSWERS.write_text(json.dumps(_as_json(numpy_answers()), indent=1) + "\n")
    print(f"self_check: wrote {ANSWERS}")
