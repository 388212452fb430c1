"""The code follows the project's ruff settings (pyproject.toml): lint clean and formatted."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PATHS = ["quat_ik_addon", "tests", "tools", "bench", "sample_rigs"]


def run_ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args, *PATHS], cwd=REPO, capture_output=True, text=True)


def test_ruff_lint_is_clean():
    result = run_ruff("check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied():
    result = run_ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, result.stdout + result.stderr
