"""Mirror Chain: the active chain's counterpart on the other side of the rig.

Limbs come in pairs; set one up and mirror it. The counterpart's tip is the tip's name flipped
as Blender flips it (``hand.L`` → ``hand.R``, ``solver.limits.mirroring.mirror_name``); so are its
target, pole and orientation target (an object or a bone). An empty that has no counterpart
yet is made, the mirror image of the first across the armature's X = 0 plane (its keys are not
mirrored); a bone must exist. A target whose name has no side is shared.

Settings carry over; what is measured in the bones' own axes is mirrored as Blender's
*Symmetrize* mirrors bones (local X flipped, ``solver/limits/mirroring.py``): the effector offset's X,
and the pole angle: a bend mirrors with the rig, so its angle changes sign; the root bone's X
axis flips as well, so under *Root X Axis* facing the angle φ becomes π − φ. With *Mirror
Joint Limits* the chain bones' limits are mirrored too (as *Mirror Joint Limits* does).

An existing chain on the counterpart tip is updated rather than doubled. Everything is checked
before anything changes.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from .. import compat
from ..chains import settings
from ..chains.listing import create_chain
from ..chains.mirroring import REFERENCES, mirrored_pole_angle
from ..chains.settings import SOLVER_SETTINGS
from ..runtime.state import session
from .common import active_chain_poll, chains_editable

# Copied as they are (solver settings too); the pointers, the effector offset and the pole
# angle are mirrored.
COPIED = ("chain_length", "enabled", "mode", "pole_facing", "orientation_mode", "orientation_weight")


class MirrorError(Exception):
    """Why a chain cannot be mirrored (the operator's error report)."""


def mirror_matrix(ob):
    """World → world mirror across the armature object's X = 0 plane (4 × 4, mathutils)."""
    from mathutils import Matrix

    flip = Matrix.Diagonal((-1.0, 1.0, 1.0, 1.0))
    return ob.matrix_world @ flip @ ob.matrix_world.inverted_safe()


def _counterpart(ob, owner, bone: str, what: str) -> tuple[object, str, bool]:
    """(object, bone, whether the object must be made) the mirrored chain reaches with."""
    from ...solver.limits.mirroring import mirror_name

    if owner is None:
        return None, "", False
    if bone:
        other = mirror_name(bone)
        if owner.pose is None or other not in owner.pose.bones:
            raise MirrorError(
                f"The {what} bone '{bone}' has no counterpart: there is no bone '{other}' in '{owner.name}'"
            )
        return owner, other, False
    name = mirror_name(owner.name)
    if name == owner.name or name in bpy.data.objects:
        return bpy.data.objects.get(name, owner), "", False
    if owner.type != "EMPTY":
        raise MirrorError(
            f"The {what} '{owner.name}' has no counterpart '{name}' (only empties are made): add it first"
        )
    return owner, name, True


def _make_mirrored_empty(ob, source, name: str):
    """A copy of the empty ``source`` named ``name``, its mirror image across the armature's X = 0."""
    from mathutils import Matrix

    from ...solver.limits.mirroring import mirror_name

    empty = bpy.data.objects.new(name, None)
    empty.empty_display_type, empty.empty_display_size = source.empty_display_type, source.empty_display_size
    compat.link_object(empty, source.users_collection, bpy.context.scene)
    if source.parent is not None:
        empty.parent, empty.parent_type = source.parent, source.parent_type
        if source.parent_type == "BONE":
            other = mirror_name(source.parent_bone)
            empty.parent_bone = other if other in source.parent.data.bones else source.parent_bone
    # Mirrored as a bone: the world mirror, then the empty's own X flipped back (a rotation again).
    empty.matrix_world = mirror_matrix(ob) @ source.matrix_world @ Matrix.Diagonal((-1.0, 1.0, 1.0, 1.0))
    return empty


class QUATIK_OT_mirror_chain(bpy.types.Operator):
    """Make the active chain's counterpart on the other side of the rig"""

    bl_idname = "quat_ik.mirror_chain"
    bl_label = "Mirror Quat IK Chain"
    bl_description = (
        "Give the active chain a counterpart on the other side of the rig (hand.L → hand.R) with the same "
        "settings, reaching for its target's counterpart (empties that have none are made as mirror images); "
        "an existing chain on that side is updated"
    )
    bl_options = {"REGISTER", "UNDO"}

    limits: BoolProperty(
        name="Mirror Joint Limits",
        description=(
            "Also give the counterpart chain's bones the mirror image of this chain's joint limits "
            "(not on a library override, whose limits come with the rig)"
        ),
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return active_chain_poll(cls, context) is not None

    def execute(self, context):
        from ...solver.limits.mirroring import mirror_name
        from ..errors import ChainError
        from ..rig import reader
        from .limit_tools import editable_armature, limits_of_the_library, mirrored_limit

        ob = context.object
        chain = settings.active_chain(ob)
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        # An override's limits are the library's: the chain is mirrored, the limits left as they are.
        library_limits = limits_of_the_library(ob) if self.limits else ""
        mirror_limits = self.limits and not library_limits
        if mirror_limits and not editable_armature(self, ob):
            return {"CANCELLED"}
        try:
            tip = mirror_name(chain.tip_bone)
            if tip == chain.tip_bone:
                raise MirrorError(f"'{chain.tip_bone}' has no side in its name (.L/.R, _l/_r, Left/Right)")
            names = reader.chain_bone_names(ob, chain.tip_bone, chain.chain_length)
            if tip not in ob.pose.bones:
                raise MirrorError(f"'{chain.tip_bone}' has no counterpart: there is no bone '{tip}'")
            counterparts = reader.chain_bone_names(ob, tip, chain.chain_length)
            if list(counterparts) != [mirror_name(name) for name in names]:
                raise MirrorError(
                    f"the {chain.chain_length} bones up from '{tip}' ({', '.join(counterparts)}) do not mirror "
                    f"{', '.join(names)}: rename them to match or add that chain by hand"
                )
            references = [_counterpart(ob, getattr(chain, o), getattr(chain, b), what) for o, b, what in REFERENCES]
            limits = []
            for name in names if mirror_limits else ():
                other = mirror_name(name)
                if other != name:  # a middle bone (a spine) keeps its own limits
                    mirrored, problem = mirrored_limit(ob.pose.bones[name], other)
                    if mirrored is None:
                        raise MirrorError(problem)
                    limits.append((other, mirrored))
        except (MirrorError, ChainError) as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}

        existing = next((c for c in ob.quat_ik.chains if c.tip_bone == tip and c != chain), None)
        made, objects = [], []
        for owner, bone, make in references:
            if make:
                owner, bone = _make_mirrored_empty(ob, owner, bone), ""
                made.append(owner.name)
            objects.append((owner, bone))
        source = {name: getattr(chain, name) for name in (*COPIED, *SOLVER_SETTINGS, "effector_offset", "pole_angle")}
        name = mirror_name(chain.name)
        mirrored = existing or create_chain(ob, tip, chain.chain_length, None, name=tip if name == chain.name else name)
        for name in (*COPIED, *SOLVER_SETTINGS):
            setattr(mirrored, name, source[name])
        x, y, z = source["effector_offset"]
        mirrored.effector_offset = (-x, y, z)
        mirrored.pole_angle = mirrored_pole_angle(source["pole_angle"], source["pole_facing"])
        for (attribute, bone_attribute, _what), (owner, bone) in zip(REFERENCES, objects, strict=True):
            setattr(mirrored, attribute, owner)
            setattr(mirrored, bone_attribute, bone)
        write_limits(ob, limits)
        ob.quat_ik.active_chain_index = list(ob.quat_ik.chains).index(mirrored)
        session.bump()
        parts = [f"{'Updated' if existing else 'Made'} chain '{mirrored.name}' on '{tip}'"]
        if made:
            parts.append("made " + ", ".join(f"'{name}'" for name in made))
        if limits:
            parts.append(f"mirrored the joint limits of {len(limits)} bone(s)")
        if library_limits:
            parts.append(f"joint limits not mirrored: {library_limits}")
        self.report({"WARNING"} if library_limits else {"INFO"}, "; ".join(parts))
        return {"FINISHED"}


def write_limits(ob, limits) -> None:
    from ..limits.conversion import write_limit

    for name, limit in limits:
        write_limit(ob.pose.bones[name].quat_ik, limit)


CLASSES = (QUATIK_OT_mirror_chain,)
