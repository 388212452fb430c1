"""The one place that knows how to read a Quat IK chain from an (evaluated) armature.

``read_chain_rig`` checks a chain and builds the solver's ``Chain`` (rest frames with roll,
connected or not, joint limits); ``read_frame_inputs`` reads what changes over time: the
armature's world matrix, the evaluated pose frame of the chain root's parent (an animated
spine or hips), the target's world matrix and the chain's current rotations.

Frames: the solver works in the chain's ROOT frame, the evaluated pose frame of the root
bone's parent in armature space (armature space itself when the root has no parent). A
point's root-frame position is ``(object.matrix_world @ parent.matrix).inverted() @ p``,
which is linear, so non-uniform and negative object scale map positions exactly.

The bones' pose location (unconnected bones: Blender ignores a connected bone's) and a
uniform pose scale, inherited or not as each bone's Inherit Scale says, are folded into the
chain as they are at reading time; bones whose rotation channels are all locked are held at
their current rotation (see ``locks.py``). A bake builds its chain once, so ``check_frozen``
refuses where those values move over its range. A root that does not inherit its parent's
rotation or scale is solved while the parent keeps its rest axes or unit scale
(``check_root_frame``); a bone below the root must inherit its parent's rotation.

Live and Per Frame read every chain's rig on every update: ``read_chain_rig`` keeps the rig it
built, with what it was built from (``_rig_key``), and builds it again only when that changed.
Its checks (the armature, the bones, the targets) run on every read.
"""

from __future__ import annotations

import hashlib
import math
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from ...solver.bounded_memo import BoundedMemo
from ...solver.chain import Chain
from ...solver.limits.joints import FixedJoint, parameter_digest
from .. import compat
from ..chains import tip_records
from ..errors import ChainError
from ..limits import conversion
from ..runtime.state import session
from . import locks, rotation_modes
from .bones import follow_parents
from .rotation_modes import current_quaternion

MIN_BONE_LENGTH = 1e-6
# Keys baked with visual keying (nla.bake of Blender's IK) leave pose scales a few float32
# steps off 1 (1.0000001, 0.9999996): noise, not a scale worth a warning.
SCALE_TOLERANCE = 1e-5
IGNORED_PARENT_SCALE = ("NONE", "NONE_LEGACY")  # inherit_scale modes that drop the parent's scale


@dataclass(frozen=True, eq=False)
class ChainRig:
    """A chain ready for the solver, plus what reading inputs and writing back need.

    Holds Blender objects: use it within one operator call or handler run, never keep it.
    """

    armature: object  # the original armature Object
    chain_name: str
    bone_names: tuple[str, ...]  # root to tip
    root_parent: str | None  # parent of the chain's root bone: its pose frame is the root frame
    chain: Chain
    writable: tuple[bool, ...]  # False: the bone is held by locked channels and never written
    target_object: object
    target_bone: str | None
    orientation_object: object = None  # None: position only
    orientation_bone: str | None = None
    pole_object: object = None  # None: no pole target
    pole_bone: str | None = None
    warnings: tuple[str, ...] = ()
    # The bones of this armature the target, orientation target and pole move with (a target
    # bone, or the bone an object hangs from): solving a chain above them moves them too.
    target_anchor: str | None = None
    orientation_anchor: str | None = None
    pole_anchor: str | None = None
    # How the chain's root takes its parent's pose (``check_root_frame``): the parent's rest
    # axes (armature space) where the root does not inherit rotation, and whether it ignores
    # the parent's scale.
    root_rest_axes_unless_inherited: np.ndarray | None = None
    root_ignores_parent_scale: bool = False


@dataclass(frozen=True)
class FrameInputs:
    """What a chain's solve depends on at one frame (matrices as 4x4 numpy arrays)."""

    object_world: np.ndarray  # armature object -> world
    root_parent_armature: np.ndarray  # root frame -> armature space (identity without a parent)
    target_world: np.ndarray  # target's world matrix (bone target: the bone's pose matrix in world)
    rotations: np.ndarray  # (n, 4) current rotations in the solver's terms (held bones: identity)
    orientation_world: np.ndarray | None = None  # world matrix whose rotation the tip should take
    pole_world: np.ndarray | None = None  # world matrix whose position the chain bends toward
    influence: float = 1.0  # share of the solved pose the bones take (the chain's Influence, maybe animated)
    pole_angle: float = 0.0  # the chain's Pole Angle (radians, maybe animated)

    @property
    def root_world(self) -> np.ndarray:
        """The chain's root frame (the solver's coordinates) -> world."""
        return self.object_world @ self.root_parent_armature


def chain_label(chain) -> str:
    return chain.name or chain.tip_bone or "(unnamed)"


def check_armature(ob) -> None:
    """ChainError unless ``ob`` is an armature whose pose may be changed."""
    if ob is None:
        raise ChainError("No active object: select an armature")
    if ob.type != "ARMATURE":
        kind = ob.type.lower().replace("_", " ")
        raise ChainError(f"'{ob.name}' is {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not an armature")
    if not compat.is_editable(ob):
        where = compat.linked_from(ob)
        raise ChainError(
            f"Armature '{ob.name}' is linked{f' from {where}' if where else ''} and cannot be changed; "
            "make a library override first"
        )
    if ob.mode == "EDIT":
        raise ChainError(f"Armature '{ob.name}' is in Edit Mode: leave it to solve")


def chain_bone_names(ob, tip_bone: str, chain_length: int) -> tuple[str, ...]:
    """Bone names root to tip, following parents up from ``tip_bone``. Within
    ``visibility_snapshot`` each chain's are followed once (a Live update asks for them from
    the fingerprint, the rig, the order of chains and what hangs below what)."""
    if _bone_names is None:
        return follow_parents(ob, tip_bone, chain_length)
    key = (ob.as_pointer(), tip_bone, chain_length)
    found = _bone_names.get(key)
    if found is None:
        try:
            found = follow_parents(ob, tip_bone, chain_length)
        except ChainError as error:
            found = error
        _bone_names[key] = found
    if isinstance(found, ChainError):
        raise ChainError(str(found))
    return found


def length_to_root(ob, tip_bone: str, root_bone: str) -> int:
    """Chain length from ``tip_bone`` up to ``root_bone`` (inclusive); ChainError if not an ancestor."""
    bone = ob.data.bones.get(tip_bone)
    if bone is None:
        raise ChainError(f"Bone '{tip_bone}' not found in armature '{ob.name}'")
    if ob.data.bones.get(root_bone) is None:
        raise ChainError(f"Root bone '{root_bone}' not found in armature '{ob.name}'")
    length = 1
    while bone is not None and bone.name != root_bone:
        bone = bone.parent
        length += 1
    if bone is None:
        raise ChainError(f"'{root_bone}' is not '{tip_bone}' or one of its parents")
    return length


def _is_below(bone, ancestor_names: set[str]) -> bool:
    while bone is not None:
        if bone.name in ancestor_names:
            return True
        bone = bone.parent
    return False


def check_target(ob, bone_names: tuple[str, ...], target_object, target_bone: str | None, what: str) -> None:
    if target_object is None:
        raise ChainError(f"The chain has no {what}: pick an object or a bone")
    if target_bone:
        if target_object.type != "ARMATURE":
            raise ChainError(
                f"{what.capitalize()} '{target_object.name}' is not an armature, so it has no bone '{target_bone}'"
            )
        bone = target_object.data.bones.get(target_bone)
        if bone is None:
            raise ChainError(
                f"{what.capitalize()} bone '{target_bone}' not found in '{target_object.name}' (renamed or deleted?)"
            )
        if target_object == ob and _is_below(bone, set(bone_names)):
            raise ChainError(f"{what.capitalize()} bone '{target_bone}' moves with the chain (it is in or below it)")
    # An object parented into the chain would chase itself.
    child = target_object
    while child is not None and child.parent is not None:
        if child.parent == ob and child.parent_type == "BONE":
            parent_bone = ob.data.bones.get(child.parent_bone)
            if parent_bone is not None and _is_below(parent_bone, set(bone_names)):
                raise ChainError(
                    f"{what.capitalize()} '{target_object.name}' is parented to the chain and would move with it"
                )
        child = child.parent


def with_ancestors(ob, bone_names) -> set[str]:
    """The named bones of armature ``ob`` (None and missing names skipped) and all their
    ancestors."""
    found: set[str] = set()
    for name in bone_names:
        bone = ob.data.bones.get(name) if name else None
        while bone is not None and bone.name not in found:
            found.add(bone.name)
            bone = bone.parent
    return found


def anchor_bone(ob, target_object, target_bone: str | None) -> str | None:
    """The bone of armature ``ob`` that a target moves with: the target bone itself, or the
    bone an object target hangs from (through any parents); None when no bone of ``ob``
    moves it."""
    if target_object is None:
        return None
    if target_object == ob:
        return target_bone or None
    child = target_object
    while child.parent is not None:
        if child.parent == ob:
            return child.parent_bone if child.parent_type == "BONE" and child.parent_bone else None
        child = child.parent
    return None


def _matrix_np(matrix) -> np.ndarray:
    return np.array(matrix, dtype=float)


def read_chain_rig(ob, chain) -> ChainRig:
    """Check ``chain`` (a QuatIKChain of armature ``ob``) and build its solver chain.

    Raises ChainError with a user-facing message for every problem.
    """
    check_armature(ob)
    bone_names = chain_bone_names(ob, chain.tip_bone, chain.chain_length)
    target_bone = chain.target_bone or None
    check_target(ob, bone_names, chain.target_object, target_bone, "target")
    orientation_object, orientation_bone = None, None
    if chain.orientation_mode == "MATCH_TARGET":
        orientation_object, orientation_bone = chain.target_object, target_bone
    elif chain.orientation_mode == "OBJECT":
        orientation_object, orientation_bone = chain.orientation_object, chain.orientation_bone or None
        check_target(ob, bone_names, orientation_object, orientation_bone, "orientation target")
    pole_object, pole_bone = chain.pole_object, (chain.pole_bone or None)
    if pole_object is not None:
        check_target(ob, bone_names, pole_object, pole_bone, "pole target")
    else:
        pole_bone = None
    pointers = (
        (chain.target_object, target_bone),
        (orientation_object, orientation_bone),
        (pole_object, pole_bone),
    )
    key = _rig_key(ob, bone_names, pointers)
    slot = (compat.session_key(ob), chain.name)
    cached = _rigs.get(slot)
    if cached is not None and cached[0] == key:
        return cached[1]
    rig = _built_rig(ob, chain, bone_names, pointers)
    if len(_rigs) >= _RIGS_KEPT:
        _rigs.clear()
    _rigs[slot] = (key, rig)
    return rig


# The rigs read last, by (armature, chain name): (what they were read from, the ChainRig).
_RIGS_KEPT = 1024
_rigs: dict = {}


def forget_rigs() -> None:
    """Drop the rigs read so far (a file loaded, undo: the objects they hold may be gone)."""
    _rigs.clear()


def _rig_key(ob, bone_names: tuple[str, ...], pointers) -> tuple:
    """What ``_built_rig`` builds a chain's rig from, as cheap values to compare with the next
    read: the armature's settings generation (``session.rig_generation_of``: every chain and
    joint-limit setting but a chain's mode, changed in the panel, by an operator or by Python,
    undo and file loads), the objects and bones it reaches for and what they hang from, and each chain
    bone's rest frame, length, parenting, pose location and scale, locks, constraints and
    drivers (nothing bumps the generation for those). Reading them costs a few microseconds a
    bone; building the rig again (limits validated, ``Chain`` built and packed for the kernel)
    costs a hundred or more."""
    bones, pose_bones = ob.data.bones, ob.pose.bones
    parent = bones[bone_names[0]].parent
    animation = ob.animation_data
    parts = [
        session.rig_generation_of(ob),
        compat.session_key(ob.data),
        bone_names,
        None if parent is None else (parent.name, parent.matrix_local.copy()),
        0 if animation is None else len(animation.drivers),
    ]
    for target, bone in pointers:
        parts.append(None if target is None else (compat.session_key(target), bone, anchor_bone(ob, target, bone)))
    for name in bone_names:
        parts.append(_bone_state(bones[name], pose_bones[name]))
    return tuple(parts)


def _bone_state(bone, pose_bone) -> tuple:
    """One chain bone's part of ``_rig_key``."""
    limits = pose_bone.quat_ik
    lock_rotation = pose_bone.lock_rotation[:]
    state = (
        bone.matrix_local.copy(),  # (mathutils compares matrices by value, to a float32 step)
        bone.length,
        bone.use_connect,
        bone.use_inherit_rotation,
        bone.inherit_scale,
        pose_bone.location[:],
        pose_bone.scale[:],
        limits.joint_type,
        len(limits.windows),  # (a window removed by a script bumps no generation)
        pose_bone.rotation_mode,
        lock_rotation,
        pose_bone.lock_rotation_w,
        pose_bone.lock_rotations_4d,
    )
    if any(lock_rotation) or pose_bone.lock_rotation_w:
        state += (locks.frozen_channels(pose_bone),)  # the values a locked channel holds
    constraints = pose_bone.constraints
    if len(constraints):
        state += (tuple((c.name, c.mute, c.influence) for c in constraints),)
    return state


def _built_rig(ob, chain, bone_names: tuple[str, ...], pointers) -> ChainRig:
    """``read_chain_rig``'s rig, built from the armature (its checks done)."""
    (target_object, target_bone), (orientation_object, orientation_bone), (pole_object, pole_bone) = pointers
    bones = ob.data.bones
    pose_bones = ob.pose.bones
    first = bones[bone_names[0]]
    root_parent = first.parent.name if first.parent is not None else None
    parent_rest = first.parent.matrix_local if first.parent is not None else None

    clamp_mode = chain.clamp_mode.lower()
    rest_rotations, rest_offsets, lengths, limits, writable, warnings = [], [], [], [], [], []
    cumulative_scale = 1.0
    for i, name in enumerate(bone_names):
        bone, pose_bone = bones[name], pose_bones[name]
        if bone.length < MIN_BONE_LENGTH:
            raise ChainError(f"Bone '{name}' has zero length")
        if i > 0 and not bone.use_inherit_rotation:
            raise ChainError(f"Bone '{name}' does not inherit its parent's rotation; the solver needs it to")
        # Blender: a bone that ignores its parent's scale is placed by the scaled parent but
        # takes only its own scale (checked against Blender for every inherit mode).
        ignores_scale = bone.inherit_scale in IGNORED_PARENT_SCALE
        local = bone.matrix_local if parent_rest is None else parent_rest.inverted() @ bone.matrix_local
        rest_rotation = local.to_quaternion()
        offset = np.array(local.translation)
        if not bone.use_connect:  # Blender ignores a connected bone's pose location
            offset += np.array(rest_rotation @ pose_bone.location)
        scale = tuple(pose_bone.scale)  # (plain floats: numpy's calls cost more on three numbers)
        if not all(math.isfinite(value) for value in (*offset, *scale)):
            raise ChainError(f"Bone '{name}' has a location or scale that is not a number")
        rest_offsets.append(offset * cumulative_scale)

        if i > 0 and ignores_scale:
            cumulative_scale = 1.0
        if max(scale) - min(scale) > SCALE_TOLERANCE:
            warnings.append(f"non-uniform pose scale on '{name}' is ignored")
        else:
            cumulative_scale *= float(scale[0])
        lengths.append(bone.length * cumulative_scale)
        warnings += _overridden(ob, pose_bone)

        limit = conversion.bone_limit(name, pose_bone.quat_ik, clamp_mode=clamp_mode)
        held = locks.held_rotation(pose_bone)
        if held is not None:
            # Every rotation channel is locked: the bone keeps its current rotation, which is
            # folded into its rest frame so the solver sees a fixed joint there.
            rest_rotation = rest_rotation @ held
            limit = FixedJoint()
            writable.append(False)
        else:
            limit = locks.apply_partial_locks(pose_bone, limit)
            writable.append(True)
        rest_rotations.append(tuple(rest_rotation))
        limits.append(limit)
        parent_rest = bone.matrix_local

    notice = tip_records.notice(chain)  # (a change of its bones: set with a bump of the generation)
    if notice:
        warnings.insert(0, notice)
    offset = np.array(chain.effector_offset) * cumulative_scale
    if not np.all(np.isfinite(offset)):
        raise ChainError(f"Effector Offset is not a number {tuple(chain.effector_offset)}")
    try:
        solver_chain = _interned_chain(
            bone_names, np.array(rest_rotations), np.array(rest_offsets), np.array(lengths), tuple(limits), offset
        )
    except ValueError as error:
        raise ChainError(f"The chain cannot be solved: {error}") from None
    return ChainRig(
        armature=ob,
        chain_name=chain.name,
        bone_names=bone_names,
        root_parent=root_parent,
        chain=solver_chain,
        writable=tuple(writable),
        target_object=target_object,
        target_bone=target_bone,
        orientation_object=orientation_object,
        orientation_bone=orientation_bone,
        pole_object=pole_object,
        pole_bone=pole_bone,
        warnings=tuple(warnings),
        target_anchor=anchor_bone(ob, target_object, target_bone),
        orientation_anchor=anchor_bone(ob, orientation_object, orientation_bone),
        pole_anchor=anchor_bone(ob, pole_object, pole_bone),
        root_rest_axes_unless_inherited=(
            None
            if first.parent is None or first.use_inherit_rotation
            else _matrix_np(first.parent.matrix_local)[:3, :3]
        ),
        root_ignores_parent_scale=first.parent is not None and first.inherit_scale in IGNORED_PARENT_SCALE,
    )


_chains: BoundedMemo[Chain] = BoundedMemo(256)


def _interned_chain(bone_names, rest_rotations, rest_offsets, lengths, limits, effector_offset) -> Chain:
    """The solver chain of these values, the same object as last time when nothing changed:
    Live and Per Frame read the rig on every update, and a chain built again also builds its
    clamps, groups and fingerprint again (a quarter of a Per Frame frame answered from memory)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update("\0".join(bone_names).encode())
    for array in (rest_rotations, rest_offsets, lengths, effector_offset):
        digest.update(array.tobytes())
    for limit in limits:
        digest.update(parameter_digest(limit))
    return _chains.get(
        digest.digest(), lambda: Chain(bone_names, rest_rotations, rest_offsets, lengths, limits, effector_offset)
    )


def _overridden(ob, pose_bone) -> list[str]:
    """Warnings for what changes a chain bone's pose after the solve: its own constraints, and
    drivers on its rotation (a driver replaces what is written or keyed)."""
    found = [
        f"constraint '{c.name}' on '{pose_bone.name}' changes its pose after the solve"
        for c in pose_bone.constraints
        if not c.mute and c.influence > 0.0
    ]
    drivers = ob.animation_data.drivers if ob.animation_data is not None else ()
    if len(drivers):
        path, size = rotation_modes.data_path_and_size(pose_bone.rotation_mode)
        full_path = pose_bone.path_from_id(path)
        if any(drivers.find(full_path, index=index) is not None for index in range(size)):
            found.append(f"a driver on the rotation of '{pose_bone.name}' replaces the solved rotation")
    return found


def frozen_values(ob, bone_names) -> tuple[tuple[str, str, tuple[float, ...]], ...]:
    """(bone, what, values) of what ``read_chain_rig`` builds into the chain from each bone's
    pose: its location, scale and locked rotation channels."""
    values = []
    for name in bone_names:
        pose_bone = ob.pose.bones[name]
        values.append((name, "location", () if pose_bone.bone.use_connect else tuple(pose_bone.location)))
        values.append((name, "scale", tuple(pose_bone.scale)))
        values.append((name, "locked rotation channels", locks.frozen_channels(pose_bone)))
    return tuple(values)


def check_frozen(rig: ChainRig, built_from) -> None:
    """ChainError if a bone's location, scale or locked rotation channels differ from
    ``built_from`` (``frozen_values`` when the chain was built: a bake builds it once)."""
    for (name, what, built), (_name, _what, now) in zip(
        built_from, frozen_values(rig.armature, rig.bone_names), strict=True
    ):
        if now != built and not np.allclose(now, built, rtol=1e-6, atol=1e-6):  # (equal: the usual case)
            raise ChainError(frozen_message(name, what))


def frozen_message(bone: str, what: str) -> str:
    return (
        f"'{bone}' has its {what} animated over the range: a bake takes the chain bones' locations, scales and "
        "locked rotation channels as they are at the current frame (Per Frame mode follows them); remove "
        "those keys or bake where they hold still"
    )


def check_root_frame(rig: ChainRig, root_parent: np.ndarray) -> None:
    """ChainError unless the root's parent frame, as read from the parent's pose matrix, is the
    frame Blender gives the root: a root that does not inherit its parent's rotation or scale
    is solved only while the parent keeps its rest axes or its scale is 1."""
    axes = root_parent[:3, :3]
    rest = rig.root_rest_axes_unless_inherited
    if rest is not None and not np.allclose(axes, rest, atol=1e-5):
        raise ChainError(
            f"'{rig.bone_names[0]}', the chain's root, does not inherit the rotation of '{rig.root_parent}', "
            "which is posed away from its rest: turn Inherit Rotation on, or keep the parent at rest"
        )
    if rig.root_ignores_parent_scale:
        scale = np.linalg.norm(axes, axis=0)
        if np.max(np.abs(scale - 1.0)) > SCALE_TOLERANCE:
            raise ChainError(
                f"'{rig.bone_names[0]}', the chain's root, does not inherit the scale of '{rig.root_parent}', "
                f"which is scaled ×{float(np.mean(scale)):.3g}: set its Inherit Scale to Full, or the parent's "
                "scale to 1"
            )


def evaluated(ob, depsgraph):
    """The evaluated copy of ``ob``; ChainError if it is not in the evaluated scene. Within
    ``visibility_snapshot`` each object's is looked up once (a Live update reads the armature
    and the targets of every chain for its fingerprints and again for its inputs)."""
    if _evaluated is not None:
        key = (ob.as_pointer(), depsgraph.as_pointer())
        found = _evaluated.get(key)
        if found is None:
            found = _evaluated[key] = _evaluated_now(ob, depsgraph)
        return found
    return _evaluated_now(ob, depsgraph)


def _evaluated_now(ob, depsgraph):
    ob_eval = ob.evaluated_get(depsgraph)
    if not ob_eval.is_evaluated or not enabled_in(ob, depsgraph):
        where = "renders" if depsgraph.mode == "RENDER" else "viewports"
        raise ChainError(
            f"'{ob.name}' is not in the view layer being evaluated (excluded, disabled in {where}, "
            "unlinked, or in another scene): it would be read where it was, not where it is"
        )
    return ob_eval


def enabled_in(ob, depsgraph) -> bool:
    """True if ``ob`` is evaluated for ``depsgraph``'s view layer in its own right: in a
    collection of the view layer that is not excluded, with neither it nor that collection (or
    one above) disabled for the depsgraph's mode. An object outside, which a chain's pointer
    still pulls into the depsgraph, keeps the transform it had and never updates; hiding
    with the eye icon does not stop evaluation and counts as enabled."""
    disabled = "hide_render" if depsgraph.mode == "RENDER" else "hide_viewport"
    if getattr(ob, disabled):
        return False
    if _snapshots is None:  # one object: look for it collection by collection
        return any(ob.name in layer.collection.objects for layer in _enabled_layers(depsgraph, disabled))
    key = (depsgraph.as_pointer(), disabled)
    if key not in _snapshots:
        _snapshots[key] = _enabled_names(depsgraph, disabled)
    return ob.name in _snapshots[key]


def _enabled_layers(depsgraph, disabled: str):
    """The view layer's layer collections that are neither excluded nor disabled (nor below one)."""
    pending = [depsgraph.view_layer.layer_collection]
    while pending:
        layer = pending.pop()
        if layer.exclude or getattr(layer.collection, disabled):
            continue
        yield layer
        pending.extend(layer.children)


def _enabled_names(depsgraph, disabled: str) -> set[str]:
    """Names of the objects in the view layer's enabled collections (one call per collection)."""
    names: set[str] = set()
    for layer in _enabled_layers(depsgraph, disabled):
        names.update(layer.collection.objects.keys())
    return names


# Within ``visibility_snapshot``: (depsgraph, flag) -> enabled object names, built once;
# (armature, tip bone, length) -> the chain's bone names (or why it has none); and (object,
# depsgraph) -> its evaluated copy.
_snapshots: dict | None = None
_bone_names: dict | None = None
_evaluated: dict | None = None


@contextmanager
def visibility_snapshot():
    """Within this block ``enabled_in`` lists each view layer's enabled objects once: a handler
    reads every chain's armature and targets, and listing them per object cost a search of
    the scene's objects each (50 armatures of 4 chains among 5,000 objects: 170 ms an update).
    Each chain's bones are followed once too (``chain_bone_names``), and each object's
    evaluated copy looked up once (``evaluated``): nothing inside the block may add, delete or
    re-parent bones, or evaluate the depsgraph."""
    global _snapshots, _bone_names, _evaluated
    outer = _snapshots, _bone_names, _evaluated
    _snapshots = {} if outer[0] is None else outer[0]
    _bone_names = {} if outer[1] is None else outer[1]
    _evaluated = {} if outer[2] is None else outer[2]
    try:
        yield
    finally:
        _snapshots, _bone_names, _evaluated = outer


_IDENTITY = np.identity(4)


def read_frame_inputs(rig: ChainRig, depsgraph) -> FrameInputs:
    """Read one frame's inputs from the evaluated scene (see the module docstring)."""
    ob_eval = evaluated(rig.armature, depsgraph)
    pose_bones = ob_eval.pose.bones
    root_parent = _matrix_np(pose_bones[rig.root_parent].matrix) if rig.root_parent is not None else _IDENTITY.copy()
    check_root_frame(rig, root_parent)
    target_world = _world_matrix(rig.target_object, rig.target_bone, depsgraph)
    orientation_world = None
    if rig.orientation_object is not None:
        orientation_world = _world_matrix(rig.orientation_object, rig.orientation_bone, depsgraph)
    pole_world = None
    if rig.pole_object is not None:
        pole_world = _world_matrix(rig.pole_object, rig.pole_bone, depsgraph)
    rotations = np.array(
        [
            tuple(current_quaternion(pose_bones[name])) if writable else (1.0, 0.0, 0.0, 0.0)
            for name, writable in zip(rig.bone_names, rig.writable, strict=True)
        ]
    )
    return FrameInputs(
        object_world=_matrix_np(ob_eval.matrix_world),
        root_parent_armature=root_parent,
        target_world=target_world,
        rotations=rotations,
        orientation_world=orientation_world,
        pole_world=pole_world,
        **animated_settings(rig),
    )


# Chain settings that may be animated and so are read with every frame's inputs, and their
# values when the chain is gone.
ANIMATED_SETTINGS = {"influence": 1.0, "pole_angle": 0.0}


def animated_settings(rig: ChainRig) -> dict[str, float]:
    """The chain's animatable settings now (``ANIMATED_SETTINGS``)."""
    chain = rig.armature.quat_ik.chains.get(rig.chain_name)
    if chain is None:
        return dict(ANIMATED_SETTINGS)
    return {name: float(getattr(chain, name)) for name in ANIMATED_SETTINGS}


def _world_matrix(ob, bone: str | None, depsgraph) -> np.ndarray:
    """World matrix of an object or of one of its pose bones."""
    ob_eval = evaluated(ob, depsgraph)
    if bone is None:
        return _matrix_np(ob_eval.matrix_world)
    return _matrix_np(ob_eval.matrix_world @ ob_eval.pose.bones[bone].matrix)


def input_fingerprint(ob, chain, depsgraph) -> tuple[tuple, tuple]:
    """Cheap values that change whenever anything ``chain`` is solved from changes, in two
    parts: (its own inputs, the inputs that move with the armature's pose). Compare them with
    ``==``: matrices are mathutils copies, which compare by value (to within one float32 step,
    and a NaN equals itself), vectors tuples of floats.

    Reads only matrices (no chain building): the target (and orientation target and pole),
    the chain bones' rest matrices, pose location and scale, and the chain's Influence and
    Pole Angle; in the second part, the root parent's pose and the targets that move with
    bones of this armature (``anchor_bone``), which solving other chains of it moves. The
    armature's world matrix counts only when a target is outside the armature: a chain whose
    targets are all bones of its own armature solves in armature space, so moving the whole
    rig changes nothing it solves. Our own rotation writes do not change it, so a live chain
    never re-solves because of itself. Raises ChainError when the chain cannot be read.
    """
    ob_eval = evaluated(ob, depsgraph)
    names = chain_bone_names(ob, chain.tip_bone, chain.chain_length)
    # Influence and Pole Angle may be animated: a frame change alone then calls for a new solve.
    own = [chain.name, chain.influence, chain.pole_angle]
    posed = []
    bones = ob_eval.data.bones
    pose_bones = ob_eval.pose.bones
    parent = bones[names[0]].parent
    if parent is not None:
        posed.append(pose_bones[parent.name].matrix.copy())
    for name in names:
        pose_bone = pose_bones[name]
        own += (bones[name].matrix_local.copy(), pose_bone.location[:], pose_bone.scale[:])
    inputs = (
        (chain.target_object, chain.target_bone),
        (chain.orientation_object, chain.orientation_bone),
        (chain.pole_object, chain.pole_bone),
    )
    outside = False
    for target, bone in inputs:
        if target is None:
            own.append(None)
            continue
        target_eval = evaluated(target, depsgraph)
        if target != ob:
            outside = True
            part = posed if anchor_bone(ob, target, bone) is not None else own
            part.append(target_eval.matrix_world.copy())
        else:
            part = posed if bone else own  # its bone's place in the armature; the armature itself
            part.append(True)
        if bone:
            pose_bone = target_eval.pose.bones.get(bone) if target_eval.pose is not None else None
            if pose_bone is None:
                raise ChainError(f"Target bone '{bone}' not found in '{target.name}' (renamed or deleted?)")
            part.append(pose_bone.matrix.copy())
    if outside:
        own.append(ob_eval.matrix_world.copy())
    return tuple(own), tuple(posed)


def check_new_chain(ob, tip_bone: str, chain_length: int, target_object, target_bone: str | None) -> tuple[str, ...]:
    """Everything add-chain must check before it changes anything; returns the bone names."""
    check_armature(ob)
    names = chain_bone_names(ob, tip_bone, chain_length)
    for name in names:
        if ob.data.bones[name].length < MIN_BONE_LENGTH:
            raise ChainError(f"Bone '{name}' has zero length")
    if target_object is not None:
        check_target(ob, names, target_object, target_bone or None, "target")
    return names
