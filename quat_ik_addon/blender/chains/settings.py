"""Settings stored in the .blend: Quat IK chains on the armature object (``object.quat_ik``).

Everything here saves with the file, follows undo and links with the object. Per-bone joint
limits live on the pose bones instead (``limits/settings.py``) so chains can share them.
The ``status_*`` properties are written by solves (never by the user) and have no update
callback, so writing them does not count as a settings change.
"""

from __future__ import annotations

import math

import bpy
from bpy.props import (
    BoolProperty,
    CollectionProperty,
    EnumProperty,
    FloatProperty,
    FloatVectorProperty,
    IntProperty,
    PointerProperty,
    StringProperty,
)

from ...solver.defaults import DEFAULT_SETTINGS, INTERACTIVE_TIME_LIMIT, ORIENTATION_WEIGHT
from .. import overrides
from ..runtime.state import on_mode_changed, on_setting_changed
from . import tip_records
from .pins import QuatIKPin

MODES = (
    ("MANUAL", "Manual", "Solve only when asked (Solve Now, Bake)", "HAND", 0),
    (
        "LIVE",
        "Live",
        "Re-solve whenever the target or anything else the chain depends on changes: lightly while it keeps "
        "moving, in full once it rests",
        "PLAY",
        1,
    ),
    (
        "PER_FRAME",
        "Per Frame",
        "Re-solve on every frame change (playback, rendering) and when the chain's inputs change",
        "TIME",
        2,
    ),
)

SWEEP_ORDERS = (
    ("TIP_TO_BASE", "Tip to Base", "Each sweep turns the tip joint first (classic CCD)"),
    ("BASE_TO_TIP", "Base to Tip", "Each sweep turns the root joint first (spreads the bend toward the root)"),
)

CLAMP_MODES = (
    ("CLOSEST", "Closest", "A direction outside the reach windows goes to the nearest allowed direction (Blow 2002)"),
    (
        "BOUNDARY",
        "Boundary",
        "A direction outside goes to where the arc from the window's centre leaves it (Wilhelms and Van Gelder)",
    ),
)

ORIENTATION_MODES = (
    ("NONE", "None", "Only the position of the chain's end is solved"),
    ("MATCH_TARGET", "Match Target", "The tip bone also takes the target's rotation"),
    ("OBJECT", "Other Target", "The tip bone takes the rotation of another object or bone"),
)

POLE_FACINGS = (
    ("BEND", "Chain Bend", "The chain's bend (the mean of its joints, across the root-to-target line) faces the pole"),
    (
        "ROOT_X",
        "Root X Axis",
        "The root bone's X axis, turned toward its Z axis by the Pole Angle, faces the pole, and solves start "
        "turned toward the target and the pole, as in Blender's IK: a Pole Angle carries over from its constraint",
    ),
)

METHODS = (
    ("CCD", "CCD", "Cyclic coordinate descent (Blow 2002)"),
    ("DLS", "DLS", "Damped least squares"),
    ("COMBINED", "Combined", "Damped least squares, then CCD to finish what it leaves at a limit"),
)

# The Solver sub-panel's settings, which Add Chain also offers.
SOLVER_SETTINGS = (
    "iterations",
    "tolerance",
    "sweep_order",
    "clamp_mode",
    "restarts",
    "time_limit",
    "use_learned_start",
    "method",
)


def _changed(chain, context) -> None:
    on_setting_changed(chain, context)
    tip_records.write(chain)  # the tip bone carries the chain through Join and Separate


def _mode_changed(chain, context) -> None:
    on_mode_changed(chain, context)
    tip_records.write(chain)


class QuatIKChain(bpy.types.PropertyGroup):
    """One IK chain: its tip bone, how many bones it spans, what it reaches for and how."""

    # `name` (built in) is the chain's display name, used by bake --chain.
    uid: StringProperty(
        name="Chain Id",
        description="Tells this chain's record on its tip bone from others",
        options={"HIDDEN"},
    )
    tip_bone: StringProperty(
        name="Tip Bone", description="Last bone of the chain; its tail reaches for the target", update=_changed
    )
    chain_length: IntProperty(
        name="Chain Length",
        description="Number of bones in the chain, counted from the tip up its parents",
        default=2,
        min=1,
        max=255,
        update=_changed,
    )
    enabled: BoolProperty(name="Enabled", description="Solve this chain", default=True, update=_changed)
    influence: FloatProperty(
        name="Influence",
        description=(
            "How much of the solved pose the bones take: 0 leaves them in their own pose (their keys, or the pose "
            "they had), 1 gives them the solved pose; in between each joint turns that share of the way. "
            "Animate it to blend the chain in and out"
        ),
        default=1.0,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
        update=_changed,
    )
    mode: EnumProperty(name="Mode", description="When the chain re-solves", items=MODES, update=_mode_changed)

    target_object: PointerProperty(
        type=bpy.types.Object,
        name="Target",
        description="Object (or armature, with a bone) the end of the chain reaches for",
        update=_changed,
    )
    target_bone: StringProperty(
        name="Target Bone",
        description="Bone of the target armature whose head is the target (empty: the object's origin)",
        update=_changed,
    )
    effector_offset: FloatVectorProperty(
        name="Effector Offset",
        description="Point that reaches the target, relative to the tip bone's tail, in the tip bone's rest axes",
        size=3,
        subtype="TRANSLATION",
        update=_changed,
    )

    pole_object: PointerProperty(
        type=bpy.types.Object,
        name="Pole Target",
        description="Object (or armature, with a bone) the chain bends toward, like the pole of Blender's IK",
        update=_changed,
    )
    pole_bone: StringProperty(
        name="Pole Bone", description="Bone of the pole armature whose head the chain bends toward", update=_changed
    )
    pole_facing: EnumProperty(
        name="Facing",
        description="What of the chain turns to face the pole",
        items=POLE_FACINGS,
        update=_changed,
    )
    pole_angle: FloatProperty(
        name="Pole Angle",
        description="Turn about the line from the chain's root to its target, from facing the pole",
        subtype="ANGLE",
        unit="ROTATION",
        min=-math.pi,
        max=math.pi,
        update=_changed,
    )

    orientation_mode: EnumProperty(
        name="Orientation",
        description="Whether the tip bone also matches a rotation",
        items=ORIENTATION_MODES,
        update=_changed,
    )
    orientation_object: PointerProperty(
        type=bpy.types.Object,
        name="Orientation Target",
        description="Object (or armature, with a bone) whose rotation the tip bone takes",
        update=_changed,
    )
    orientation_bone: StringProperty(
        name="Orientation Bone", description="Bone whose rotation the tip bone takes", update=_changed
    )
    priority: IntProperty(
        name="Priority",
        description=(
            "Where the goals of chains solved together as one body conflict, a lower number is met first and a "
            "higher one as closely as the freedom left allows (pinned bones come before every priority)"
        ),
        default=0,
        min=0,
        max=15,
        update=_changed,
    )
    weight: FloatProperty(
        name="Weight",
        description="How much this chain's goal counts against other goals of the same priority in its body",
        default=1.0,
        min=0.0,
        soft_max=10.0,
        update=_changed,
    )
    orientation_weight: FloatProperty(
        name="Orientation Weight",
        description="How much the rotation counts against the position (0: position only)",
        subtype="FACTOR",
        min=0.0,
        max=1.0,
        default=ORIENTATION_WEIGHT,
        update=_changed,
    )

    iterations: IntProperty(
        name="Iterations",
        description="Most solver sweeps per solve (each sweep turns every joint once)",
        default=DEFAULT_SETTINGS.max_iterations,
        min=1,
        max=10000,
        soft_max=500,
        update=_changed,
    )
    tolerance: FloatProperty(
        name="Tolerance",
        description=(
            "Distance from the target counted as reached; the solver stops there. A target's rotation "
            "counts as matched within the turn that moves a point at the chain's full length by this much"
        ),
        subtype="DISTANCE",
        default=DEFAULT_SETTINGS.tolerance,
        min=0.0,
        soft_max=0.1,
        precision=5,
        update=_changed,
    )
    sweep_order: EnumProperty(
        name="Sweep Order", description="Order joints are turned in a sweep", items=SWEEP_ORDERS, update=_changed
    )
    clamp_mode: EnumProperty(
        name="Clamp Mode",
        description="How a swing outside the reach windows is brought back inside",
        items=CLAMP_MODES,
        update=_changed,
    )
    restarts: IntProperty(
        name="Restarts",
        description="Rounds of extra solves from other start poses when a solve fails to reach the target",
        default=DEFAULT_SETTINGS.restarts,
        min=0,
        max=64,
        update=_changed,
    )
    time_limit: FloatProperty(
        name="Time Limit",
        description=(
            "Seconds a Live, Per Frame or Solve Now solve may spend on restarts before it keeps the best pose "
            "found (0: no limit). A bake has no limit: Esc stops it"
        ),
        default=INTERACTIVE_TIME_LIMIT,
        min=0.0,
        soft_max=5.0,
        step=10,
        precision=2,
        update=_changed,
    )
    use_learned_start: BoolProperty(
        name="Learned Start Poses",
        description=(
            "Start from precomputed poses near the target instead of the current pose (on the first chain of a body: "
            "the body's, learned for all its chains' goals)"
        ),
        update=_changed,
    )
    method: EnumProperty(
        name="Method", description="Solver algorithm", items=METHODS, default="COMBINED", update=_changed
    )

    # Written by solves; no update callback (writing them is not a settings change).
    status_solved: BoolProperty(
        name="Solved", description="The chain's last solve ran (the status figures are its own)"
    )
    status_converged: BoolProperty(name="Converged", description="The last solve reached the target within tolerance")
    status_error: FloatProperty(
        name="Error",
        description="Distance from the end of the chain to the target after the last solve",
        subtype="DISTANCE",
        precision=5,
    )
    status_iterations: IntProperty(name="Iterations", description="Sweeps the last solve used")
    status_restarts: IntProperty(name="Restarts", description="Restarts the last solve used")
    status_message: StringProperty(name="Message", description="Why the last solve failed, or a warning about it")
    status_solver: StringProperty(
        name="Solver",
        description="Which solver path the last solve ran: the native kernel, or numpy and why",
    )
    status_jump_frames: StringProperty(
        name="Pose Jumps",
        description="Frames (comma separated) where the last bake's pose jumps from one solution branch to another",
    )
    status_largest_jump: FloatProperty(
        name="Largest Jump", description="The largest joint turn of those jumps", subtype="ANGLE"
    )


class QuatIKArmatureSettings(bpy.types.PropertyGroup):
    """All Quat IK chains of one armature object, in list order (first solved first), and its pins."""

    chains: CollectionProperty(type=QuatIKChain, name="Chains", description="Quat IK chains of this armature")
    active_chain_index: IntProperty(name="Active Chain", description="Chain shown in the panel", default=0, min=0)
    use_bodies: BoolProperty(
        name="Solve Shared Bones Together",
        description=(
            "Chains that share bones, or that hold a pinned bone, are solved as one body: every goal and pin at "
            "once, by priority. Off: chains are solved one after another in list order"
        ),
        default=True,
        update=on_setting_changed,
    )
    pins: CollectionProperty(type=QuatIKPin, name="Pins", description="Bones held in place over frame ranges")
    active_pin_index: IntProperty(name="Active Pin", description="Pin shown in the panel", default=0, min=0)


CLASSES = (QuatIKChain, QuatIKPin, QuatIKArmatureSettings)


def attach() -> None:
    """Hang the property groups on Blender types (called from register())."""
    bpy.types.Object.quat_ik = PointerProperty(
        type=QuatIKArmatureSettings,
        name="Quat IK",
        description="Quat IK chains of this armature",
        override=overrides.OVERRIDE,
    )


def detach() -> None:
    del bpy.types.Object.quat_ik


def active_chain(ob):
    """The armature's chain selected in the panel, or None."""
    settings = ob.quat_ik
    if 0 <= settings.active_chain_index < len(settings.chains):
        return settings.chains[settings.active_chain_index]
    return None


def chains_with_bone(ob, bone_name: str) -> list[int]:
    """Indices of the armature's chains that move ``bone_name`` (from each tip up its parents)."""
    bones = ob.data.bones
    found = []
    for index, chain in enumerate(ob.quat_ik.chains):
        bone, left = bones.get(chain.tip_bone), chain.chain_length
        while bone is not None and left > 0:
            if bone.name == bone_name:
                found.append(index)
                break
            bone, left = bone.parent, left - 1
    return found


def body_of(ob, index: int, among=None) -> list[int]:
    """Indices of the enabled chains (those ``among(chain)`` accepts, if given) solved as one
    body with chain ``index`` (itself included): chains linked through shared bones, as
    ``solving/body_jobs.group_jobs`` groups them."""
    return _body_of(*_bone_sets(ob, list(ob.quat_ik.chains), {index}, among), index)


def _bone_sets(ob, chains: list, chosen: set[int], among) -> tuple[dict[int, set[str]], set[int]]:
    """The bones (from the tip up its parents) of the chains that may be in a body, by place:
    those at ``chosen`` with a target and those that join others' bodies (enabled, with a
    target, accepted by ``among``); and the places of the latter. (A chain without a target
    cannot be solved, so it joins no body: its bones link nothing.)"""
    bones = ob.data.bones
    joining = {
        k
        for k, chain in enumerate(chains)
        if chain.target_object is not None and chain.enabled and (among is None or among(chain))
    }

    def bone_set(chain) -> set[str]:
        found, bone, left = set(), bones.get(chain.tip_bone), chain.chain_length
        while bone is not None and left > 0:
            found.add(bone.name)
            bone, left = bone.parent, left - 1
        return found

    with_target = {k for k in chosen if chains[k].target_object is not None}
    return {k: bone_set(chains[k]) for k in sorted(joining | with_target)}, joining


def _body_of(sets: dict[int, set[str]], joining: set[int], index: int) -> list[int]:
    """``body_of`` from ``_bone_sets`` (``index`` among its chosen chains)."""
    if index not in sets:
        return [index]
    body, reached = {index}, set(sets[index])
    grown = True
    while grown:
        grown = False
        for k, found in sets.items():
            if k not in body and k in joining and found & reached:
                body.add(k)
                reached |= found
                grown = True
    return sorted(body)


def with_bodies(ob, chosen, among=None) -> list:
    """``chosen`` chains with every enabled chain (that ``among(chain)`` accepts, if given)
    solved with them as one body, in list order (a body is solved whole: its shared bones take
    all its goals). As given when the armature solves chains one after another."""
    chains = list(ob.quat_ik.chains)
    if not ob.quat_ik.use_bodies or len(chains) < 2:
        return list(chosen)
    places = [chains.index(chain) for chain in chosen]
    sets, joining = _bone_sets(ob, chains, set(places), among)  # (each chain's bones followed once)
    indices = {i for index in places for i in _body_of(sets, joining, index)}
    return [chain for i, chain in enumerate(chains) if i in indices]
