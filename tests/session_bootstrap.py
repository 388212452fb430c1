"""First script of every test session (bpy module or Blender binary); see tests/helpers.py.

Command line: ``<python or blender ... --python> session_bootstrap.py -- [--install ZIP] SCRIPT [ARGS...]``

It puts the repository root on ``sys.path`` (Blender ignores PYTHONPATH, so this is how session
scripts reach ``tools.blender_session`` and ``tests.*``), optionally installs and enables the
add-on zip, runs SCRIPT as ``__main__`` with ``sys.argv == [SCRIPT, *ARGS]``, and prints the
success marker only if SCRIPT returned without raising.
"""

import runpy
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tests.helpers import SUCCESS_MARKER  # noqa: E402  (needs the sys.path line above)


def main() -> None:
    args = sys.argv[sys.argv.index("--") + 1 :]
    if args[:1] == ["--install"]:
        from tools.blender_session import install_addon

        module = install_addon(args[1])
        print(f"session_bootstrap: installed and enabled {module}")
        args = args[2:]
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
    print(SUCCESS_MARKER, flush=True)


main()
