"""Bodies for the body solver's tests (see quat_ik_addon.solver.body.reference_bodies)."""

import numpy as np
import pytest

from quat_ik_addon.solver.body import reference_bodies


@pytest.fixture
def rng():
    return np.random.default_rng(20261128)


@pytest.fixture
def upper_body():
    return reference_bodies.upper_body()
