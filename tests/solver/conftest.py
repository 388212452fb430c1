"""Chains for solver tests, built by fixtures (see quat_ik_addon.solver.rig.reference_chains); targets
they reach are made by ``chain_targets.reachable_targets``."""

import numpy as np
import pytest

from quat_ik_addon.solver.rig import reference_chains


@pytest.fixture(params=["arm3", "chain10", "chain30"])
def limited_chain(request):
    return reference_chains.REFERENCE_CHAINS[request.param]()


@pytest.fixture
def rng():
    return np.random.default_rng(20260422)


@pytest.fixture(scope="session")
def kernel():
    """The native kernel as this machine loads it (``make native`` builds it into lib/): here it
    must load, so that the kernel's tests never pass by running numpy alone."""
    from quat_ik_addon.solver.native import library

    loaded, status = library.load()
    assert loaded is not None, f"the native kernel must load here: {status.describe()}"
    return loaded
