"""The one place that writes keyframes: whole channels at once, across Blender versions.

``write_channels`` replaces a channel's keys inside a frame range and keeps every key
outside it exactly as it was (all its attributes: handles, handle types, interpolation,
easing, key type, selection). Keys go in with ``keyframe_points.add`` + ``foreach_set`` (a
few ms for thousands of keys; ``keyframe_insert`` per key is ~30x slower). Where the
curves live (``action.fcurves`` before 4.4, a slot's channelbag after) is ``compat``'s job.

Speed (40 curves of 1,000 keys take ~10 ms, most of it in Blender): enum attributes travel
as uint8, the size of their DNA ``char``, so ``foreach_get``/``foreach_set`` copy memory
instead of setting key by key (~10x faster); a curve without keys skips the attributes that
``keyframe_points.add`` already gives new keys (checked on the first key; selection flags are
bits that ``foreach_set`` sets key by key, ~50 µs a curve) and the handle positions, which
recomputing the handles does for automatic handles anyway. New keys are selected, as keys
that ``keyframe_insert`` makes are.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

FRAME_EPSILON = 1e-4

# Keyframe attributes copied for kept keys: (name, numbers per key, numpy dtype).
_KEY_ATTRIBUTES = (
    ("co", 2, np.float32),
    ("handle_left", 2, np.float32),
    ("handle_right", 2, np.float32),
    ("interpolation", 1, np.uint8),
    ("handle_left_type", 1, np.uint8),
    ("handle_right_type", 1, np.uint8),
    ("easing", 1, np.uint8),
    ("type", 1, np.uint8),
    ("back", 1, np.float32),
    ("amplitude", 1, np.float32),
    ("period", 1, np.float32),
    ("select_control_point", 1, bool),
    ("select_left_handle", 1, bool),
    ("select_right_handle", 1, bool),
)

_INTERPOLATION = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
_AUTO_CLAMPED = 4
_KEYFRAME = 0
# What ``keyframe_points.add`` gives a new key (the same in 3.4, 4.2, 4.5 and 5.0).
_ADDED_KEY = {
    "interpolation": "BEZIER",
    "handle_left_type": "AUTO_CLAMPED",
    "handle_right_type": "AUTO_CLAMPED",
    "easing": "AUTO",
    "type": "KEYFRAME",
    "select_control_point": True,
    "select_left_handle": True,
    "select_right_handle": True,
}
# Derived from the key positions by ``compat.recalculate_handles`` for automatic handles (of
# two keys or more): not worth writing into a curve whose keys are all new (their handle
# types are automatic).
_DERIVED = ("handle_left", "handle_right")


@dataclass(frozen=True)
class ChannelKeys:
    """Keys for one F-curve: ``values`` at ``frames`` (both (K,))."""

    data_path: str
    index: int
    group: str
    frames: np.ndarray
    values: np.ndarray


def _read_keys(points) -> dict[str, np.ndarray]:
    from .. import compat

    count = len(points)
    arrays = {}
    for name, width, dtype in _KEY_ATTRIBUTES:
        array = np.zeros(count * width, dtype=dtype)
        compat.keyframes_foreach_get(points, name, array)  # plain foreach_get misses handle types in 3.4
        arrays[name] = array.reshape(count, width) if width > 1 else array
    return arrays


def _constant_attributes(count: int, interpolation: str, cache: dict | None = None) -> dict[str, np.ndarray]:
    """New keys' attributes other than positions (the same for every channel of a bake)."""
    key = (count, interpolation)
    if cache is not None and key in cache:
        return cache[key]
    arrays = {
        "interpolation": np.full(count, _INTERPOLATION[interpolation], dtype=np.uint8),
        "handle_left_type": np.full(count, _AUTO_CLAMPED, dtype=np.uint8),
        "handle_right_type": np.full(count, _AUTO_CLAMPED, dtype=np.uint8),
        "easing": np.zeros(count, dtype=np.uint8),
        "type": np.full(count, _KEYFRAME, dtype=np.uint8),
        "back": np.full(count, 1.70158, dtype=np.float32),  # Blender's default overshoot
        "amplitude": np.full(count, 0.8, dtype=np.float32),
        "period": np.full(count, 4.1, dtype=np.float32),
        # Selected, as keys ``keyframe_insert`` makes are (checked in 4.2 and 5.0).
        "select_control_point": np.ones(count, dtype=bool),
        "select_left_handle": np.ones(count, dtype=bool),
        "select_right_handle": np.ones(count, dtype=bool),
    }
    if cache is not None:
        cache[key] = arrays
    return arrays


def _given_by_add(points, interpolation: str) -> set[str]:
    """Attributes whose new-key value ``points.add`` (just called) already set, checked on its first key."""
    first = points[0]
    wanted = {**_ADDED_KEY, "interpolation": interpolation}
    return {name for name in _ADDED_KEY if getattr(first, name) == wanted[name]}


def write_channels(
    action, ob, channels: Iterable[ChannelKeys], *, frame_range: tuple[float, float], interpolation: str = "BEZIER"
) -> int:
    """Write ``channels`` into ``action`` (for object ``ob``), replacing keys in ``frame_range``.

    Returns the number of keys written. Curves and groups are created as needed. ``channels``
    may be a generator that makes each channel as it is asked for (so a long bake need not
    hold every channel's arrays twice): the curves' collection and what ``points.add`` gives
    new keys are looked up once for all of them.
    """
    from .. import compat  # bpy; imported here so ``simplify`` works without Blender

    fcurves, groups = compat.action_channels(action, ob)
    start, end = frame_range
    written = 0
    constants: dict = {}
    group_by_name: dict = {}
    given_by_add: set[str] | None = None
    for channel in channels:
        fcurve = fcurves.find(channel.data_path, index=channel.index)
        if fcurve is None:
            fcurve = fcurves.new(channel.data_path, index=channel.index)
        if fcurve.group is None and channel.group:
            group = group_by_name.get(channel.group)
            if group is None:
                group = group_by_name[channel.group] = groups.get(channel.group) or groups.new(channel.group)
            fcurve.group = group
        points = fcurve.keyframe_points
        co = np.empty((len(channel.frames), 2), dtype=np.float32)  # (what a key holds)
        co[:, 0], co[:, 1] = channel.frames, channel.values
        new = {
            **_constant_attributes(len(co), interpolation, constants),
            "co": co,
            "handle_left": co,
            "handle_right": co,
        }
        skip: set[str] = set()
        if len(points):
            old = _read_keys(points)
            keep = (old["co"][:, 0] < start - FRAME_EPSILON) | (old["co"][:, 0] > end + FRAME_EPSILON)
            merged = {name: np.concatenate((old[name][keep], new[name])) for name, *_ in _KEY_ATTRIBUTES}
            order = np.argsort(merged["co"][:, 0], kind="stable")
            merged = {name: array[order] for name, array in merged.items()}
            points.clear()
            points.add(len(merged["co"]))
        else:
            merged = new
            points.add(len(co))
            if len(co):
                if given_by_add is None:  # the same for every curve: look once
                    given_by_add = _given_by_add(points, interpolation)
                skip = set(given_by_add)
                if len(co) >= 2 and {"handle_left_type", "handle_right_type"} <= skip:
                    skip.update(_DERIVED)  # (a lone key's handles are left as they are)
        for name, _width, _dtype in _KEY_ATTRIBUTES:
            if name not in skip:
                compat.keyframes_foreach_set(points, name, merged[name].ravel())
        compat.recalculate_handles(fcurve)  # the keys went in sorted
        written += len(co)
    return written


def simplify(frames: np.ndarray, values: np.ndarray, tolerance: float, interpolation: str = "LINEAR") -> np.ndarray:
    """Indices of keys to keep so that what plays between them stays within ``tolerance`` of
    every dropped key, on every channel; first and last keys always stay.

    Straight lines between kept keys (Ramer-Douglas-Peucker on (F, k) values): exact for
    linear interpolation. With ``interpolation`` "CONSTANT" each kept key holds until the
    next, so a key is dropped only where it is within ``tolerance`` of the key held there.
    """
    frames = np.asarray(frames, dtype=float)
    values = np.asarray(values, dtype=float).reshape(len(frames), -1)
    keep = np.zeros(len(frames), dtype=bool)
    keep[0] = keep[-1] = True
    if interpolation == "CONSTANT":
        held = values[0]
        for index in range(1, len(frames)):
            if np.max(np.abs(values[index] - held)) > tolerance:
                keep[index], held = True, values[index]
        return np.nonzero(keep)[0]
    stack = [(0, len(frames) - 1)]
    while stack:
        first, last = stack.pop()
        if last - first < 2:
            continue
        t = (frames[first + 1 : last] - frames[first]) / (frames[last] - frames[first])
        line = values[first] + t[:, None] * (values[last] - values[first])
        deviation = np.max(np.abs(values[first + 1 : last] - line), axis=1)
        worst = int(np.argmax(deviation))
        if deviation[worst] > tolerance:
            split = first + 1 + worst
            keep[split] = True
            stack += [(first, split), (split, last)]
    return np.nonzero(keep)[0]
