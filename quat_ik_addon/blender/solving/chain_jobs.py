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
No ``bpy`` here: the rig data comes from ``rig.reader``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, replace

import numpy as np

from ...solver import interrupt
from ...solver import quaternion as quat
from ...solver.request import SolveOptions, SolveRequest
from ...solver.settings import SolveResult
from ...solver.shots.pose_curves import blend
from ..chains.order import ORDER_HINT
from ..errors import ChainError
from ..rig.reader import ChainRig, FrameInputs, chain_bone_names, with_ancestors
from . import cache


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
        if len(frames) == 1:  # (Live and Per Frame: views, no copies)
            return cls(
                object_world=first.object_world[None],
                root_parent_armature=first.root_parent_armature[None],
                target_world=first.target_world[None],
                rotations=first.rotations[None],
                orientation_world=None if first.orientation_world is None else first.orientation_world[None],
                pole_world=None if first.pole_world is None else first.pole_world[None],
                influence=np.array([first.influence]),
                pole_angle=np.array([first.pole_angle]),
            )
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
    options: SolveOptions
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
    outcome: SolveResult | None
    root_world: np.ndarray | None = None  # (F, 4, 4) root frame -> world, as solved
    target_root: np.ndarray | None = None  # (F, 3) target in the root frame
    error: str | None = None
    seconds: float = 0.0  # the solve's own time (of the solver, without reading and correcting)


def _frames(rotations: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """(F, n, 4, 4) rigid matrices from posed rotations and heads."""
    m = np.zeros((*rotations.shape[:-1], 4, 4))
    m[..., :3, :3] = quat.to_matrix(rotations)
    m[..., :3, 3] = heads
    m[..., 3, 3] = 1.0
    return m


def _rigid_inverse(m: np.ndarray) -> np.ndarray:
    """Inverses of (..., 4, 4) rigid matrices (rotation and translation): transposed rotations."""
    inverse = np.zeros(m.shape)
    rotation = np.swapaxes(m[..., :3, :3], -1, -2)
    inverse[..., :3, :3] = rotation
    inverse[..., :3, 3] = -(rotation @ m[..., :3, 3:])[..., 0]
    inverse[..., 3, 3] = 1.0
    return inverse


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
    """Inverses of (F, 4, 4) affine matrices; ChainError naming ``what`` where one holds NaN
    or infinity or has zero scale."""
    if not np.isfinite(m).all():
        raise ChainError(f"The {what} contains NaN or infinity")
    if len(m) > 1 and np.all(m == m[:1]):  # a still frame (the usual root): invert it once
        return np.broadcast_to(_invert(m[:1], what), m.shape)
    inverse = affine_inverse(m)
    if inverse is None:
        raise ChainError(f"The {what} has zero scale, so the chain cannot be solved in it")
    return inverse


# The adjugate of a 3×3 matrix flattened row by row (a b c / d e f / g h i): its entry k is
# m[P[k]] m[Q[k]] - m[R[k]] m[S[k]] (Cramer's rule), e.g. ei - fh first.
_P, _Q, _R, _S = (
    np.array(indices)
    for indices in zip(
        (4, 8, 5, 7), (2, 7, 1, 8), (1, 5, 2, 4),
        (5, 6, 3, 8), (0, 8, 2, 6), (2, 3, 0, 5),
        (3, 7, 4, 6), (1, 6, 0, 7), (0, 4, 1, 3),
        strict=True,
    )
)  # fmt: skip
SINGULAR = 1e-18  # |det| of the 3×3 part below this: zero scale


def affine_inverse(m: np.ndarray) -> np.ndarray | None:
    """Inverses of (F, 4, 4) affine matrices (last row 0 0 0 1), or None when one has zero
    scale (|det| of its 3×3 part below ``SINGULAR``).

    Cramer's rule in plain arithmetic, not ``np.linalg.inv``: LAPACK through OpenBLAS took
    up to 2 ms of CPU for one 4×4 inside a depsgraph handler on a busy 2-core machine (its
    threads spin waiting for each other), more than the rest of a Live update. One matrix
    (Live, Per Frame) is inverted in Python floats, faster than any numpy call at that size;
    the operations are the same, in the same order, so a bake's frames invert bit for bit
    as a single frame does. Matrices that are not affine go to ``np.linalg.inv``.
    """
    m = np.asarray(m, dtype=float)
    if len(m) == 1:
        rows = m[0].tolist()
        if rows[3] == [0.0, 0.0, 0.0, 1.0]:
            return _affine_inverse_one(rows)
    if not (np.all(m[:, 3, :3] == 0.0) and np.all(m[:, 3, 3] == 1.0)):
        if np.any(np.abs(np.linalg.det(m[:, :3, :3])) < SINGULAR):
            return None
        return np.linalg.inv(m)
    a = m[:, :3, :3].reshape(-1, 9)
    adjugate = a[:, _P] * a[:, _Q] - a[:, _R] * a[:, _S]
    det = a[:, 0] * adjugate[:, 0] + a[:, 1] * adjugate[:, 3] + a[:, 2] * adjugate[:, 6]
    if np.any(np.abs(det) < SINGULAR):
        return None
    inverse = np.zeros(m.shape)
    rotation = inverse[:, :3, :3]
    rotation[...] = (adjugate / det[:, None]).reshape(-1, 3, 3)
    t = m[:, :3, 3]
    for row in range(3):
        r = rotation[:, row]
        inverse[:, row, 3] = -(r[:, 0] * t[:, 0] + r[:, 1] * t[:, 1] + r[:, 2] * t[:, 2])
    inverse[:, 3, 3] = 1.0
    return inverse


def _affine_inverse_one(m: list) -> np.ndarray | None:
    """``affine_inverse`` of one matrix given as nested lists, the same operations in floats."""
    (a, b, c, x), (d, e, f, y), (g, h, i, z) = m[0], m[1], m[2]
    adjugate = (
        e * i - f * h, c * h - b * i, b * f - c * e,
        f * g - d * i, a * i - c * g, c * d - a * f,
        d * h - e * g, b * g - a * h, a * e - b * d,
    )  # fmt: skip
    det = a * adjugate[0] + b * adjugate[3] + c * adjugate[6]
    if abs(det) < SINGULAR:
        return None
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = (value / det for value in adjugate)
    return np.array(
        [
            [
                [r0, r1, r2, -(r0 * x + r1 * y + r2 * z)],
                [r3, r4, r5, -(r3 * x + r4 * y + r5 * z)],
                [r6, r7, r8, -(r6 * x + r7 * y + r8 * z)],
                [0.0, 0.0, 0.0, 1.0],
            ]
        ]
    )


class _Corrections:
    """How solved bones moved (armature space), for bones hanging below them."""

    def __init__(self, armature) -> None:
        self.bones = armature.data.bones
        self.by_bone: dict[str, np.ndarray] = {}

    def of(self, bone_name: str | None) -> np.ndarray | None:
        """(F, 4, 4) how the bone moved (armature space), by the nearest solved bone at or
        above it; None when none of them was solved."""
        if not self.by_bone:  # (the usual case: nothing solved yet moves anything)
            return None
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
        to_object = affine_inverse(object_world)
        if to_object is None:
            to_object = np.linalg.inv(object_world)  # (raises for a scale of zero)
        return object_world @ correction @ to_object @ world


def solve_chains(jobs: list[ChainJob]) -> list[ChainSolution]:
    """Solve the jobs (one armature's chains, priority order, same F frames) in turn.

    A chain that fails (bad input, or the solver refused it) gets a solution with ``error``
    set; the others are still solved.
    """
    solutions: list[ChainSolution] = []
    for _ in solve_chains_stepwise(jobs, solutions):
        pass
    return solutions


def solve_inline(solve: Callable[[], SolveResult]) -> Generator[None, None, SolveResult]:
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

    def __call__(self, solve: Callable[[], SolveResult]) -> Generator[None, None, SolveResult]:
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
        if world is None or np.isfinite(world).all():
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
    request = SolveRequest.of(
        target_root,
        orientations,
        poles=poles,
        pole_angles=inputs.pole_angle if poles is not None else None,
        start=inputs.rotations if job.warm_start else job.start_pose,
        shot=job.sequence,
    )
    started = time.perf_counter()
    outcome = yield from solving(lambda: cache.solve(rig.chain, request, job.options))
    seconds = time.perf_counter() - started
    if inputs.influence is not None and np.any(inputs.influence < 1.0):
        # Blended before a later chain's corrections are taken: those see the pose written.
        own = inputs.rotations if job.own_rotations is None else job.own_rotations
        outcome = replace(outcome, rotations=blend(own, outcome.rotations, np.clip(inputs.influence, 0.0, 1.0)))
    if record:  # a later chain may hang below this one
        old = rig.chain.forward_kinematics(inputs.rotations)
        new = rig.chain.forward_kinematics(outcome.rotations)
        moved = _frames(new.rotations, new.heads) @ _rigid_inverse(_frames(old.rotations, old.heads))
        parent_old_inverse = _invert(parent_old, f"root frame of chain '{rig.chain_name}'")
        for i, name in enumerate(rig.bone_names):
            corrections.by_bone[name] = parent @ moved[:, i] @ parent_old_inverse
    return ChainSolution(rig, outcome, root_world, target_root, seconds=seconds)
