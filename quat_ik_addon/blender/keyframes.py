"""The one place that writes keyframes: whole channels at once, across Blender versions.

``write_channels`` replaces a channel's keys inside a frame range and keeps every key
outside it exactly as it was (all its attributes: handles, handle types, interpolation,
easing, key type, selection). Keys go in with ``keyframe_points.add`` + ``foreach_set`` (a
few ms for thousands of keys; ``keyframe_insert`` per key is ~30x slower). Where the
curves live (``action.fcurves`` before 4.4, a slot's channelbag after) is ``compat``'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FRAME_EPSILON = 1e-4

# Keyframe attributes copied for kept keys: (name, numbers per key, numpy dtype).
_KEY_ATTRIBUTES = (
    ("co", 2, np.float32),
    ("handle_left", 2, np.float32),
    ("handle_right", 2, np.float32),
    ("interpolation", 1, np.int32),
    ("handle_left_type", 1, np.int32),
    ("handle_right_type", 1, np.int32),
    ("easing", 1, np.int32),
    ("type", 1, np.int32),
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


@dataclass(frozen=True)
class ChannelKeys:
    """Keys for one F-curve: ``values`` at ``frames`` (both (K,))."""

    data_path: str
    index: int
    group: str
    frames: np.ndarray
    values: np.ndarray


def _read_keys(points) -> dict[str, np.ndarray]:
    from . import compat

    count = len(points)
    arrays = {}
    for name, width, dtype in _KEY_ATTRIBUTES:
        array = np.zeros(count * width, dtype=dtype)
        compat.keyframes_foreach_get(points, name, array)  # plain foreach_get misses handle types in 3.4
        arrays[name] = array.reshape(count, width) if width > 1 else array
    return arrays


def _new_keys(frames: np.ndarray, values: np.ndarray, interpolation: str) -> dict[str, np.ndarray]:
    count = len(frames)
    co = np.stack((frames, values), axis=1).astype(np.float32)
    return {
        "co": co,
        "handle_left": co.copy(),
        "handle_right": co.copy(),
        "interpolation": np.full(count, _INTERPOLATION[interpolation], dtype=np.int32),
        "handle_left_type": np.full(count, _AUTO_CLAMPED, dtype=np.int32),
        "handle_right_type": np.full(count, _AUTO_CLAMPED, dtype=np.int32),
        "easing": np.zeros(count, dtype=np.int32),
        "type": np.full(count, _KEYFRAME, dtype=np.int32),
        "back": np.full(count, 1.70158, dtype=np.float32),  # Blender's default overshoot
        "amplitude": np.full(count, 0.8, dtype=np.float32),
        "period": np.full(count, 4.1, dtype=np.float32),
        "select_control_point": np.zeros(count, dtype=bool),
        "select_left_handle": np.zeros(count, dtype=bool),
        "select_right_handle": np.zeros(count, dtype=bool),
    }


def write_channels(
    action, ob, channels: list[ChannelKeys], *, frame_range: tuple[float, float], interpolation: str = "BEZIER"
) -> int:
    """Write ``channels`` into ``action`` (for object ``ob``), replacing keys in ``frame_range``.

    Returns the number of keys written. Curves and groups are created as needed.
    """
    from . import compat  # bpy; imported here so ``simplify`` works without Blender

    fcurves, groups = compat.action_channels(action, ob)
    start, end = frame_range
    written = 0
    for channel in channels:
        fcurve = fcurves.find(channel.data_path, index=channel.index)
        if fcurve is None:
            fcurve = fcurves.new(channel.data_path, index=channel.index)
        if fcurve.group is None and channel.group:
            fcurve.group = groups.get(channel.group) or groups.new(channel.group)
        points = fcurve.keyframe_points
        new = _new_keys(np.asarray(channel.frames, dtype=float), np.asarray(channel.values, dtype=float), interpolation)
        if len(points):
            old = _read_keys(points)
            keep = (old["co"][:, 0] < start - FRAME_EPSILON) | (old["co"][:, 0] > end + FRAME_EPSILON)
            merged = {name: np.concatenate((old[name][keep], new[name])) for name, *_ in _KEY_ATTRIBUTES}
            order = np.argsort(merged["co"][:, 0], kind="stable")
            merged = {name: array[order] for name, array in merged.items()}
            points.clear()
        else:
            merged = new
        points.add(len(merged["co"]))
        for name, _width, _dtype in _KEY_ATTRIBUTES:
            compat.keyframes_foreach_set(points, name, merged[name].ravel())
        fcurve.update()
        written += len(new["co"])
    return written


def simplify(frames: np.ndarray, values: np.ndarray, tolerance: float) -> np.ndarray:
    """Indices of keys to keep so straight lines between them stay within ``tolerance`` of
    every dropped key, on every channel (Ramer-Douglas-Peucker on (F, k) values).

    Exact for linear interpolation; first and last keys always stay.
    """
    frames = np.asarray(frames, dtype=float)
    values = np.asarray(values, dtype=float).reshape(len(frames), -1)
    keep = np.zeros(len(frames), dtype=bool)
    keep[0] = keep[-1] = True
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
