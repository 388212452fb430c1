"""Checks of the numbers the solver's classes are built from (joint limits, reach windows,
chains), made once where they enter, for what the arithmetic after them can hold.

Each check returns the value as the class keeps it or raises ``ValueError`` naming the value
(``"hinge axis"``, ``"cone half-angle"``). The rig spec checks its files more strictly, with
the file, bone and field in its message (``rig_spec_values``); these are what a caller of the
Python API gets.

Directions and quaternions may have any finite, non-zero length: each class normalises them
as it always has, after ``normalisable`` scaled them by their largest component where
squaring them would overflow or underflow (``[1e200, 0, 0]`` is +X, not the zero vector its
squared length made it), so every limit that worked before keeps its last bits.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

# Squared lengths outside these bounds leave float range (1e-150² and 1e150² are near its ends).
_SQUARES_UNDERFLOW = 1e-150
_SQUARES_OVERFLOW = 1e150


def finite_array(value: ArrayLike, shape: tuple[int, ...], what: str) -> Array:
    """``value`` as a float array of ``shape`` (-1 for any size), all finite."""
    if np.iscomplexobj(value):
        raise ValueError(f"{what} must be real numbers, not complex")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError) as error:
        raise ValueError(f"{what} must be numbers: {error}") from None
    try:
        array = array.reshape(shape)
    except ValueError:
        raise ValueError(f"{what} must have shape {shape}, not {array.shape}") from None
    if not np.isfinite(array).all():
        raise ValueError(f"{what} must be finite, not {array.tolist()}")
    return array


def normalisable(value: ArrayLike, what: str, size: int = 3) -> Array:
    """A finite, non-zero ``size``-vector that its class may normalise as it always has: returned
    as given, or divided by its largest component where its squared length would overflow or
    underflow (then ``v / |v|`` would be zero or NaN)."""
    vector = finite_array(value, (size,), what)
    squared = float(sum(c * c for c in vector.tolist()))
    if _SQUARES_UNDERFLOW < squared < _SQUARES_OVERFLOW:
        return vector
    largest = float(np.max(np.abs(vector)))
    if largest == 0.0:
        raise ValueError(f"{what} must be non-zero, not {vector.tolist()}")
    return vector / largest


def normalisable_rows(value: ArrayLike, what: str, shape: tuple[int, int]) -> Array:
    """``normalisable`` for every row of a finite (rows, size) array at once."""
    rows = finite_array(value, shape, what)
    with np.errstate(over="ignore", under="ignore"):  # (out of range is what is looked for)
        squared = np.sum(rows * rows, axis=-1)
    out_of_range = ~((squared > _SQUARES_UNDERFLOW) & (squared < _SQUARES_OVERFLOW))
    if np.any(out_of_range):
        largest = np.max(np.abs(rows[out_of_range]), axis=-1, keepdims=True)
        if np.any(largest == 0.0):
            raise ValueError(f"{what} must be non-zero, not {rows[out_of_range][largest[:, 0] == 0.0][0].tolist()}")
        rows = rows.copy()
        rows[out_of_range] = rows[out_of_range] / largest
    return rows


def real_number(value: object, what: str) -> float:
    """A real, finite number, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{what} must be a number, not {value!r}")
    try:
        number = float(value)
    except OverflowError:
        raise ValueError(f"{what} is too large to be a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{what} must be finite, not {number!r}")
    return number


def number_in(
    value: object, low: float, high: float, what: str, *, low_open: bool = False, high_open: bool = False
) -> float:
    """A real, finite number within ``[low, high]`` (``(`` / ``)`` where open), as a float."""
    number = real_number(value, what)
    above = number > low if low_open else number >= low
    below = number < high if high_open else number <= high
    if not (above and below):
        bounds = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{what} must be in {bounds}, not {number!r}")
    return number


def stiffness(value: object, what: str = "stiffness") -> float:
    """A joint's stiffness: the share of a step it refuses, in [0, 1]."""
    return number_in(value, 0.0, 1.0, what)


def whole_number(value: object, what: str) -> int:
    """A count: an integer >= 0 (a bool is refused, though Python counts it as one)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0, not {value!r}")
    return int(value)
