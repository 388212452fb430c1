"""Add Pole Target: a new empty on the side the active chain bends toward now, made its pole.

Without a pole a chain whose goal is only a position may swing about the line from its root to
its target as it likes (a knee turning outward, an elbow dropping). A pole fixes that swing,
and placing it where the chain bends already keeps the current pose: the pole's bend is the
mean of the joints' heads seen across the root-to-goal line (``solver/pole.py``), measured
here on the posed chain across the root-to-tip line (where a chain that reaches has its
goal). A straight chain gets the pole on the side its joint limits let it bend to (a knee's
hinge range).
"""

from __future__ import annotations

from itertools import pairwise

import bpy
from bpy.props import FloatProperty

from . import compat, properties, runtime
from .operators_chain import armature_with_chains_poll, new_empty

# A bend shorter than this share of the chain's length gives the pole no side to go on.
STRAIGHT_BELOW = 1e-4


def _poll(cls, context) -> bool:
    if not armature_with_chains_poll(cls, context):
        return False
    chain = properties.active_chain(context.object)
    if chain is None:
        compat.poll_message(cls, "Select a chain in the Quat IK Chains list")
        return False
    if chain.pole_object is not None:
        compat.poll_message(cls, f"Chain '{chain.name}' already bends toward '{chain.pole_object.name}'")
        return False
    return True


def chain_length(heads, tail) -> float:
    """Length of the posed chain through its joint heads (root first) to its tip's tail."""
    return sum((b - a).length for a, b in pairwise([*heads, tail]))


def pole_location(heads, tail, distance: float):
    """Where the pole goes (world), from the chain's posed joint heads (root first) and its
    tip's tail: off the middle of the root-to-tip line, along the bend, ``distance`` times
    the chain's length away. None for a straight chain."""
    from mathutils import Vector

    root, length = heads[0], chain_length(heads, tail)
    line = tail - root
    if line.length <= STRAIGHT_BELOW * length:
        return None
    axis = line.normalized()
    mean = sum((head - root for head in heads[1:]), Vector((0.0, 0.0, 0.0))) / (len(heads) - 1)
    bend = mean - axis * mean.dot(axis)
    if bend.length <= STRAIGHT_BELOW * length:
        return None
    return root + line * 0.5 + bend.normalized() * (distance * length)


def _bent_by_limits(ob, chain, depsgraph):
    """The chain's joint heads and tip (world) posed a fifth of the way from its current pose
    toward the middle of each joint's limits: a straight knee bends the way its hinge allows.
    Straight again (free joints, windows centred on the bone) when the limits do not say."""
    import numpy as np
    from mathutils import Vector

    from ..solver import quaternion as quat
    from ..solver.pose_curves import blend
    from . import rig_reader
    from .errors import ChainError

    try:
        rig = rig_reader.read_chain_rig(ob, chain)
        inputs = rig_reader.read_frame_inputs(rig, depsgraph)
    except ChainError:
        return [Vector()], Vector()  # no straight-chain hint: pole_location finds no side
    middles = np.array([getattr(limit, "centre", quat.IDENTITY) for limit in rig.chain.limits])
    posed = rig.chain.forward_kinematics(blend(inputs.rotations, middles, 0.2)[None])
    to_world = inputs.object_world @ inputs.root_parent_armature
    points = np.vstack((posed.heads[0], posed.effector[0])) @ to_world[:3, :3].T + to_world[:3, 3]
    return [Vector(point) for point in points[:-1]], Vector(points[-1])


class QUATIK_OT_add_pole(bpy.types.Operator):
    """Add an empty on the side the active chain bends toward and make it the chain's pole"""

    bl_idname = "quat_ik.add_pole"
    bl_label = "Add Quat IK Pole Target"
    bl_description = (
        "Put a new empty on the side the active chain bends toward now and make it the chain's pole, "
        "so the bend keeps facing it (the current pose stays)"
    )
    bl_options = {"REGISTER", "UNDO"}

    distance: FloatProperty(
        name="Distance",
        description="How far the pole stands from the middle of the chain, in chain lengths",
        default=1.0,
        min=0.05,
        soft_max=5.0,
    )

    @classmethod
    def poll(cls, context):
        return _poll(cls, context)

    def execute(self, context):
        ob = context.object
        chain = properties.active_chain(ob)
        if not compat.is_editable(ob):
            self.report({"ERROR"}, f"Armature '{ob.name}' is linked and cannot be changed")
            return {"CANCELLED"}
        empty, problem = place_pole(context, ob, chain, self.distance)
        if empty is None:
            self.report({"ERROR"}, problem)
            return {"CANCELLED"}
        runtime.bump()
        self.report({"INFO"}, f"Chain '{chain.name}' bends toward its new pole '{empty.name}'")
        return {"FINISHED"}


def place_pole(context, ob, chain, distance: float) -> tuple[object, str]:
    """Make a new empty the chain's pole, where it bends now (``pole_location``), or where its
    limits let a straight chain bend; returns (the empty, "") or (None, why there is none)."""
    from . import rig_reader
    from .errors import ChainError

    try:
        names = rig_reader.chain_bone_names(ob, chain.tip_bone, chain.chain_length)
        if len(names) < 2:
            raise ChainError(f"Chain '{chain.name}' has one bone: it has no bend for a pole to face")
        depsgraph = context.evaluated_depsgraph_get()
        posed = rig_reader.evaluated(ob, depsgraph).pose.bones
    except ChainError as error:
        return None, str(error)
    world = ob.matrix_world
    heads, tail = [world @ posed[name].head for name in names], world @ posed[names[-1]].tail
    location = pole_location(heads, tail, distance)
    if location is None:  # straight: the side its joint limits let it bend to, if they say
        location = pole_location(*_bent_by_limits(ob, chain, depsgraph), distance)
    if location is None:
        return None, (
            f"Chain '{chain.name}' is straight and its joint limits do not say which way it bends: "
            "bend it a little toward where the pole should go first"
        )
    empty = new_empty(context, ob, f"{chain.name}_pole", location, max(0.02, 0.05 * chain_length(heads, tail)))
    chain.pole_object, chain.pole_bone = empty, ""
    chain.pole_facing, chain.pole_angle = "BEND", 0.0  # what was measured to place it
    return empty, ""


CLASSES = (QUATIK_OT_add_pole,)
