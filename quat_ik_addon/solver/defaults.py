"""The defaults every front end shares: the panel's chain settings, both command lines'
flags and ``request.solve_request`` without settings. A module of its own so that the
add-on's properties read them without importing the solver's pipeline at registration."""

from __future__ import annotations

from .settings import SolveSettings

# The defaults of the panel's chain settings, the command line's flags and ``solve_request``
# without settings: 64 sweeps, reached within 1e-4 (scene units; 0.1 mm on a rig in metres),
# combined DLS then CCD, and 4 rounds of restarts for a goal a solve missed.
DEFAULT_SETTINGS = SolveSettings(max_iterations=64, tolerance=1e-4, restarts=4, method="dls_ccd")
# Seconds a Live, Per Frame or Solve Now solve may spend on restarts before it keeps its best pose
# (the panel's Time Limit); a bake and the command line have none unless asked.
INTERACTIVE_TIME_LIMIT = 0.25
# How much a goal's orientation counts against its position by default (the panel's Orientation Weight).
ORIENTATION_WEIGHT = 0.5
