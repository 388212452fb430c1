"""Reading and comparing the window tests' screenshots with numpy (PNG decoding by matplotlib).

Rectangles are ``(left, top, width, height)`` in pixels of a screenshot, top-left origin, as
``sessions/window_ui.py`` records each region of the 3D View in ``results.json``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
from matplotlib import image as mpimg

Rect = tuple[int, int, int, int]

# A pixel "changed" when a colour channel moved by more than this (0..1 scale): above PNG and
# antialiasing noise, far below the contrast of text, lines or a translucent overlay.
CHANGE_THRESHOLD = 0.04


def load(path: str | Path) -> npt.NDArray[np.float32]:
    """An RGB image as float32 (height, width, 3) in 0..1."""
    return np.asarray(mpimg.imread(str(path)), dtype=np.float32)[..., :3]


def save(path: str | Path, pixels: npt.NDArray[np.float32]) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    mpimg.imsave(str(path), np.clip(pixels, 0.0, 1.0))


def crop(pixels: npt.NDArray[np.float32], rect: Rect) -> npt.NDArray[np.float32]:
    left, top, width, height = rect
    return pixels[top : top + height, left : left + width]


def viewport_rect(regions: dict[str, Rect]) -> Rect:
    """The part of the 3D View's main region no toolbar, sidebar or header covers."""
    left, top, width, height = regions["WINDOW"]
    right, bottom = left + width, top + height
    if "TOOLS" in regions:
        left = max(left, regions["TOOLS"][0] + regions["TOOLS"][2])
    if "UI" in regions:
        right = min(right, regions["UI"][0])
    for header in ("HEADER", "TOOL_HEADER"):
        if header in regions and regions[header][1] <= top + 1:
            top = max(top, regions[header][1] + regions[header][3])
    return left, top, right - left, bottom - top


def changed_mask(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> npt.NDArray[np.bool_]:
    if a.shape != b.shape:
        raise ValueError(f"cannot compare images of shapes {a.shape} and {b.shape}")
    return np.abs(a - b).max(axis=-1) > CHANGE_THRESHOLD


def changed_fraction(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    return float(changed_mask(a, b).mean())


def detail(pixels: npt.NDArray[np.float32]) -> float:
    """Share of pixels that differ from their right-hand neighbour: ~0 for a flat or empty
    panel, a few percent for text and widgets."""
    step = np.abs(np.diff(pixels, axis=1)).max(axis=-1) > CHANGE_THRESHOLD
    return float(step.mean())


def trim_to_changes(
    pixels: npt.NDArray[np.float32], reference: npt.NDArray[np.float32], *, margin: int = 8, ignore_right: int = 0
) -> npt.NDArray[np.float32]:
    """``pixels`` cut just below the last row that differs from ``reference`` (the same region
    without the add-on), so a sidebar picture ends where the add-on's panels end.
    ``ignore_right`` columns at the right (the sidebar's tab strip) do not count."""
    width = pixels.shape[1] - ignore_right
    rows = np.flatnonzero(changed_mask(pixels[:, :width], reference[:, :width]).any(axis=1))
    bottom = pixels.shape[0] if rows.size == 0 else min(pixels.shape[0], int(rows[-1]) + 1 + margin)
    return pixels[:bottom]
