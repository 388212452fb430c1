"""A chain's settings turned into their mirror image, as Blender's *Symmetrize* mirrors bones.

The rules (``operators.mirror_chain`` has them in full): names flip sides as Blender flips them
(``solver.limits.mirroring.mirror_name``), the effector offset's X changes sign, and so does the pole
angle; under *Root X Axis* facing, whose axis flips as well, the angle φ becomes π − φ.
Mirror Chain makes the counterpart with them; ``records`` turns a chain that Symmetrize copied
to the counterpart tip into its mirror image.
"""

from __future__ import annotations

import math

import bpy

from ...solver.limits.mirroring import mirror_name

REFERENCES = (
    ("target_object", "target_bone", "target"),
    ("pole_object", "pole_bone", "pole"),
    ("orientation_object", "orientation_bone", "orientation target"),
)


def mirrored_pole_angle(angle: float, facing: str) -> float:
    """The pole angle that bends the mirrored chain as the mirror image (module docstring)."""
    if facing == "ROOT_X":
        return math.remainder(math.pi - angle, 2.0 * math.pi)
    return -angle


def mirror_in_place(chain) -> None:
    """Turn a copy of a chain into its mirror image by these rules, where Blender's
    *Symmetrize* copied it to the counterpart tip (``chains.records``): a target, pole or
    orientation target with a counterpart takes it, one without is kept (nothing is made)."""
    for attribute, bone_attribute, _what in REFERENCES:
        owner, bone = getattr(chain, attribute), getattr(chain, bone_attribute)
        if owner is None:
            continue
        if bone:
            if owner.pose is not None and mirror_name(bone) in owner.pose.bones:
                setattr(chain, bone_attribute, mirror_name(bone))
        elif mirror_name(owner.name) in bpy.data.objects:
            setattr(chain, attribute, bpy.data.objects[mirror_name(owner.name)])
    x, y, z = chain.effector_offset
    chain.effector_offset = (-x, y, z)
    chain.pole_angle = mirrored_pole_angle(chain.pole_angle, chain.pole_facing)
    chain.name = mirror_name(chain.name)
