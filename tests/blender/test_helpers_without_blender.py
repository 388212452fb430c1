"""The Blender layer's numpy-only helpers, tested without starting Blender."""

from __future__ import annotations

import numpy as np

from quat_ik_addon.blender.bake.keyframes import simplify
from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.settings import SolveSettings


def test_simplify_keeps_ends_corners_and_stays_within_tolerance() -> None:
    frames = np.arange(0.0, 101.0)
    values = np.stack((np.where(frames < 50, frames, 100 - frames), np.sin(frames / 15.0)), axis=1)
    keep = simplify(frames, values, 0.01)
    assert keep[0] == 0 and keep[-1] == 100 and 50 in keep
    assert len(keep) < 40
    for channel in range(2):
        rebuilt = np.interp(frames, frames[keep], values[keep, channel])
        assert np.max(np.abs(rebuilt - values[:, channel])) <= 0.01 + 1e-12
    assert list(simplify(frames, np.zeros((101, 4)), 1e-6)) == [0, 100]


def test_simplify_for_constant_keys_keeps_every_step_that_holding_would_lose() -> None:
    """Held keys play each kept key until the next: a ramp straight lines reproduce keeps a
    key wherever holding the one before would be off by more than the tolerance."""
    frames = np.arange(0.0, 41.0)
    values = np.stack((np.minimum(frames, 20.0) * 0.01, np.zeros(41)), axis=1)
    assert list(simplify(frames, values, 1e-3)) == [0, 20, 40]  # straight lines: the ramp's ends
    keep = simplify(frames, values, 0.025, "CONSTANT")
    held = values[keep][np.searchsorted(frames[keep], frames, side="right") - 1]
    assert np.max(np.abs(held - values)) <= 0.025 + 1e-12
    assert list(keep) == [0, 3, 6, 9, 12, 15, 18, 40]  # every third frame of the ramp, then its end


def _cold_solves(chain, goals, start):
    from quat_ik_addon.solver.request import SolveOptions, SolveRequest, solve_request

    options = SolveOptions(settings=SolveSettings(tolerance=1e-5, restarts=2))
    outcomes = [
        solve_request(chain, SolveRequest.of(goals[i : i + 1], start=start), options) for i in range(len(goals))
    ]
    return np.array([o.restarts[0] for o in outcomes]), np.array([o.converged[0] for o in outcomes])


def test_a_solve_without_a_start_starts_from_the_middle_of_the_limits() -> None:
    """Per Frame and Solve Now from the neutral pose: on the sample leg, whose straight rest
    pose sits at the knee's limit, solves from rest restart for about a quarter of reachable
    targets and from the middle of the limits for almost none."""
    from quat_ik_addon.solver.request import SolveOptions, SolveRequest, solve_request
    from quat_ik_addon.solver.rig.spec import load_rig_spec
    from quat_ik_addon.solver.rig.spec_chain import chain_from_rig_spec
    from quat_ik_addon.solver.start_poses import cold_start
    from tests.helpers import REPO_ROOT

    spec = load_rig_spec(REPO_ROOT / "sample_rigs" / "leg.rig.json")
    chain = chain_from_rig_spec(spec, spec.chains[0].name)
    centre = chain.centre_pose()
    np.testing.assert_array_equal(cold_start(chain), centre)
    # The centre pose's own effector is met where it starts: nothing to do.
    here = chain.forward_kinematics(centre[None]).effector
    outcome = solve_request(chain, SolveRequest.of(here), SolveOptions(settings=SolveSettings()))
    assert outcome.iterations[0] == 0 and np.allclose(outcome.rotations[0], quat.canonical(centre))

    goals = chain.forward_kinematics(chain.random_poses(np.random.default_rng(3), 40)).effector
    restarts_cold, met_cold = _cold_solves(chain, goals, None)
    restarts_rest, met_rest = _cold_solves(chain, goals, chain.rest_pose())
    assert met_cold.all() and met_rest.all()
    cold, rest = np.mean(restarts_cold > 0), np.mean(restarts_rest > 0)
    assert cold <= 0.05 and rest >= 0.15, (cold, rest)


def _cached_solve(chain, position) -> object:
    from quat_ik_addon.blender.solving import cache as solve_cache
    from quat_ik_addon.solver.request import SolveOptions, SolveRequest

    request = SolveRequest.of(np.array([position], dtype=float))
    return solve_cache.solve(chain, request, SolveOptions(settings=SolveSettings(restarts=1)))


def test_solve_cache_answers_remembered_solves_as_solved_and_keeps_to_its_byte_budget(monkeypatch) -> None:
    """A Per Frame solve asked again is answered from memory with the same outcome; the memory
    holds outcomes packed, drops the least recently used beyond ``MAX_BYTES``, and fits at least
    100,000 3-bone solves."""
    from quat_ik_addon.blender.solving import cache as solve_cache
    from quat_ik_addon.solver.rig.reference_chains import arm3

    chain = arm3()
    solve_cache.clear()
    first = _cached_solve(chain, (0.2, 0.4, 0.2))
    again = _cached_solve(chain, (0.2, 0.4, 0.2))
    assert dict(solve_cache.stats) == {"misses": 1, "hits": 1}
    for name in ("rotations", "position_error", "orientation_error", "iterations", "restarts", "converged"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
        assert getattr(again, name).shape == getattr(first, name).shape, name
    assert again.rotations.shape == (1, 3, 4) and again.converged.dtype == bool and again.converged[0]
    assert again.tolerance == first.tolerance and not again.rotations.flags.writeable  # shared by later hits

    per_entry = solve_cache.held_bytes()
    assert solve_cache.MAX_BYTES // per_entry >= 100_000, per_entry
    monkeypatch.setattr(solve_cache, "MAX_BYTES", 3 * per_entry)
    for x in (0.1, 0.12, 0.14, 0.16):
        _cached_solve(chain, (x, 0.4, 0.2))
    assert solve_cache.held_bytes() <= 3 * per_entry
    solve_cache.stats.clear()
    _cached_solve(chain, (0.16, 0.4, 0.2))  # the latest is kept
    _cached_solve(chain, (0.2, 0.4, 0.2))  # the oldest was dropped
    assert dict(solve_cache.stats) == {"hits": 1, "misses": 1}
    solve_cache.clear()
    assert solve_cache.held_bytes() == 0


def test_a_body_s_remembered_solve_is_keyed_by_its_poles_too() -> None:
    """A Per Frame body whose pole moved, turned or switched facing is another solve."""
    from quat_ik_addon.blender.solving.cache import body_request_key
    from quat_ik_addon.solver.body import Goal
    from quat_ik_addon.solver.body.poles import BodyPole
    from quat_ik_addon.solver.body.reference_bodies import upper_body
    from quat_ik_addon.solver.body.request import BodyOptions, BodyRequest

    body, arm = upper_body(), ("upper_arm.L", "forearm.L", "hand.L")
    goals = [Goal("hand.L", position=[-0.5, 0.6, 0.2])]

    def key(*poles: BodyPole) -> bytes:
        return body_request_key(body, BodyRequest(goals, poles=poles), BodyOptions())

    plain, keys = key(), {key(BodyPole(arm, [0.0, 0.5, 1.0]))}
    keys |= {key(BodyPole(arm, [0.0, 0.5, -1.0])), key(BodyPole(arm, [0.0, 0.5, 1.0], angle=0.3))}
    keys |= {key(BodyPole(arm, [0.0, 0.5, 1.0], facing="root_x")), key(BodyPole(arm[:2], [0.0, 0.5, 1.0]))}
    assert plain not in keys and len(keys) == 5
    assert key(BodyPole(arm, [0.0, 0.5, 1.0])) == key(BodyPole(arm, [0.0, 0.5, 1.0]))
