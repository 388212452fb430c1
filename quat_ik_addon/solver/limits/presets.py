"""The preset library: anatomical joint limits shipped with the add-on (``quat_ik_addon/presets``).

Each preset is a one-bone rig spec file holding the limit, plus an entry in ``index.json``
with its description, rest pose, the published ranges it was built from and their sources
(the rig spec refuses unknown keys, so notes live beside it).  Files are found next to this
package through :mod:`importlib.resources`, never through the working directory, so the
loader works from a source checkout, an installed extension and a zip alike.

numpy only; no ``bpy``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..rig import spec as spec

__all__ = [
    "PresetInfo",
    "PresetMotion",
    "load_preset",
    "load_preset_spec",
    "preset_convention",
    "preset_info",
    "preset_names",
]

# "quat_ik_addon.presets", or "bl_ext.<repo>.quat_ik.presets" when installed as an extension.
_PRESET_PACKAGE = __name__.rsplit(".", 3)[0] + ".presets"  # the add-on package (solver.limits.presets is 3 below)
INDEX_FILE = "index.json"


@dataclass(frozen=True)
class PresetMotion:
    """One anatomical motion a preset was built from.

    Exactly one of ``swing_toward`` (a local direction the bone swings toward), ``twist_sign``
    (±1: the twist direction) or ``hinge_sign`` (±1: the hinge angle's sign) is set.
    ``published_deg`` is the normal range from the source; ``used_deg`` what the limit
    allows (the same unless the note says why not).
    """

    motion: str
    published_deg: float
    used_deg: float
    source: str
    swing_toward: tuple[float, float, float] | None = None
    twist_sign: int | None = None
    hinge_sign: int | None = None
    note: str = ""


@dataclass(frozen=True)
class PresetInfo:
    """A preset's entry in the index."""

    name: str
    file: str
    bone: str
    kind: str  # "ball" or "hinge"
    side: str  # "left" (mirror for the right) or "middle"
    description: str
    rest_pose: str
    z_toward: str  # where local +Z points in the anatomical position: "front", "up" or "lateral"
    built_with: str
    motions: tuple[PresetMotion, ...]
    sources: tuple[str, ...]  # full citations of the motions' sources
    anatomical_twist_deg: float = 0.0  # the preset's own twist in the anatomical position (a turn about +Y)


def preset_names() -> tuple[str, ...]:
    """Names of the shipped presets, in the index's order (e.g. ``"shoulder"``, ``"knee"``)."""
    return tuple(entry["name"] for entry in _index()["presets"])


def preset_info(name: str) -> PresetInfo:
    """The index entry of preset ``name``; ``KeyError`` names the presets that exist."""
    index = _index()
    entry = _entry(name)
    motions = tuple(
        PresetMotion(
            motion=item["motion"],
            published_deg=float(item["published_deg"]),
            used_deg=float(item.get("used_deg", item["published_deg"])),
            source=item["source"],
            swing_toward=None if "swing_toward" not in item else tuple(float(c) for c in item["swing_toward"]),
            twist_sign=item.get("twist_sign"),
            hinge_sign=item.get("hinge_sign"),
            note=item.get("note", ""),
        )
        for item in entry["motions"]
    )
    cited = dict.fromkeys(motion.source for motion in motions)
    return PresetInfo(
        name=entry["name"],
        file=entry["file"],
        bone=entry["bone"],
        kind=entry["kind"],
        side=entry["side"],
        description=entry["description"],
        rest_pose=entry["rest_pose"],
        z_toward=entry["z_toward"],
        built_with=entry["built_with"],
        motions=motions,
        sources=tuple(index["sources"][key] for key in cited),
        anatomical_twist_deg=float(entry.get("anatomical_twist_deg", 0.0)),
    )


def preset_convention() -> str:
    """The axis convention every preset follows (which local axis is flexion, and so on)."""
    return str(_index()["convention"])


def load_preset_spec(name: str) -> spec.RigSpec:
    """The preset's whole one-bone rig spec (validated like any rig spec file)."""
    entry = _entry(name)
    text = resources.files(_PRESET_PACKAGE).joinpath(entry["file"]).read_text(encoding="utf-8")
    return spec.loads_rig_spec(text, source=entry["file"])


def load_preset(name: str) -> spec.JointLimit:
    """The preset's joint limit (a rig-spec :class:`~.rig_spec.BallLimit` or :class:`~.rig_spec.HingeLimit`)."""
    entry = _entry(name)
    return load_preset_spec(name).limit_for(entry["bone"])


@lru_cache(maxsize=1)
def _index() -> dict[str, Any]:
    text = resources.files(_PRESET_PACKAGE).joinpath(INDEX_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def _entry(name: str) -> dict[str, Any]:
    for entry in _index()["presets"]:
        if entry["name"] == name:
            return entry
    raise KeyError(f"no preset {name!r}; presets are: {', '.join(preset_names())}")
