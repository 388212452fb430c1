"""Regenerate docs/screenshots/ (the README's pictures) from the real-window tests.

Runs ``pytest tests/window`` (Debian's Blender 3.4 in a window under xvfb) with
``QUAT_IK_SCREENSHOTS_DIR`` pointing at a temporary folder: each test that passes writes the
pictures it checked there. Only if the whole run passes does the folder replace
docs/screenshots/, so a failing run leaves the old pictures, and pictures of something that
no longer passes (or no longer exists) disappear. Never edit the PNGs by hand.

Command line: ``.venv/bin/python tools/screenshots.py`` (or ``make screenshots``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS_DIR = REPO_ROOT / "docs" / "screenshots"


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="quat_ik_screenshots_") as tmp:
        fresh = Path(tmp) / "screenshots"
        env = {**os.environ, "QUAT_IK_SCREENSHOTS_DIR": str(fresh)}
        command = [sys.executable, "-m", "pytest", "tests/window", "-q", "-p", "no:cacheprovider"]
        if subprocess.run(command, cwd=REPO_ROOT, env=env, check=False).returncode != 0:
            print("screenshots: the window tests failed; docs/screenshots/ is unchanged", file=sys.stderr)
            return 1
        pictures = sorted(fresh.glob("*.png"))
        if not pictures:
            print("screenshots: the window tests wrote no pictures", file=sys.stderr)
            return 1
        shutil.rmtree(SCREENSHOTS_DIR, ignore_errors=True)
        shutil.copytree(fresh, SCREENSHOTS_DIR)
    for picture in sorted(SCREENSHOTS_DIR.glob("*.png")):
        print(f"screenshots: {picture.relative_to(REPO_ROOT)} ({picture.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
