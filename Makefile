# The two commands the README names (and `make zip`, the add-on alone: see its target). Each one
# sets up everything it needs from scratch, so both work on a fresh clone and on a fresh CI
# machine (.ci/run calls `make test`):
#   make test  - pytest, the whole suite (solver, bpy 5.0, Blender 3.4 binary, window tests, and
#                the version-matrix smoke in bpy 4.2 and 4.5 from their own venvs), then the
#                solver's tests again on the numpy path with numpy's AVX-512/AVX2/FMA kernels off
#   make demo  - tools/demo.py: install the add-on in headless Blender, bake every sample rig with
#                Quat IK and with Blender's IK, write out/demo/ (baked .blend files, plots, a table)
# Set-up steps: .venv with the pinned dev dependency group from pyproject.toml, .venv-bpy42 and
# .venv-bpy45 (bpy 4.2/4.5 LTS only, pinned in tests/compat/requirements-*.txt; the smoke tests
# start them as subprocesses), Debian's Blender 3.4 + xvfb (installed only if missing, as root),
# the solver's C kernel for all six platforms (tools/build_native.py, Zig from .venv; rebuilt only
# when its sources change), then the extension zip in dist/, which ships those libraries.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

# bpy 5.0.1 exists for CPython 3.11 only.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
VENV_PYTHON := $(VENV)/bin/python

# Extra bpy versions for tests/compat: one venv each (a venv holds one bpy), nothing but bpy
# and its pinned dependencies; pytest itself runs in .venv only.
COMPAT_VENVS := .venv-bpy42 .venv-bpy45

# numpy kernels switched off for a second run of the solver's tests, as on a CPU without them:
# the solver's answers must not hang on the last bits those kernels round differently (a
# convex hull once did). Features a CPU lacks are ignored.
NARROW_SIMD := AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX2 FMA3

.PHONY: test demo screenshots zip venv compat-venvs debian-packages native extension

# The whole suite runs on the native kernel; the solver's tests then run again on the numpy
# reference (QUAT_IK_NATIVE=0), with numpy's wide SIMD kernels off as on an older CPU.
test: venv compat-venvs debian-packages extension
	$(VENV_PYTHON) -m pytest
	QUAT_IK_NATIVE=0 NPY_DISABLE_CPU_FEATURES="$(NARROW_SIMD)" $(VENV_PYTHON) -m pytest -q tests/solver --ignore=tests/solver/native

# The demo runs in the bpy module only: it needs .venv and nothing from the system.
demo: venv extension
	$(VENV_PYTHON) tools/demo.py

# Regenerates docs/screenshots/ from the real-window tests (tools/screenshots.py).
screenshots: venv debian-packages
	$(VENV_PYTHON) tools/screenshots.py

venv: $(VENV)/.dev-group-installed

# Reinstalls when pyproject.toml changes; otherwise reuses .venv without touching the network.
$(VENV)/.dev-group-installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || \
	  { echo "make: need Python 3.11 for bpy 5.0.1, got $(PYTHON); run: make PYTHON=/path/to/python3.11" >&2; exit 1; }
	test -x $(VENV_PYTHON) || $(PYTHON) -m venv $(VENV)
	$(VENV_PYTHON) -m pip install --quiet --upgrade pip  # `--group` needs pip >= 25.1
	$(VENV_PYTHON) -m pip install --quiet --group dev
	touch $@

compat-venvs: $(COMPAT_VENVS:%=%/.requirements-installed)

# Reinstalls when its requirements file changes; otherwise reuses the venv without the network.
.venv-bpy%/.requirements-installed: tests/compat/requirements-bpy%.txt
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || \
	  { echo "make: need Python 3.11 for the bpy wheels, got $(PYTHON); run: make PYTHON=/path/to/python3.11" >&2; exit 1; }
	test -x .venv-bpy$*/bin/python || $(PYTHON) -m venv .venv-bpy$*
	echo '*' > .venv-bpy$*/.gitignore  # as Python 3.13's venv does: git ignores the whole venv
	.venv-bpy$*/bin/python -m pip install --quiet --requirement $<
	touch $@

debian-packages:
	tools/ensure_debian_packages.sh

# One shared library per platform into quat_ik_addon/solver/native/lib/ (never committed).
native: venv
	$(VENV_PYTHON) tools/build_native.py

extension: venv native
	$(VENV_PYTHON) tools/build_extension.py

# The add-on zip without the test set-up: .venv-zip holds only the ziglang wheel pinned in
# pyproject.toml (Zig's C compiler, about 410 MB), so the zip carries the native kernel; no bpy,
# so the zip is written with zipfile and Blender's validator runs in `make test` instead.
# `python3 tools/build_extension.py` alone (any Python 3.11+) builds it without the kernel.
ZIGLANG_PIN := $(shell grep -o 'ziglang==[0-9.]*' pyproject.toml)

zip: .venv-zip/.ziglang-installed
	.venv-zip/bin/python tools/build_extension.py

.venv-zip/.ziglang-installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "make: need Python 3.11 or later (tomllib), got $(PYTHON); run: make zip PYTHON=/path/to/python3" >&2; exit 1; }
	test -x .venv-zip/bin/python || $(PYTHON) -m venv .venv-zip
	echo '*' > .venv-zip/.gitignore  # as Python 3.13's venv does: git ignores the whole venv
	.venv-zip/bin/python -m pip install --quiet $(ZIGLANG_PIN)
	touch $@
