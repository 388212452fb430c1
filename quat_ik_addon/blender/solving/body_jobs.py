"""Chains solved together as one body: every goal and pin at once (issue 36).

Chains that share bones form a body when the armature's *Solve Shared Bones Together* is on
(``group_jobs``); a chain alone that holds a pinned or stretchy bone is solved as a body too. The body is the chains merged by bone name
(``solver.body.Body.from_chains``), in ONE root frame: the pose frame of the bone its root
chains hang from (they must all hang from the same bone, or all from none); a chain whose
first bone hangs from another chain's bone is attached there. Each chain's target (and
orientation target) becomes a goal at the chain's Priority with its Weight; each pin active on
a frame holds its bone above every goal. The solver's body pipeline
(``solver.body.request.solve_body_request``) solves it; the answer goes back as one
``ChainSolution`` per chain, so writing and keying are the same as for single chains, plus the
Y scale of stretchy bones. No ``bpy`` here.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ...solver import quaternion as quat
from ...solver.body import Body, Effector, Goal, Pin
from ...solver.body.learned_starts import BodyLearnedStarts, learn_body_starts
from ...solver.body.poles import BodyPole, chain_pole
from ...solver.body.request import BodyOptions, BodyRequest
from ...solver.body.settings import body_settings_from
from ...solver.bounded_memo import BoundedMemo
from ...solver.defaults import ORIENTATION_WEIGHT
from ...solver.settings import SolveResult
from ...solver.shots.pose_curves import blend
from ..errors import ChainError
from ..limits import conversion
from . import cache
from .jobs import ChainJob, ChainSolution
from .matrices import check_finite, invert, rigid_frames, rigid_inverse, rotations_of

_bodies: BoundedMemo[Body] = BoundedMemo(64)  # Live builds the same body on every update: once per distinct rig


@dataclass(frozen=True)
class PinInput:
    """One pin as the solve needs it: plain values read from the armature's settings."""

    index: int  # in ``armature.quat_ik.pins``
    bone: str
    location: np.ndarray | None  # (3,) armature space; None: the location is free
    rotation: np.ndarray | None  # (4,) wxyz, armature space; None: the rotation is free
    frame_start: float
    frame_end: float

    def active(self, frames: np.ndarray) -> np.ndarray:
        return (frames >= self.frame_start) & (frames <= self.frame_end)


@dataclass(frozen=True)
class PinOutcome:
    """How one pin held over the frames a body solve covered where it is active."""

    index: int
    held: bool
    error: float  # the largest distance of the bone's head from where it is held
    rotation_error: float  # radians
    message: str = ""


def read_pins(armature) -> list[PinInput]:
    """The armature's enabled pins with a bone (any frames)."""
    pins = []
    for index, pin in enumerate(armature.quat_ik.pins):
        if not pin.enabled or not pin.bone:
            continue
        pins.append(
            PinInput(
                index=index,
                bone=pin.bone,
                location=np.array(pin.location, dtype=float) if pin.holds_location() else None,
                rotation=np.array(pin.rotation, dtype=float) if pin.holds_rotation() else None,
                frame_start=float(pin.frame_start),
                frame_end=float(pin.frame_end),
            )
        )
    return pins


def group_jobs(bone_sets: Sequence[set[str]], use_bodies: bool) -> list[list[int]]:
    """The jobs (by their bones, list order) in units solved together, in the order of each
    unit's first job: chains that share bones (transitively) form one unit, as does a chain
    alone that holds a pinned bone; with ``use_bodies`` off every job is its own unit."""
    units: list[list[int]] = []
    if not use_bodies:
        return [[k] for k in range(len(bone_sets))]
    unit_of: dict[int, int] = {}
    for k, bones in enumerate(bone_sets):
        joined = sorted({unit_of[j] for j in range(k) if bone_sets[j] & bones})
        if not joined:
            unit_of[k] = len(units)
            units.append([k])
            continue
        first = joined[0]
        for other in joined[1:]:  # this chain joins units formed before it into one
            units[first].extend(units[other])
            for j in units[other]:
                unit_of[j] = first
            units[other] = []
        units[first].append(k)
        unit_of[k] = first
    return [sorted(unit) for unit in units if unit]


def is_body(unit: list[int], bone_sets: Sequence[set[str]], needs_body: set[str]) -> bool:
    """Whether a unit of ``group_jobs`` is solved as a body: several chains, or one holding a
    bone in ``needs_body`` (pinned or stretchy)."""
    return len(unit) > 1 or bool(bone_sets[unit[0]] & needs_body)


def stretchy_bones(armature, bone_names) -> set[str]:
    """Those of ``bone_names`` whose Quat IK limits allow Stretch."""
    pose_bones = armature.pose.bones
    return {name for name in bone_names if pose_bones[name].quat_ik.use_stretch}


def _body_of(jobs, stretch: dict, attach: dict) -> Body:
    key = (
        tuple(job.rig.chain for job in jobs),
        tuple(sorted(stretch.items(), key=lambda s: s[0])),
        tuple(attach.items()),
    )

    def make() -> Body:
        try:
            return Body.from_chains(_agreeing_limits([job.rig.chain for job in jobs]), stretch=stretch, attach=attach)
        except ValueError as error:
            raise ChainError(f"these chains cannot be solved as one body: {error}") from None

    return _bodies.get(key, make)


def _agreeing_limits(chains: list) -> list:
    """The chains with each shared bone's limit as the first chain that holds it has it: a bone's
    limit is the bone's, but its clamp mode is its chain's (Clamp Mode), which may differ."""
    seen: dict[str, object] = {}
    agreeing = []
    for chain in chains:
        limits = tuple(seen.setdefault(name, limit) for name, limit in zip(chain.bone_names, chain.limits, strict=True))
        differs = any(a is not b for a, b in zip(limits, chain.limits, strict=True))
        agreeing.append(replace(chain, limits=limits) if differs else chain)
    return agreeing


def forget_bodies() -> None:
    """Drop the bodies and shapes made so far (a file loaded, undo: the rigs they were made for
    hold objects that may be gone)."""
    _bodies.clear()
    _shapes.clear()


def _stretch_of(armature, bone_names) -> dict:
    stretch = {}
    pose_bones = armature.pose.bones
    for name in bone_names:
        entry = conversion.bone_stretch(name, pose_bones[name].quat_ik)
        if entry is not None:
            stretch[name] = entry
    return stretch


def _check_stretch_children(armature, stretchy: Sequence[str], bones: set[str]) -> None:
    """A stretchy bone's children in the body must not inherit its scale: a Y scale would skew
    them, and the solver (which lengthens the bone only) would no longer know where they point.
    (Children outside the body, fingers below a hand, take the scale as Blender's IK gives it.)"""
    for name in stretchy:
        for child in armature.data.bones[name].children:
            if child.name in bones and child.inherit_scale not in ("NONE", "NONE_LEGACY"):
                raise ChainError(
                    f"bone '{child.name}' inherits the scale of stretchy bone '{name}': set its Inherit Scale to "
                    "None, or turn Stretch off on the parent"
                )


def body_root(jobs, bones: set[str]) -> tuple[object, str | None]:
    """The job whose root frame is the body's, and the bone that frame belongs to; ChainError
    when the chains that begin the body hang from different bones."""
    roots = [job for job in jobs if job.rig.root_parent not in bones]
    parents = sorted({str(job.rig.root_parent) for job in roots})
    if len(parents) > 1:
        names = ", ".join(f"'{job.rig.chain_name}'" for job in roots)
        raise ChainError(
            f"chains {names} share bones but hang from different bones ({', '.join(parents)}): "
            "a body needs one root; extend a chain up to the bone they share, or turn off Solve Shared Bones Together"
        )
    return roots[0], roots[0].rig.root_parent


# A target that moves with a bone of its own body (a hand on a prop the other hand holds) is
# followed: the body is solved again, warm, with the targets where the last answer put them,
# until they move less than the tolerance, at most this many times more.
SELF_HELD_ROUNDS = 4


@dataclass(frozen=True)
class _BodyShape:
    """What a body's solve takes from its chains' rigs alone (``_shape_of``)."""

    body: Body
    base: int  # the job whose root frame is the body's
    parent_bone: str | None  # the bone that frame belongs to
    stretchy: frozenset[str]
    rows: tuple[np.ndarray, ...]  # per job: its bones' places in the body
    tips: tuple[int, ...]  # per job: its tip's place
    effector_points: np.ndarray  # (jobs, 3) per job: its effector in its tip's frame


@dataclass(frozen=True)
class _BodyFrame:
    """The body and its root frame over the F frames (root frame -> armature and -> world)."""

    shape: _BodyShape
    base: ChainJob  # the job whose root frame is the body's
    parent: np.ndarray  # (F, 4, 4) root frame -> armature space, after the chains solved before
    root_world: np.ndarray  # (F, 4, 4)
    to_root: np.ndarray  # (F, 4, 4) world -> root frame

    @property
    def body(self) -> Body:
        return self.shape.body

    @property
    def stretchy(self) -> frozenset[str]:
        return self.shape.stretchy


def solve_body_jobs(
    jobs: Sequence[ChainJob], pins: Sequence[PinInput], corrections, *, record: bool = False
) -> list[ChainSolution]:
    """Solve the jobs (one body's chains, list order, the same F frames) as one body:
    a ``ChainSolution`` per job in order, each carrying every pin's outcome. ``corrections``:
    how chains solved before moved the bones this body's inputs hang from (``chain_jobs``);
    with ``record``, how this body moved its bones is added to it for chains solved after.
    ChainError when the body cannot be solved as given."""
    frame = _body_frame(jobs, corrections)
    body = frame.body
    body_pins, pin_rows = _pins(frame, pins, jobs[0].frames)
    held_inside = any(
        anchor in body.bone_names
        for job in jobs
        for anchor in (job.rig.target_anchor, job.rig.orientation_anchor)
        if anchor is not None
    )
    settings = jobs[0].options.settings  # the body's first chain's, as the command line's flags
    learned = jobs[0].body_learned_starts
    if learned is not None and not learned.fits(body):
        stale = "the body's learned start poses are stale (its chains, rig or limits changed): learn them again"
        jobs = [replace(jobs[0], rig=replace(jobs[0].rig, warnings=(*jobs[0].rig.warnings, stale))), *jobs[1:]]
        learned = None
    options = _body_options(settings, jobs[0].warm_start, learned)
    start, positions = _start(body, jobs), None
    for _round in range(1 + (SELF_HELD_ROUNDS if held_inside else 0)):
        goals = _goals(frame, jobs, corrections)
        if not goals and not body_pins:
            raise ChainError("every chain of the body has Influence 0 and no pin holds")
        request = BodyRequest(
            goals=goals,
            pins=body_pins,
            start=start,
            shot=bool(jobs[0].sequence),
            poles=_poles(frame, jobs, corrections),
        )
        result = cache.solve_body(body, request, options)
        if record or held_inside:
            _record(frame, jobs, corrections, result)
        now = np.concatenate([goal.position for goal in goals], axis=-1) if goals else None
        if not held_inside or (positions is not None and np.max(np.abs(now - positions)) <= result.tolerance):
            break
        start, positions = result.rotations, now
    solutions = _solutions(frame, jobs, result)
    outcomes = [_pin_outcome(pin, active, result, k) for k, (pin, active) in enumerate(pin_rows)]
    return [replace(solution, pin_outcomes=tuple(outcomes)) for solution in solutions]


def learn_starts(jobs: Sequence[ChainJob], corrections) -> BodyLearnedStarts:
    """Learned start poses for the body the jobs make (``solver.body.learned_starts``): every
    chain's effector, under the first chain's settings as the body solves with them."""
    frame = _body_frame(jobs, corrections)
    effectors = [Effector.of_chain(job.rig.chain) for job in jobs]
    return learn_body_starts(frame.body, effectors, settings=body_settings_from(jobs[0].options.settings))


@functools.lru_cache(maxsize=64)  # Live asks on every update; building the settings checks every field
def _body_options(settings, warm: bool, learned: BodyLearnedStarts | None) -> BodyOptions:
    """The body's options from its first chain's solve settings (``body_settings_from``)."""
    return BodyOptions(
        settings=body_settings_from(settings, warm=warm), time_limit=settings.time_limit, learned_starts=learned
    )


def _body_frame(jobs: Sequence[ChainJob], corrections) -> _BodyFrame:
    shape = _shape_of(jobs)
    base = jobs[shape.base]
    parent = corrections.apply(shape.parent_bone, base.inputs.root_parent_armature)
    root_world = base.inputs.object_world @ parent
    return _BodyFrame(
        shape=shape,
        base=base,
        parent=parent,
        root_world=root_world,
        to_root=invert(root_world, "root frame of the body"),
    )


_shapes: BoundedMemo[_BodyShape] = BoundedMemo(64)


def _shape_of(jobs: Sequence[ChainJob]) -> _BodyShape:
    """The body of the jobs' chains and where each chain lies in it, made once for the same rigs
    (Live solves the same body on every update). A rig is read anew whenever anything it is built
    from changes, a bone's Stretch settings included (``rig.reader``: each of them changes the
    armature's settings generation), so the same rigs make the same shape."""
    return _shapes.get(tuple(job.rig for job in jobs), lambda: _shape_now(jobs))


def _shape_now(jobs: Sequence[ChainJob]) -> _BodyShape:
    armature = jobs[0].rig.armature
    bones = set().union(*(job.rig.bone_names for job in jobs))
    base, parent_bone = body_root(jobs, bones)
    attach = {job.rig.bone_names[0]: job.rig.root_parent for job in jobs if job.rig.root_parent in bones}
    stretch = _stretch_of(armature, sorted(bones))
    _check_stretch_children(armature, sorted(stretch), bones)
    body = _body_of(jobs, stretch, attach)
    return _BodyShape(
        body=body,
        base=next(k for k, job in enumerate(jobs) if job is base),
        parent_bone=parent_bone,
        stretchy=frozenset(stretch),
        rows=tuple(np.array([body.index(name) for name in job.rig.bone_names]) for job in jobs),
        tips=tuple(body.index(job.rig.bone_names[-1]) for job in jobs),
        # Every chain's effector: its tip's tail plus its effector offset.
        effector_points=np.array(
            [np.array([0.0, job.rig.chain.lengths[-1], 0.0]) + job.rig.chain.effector_offset for job in jobs]
        ),
    )


def _active_goal(job: ChainJob) -> bool:
    influence = job.inputs.influence
    return influence is None or bool(np.any(influence > 0.0))


_effectors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Chain -> its Effector


def _effector_of(chain) -> Effector:
    """The chain's ``Effector``, made once per chain (chains are immutable; each Live update
    makes its goals anew)."""
    effector = _effectors.get(chain)
    if effector is None:
        effector = _effectors[chain] = Effector.of_chain(chain)
    return effector


def _goals(frame: _BodyFrame, jobs: Sequence[ChainJob], corrections) -> list[Goal]:
    """Each chain's goal (those with some Influence), its targets moved as the chains solved
    before (and, for a target held by this body, as the body's last answer) moved them."""
    goals = []
    for job in jobs:
        rig, inputs = job.rig, job.inputs
        target_world = corrections.moved(rig.target_anchor, inputs.object_world, inputs.target_world)
        orientation_world = corrections.moved(rig.orientation_anchor, inputs.object_world, inputs.orientation_world)
        check_finite(rig, target_world, orientation_world, None, None)  # (the root frame: by ``invert``)
        if not _active_goal(job):
            continue
        orientations = None
        if orientation_world is not None:
            orientations = rotations_of(frame.to_root[:, :3, :3] @ orientation_world[:, :3, :3])
        goals.append(
            Goal(
                _effector_of(rig.chain),
                position=np.einsum("fij,fj->fi", frame.to_root, target_world[:, :, 3])[:, :3],
                orientation=orientations,
                position_weight=float(job.weight),
                orientation_weight=float(job.weight) * job.options.orientation_weight / ORIENTATION_WEIGHT,
                level=int(job.priority),
            )
        )
    return goals


def _chain_pole(job: ChainJob, jobs: Sequence[ChainJob], position=(0.0, 0.0, 0.0), angle=0.0) -> BodyPole | None:
    """The job's pole in its body, at ``position`` (root frame); None when it has nothing to turn."""
    others = [other.rig.bone_names for other in jobs if other is not job]
    return chain_pole(job.rig.bone_names, others, position, angle, job.options.pole_facing)


def _poles(frame: _BodyFrame, jobs: Sequence[ChainJob], corrections) -> list[BodyPole]:
    """Each chain's pole target (root frame; off where the chain has no Influence), turning the
    chain below the bones it shares (``solver.body.poles.chain_pole``)."""
    poles = []
    for job in jobs:
        rig, inputs = job.rig, job.inputs
        if inputs.pole_world is None:
            continue
        pole_world = corrections.moved(rig.pole_anchor, inputs.object_world, inputs.pole_world)
        check_finite(rig, None, None, pole_world, None)
        positions = np.einsum("fij,fj->fi", frame.to_root, pole_world[:, :, 3])[:, :3]
        if inputs.influence is not None:
            positions[inputs.influence <= 0.0] = np.nan
        pole = _chain_pole(job, jobs, positions, inputs.pole_angle)
        if pole is not None:
            poles.append(pole)
    return poles


def _pins(frame: _BodyFrame, pins: Sequence[PinInput], frames) -> tuple[list[Pin], list]:
    """The pins on the body's bones active on some of its frames, NaN on the others, in the
    body's root frame; and (pin, active frames) for each."""
    count = len(frame.to_root)
    to_root_from_armature = None
    body_pins, pin_rows = [], []
    for pin in pins:
        if pin.bone not in frame.body.bone_names:
            continue
        active = pin.active(np.asarray(frames, dtype=float)) if frames is not None else np.zeros(count, bool)
        if not active.any():
            continue
        if to_root_from_armature is None:
            to_root_from_armature = invert(frame.parent, "root frame of the body")
        position = rotation = None
        if pin.location is not None:
            position = np.einsum("fij,j->fi", to_root_from_armature, np.append(pin.location, 1.0))[:, :3]
            position[~active] = np.nan
        if pin.rotation is not None:
            held = quat.to_matrix(quat.normalize(pin.rotation))
            rotation = np.where(active[:, None], rotations_of(to_root_from_armature[:, :3, :3] @ held), np.nan)
        body_pins.append(Pin(pin.bone, position=position, rotation=rotation))
        pin_rows.append((pin, active))
    return body_pins, pin_rows


def _record(frame: _BodyFrame, jobs: Sequence[ChainJob], corrections, result) -> None:
    """How the body moved its bones, into ``corrections`` as ``chain_jobs`` records a chain:
    C_b = P_new @ A_new @ A_old⁻¹ @ P_old⁻¹ per bone, with A the bone's frame in the body's root
    frame (a stretch moves children's heads; these frames are rigid, so it reaches them only
    through those heads)."""
    body = frame.body
    count = len(result.rotations)
    old = body.forward_kinematics(_gathered(body, jobs, [job.inputs.rotations for job in jobs], count))
    new = body.forward_kinematics(result.rotations, result.stretch)
    moved = rigid_frames(new.rotations, new.heads) @ rigid_inverse(rigid_frames(old.rotations, old.heads))
    parent_old_inverse = invert(frame.base.inputs.root_parent_armature, "root frame of the body")
    for i, name in enumerate(body.bone_names):
        corrections.by_bone[name] = frame.parent @ moved[:, i] @ parent_old_inverse


def _solutions(frame: _BodyFrame, jobs: Sequence[ChainJob], result) -> list[ChainSolution]:
    """One ``ChainSolution`` per job from the body's result: its bones' rotations (blended by
    its Influence), its goal's errors, and the Y scales of its stretchy bones."""
    shape = frame.shape
    count = len(result.rotations)
    effectors = shape.body.points_at(result.rotations, result.stretch, shape.tips, shape.effector_points)
    solutions, goal_index = [], 0
    names = tuple(job.rig.chain_name for job in jobs)
    # A bone blends by the largest Influence of the chains holding it: a shared spine written by
    # every chain of the body takes one pose, the one its fullest chain asks for.
    shares = [
        np.ones(count) if job.inputs.influence is None else np.clip(job.inputs.influence, 0.0, 1.0) for job in jobs
    ]
    influences: dict[str, np.ndarray] = {}
    if any(np.any(share < 1.0) for share in shares):  # (else every bone takes the whole answer)
        for job, share in zip(jobs, shares, strict=True):
            for name in job.rig.bone_names:
                influences[name] = np.maximum(influences.get(name, share), share)
    for k, job in enumerate(jobs):
        rig, inputs, rows = job.rig, job.inputs, shape.rows[k]
        position_error = orientation_error = np.zeros(count)
        if _active_goal(job):
            position_error = result.position_error[:, goal_index]
            orientation_error = result.orientation_error[:, goal_index]
            goal_index += 1
        outcome = SolveResult(
            rotations=result.rotations[:, rows],
            effector=effectors[:, k],
            position_error=position_error,
            orientation_error=orientation_error,
            iterations=result.iterations,
            restarts=result.restarts,
            converged=(position_error <= result.tolerance) & (orientation_error <= result.angle_tolerance),
            tolerance=result.tolerance,
        )
        influence = np.stack([influences[name] for name in rig.bone_names], axis=1) if influences else None  # (F, n)
        if influence is not None and np.any(influence < 1.0):
            own = inputs.rotations if job.own_rotations is None else job.own_rotations
            outcome = replace(outcome, rotations=blend(own, outcome.rotations, influence))
        stretch = result.stretch[:, rows] if frame.stretchy.intersection(rig.bone_names) else None
        if rig.pole_object is not None and _chain_pole(job, jobs) is None:
            warning = (
                "its pole target is not used: in its body, it has no bones of its own below the shared ones to turn"
            )
            rig = replace(rig, warnings=(*rig.warnings, warning))
        solutions.append(ChainSolution(rig, outcome, frame.root_world, stretch=stretch, body=names))
    return solutions


def _pin_outcome(pin: PinInput, active: np.ndarray, result, k: int) -> PinOutcome:
    error = float(np.max(result.pin_position_error[active, k], initial=0.0))
    turn = float(np.max(result.pin_rotation_error[active, k], initial=0.0))
    return PinOutcome(pin.index, error <= result.tolerance and turn <= result.angle_tolerance, error, turn)


def _gathered(body: Body, jobs: Sequence[ChainJob], arrays, count: int | None) -> np.ndarray:
    """(count, B, 4) (or (B, 4) with ``count`` None) body rotations from each job's (…, n, 4)
    rotations of its own bones; bones no job gives are at rest."""
    shape = (body.n_bones,) if count is None else (count, body.n_bones)
    gathered = np.tile((1.0, 0.0, 0.0, 0.0), (*shape, 1))
    for job, rotations in zip(jobs, arrays, strict=True):
        gathered[..., [body.index(name) for name in job.rig.bone_names], :] = rotations
    return gathered


def _start(body: Body, jobs: Sequence[ChainJob]) -> np.ndarray | None:
    """Where the body's solve starts: the pose read (warm: Live) on every row, else the pose a
    bake starts its shot from where every chain has one, else rest (None)."""
    first = jobs[0]
    if first.warm_start:
        return _gathered(body, jobs, [job.inputs.rotations for job in jobs], len(first.inputs.rotations))
    if all(job.start_pose is not None for job in jobs):
        return _gathered(body, jobs, [job.start_pose for job in jobs], None)
    return None


def merged_pin_outcomes(outcomes) -> dict[int, PinOutcome]:
    """Pin index → its worst outcome among ``outcomes`` (the chains of a body repeat them; a
    bake's blocks add theirs)."""
    merged: dict[int, PinOutcome] = {}
    for outcome in outcomes:
        before = merged.get(outcome.index)
        if before is None:
            merged[outcome.index] = outcome
            continue
        merged[outcome.index] = PinOutcome(
            outcome.index,
            before.held and outcome.held,
            max(before.error, outcome.error),
            max(before.rotation_error, outcome.rotation_error),
        )
    return merged
