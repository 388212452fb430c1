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
from dataclasses import replace

import numpy as np

from ...solver import interrupt
from ...solver.request import SolveRequest
from ...solver.settings import SolveResult
from ...solver.shots.pose_curves import blend
from ..chains.order import ORDER_HINT
from ..errors import ChainError
from ..rig.reader import ChainRig, chain_bone_names, with_ancestors
from . import body_jobs, cache
from .jobs import ChainJob, ChainSolution
from .matrices import affine_inverse, check_finite, invert, rigid_frames, rigid_inverse, rotations_of


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
    """``solve_chains`` one chain (or one body of chains) at a time: appends each chain's
    solution to ``solutions`` and yields it, so a modal bake can show progress and take Esc
    between chains. With ``solving`` a ``SolvingInThread``, it also yields None while a
    solve runs. Chains that share bones or hold a pinned bone are solved together as one body
    (``body_jobs``) where the armature says so; the solutions come out in list order."""
    if not jobs:
        return
    armature = jobs[0].rig.armature
    corrections = _Corrections(armature)
    bone_sets = [set(job.rig.bone_names) for job in jobs]
    pins = body_jobs.read_pins(armature)
    # A chain alone is solved as a body where a pin or a stretchy bone needs the body solver.
    needs_body = {pin.bone for pin in pins} | body_jobs.stretchy_bones(armature, set().union(*bone_sets))
    units = body_jobs.group_jobs(bone_sets, bool(armature.quat_ik.use_bodies))
    moved_by = [_moved_by(job.rig) for job in jobs]
    together = {k: {jobs[j].rig.chain_name for j in unit} for unit in units for k in unit}
    jobs = _with_order_warnings(jobs, moved_by, together)
    solved: dict[int, ChainSolution] = {}
    given = len(solutions)
    for u, unit in enumerate(units):
        # How these chains moved their bones is worked out only for a later chain they move.
        bones = set().union(*(bone_sets[k] for k in unit))
        later = [k for other in units[u + 1 :] for k in other]
        later_depends = any(bones.intersection(moved_by[k]) for k in later)
        if body_jobs.is_body(unit, bone_sets, needs_body):
            unit_jobs = [jobs[k] for k in unit]
            try:
                body_solutions = yield from solving(
                    lambda unit_jobs=unit_jobs, record=later_depends: body_jobs.solve_body_jobs(
                        unit_jobs, pins, corrections, record=record
                    )
                )
            except (ChainError, ValueError) as error:
                names = ", ".join(f"'{job.rig.chain_name}'" for job in unit_jobs)
                body_solutions = [
                    ChainSolution(job.rig, None, error=f"Chains {names} as one body: {error}") for job in unit_jobs
                ]
            solved.update(zip(unit, body_solutions, strict=True))
        else:
            (k,) = unit
            try:
                solved[k] = yield from _solve_one(jobs[k], corrections, record=later_depends, solving=solving)
            except (ChainError, ValueError) as error:
                solved[k] = ChainSolution(jobs[k].rig, None, error=f"Chain '{jobs[k].rig.chain_name}': {error}")
        while len(solutions) - given in solved:  # in list order, as each is ready (a body's may be apart)
            solution = solved[len(solutions) - given]
            solutions.append(solution)
            yield solution


def learn_body_starts(jobs: list[ChainJob]):
    """Learned start poses for the body ``jobs`` (one body's chains, list order) make, read at
    one frame; None when the armature solves them as chains, not as one body."""
    armature = jobs[0].rig.armature
    bone_sets = [set(job.rig.bone_names) for job in jobs]
    needs_body = {pin.bone for pin in body_jobs.read_pins(armature)}
    needs_body |= body_jobs.stretchy_bones(armature, set().union(*bone_sets))
    units = body_jobs.group_jobs(bone_sets, bool(armature.quat_ik.use_bodies))
    if len(units) != 1 or not body_jobs.is_body(units[0], bone_sets, needs_body):
        return None
    return body_jobs.learn_starts(jobs, _Corrections(armature))


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


def _with_order_warnings(
    jobs: list[ChainJob], moved_by: list[set[str]], together: dict[int, set[str]]
) -> list[ChainJob]:
    """Chains solved one after another cannot see what a later chain does to them: a chain
    whose inputs move with a later one is solved from that chain's pose before it moves, and
    a bone two chains share is turned last by the later one. Say so on the chain (the panel
    shows it), naming the later chain. Chains solved with it as one body (``together[k]``,
    chain names) see each other."""
    listed = _listed_chains(jobs[0].rig.armature)  # read once: this runs on every Live update
    names = [name for name, _enabled, _bones in listed]
    warned = []
    for k, (job, inputs_move_with) in enumerate(zip(jobs, moved_by, strict=True)):
        rig = job.rig
        later = listed[names.index(rig.chain_name) + 1 :] if rig.chain_name in names else []
        warnings = []
        for name, enabled, bones in later:
            if not enabled or name in together[k]:
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
    check_finite(rig, target_world, orientation_world, pole_world, root_world)
    to_root = invert(root_world, f"root frame of chain '{rig.chain_name}'")
    target_root = np.einsum("fij,fj->fi", to_root, target_world[:, :, 3])[:, :3]
    orientations = None
    if orientation_world is not None:
        wanted = to_root[:, :3, :3] @ orientation_world[:, :3, :3]
        orientations = rotations_of(wanted)
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
        moved = rigid_frames(new.rotations, new.heads) @ rigid_inverse(rigid_frames(old.rotations, old.heads))
        parent_old_inverse = invert(parent_old, f"root frame of chain '{rig.chain_name}'")
        for i, name in enumerate(rig.bone_names):
            corrections.by_bone[name] = parent @ moved[:, i] @ parent_old_inverse
    return ChainSolution(rig, outcome, root_world, target_root, seconds=seconds)
