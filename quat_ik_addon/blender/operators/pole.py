"""Add Pole Target: a new empty on the side the active chain bends toward now, made its pole.

Without a pole a chain whose goal is only a position may swing about the line from its root to
its target as it likes (a knee turning outward, an elbow dropping). A pole fixes that swing,
and placing it where the chain bends already keeps the current pose: the pole's bend is the
mean of the joints' heads seen across the root-to-goal line (``solver/pole.py``), measured
here on the posed chain across the line to its effector (where a chain that reaches has its
goal). A straight chain gets the pole on the side its joint limits let it bend to (a knee's
hinge range).
"""

from __future__ import annotations

import bpy
import numpy as np
from bpy.props import FloatProperty

from .. import compat
from ..chains import settings
from ..runtime.state import session
from .common import active_chain_poll, chains_editable, new_empty

# A bend shorter than this share of the chain's length gives the pole no side to go on.
STRAIGHT_BELOW = 1e-4


def _poll(cls, context) -> bool:
    chain = active_chain_poll(cls, context)
    if chain is None:
        return False
    if chain.pole_object is not None:
        compat.poll_message(cls, f"Chain '{chain.name}' already bends toward '{chain.pole_object.name}'")
        return False
    return True


def pole_world(rig, inputs, rotations, distance: float, pole_angle: float = 0.0, facing: str = "bend"):
    """Where a pole leaves the chain posed with ``rotations`` as it is (world, mathutils;
    ``solver.pole.pole_positions``), ``distance`` reaches off the middle of its line, or None
    for a straight chain."""
    from mathutils import Vector

    from ...solver.pole import pole_positions

    effector = rig.chain.forward_kinematics(rotations[None]).effector
    pole = pole_positions(rig.chain, rotations[None], effector, distance, pole_angle, facing, STRAIGHT_BELOW)[0]
    if not np.all(np.isfinite(pole)):
        return None
    to_world = inputs.root_world
    return Vector(to_world[:3, :3] @ pole + to_world[:3, 3])


def _bent_by_limits(rig, rotations):
    """The chain posed a fifth of the way from ``rotations`` toward the middle of each joint's
    limits: a straight knee bends the way its hinge allows. Straight again (free joints,
    windows centred on the bone) when the limits do not say."""
    from ...solver import quaternion as quat
    from ...solver.shots.pose_curves import blend

    middles = np.array([getattr(limit, "centre", quat.IDENTITY) for limit in rig.chain.limits])
    return blend(rotations, middles, 0.2)


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
        chain = settings.active_chain(ob)
        if not chains_editable(self, ob):
            return {"CANCELLED"}
        empty, problem = place_pole(context, ob, chain, self.distance)
        if empty is None:
            self.report({"ERROR"}, problem)
            return {"CANCELLED"}
        session.bump()
        self.report({"INFO"}, f"Chain '{chain.name}' bends toward its new pole '{empty.name}'")
        return {"FINISHED"}


def place_pole(context, ob, chain, distance: float) -> tuple[object, str]:
    """Make a new empty the chain's pole, where it bends now (``solver.pole.pole_positions``),
    or where its limits let a straight chain bend; returns (the empty, "") or (None, why
    there is none)."""
    from ..errors import ChainError
    from ..rig import reader

    try:
        rig = reader.read_chain_rig(ob, chain)
        if len(rig.bone_names) < 2:
            raise ChainError(f"Chain '{chain.name}' has one bone: it has no bend for a pole to face")
        inputs = reader.read_frame_inputs(rig, context.evaluated_depsgraph_get())
    except ChainError as error:
        return None, str(error)
    location = pole_world(rig, inputs, inputs.rotations, distance)
    if location is None:  # straight: the side its joint limits let it bend to, if they say
        location = pole_world(rig, inputs, _bent_by_limits(rig, inputs.rotations), distance)
    if location is None:
        return None, (
            f"Chain '{chain.name}' is straight and its joint limits do not say which way it bends: "
            "bend it a little toward where the pole should go first"
        )
    empty = new_empty(context, ob, f"{chain.name}_pole", location, max(0.02, 0.05 * rig.chain.reach))
    chain.pole_object, chain.pole_bone = empty, ""
    chain.pole_facing, chain.pole_angle = "BEND", 0.0  # what was measured to place it
    return empty, ""


CLASSES = (QUATIK_OT_add_pole,)
