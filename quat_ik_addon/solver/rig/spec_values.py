"""Checked values of a rig spec's JSON: the one error type, the field path it names, and the
checks that turn a parsed value into a number, vector, direction, quaternion, angle range,
stiffness or name, or raise :class:`RigSpecError` saying which field is wrong and why. Also
JSON objects that refuse repeated keys, and the stable pretty printing files are saved with.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

Vec3 = tuple[float, float, float]
Quat = tuple[float, float, float, float]
Range = tuple[float, float]

# Pretty JSON keeps a list or object on one line when it fits in this many columns.
JSON_WIDTH = 120


# --------------------------------------------------------------------------- errors


class RigSpecError(ValueError):
    """Anything wrong with a rig spec: bad JSON, a bad value, a broken hierarchy.

    The message reads ``[source: ][subject: ][field: ]problem``, e.g.
    ``arm.rig.json: bone 'forearm': limits.range_deg: min 170 > max 10``; the parts are
    also kept as attributes for callers that want to point at the culprit (the Blender
    layer selects the bone named by ``subject``).
    """

    def __init__(
        self,
        problem: str,
        *,
        subject: str | None = None,
        field: str | None = None,
        source: str | None = None,
        bone: str | None = None,
        chain: str | None = None,
    ) -> None:
        self.problem = problem
        self.subject = subject  # "bone 'forearm'", "chain 'arm'", "bones[3]" or None
        self.field = field  # "limits.windows[0].vertices_deg" or None
        self.source = source  # the file name, when loaded from a file
        self.bone = bone  # the bone's name, when the problem belongs to a bone
        self.chain = chain  # the chain's name, when the problem belongs to a chain
        super().__init__(self._message())

    def _message(self) -> str:
        return ": ".join(part for part in (self.source, self.subject, self.field, self.problem) if part)

    def within(
        self,
        *,
        subject: str | None = None,
        field: str | None = None,
        source: str | None = None,
        bone: str | None = None,
        chain: str | None = None,
    ) -> RigSpecError:
        """A copy placed inside an outer context: an outer field path is prefixed."""
        path = self.field
        if field:
            if not path:
                path = field
            elif path.startswith("["):
                path = field + path
            else:
                path = f"{field}.{path}"
        return RigSpecError(
            self.problem,
            subject=self.subject or subject,
            field=path,
            source=self.source or source,
            bone=self.bone or bone,
            chain=self.chain or chain,
        )


@contextmanager
def field_context(
    *, subject: str | None = None, field: str | None = None, bone: str | None = None, chain: str | None = None
) -> Iterator[None]:
    """Errors raised inside get ``subject`` and the ``field`` prefix added."""
    try:
        yield
    except RigSpecError as err:
        raise err.within(subject=subject, field=field, bone=bone, chain=chain) from None


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def as_written(number: float) -> str:
    """A number as a rigger wrote it: 170.0 -> '170', 0.5 -> '0.5'."""
    return f"{number:g}"


# --------------------------------------------------------------------------- value checks


# Every number of a rig spec lies within ±this. Blender keeps the values in single precision
# (up to 3.4e38) and both it and the solver square them (lengths, normalising directions):
# 1e12 squared stays far inside either float range, and no rig, angle or direction needs more.
LARGEST_NUMBER = 1e12


def checked_number(value: object, field: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise RigSpecError(f"expected a number, got {shown(value)}", field=field)
    try:
        result = float(value)
    except OverflowError:  # a JSON integer of hundreds of digits
        # (Digits from the bit length: Python refuses to print an integer of 4,300 digits or more.)
        digits = int(int(value).bit_length() * math.log10(2)) + 1 if isinstance(value, numbers.Integral) else None
        size = f"an integer of about {digits} digits" if digits else shown(value)
        raise RigSpecError(f"{size} is too large: numbers lie within ±{LARGEST_NUMBER:g}", field=field) from None
    if not math.isfinite(result):
        raise RigSpecError(f"must be finite, got {result}", field=field)
    if abs(result) > LARGEST_NUMBER:
        raise RigSpecError(f"{result:g} is too large: numbers lie within ±{LARGEST_NUMBER:g}", field=field)
    return result


def checked_vector(value: object, length: int, field: str | None = None) -> tuple[float, ...]:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise RigSpecError(f"expected a list of {length} numbers, got {shown(value)}", field=field)
    if len(value) != length:
        raise RigSpecError(f"expected {length} numbers, got {len(value)}", field=field)
    return tuple(checked_number(item, f"{field}[{i}]" if field else f"[{i}]") for i, item in enumerate(value))


def checked_direction(value: object, field: str) -> Vec3:
    vec = checked_vector(value, 3, field)
    if math.sqrt(sum(c * c for c in vec)) <= 1e-12:
        raise RigSpecError("must be a non-zero direction, got [0, 0, 0]", field=field)
    return vec  # type: ignore[return-value]


def checked_rotation(value: object, field: str) -> Quat:
    """A unit quaternion ``(w, x, y, z)``: any non-zero length, normalised."""
    q = checked_vector(value, 4, field)
    norm = math.sqrt(sum(c * c for c in q))
    if norm <= 1e-12:
        raise RigSpecError("must be a non-zero quaternion, got [0, 0, 0, 0]", field=field)
    if abs(norm - 1.0) <= 1e-9:  # unit already: keep the numbers, so files round-trip exactly
        return q  # type: ignore[return-value]
    return tuple(c / norm for c in q)  # type: ignore[return-value]


def checked_angle_range(value: object, field: str) -> Range:
    """``(min, max)``: the angles turning from min up to max, which may run through ±180."""
    low, high = checked_vector(value, 2, field)
    for which, angle in (("min", low), ("max", high)):
        if not -360.0 <= angle <= 360.0:
            raise RigSpecError(f"{which} {as_written(angle)} is outside [-360, 360]", field=field)
    if low > high:
        raise RigSpecError(f"min {as_written(low)} > max {as_written(high)}", field=field)
    if high - low > 360.0:
        raise RigSpecError(f"min {as_written(low)} to max {as_written(high)} spans more than one turn", field=field)
    return (low, high)


def checked_stiffness(value: object) -> float:
    result = checked_number(value, "stiffness")
    if not 0.0 <= result <= 1.0:
        raise RigSpecError(f"must be in [0, 1], got {as_written(result)}", field="stiffness")
    return result


def checked_name(value: object, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise RigSpecError(f"expected a non-empty string, got {shown(value)}", field=field)
    return value


class JsonObject(dict):
    """A parsed JSON object that remembers keys given twice (JSON allows it; we do not)."""

    duplicates: list[str]

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__()
        self.duplicates = []
        for key, value in pairs:
            if key in self:
                self.duplicates.append(key)
            self[key] = value


def checked_object(value: object, field: str | None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RigSpecError(f"expected a JSON object, got {shown(value)}", field=field)
    duplicates = getattr(value, "duplicates", ())
    if duplicates:
        raise RigSpecError(f"key {duplicates[0]!r} is given twice", field=field)
    return value


def checked_list(value: object, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise RigSpecError(f"expected a JSON list, got {shown(value)}", field=field)
    return value


def check_keys(data: Mapping[str, Any], *, required: Sequence[str], optional: Sequence[str] = ()) -> None:
    allowed = (*required, *optional)
    for key in data:
        if key not in allowed:
            raise RigSpecError(f"unknown key {key!r} (expected one of: {', '.join(sorted(allowed))})")
    for key in required:
        if key not in data:
            raise RigSpecError("missing", field=key)


def pretty_json(value: Any, indent: int = 0, column: int = 0) -> str:
    """JSON with a list or object on one line when it fits, else one item per line."""
    inline = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, (dict, list)) or not value or (indent > 0 and column + len(inline) < JSON_WIDTH):
        return inline
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            head = f"{pad}{json.dumps(key, ensure_ascii=False)}: "
            items.append(head + pretty_json(item, indent + 1, len(head)))
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    items = [pad + pretty_json(item, indent + 1, len(pad)) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
