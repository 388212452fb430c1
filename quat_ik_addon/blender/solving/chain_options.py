"""A chain's settings (the panel's properties) read into the solver's ``SolveOptions``.

The solve itself is the solver's one pipeline (``solver.request.solve_request``); this module
only reads. No ``bpy`` here: settings are read by attribute.
"""

from __future__ import annotations

import functools
from dataclasses import replace

from ...solver.chain import Chain
from ...solver.defaults import DEFAULT_SETTINGS
from ...solver.learned_starts import LearnedStarts
from ...solver.learned_starts import learn_start_poses as learn_starts
from ...solver.request import SolveOptions
from ...solver.settings import SolveSettings

# The chain settings' Method names (``chains.settings.METHODS``) -> the solver's.
METHODS = {"CCD": "ccd", "DLS": "dls", "COMBINED": "dls_ccd"}


def options_for(chain_settings, learned_starts: LearnedStarts | None = None) -> SolveOptions:
    """Solver options from a QuatIKChain (or anything with its attribute names)."""
    settings = _solve_settings(
        int(chain_settings.iterations),
        float(chain_settings.tolerance) if chain_settings.tolerance > 0.0 else None,
        chain_settings.sweep_order.lower(),
        int(chain_settings.restarts),
        METHODS.get(chain_settings.method, DEFAULT_SETTINGS.method),
    )
    orientation_weight = 0.0
    if chain_settings.orientation_mode != "NONE":
        orientation_weight = float(chain_settings.orientation_weight)
    return _options(
        settings,
        orientation_weight,
        learned_starts if chain_settings.use_learned_start else None,
        float(chain_settings.pole_angle),
        str(getattr(chain_settings, "pole_facing", "BEND")).lower(),
    )


@functools.lru_cache(maxsize=256)  # the same options object for the same settings (``request.within`` keeps it)
def _options(
    settings: SolveSettings, orientation_weight: float, learned_starts, pole_angle: float, pole_facing: str
) -> SolveOptions:
    return SolveOptions(
        settings=settings,
        orientation_weight=orientation_weight,
        learned_starts=learned_starts,
        pole_angle=pole_angle,
        pole_facing=pole_facing,
    )


@functools.lru_cache(maxsize=256)  # (Live and Per Frame read every chain's settings on every update)
def _solve_settings(
    max_iterations: int, tolerance: float | None, order: str, restarts: int, method: str
) -> SolveSettings:
    return replace(
        DEFAULT_SETTINGS,
        max_iterations=max_iterations,
        tolerance=tolerance,
        order=order,
        restarts=restarts,
        method=method,
    )


def learn_start_poses(chain: Chain, chain_settings) -> LearnedStarts:
    """Learned start poses for ``chain`` under the chain's own solver settings (Blow 2002)."""
    return learn_starts(chain, settings=options_for(chain_settings).settings)
