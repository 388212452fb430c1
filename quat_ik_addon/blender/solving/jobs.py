"""What a solve of an armature's chains takes and gives: a chain's job and its solution.

Shared by the single-chain path (``chain_jobs``) and the body path (``body_jobs``).
No ``bpy`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...solver.body.learned_starts import BodyLearnedStarts
from ...solver.request import SolveOptions
from ...solver.settings import SolveResult
from ..rig.reader import ChainRig, FrameInputs


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
    frames: np.ndarray | None = None  # (F,) the frame numbers the inputs were read at (pins hold by frame)
    priority: int = 0  # in a body: lower numbers are met first where goals conflict
    weight: float = 1.0  # in a body: the goal's weight against others of its priority
    # The learned start poses of the body this chain heads (stored on it; used when it is the
    # first chain of its body and solved cold).
    body_learned_starts: BodyLearnedStarts | None = None


@dataclass(frozen=True)
class ChainSolution:
    """One chain's result; ``error`` (and no outcome) when it could not be solved."""

    rig: ChainRig
    outcome: SolveResult | None
    root_world: np.ndarray | None = None  # (F, 4, 4) root frame -> world, as solved
    target_root: np.ndarray | None = None  # (F, 3) target in the root frame
    error: str | None = None
    seconds: float = 0.0  # the solve's own time (of the solver, without reading and correcting)
    stretch: np.ndarray | None = None  # (F, n) Y scales, where the chain was solved in a body with stretchy bones
    pin_outcomes: tuple = ()  # a body's ``body_jobs.PinOutcome``s (every chain of the body has them)
    body: tuple[str, ...] = ()  # the names of the chains solved with this one as a body (itself included)
