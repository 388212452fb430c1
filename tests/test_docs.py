"""The README and the docs stay usable (issue 37): the README reads in minutes, its commands are
make targets, and no link in it or in docs/ points at a file that is not there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers import REPO_ROOT

README = REPO_ROOT / "README.md"
README_MOST_LINES = 250
PAGES = [README, *sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "sample_rigs" / "README.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_reads_in_minutes() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MOST_LINES, f"README.md has {len(lines)} lines; keep it to {README_MOST_LINES}"


def test_the_readmes_commands_are_make_targets() -> None:
    commands = set(re.findall(r"^make (\w+)", README.read_text(), flags=re.MULTILINE))
    assert {"demo", "test", "zip"} <= commands, commands
    makefile = (REPO_ROOT / "Makefile").read_text()
    missing = [command for command in commands if not re.search(rf"^{command}:", makefile, flags=re.MULTILINE)]
    assert not missing, missing


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(REPO_ROOT)))
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address, or a heading on the same page
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            broken.append(target)
    assert not broken, broken
