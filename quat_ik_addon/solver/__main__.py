"""``python -m quat_ik_addon.solver``: the numpy-only command line (see cli.py)."""

import sys

from .cli import main

sys.exit(main())
