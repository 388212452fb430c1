"""Snap Target to Chain: move the active chain's target (and pole) to where the chain is now.

The FK-to-IK match of an IK/FK rig: after posing a chain by hand, or on a frame baked or keyed
without the target, switching the chain to Live or Per Frame would snap the pose to wherever
the target happens to be. Moving the target to the chain's effector first (turned as the tip
when the chain matches a rotation) and its pole to where ``face_pole`` leaves the pose as it
is (``solver.pole.pole_positions``) makes the next solve keep the pose. With Auto Keying on
the moved objects or bones are keyed, as Blender's own snapping tools do.
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from .. import compat
from ..chains import settings
from ..runtime.state import session
from .common import active_chain_poll

# A target that ends further than this (times the chain's reach) from where it was put has
# something else moving it (a constraint, a driver, a parent that follows the chain).
MISPLACED_ABOVE = 1e-4
# A pole closer than this (in chain reaches) to the middle of the chain's line gives no
# distance to keep: it goes one reach away.
POLE_DISTANCE_BELOW = 0.05


def _poll(cls, context) -> bool:
    chain = active_chain_poll(cls, context)
    if chain is None:
        return False
    if chain.target_object is None:
        compat.poll_message(cls, f"Chain '{chain.name}' has no target to move")
        return False
    return True


class _Mover:
    """Moves objects or pose bones to world matrices and keys what it moved."""

    def __init__(self, context):
        self.context = context
        self.keyed: list[str] = []  # what got keys, for the report
        self.moved: list[tuple[object, str | None, object]] = []  # (object, bone, wanted world)

    @staticmethod
    def world(ob, bone: str | None):
        """The current world matrix (mathutils) of an object or one of its pose bones."""
        if bone:
            return ob.matrix_world @ ob.pose.bones[bone].matrix
        return ob.matrix_world.copy()

    def move(self, ob, bone: str | None, location=None, rotation=None) -> None:
        """Put ``ob`` (or its pose bone ``bone``) at ``location`` and/or turned to ``rotation``
        (world; a 3×3 mathutils matrix), keeping the rest of its transform."""
        from mathutils import Matrix

        old_location, old_rotation, scale = self.world(ob, bone).decompose()
        wanted = Matrix.LocRotScale(
            old_location if location is None else location,
            old_rotation if rotation is None else rotation.to_quaternion(),
            scale,
        )
        owner = ob.pose.bones[bone] if bone else ob
        if bone:
            owner.matrix = ob.matrix_world.inverted_safe() @ wanted
        else:
            ob.matrix_world = wanted
        self.moved.append((ob, bone, wanted))
        self._key(owner, bone, location is not None, rotation is not None)

    def _key(self, owner, bone: str | None, located: bool, rotated: bool) -> None:
        from ..rig import auto_keys

        paths = (["location"] if located else []) + ([auto_keys.rotation_path(owner)] if rotated else [])
        if auto_keys.key_channels(self.context, owner, paths, group=bone or "Object Transforms"):
            self.keyed.append(_label(owner.id_data, bone))

    def misplaced(self, depsgraph, tolerance: float) -> list[str]:
        """Names of moved things the evaluated scene puts elsewhere than asked."""
        depsgraph.update()
        names = []
        for ob, bone, wanted in self.moved:
            ob_eval = ob.evaluated_get(depsgraph)
            world = ob_eval.matrix_world @ ob_eval.pose.bones[bone].matrix if bone else ob_eval.matrix_world
            if (world.translation - wanted.translation).length > tolerance:
                names.append(_label(ob, bone))
        return names


def _label(ob, bone: str | None) -> str:
    return f"'{ob.name}'" + (f" bone '{bone}'" if bone else "")


def _editable(operator, ob, what: str) -> bool:
    if compat.is_editable(ob):
        return True
    operator.report({"ERROR"}, f"The {what} '{ob.name}' is linked and cannot be moved")
    return False


class QUATIK_OT_snap_target(bpy.types.Operator):
    """Move the active chain's target to its tip and its pole to its bend, so solving keeps the pose"""

    bl_idname = "quat_ik.snap_target"
    bl_label = "Snap Quat IK Target to Chain"
    bl_description = (
        "Move the active chain's target to where the chain's tip reaches now (turned as the tip when the "
        "chain matches a rotation) and its pole to where the chain bends, so solving keeps the current pose: "
        "switch a chain posed by hand to Live or Per Frame without a jump. Keys them when Auto Keying is on"
    )
    bl_options = {"REGISTER", "UNDO"}

    pole: BoolProperty(
        name="Pole",
        description="Also move the chain's pole to where the chain bends now (at its present distance)",
        default=True,
    )

    @classmethod
    def poll(cls, context):
        return _poll(cls, context)

    def execute(self, context):
        from ..errors import ChainError
        from ..rig import reader

        ob = context.object
        chain = settings.active_chain(ob)
        depsgraph = context.evaluated_depsgraph_get()
        try:
            rig = reader.read_chain_rig(ob, chain)
            inputs = reader.read_frame_inputs(rig, depsgraph)
        except ChainError as error:
            self.report({"ERROR"}, f"Chain '{chain.name}': {error}")
            return {"CANCELLED"}
        moves = _planned_moves(rig, inputs, chain, with_pole=self.pole)
        for ob_moved, bone, _location, _rotation, what in moves:
            if ob_moved == ob and bone is None:
                # Moving the armature would carry the chain away from where it was snapped to.
                self.report({"ERROR"}, f"The {what} of chain '{chain.name}' is its own armature: pick a bone")
                return {"CANCELLED"}
            if not _editable(self, ob_moved, what):
                return {"CANCELLED"}  # checked before anything moves: the scene stays as it was
        mover = _Mover(context)
        for ob_moved, bone, location, rotation, _what in moves:
            mover.move(ob_moved, bone, location, rotation)
        session.bump()
        names = ", ".join(_label(ob_moved, bone) for ob_moved, bone, *_rest in moves)
        misplaced = mover.misplaced(depsgraph, MISPLACED_ABOVE * rig.chain.reach)
        if misplaced:
            self.report(
                {"WARNING"},
                f"Moved {names} to chain '{chain.name}', but {', '.join(misplaced)} ended elsewhere: "
                "a constraint, driver or parent moves it; the next solve will not keep the pose",
            )
            return {"FINISHED"}
        keyed = f"; Auto Keying keyed {', '.join(mover.keyed)}" if mover.keyed else ""
        self.report({"INFO"}, f"Moved {names} to chain '{chain.name}'{keyed}")
        return {"FINISHED"}


def _planned_moves(rig, inputs, chain, *, with_pole: bool) -> list[tuple]:
    """(object, bone or None, world location or None, world rotation (3×3) or None, what) for
    the target, the orientation target and the pole, from the chain's pose now."""
    import numpy as np
    from mathutils import Matrix, Vector

    from ...solver import quaternion as quat
    from ..solving import chain_options
    from ..solving.matrices import nearest_rotations
    from .pole import pole_world

    posed = rig.chain.forward_kinematics(inputs.rotations[None])
    to_world = inputs.root_world
    effector = Vector(to_world[:3, :3] @ posed.effector[0] + to_world[:3, 3])
    tip_rotation = None
    if rig.orientation_object is not None:
        # The goal is the tip's frame in the world, without the armature's scale (``solving.chain_jobs``).
        tip_matrix = to_world[:3, :3] @ quat.to_matrix(posed.rotations[0, -1])
        tip_rotation = Matrix(nearest_rotations(tip_matrix[None])[0].tolist())
    target_turns = rig.orientation_object == rig.target_object and rig.orientation_bone == rig.target_bone
    moves = [(rig.target_object, rig.target_bone, effector, tip_rotation if target_turns else None, "target")]
    if tip_rotation is not None and not target_turns:
        moves.append((rig.orientation_object, rig.orientation_bone, None, tip_rotation, "orientation target"))
    if with_pole and rig.pole_object is not None:
        # Keep the pole's distance from the middle of the chain's line.
        middle = 0.5 * (posed.heads[0, 0] + posed.effector[0])
        pole_root = np.linalg.solve(to_world, inputs.pole_world[:, 3])[:3]
        distance = np.linalg.norm(pole_root - middle) / rig.chain.reach
        options = chain_options.options_for(chain, None)
        location = pole_world(
            rig,
            inputs,
            inputs.rotations,
            distance if distance >= POLE_DISTANCE_BELOW else 1.0,
            options.pole_angle,
            options.pole_facing,
        )
        if location is not None:  # a straight chain faces any pole the same: leave it
            moves.append((rig.pole_object, rig.pole_bone, location, None, "pole"))
    return moves


CLASSES = (QUATIK_OT_snap_target,)
