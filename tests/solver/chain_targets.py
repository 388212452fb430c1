"""Targets for solver tests (a module of its own: tests/solver/body has a conftest too, so
``from conftest import`` would find whichever was imported first)."""


def reachable_targets(chain, rng, count):
    """Targets made by forward kinematics of random poses inside the limits: all reachable."""
    poses = chain.random_poses(rng, count)
    return chain.forward_kinematics(poses).effector, poses
