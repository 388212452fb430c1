"""The Blender benchmark's target path, shared by ``bench_blender.py`` (in bpy) and
``branch_barrier.py`` (solver only)."""

from __future__ import annotations

import math

import numpy as np

LOOP_FRAMES = 250  # the target path repeats every this many frames


def target_path(frames: np.ndarray) -> np.ndarray:
    """A smooth closed 3D curve, (F, 3), around the chains' axis (+Z, from the origin):
    within their length, though not everywhere within their limits' reach."""
    t = 2.0 * math.pi * (np.asarray(frames, dtype=float) - 1) / LOOP_FRAMES
    return np.stack(
        (1.1 * np.sin(t), 0.8 * np.sin(2.0 * t + 0.4), 2.0 + 0.35 * np.cos(t)),
        axis=1,
    )
