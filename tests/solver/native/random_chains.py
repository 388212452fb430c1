"""Random chains with every limit shape the solver knows, for the kernel's parity tests."""

from __future__ import annotations

import numpy as np

from quat_ik_addon.solver import quaternion as quat
from quat_ik_addon.solver.chain import Chain
from quat_ik_addon.solver.goals import Goals
from quat_ik_addon.solver.limits.joints import AngleRange, BallJoint, FixedJoint, FreeJoint, HingeJoint
from quat_ik_addon.solver.limits.reach_windows import ConeWindow, EllipticConeWindow, PolygonWindow


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _plane(rng: np.random.Generator, center: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.cross(center, _unit(rng))
    x /= np.linalg.norm(x)
    return x, np.cross(center, x)


def _angle_range(rng: np.random.Generator) -> AngleRange:
    """Ranges that hold 0, miss it, or run through ±π."""
    low = rng.uniform(-np.pi, np.pi)
    width = rng.uniform(0.05, 1.8 * np.pi)
    shift = 2.0 * np.pi if low + width > 2.0 * np.pi else 0.0  # the same angles, within ±2π
    return AngleRange(low - shift, low + width - shift)


def _window(rng: np.random.Generator):
    center = _unit(rng) if rng.random() < 0.5 else np.array([0.0, 1.0, 0.0])
    kind = rng.integers(3)
    if kind == 0:
        return ConeWindow(center, rng.uniform(0.05, np.pi))
    plane_x, plane_y = _plane(rng, center)
    if kind == 1:
        return EllipticConeWindow(center, plane_x, plane_y, tuple(rng.uniform(0.05, 1.4, size=2)))
    corners = rng.integers(3, 9)
    angles = np.sort(rng.uniform(0.0, 2.0 * np.pi, corners))
    radii = rng.uniform(0.1, 2.0)
    vertices = np.stack((np.cos(angles), np.sin(angles)), axis=1) * radii
    if rng.random() < 0.5:
        vertices = vertices[::-1]
    return PolygonWindow(center, plane_x, plane_y, vertices)


def random_limit(rng: np.random.Generator):
    kind = rng.choice(["free", "fixed", "hinge", "ball", "ball", "ball"])
    stiffness = float(rng.choice([0.0, 0.0, 0.3, 0.8]))
    if kind == "free":
        return FreeJoint(stiffness)
    if kind == "fixed":
        return FixedJoint()
    if kind == "hinge":
        return HingeJoint(_unit(rng), None if rng.random() < 0.2 else _angle_range(rng), stiffness)
    windows = tuple(_window(rng) for _ in range(rng.choice([0, 1, 1, 1, 2, 3])))
    return BallJoint(
        windows,
        None if rng.random() < 0.3 else _angle_range(rng),
        "boundary" if rng.random() < 0.3 else "closest",
        stiffness,
        use_fast_paths=bool(rng.random() < 0.8),
        twist_reference=quat.normalize(rng.normal(size=4)) if rng.random() < 0.2 else None,
    )


def random_chain(rng: np.random.Generator, n_bones: int) -> Chain:
    lengths = rng.uniform(0.2, 1.0, n_bones)
    offsets = np.zeros((n_bones, 3))
    offsets[1:, 1] = lengths[:-1]
    offsets += rng.normal(scale=0.05, size=(n_bones, 3)) * (rng.random() < 0.5)
    rest = quat.normalize(np.tile(quat.IDENTITY, (n_bones, 1)) + rng.normal(scale=0.3, size=(n_bones, 4)))
    effector = rng.normal(scale=0.1, size=3) if rng.random() < 0.3 else np.zeros(3)
    limits = tuple(random_limit(rng) for _ in range(n_bones))
    names = tuple(f"b{i}" for i in range(n_bones))
    return Chain(names, rest, offsets, lengths, limits, effector)


def random_goals(rng: np.random.Generator, chain: Chain, count: int) -> Goals:
    """Half reachable (a random pose's effector), half anywhere within 1.3 reaches; a third
    with an orientation, a third with a direction."""
    reachable = chain.forward_kinematics(chain.random_poses(rng, count))
    anywhere = rng.normal(size=(count, 3))
    anywhere *= (1.3 * chain.reach * rng.random(count) / np.linalg.norm(anywhere, axis=1))[:, None]
    positions = np.where((rng.random(count) < 0.5)[:, None], reachable.effector, anywhere)
    kind = rng.integers(3)
    if kind == 1:
        return Goals(positions, orientations=reachable.rotations[:, -1])
    if kind == 2:
        return Goals(positions, directions=rng.normal(size=(count, 3)), aim_axis=_unit(rng))
    return Goals(positions)
