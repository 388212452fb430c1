# The two commands the README names. Each one sets up everything it needs from scratch, so
# both work on a fresh clone and on a fresh CI machine (.ci/run calls `make test`):
#   make test  - pytest, the whole suite (solver, bpy 5.0, Blender 3.4 binary, window tests)
#   make demo  - tools/demo.py: install the add-on in headless Blender, rig an arm, save out/demo/
# Set-up steps: .venv with the pinned dev dependency group from pyproject.toml, Debian's
# Blender 3.4 + xvfb (installed only if missing, as root), then the extension zip in dist/.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

# bpy 5.0.1 exists for CPython 3.11 only.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VENV_PYTHON := $(VENV)/bin/python

.PHONY: test demo venv debian-packages extension

test: venv debian-packages extension
	$(VENV_PYTHON) -m pytest

# The demo runs in the bpy module only, so missing Debian packages are reported, not fatal.
demo: venv extension
	-tools/ensure_debian_packages.sh
	$(VENV_PYTHON) tools/demo.py

venv: $(VENV)/.dev-group-installed

# Reinstalls when pyproject.toml changes; otherwise reuses .venv without touching the network.
$(VENV)/.dev-group-installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || \
	  { echo "make: need Python 3.11 for bpy 5.0.1, got $(PYTHON); run: make PYTHON=/path/to/python3.11" >&2; exit 1; }
	test -x $(VENV_PYTHON) || $(PYTHON) -m venv $(VENV)
	$(VENV_PYTHON) -m pip install --quiet --upgrade pip  # `--group` needs pip >= 25.1
	$(VENV_PYTHON) -m pip install --quiet --group dev
	touch $@

debian-packages:
	tools/ensure_debian_packages.sh

extension: venv
	$(VENV_PYTHON) tools/build_extension.py
