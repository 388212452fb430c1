"""Solve an armature's chains over F frames: priority order, root frames, dependent chains.

Live solving (F = 1), Solve Now (F = 1) and baking (F frames) all come through
:func:`solve_chains`, so they agree.

Chains are solved in list order (the panel's priority). A later chain may hang below an
earlier one (an arm on a spine chain) or aim at a bone that does: its inputs were read
before the earlier chain moved, so they are corrected by how the earlier chain's bones
moved. For a bone D below a solved bone B (both in armature space), with the root frame P
before/after the earlier chains, and A = the bone's frame in the root frame by forward
kinematics of the old and new rotations::

    D_new = C_B @ D_old,   C_B = P_new @ A_new @ A_old⁻¹ @ P_old⁻¹

exact for ordinary parenting (constraints between B and D are not re-run).
No ``bpy`` here: the rig data comes from ``rig_reader``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace

import numpy as np

from ..solver import interrupt
from ..solver import quaternion as quat
from ..solver.pose_curves import blend
from . import solve_adapter, solve_cache
from .chain_order import ORDER_HINT
from .errors import ChainError
from .rig_reader import ChainRig, FrameInputs, chain_bone_names, with_ancestors


@dataclass(frozen=True)
class StackedInputs:
    """A chain's FrameInputs for F frames, stacked along a first axis."""

    object_world: np.ndarray  # (F, 4, 4)
    root_parent_armature: np.ndarray  # (F, 4, 4)
    target_world: np.ndarray  # (F, 4, 4)
    rotations: np.ndarray  # (F, n, 4)
    orientation_world: np.ndarray | None  # (F, 4, 4)
    pole_world: np.ndarray | None = None  # (F, 4, 4)
    influence: np.ndarray | None = None  # (F,)
    pole_angle: np.ndarray | None = None  # (F,) radians

    @classmethod
    def stack(cls, frames: list[FrameInputs]) -> StackedInputs:
        first = frames[0]
        return cls(
            object_world=np.stack([f.object_world for f in frames]),
            root_parent_armature=np.stack([f.root_parent_armature for f in frames]),
            target_world=np.stack([f.target_world for f in frames]),
            rotations=np.stack([f.rotations for f in frames]),
            orientation_world=None
            if first.orientation_world is None
            else np.stack([f.orientation_world for f in frames]),
            pole_world=None if first.pole_world is None else np.stack([f.pole_world for f in frames]),
            influence=np.array([f.influence for f in frames]),
            pole_angle=np.array([f.pole_angle for f in frames]),
        )


@dataclass(frozen=True)
class ChainJob:
    rig: ChainRig
    options: solve_adapter.SolverOptions
    inputs: StackedInputs
    warm_start: bool = False  # start from the current pose (live) rather than a fixed one
    sequence: bool = False  # frames follow each other (bake): keep the pose continuous
    # The bones' own pose the chain's Influence (``inputs.influence``) blends the solved pose
    # with: by default the rotations read (a bake's keys); Live and Per Frame remember it.
    own_rotations: np.ndarray | None = None  # (F, n, 4)
    # (n, 4) where a shot starts when not warm: a bake joining keys before its range starts there.
    start_pose: np.ndarray | None = None


@dataclass(frozen=True)
class ChainSolution:
    """One chain's result; ``error`` (and no outcome) when it could not be solved."""

    rig: ChainRig
    outcome: solve_adapter.SolveOutcome | None
    root_world: np.ndarray | None = None  # (F, 4, 4) root frame -> world, as solved
    target_root: np.ndarray | None = None  # (F, 3) target in the root frame
    error: str | None = None


def _frames(rotations: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """(F, n, 4, 4) rigid matrices from posed rotations and heads."""
    m = np.zeros((*rotations.shape[:-1], 4, 4))
    m[..., :3, :3] = quat.to_matrix(rotations)
    m[..., :3, 3] = heads
    m[..., 3, 3] = 1.0
    return m


def nearest_rotations(m: np.ndarray) -> np.ndarray:
    """Nearest rotations (F, 3, 3) to (F, 3, 3) matrices (polar decomposition; mirrors flipped)."""
    u, _s, vt = np.linalg.svd(m)
    r = u @ vt
    flip = np.linalg.det(r) < 0.0
    if np.any(flip):
        u[flip, :, -1] *= -1.0
        r = u @ vt
    return r


def _invert(m: np.ndarray, what: str) -> np.ndarray:
    if not np.all(np.isfinite(m)):
        raise ChainError(f"The {what} contains NaN or infinity")
    if len(m) > 1 and np.all(m == m[:1]):  # a still frame (the usual root): invert it once
        return np.broadcast_to(_invert(m[:1], what), m.shape)
    det = np.linalg.det(m[..., :3, :3])
    if np.any(np.abs(det) < 1e-18):
        raise ChainError(f"The {what} has zero scale, so the chain cannot be solved in it")
    return np.linalg.inv(m)


class _Corrections:
    """How solved bones moved (armature space), for bones hanging below them."""

    def __init__(self, armature) -> None:
        self.bones = armature.data.bones
        self.by_bone: dict[str, np.ndarray] = {}

    def of(self, bone_name: str | None) -> np.ndarray | None:
        """(F, 4, 4) how the bone moved (armature space), by the nearest solved bone at or
        above it; None when none of them was solved."""
        bone = self.bones.get(bone_name) if bone_name is not None else None
        while bone is not None:
            correction = self.by_bone.get(bone.name)
            if correction is not None:
                return correction
            bone = bone.parent
        return None

    def apply(self, bone_name: str | None, matrices: np.ndarray) -> np.ndarray:
        correction = self.of(bone_name)
        return matrices if correction is None else correction @ matrices

    def moved(self, anchor: str | None, object_world: np.ndarray, world: np.ndarray | None) -> np.ndarray | None:
        """World matrices (F, 4, 4) of something that moves with bone ``anchor``, moved as
        that bone was (unchanged when it was not)."""
        correction = self.of(anchor)
        if world is None or correction is None:
            return world
        return object_world @ correction @ np.linalg.inv(object_world) @ world


def solve_chains(jobs: list[ChainJob]) -> list[ChainSolution]:
    """Solve the jobs (one armature's chains, priority order, same F frames) in turn.

    A chain that fails (bad input, or the solver refused it) gets a solution with ``error``
    set; the others are still solved.
    """
    solutions: list[ChainSolution] = []
    for _ in solve_chains_stepwise(jobs, solutions):
        pass
    return solutions


def solve_inline(solve: Callable[[], solve_adapter.SolveOutcome]) -> Generator[None, None, solve_adapter.SolveOutcome]:
    """Run a chain's solve here and now (``solve_chains_stepwise``'s default way)."""
    yield from ()
    return solve()


class SolvingInThread:
    """``solve_chains_stepwise``'s other way: each chain's solve (numpy only, no ``bpy``) runs in
    a worker thread while the generator yields None, so a modal bake hands Blender its window
    back while a long chain solves, shows how far the solve got (``fraction``, from the
    solver's checkpoints) and, when closed (Esc), stops the solve at its next checkpoint
    (``solver.interrupt``) and waits for the thread before it returns."""

    def __init__(self) -> None:
        self.fraction = 0.0  # of the chain being solved

    def _progress(self, fraction: float) -> None:
        self.fraction = max(self.fraction, fraction)  # (a loop's shot is solved twice over)

    def __call__(
        self, solve: Callable[[], solve_adapter.SolveOutcome]
    ) -> Generator[None, None, solve_adapter.SolveOutcome]:
        stop, ended = threading.Event(), {}

        def work() -> None:
            try:
                with interrupt.stoppable(stop, self._progress):
                    ended["outcome"] = solve()
            except BaseException as error:  # handed to the main thread, which raises it there
                ended["error"] = error

        self.fraction = 0.0
        worker = threading.Thread(target=work, name="Quat IK solve", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                yield None
        finally:
            if worker.is_alive():  # closed early: stop the solve, and leave no thread behind
                stop.set()
                worker.join()
        if "error" in ended:
            raise ended["error"]
        return ended["outcome"]


def solve_chains_stepwise(
    jobs: list[ChainJob], solutions: list[ChainSolution], solving=solve_inline
) -> Iterator[ChainSolution | None]:
    """``solve_chains`` one chain at a time: appends each chain's solution to ``solutions``
    and yields it, so a modal bake can show progress and take Esc between chains. With
    ``solving`` a ``SolvingInThread``, it also yields None while a chain's solve runs."""
    if not jobs:
        return
    corrections = _Corrections(jobs[0].rig.armature)
    moved_by = [_moved_by(job.rig) for job in jobs]
    jobs = _with_order_warnings(jobs, moved_by)
    for k, job in enumerate(jobs):
        # How this chain moved its bones is worked out only for a later chain they move.
        bones = set(job.rig.bone_names)
        later_depends = any(bones.intersection(later) for later in moved_by[k + 1 :])
        try:
            solution = yield from _solve_one(job, corrections, record=later_depends, solving=solving)
        except (ChainError, ValueError) as error:
            solution = ChainSolution(job.rig, None, error=f"Chain '{job.rig.chain_name}': {error}")
        solutions.append(solution)
        yield solution


def _listed_chains(armature) -> list[tuple[str, bool, tuple[str, ...]]]:
    """(name, enabled, bone names) of the armature's chains in list order (no bones for a
    chain that cannot be read)."""
    listed = []
    for chain in armature.quat_ik.chains:
        try:
            bones = chain_bone_names(armature, chain.tip_bone, chain.chain_length)
        except ChainError:
            bones = ()
        listed.append((chain.name, chain.enabled, bones))
    return listed


def _moved_by(rig: ChainRig) -> set[str]:
    """Bones whose pose moves the chain's inputs: its root's parent and the bones its target,
    orientation target and pole move with, and their ancestors."""
    return with_ancestors(rig.armature, (rig.root_parent, rig.target_anchor, rig.orientation_anchor, rig.pole_anchor))


def _with_order_warnings(jobs: list[ChainJob], moved_by: list[set[str]]) -> list[ChainJob]:
    """Chains solved one after another cannot see what a later chain does to them: a chain
    whose inputs move with a later one is solved from that chain's pose before it moves, and
    a bone two chains share is turned last by the later one. Say so on the chain (the panel
    shows it), naming the later chain."""
    listed = _listed_chains(jobs[0].rig.armature)  # read once: this runs on every Live update
    names = [name for name, _enabled, _bones in listed]
    warned = []
    for job, inputs_move_with in zip(jobs, moved_by, strict=True):
        rig = job.rig
        later = listed[names.index(rig.chain_name) + 1 :] if rig.chain_name in names else []
        warnings = []
        for name, enabled, bones in later:
            if not enabled:
                continue
            shared = sorted(set(rig.bone_names).intersection(bones))
            if shared:
                quoted = ", ".join(f"'{bone}'" for bone in shared)
                warnings.append(f"shares {quoted} with '{name}', solved after it, which turns them last")
            elif inputs_move_with.intersection(bones):
                warnings.append(f"its inputs move with '{name}', solved after it: {ORDER_HINT} '{name}' in the list")
        if warnings:
            job = replace(job, rig=replace(rig, warnings=(*rig.warnings, *warnings)))
        warned.append(job)
    return warned


def _check_finite(rig, target_world, orientation_world, pole_world, root_world) -> None:
    """ChainError naming the input whose (F, 4, 4) world transforms hold NaN or infinity."""
    inputs = (
        ("target", rig.target_object, rig.target_bone, target_world),
        ("orientation target", rig.orientation_object, rig.orientation_bone, orientation_world),
        ("pole target", rig.pole_object, rig.pole_bone, pole_world),
        ("armature", rig.armature, rig.root_parent, root_world),
    )
    for what, ob, bone, world in inputs:
        if world is None:
            continue
        bad = ~np.all(np.isfinite(world.reshape(len(world), -1)), axis=1)
        if bad.any():
            name = getattr(ob, "name", "?") + (f" > {bone}" if bone else "")
            frames = f" at {np.count_nonzero(bad)} of the {len(bad)} frames" if len(bad) > 1 else ""
            raise ChainError(f"the {what} '{name}' has a location or rotation that is not a number{frames}")


def _solve_one(
    job: ChainJob, corrections: _Corrections, *, record: bool, solving
) -> Generator[None, None, ChainSolution]:
    rig, inputs = job.rig, job.inputs
    parent_old = inputs.root_parent_armature
    parent = corrections.apply(rig.root_parent, parent_old)
    root_world = inputs.object_world @ parent
    # Targets that move with the chains solved before (an arm's target on a prop in the other
    # hand) are moved as those chains moved them.
    target_world = corrections.moved(rig.target_anchor, inputs.object_world, inputs.target_world)
    orientation_world = corrections.moved(rig.orientation_anchor, inputs.object_world, inputs.orientation_world)
    pole_world = corrections.moved(rig.pole_anchor, inputs.object_world, inputs.pole_world)
    _check_finite(rig, target_world, orientation_world, pole_world, root_world)
    to_root = _invert(root_world, f"root frame of chain '{rig.chain_name}'")
    target_root = np.einsum("fij,fj->fi", to_root, target_world[:, :, 3])[:, :3]
    orientations = None
    if orientation_world is not None:
        wanted = to_root[:, :3, :3] @ orientation_world[:, :3, :3]
        orientations = quat.from_matrix(nearest_rotations(wanted))
    poles = None
    if pole_world is not None:
        poles = np.einsum("fij,fj->fi", to_root, pole_world[:, :, 3])[:, :3]
    request = solve_adapter.SolveRequest(
        positions=target_root,
        orientations=orientations,
        poles=poles,
        pole_angles=inputs.pole_angle if poles is not None else None,
        start=inputs.rotations if job.warm_start else job.start_pose,
        sequence=job.sequence,
    )
    outcome = yield from solving(lambda: solve_cache.solve(rig.chain, request, job.options))
    if inputs.influence is not None and np.any(inputs.influence < 1.0):
        # Blended before a later chain's corrections are taken: those see the pose written.
        own = inputs.rotations if job.own_rotations is None else job.own_rotations
        outcome = replace(outcome, rotations=blend(own, outcome.rotations, np.clip(inputs.influence, 0.0, 1.0)))
    if record:  # a later chain may hang below this one
        old = rig.chain.forward_kinematics(inputs.rotations)
        new = rig.chain.forward_kinematics(outcome.rotations)
        moved = _frames(new.rotations, new.heads) @ np.linalg.inv(_frames(old.rotations, old.heads))
        parent_old_inverse = np.linalg.inv(parent_old)
        for i, name in enumerate(rig.bone_names):
            corrections.by_bone[name] = parent @ moved[:, i] @ parent_old_inverse
    return ChainSolution(rig, outcome, root_world, target_root)
