"""Session state of the Blender layer: never saved, rebuilt after loading a file.

One :class:`SessionState`, ``session``, holds it all; each field's docstring says who writes
it and who reads it. Undo and loading a file call :meth:`SessionState.forget_all` (the data may
differ from what was seen); the fields it keeps say so.
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class SessionState:
    """What the handlers, operators and bakes remember between calls in one Blender session."""

    generation: int = 0
    """Changes that concern every chain (undo, file load, most operators): written by
    :meth:`bump`, read by :meth:`generation_of` (a Live chain re-solves when it differs)."""

    armature_generations: dict = field(default_factory=dict)
    """Armature object ``name_full`` -> changes of its own chain and bone settings (a slider):
    written by :meth:`bump` with an armature, read by :meth:`generation_of`."""

    rig_generations: dict = field(default_factory=dict)
    """Armature object ``name_full`` -> changes of the settings its chains' rigs are built from
    (all but when a chain solves, its mode): written by :meth:`bump`, read by
    :meth:`rig_generation_of` (``rig.reader`` keeps a rig while it holds)."""

    suspended: int = 0
    """How many :meth:`suspend_solving` blocks are open (a bake stepping through frames):
    read by :meth:`solving_suspended`, which the handlers ask before doing anything."""

    stats: Counter = field(default_factory=Counter)
    """Counts of handler calls and solves ("depsgraph_calls", "frame_calls", "solves",
    "chains_solved", "resting_solves", "failures", "news_reported"), and the seconds the
    depsgraph handler spent past its first checks ("depsgraph_seconds"): written by the
    handlers and ``ui.news``. The tests read it to check that a handler costs nothing when
    nothing changed and never loops on its own writes; the Blender benchmark reads the same."""

    last_inputs: dict = field(default_factory=dict)
    """Per chain, the inputs' fingerprint its last Live or Per Frame solve used: written and
    read by ``runtime.handlers`` and ``runtime.live_inputs``."""

    last_results: dict = field(default_factory=dict)
    """Per chain, what the handlers last solved (kept to tell a changed result): written and
    read by ``runtime.handlers``."""

    reported: set = field(default_factory=set)
    """(key, problem) pairs already printed, so a failing chain prints once: written by
    :meth:`report_once`, dropped by :meth:`clear_reports`."""

    last_bake_seconds: dict = field(default_factory=dict)
    """The last bake's wall time per step and ``"gather_path"`` (whether its inputs were sampled
    from the F-curves or read frame by frame): written by ``bake.bake``. The input-sampling and
    bake-channel tests read the path (it is how they know the sampling vouched for a bake), the
    Blender benchmark and ``tools/demo_bake.py`` the times."""

    bake_seconds_per_bone_frame: float | None = None
    """Measured by the last long bake (``bake.bake.bake_cost`` estimates a bake's time from
    it; None before any): written and read by ``bake.bake``; a test resets it."""

    bake_progress: dict = field(default_factory=dict)
    """The modal bake running now: phase, fraction, next step (empty when none): written by
    ``operators.bake``; the window tests read it to watch a bake run and stop."""

    resting_due: dict = field(default_factory=dict)
    """Per armature, when its Live chains left short of their goals are finished and the inputs
    they were solved with: written and read by ``runtime.handlers`` (``run_resting``)."""

    full_solve_seconds: dict = field(default_factory=dict)
    """(armature, chain name) -> (what it was measured for, seconds): the longest full solve of
    a Live chain since it or its settings changed: written and read by
    ``solving.current_frame`` (``solves_lightly``); loading a file forgets it."""

    missed_while_moving: set = field(default_factory=set)
    """(armature, chain name) of Live chains whose last solve, while their inputs moved, left
    them short of their goals: the next such update runs no restarts (the rest finishes it):
    written and read by ``solving.current_frame``; loading a file forgets it."""

    own_poses: dict = field(default_factory=dict)
    """(armature object, bone) -> (own pose wxyz, written wxyz): what a chain with Influence
    below 1 wrote and the bone's own pose it blended from: written and read by ``rig.own_pose``."""

    bone_names: dict = field(default_factory=dict)
    """Armature data -> (bone names, {name: where it lies}), so chains follow renames: written
    and read by ``chains.bone_renames``."""

    bones_being_edited: set = field(default_factory=set)
    """Armatures seen in Edit Mode and not yet out of it: written and read by
    ``chains.bone_renames``."""

    news: list = field(default_factory=list)
    """Lines the handlers' own changes wait to report in the window: written and read by
    ``ui.news``."""

    limits_before_edit: dict = field(default_factory=dict)
    """Armature -> {object: {bone: limit settings}} as it entered Edit Mode: written and read by
    ``limits.symmetrized``. Undo keeps it; loading a file forgets it."""

    seen_in_collections: set = field(default_factory=set)
    """Objects chains point at, once seen in a collection: written and read by
    ``chains.deleted_targets``. Undo keeps it; loading a file forgets it."""

    records_pending: dict = field(default_factory=dict)
    """Armature data name -> bones added, waiting for Edit Mode to end: written and read by
    ``chains.records``; ``chains.deleted_targets`` waits while any wait."""

    renames_pending: dict = field(default_factory=dict)
    """Armature data name -> {old bone name: new}, waiting with ``records_pending``: written
    and read by ``chains.records``."""

    finish_at_rest: bool | None = None
    """Whether Live updates may solve lightly and leave the full solve until the inputs rest
    (chains on numpy; the kernel solves them in full anyway): None = when Blender runs timers
    (not in the background). Read by :meth:`finishes_at_rest`; the Live tests and the Blender
    benchmark set True to run in the background what a user dragging in a window gets."""

    def finishes_at_rest(self, background: bool) -> bool:
        return (not background) if self.finish_at_rest is None else self.finish_at_rest

    def bump(self, ob=None, *, rig: bool = True) -> None:
        """Mark the settings of armature object ``ob``'s chains as changed (every chain's without).
        ``rig=False``: a setting no rig is built from (a chain's mode), so the rigs read are kept."""
        if ob is None:
            self.generation += 1
            return
        name = ob.name_full
        self.armature_generations[name] = self.armature_generations.get(name, 0) + 1
        if rig:
            self.rig_generations[name] = self.rig_generations.get(name, 0) + 1

    def generation_of(self, ob) -> tuple[int, int]:
        """What a Live chain of ``ob`` compares to know whether settings changed since its solve."""
        return self.generation, self.armature_generations.get(ob.name_full, 0)

    def rig_generation_of(self, ob) -> tuple[int, int]:
        """What a rig read from ``ob`` compares to know whether what it is built from changed."""
        return self.generation, self.rig_generations.get(ob.name_full, 0)

    def solving_suspended(self) -> bool:
        return self.suspended > 0

    @contextmanager
    def suspend_solving(self):
        """Handlers do nothing inside this block (a bake gathering inputs frame by frame)."""
        self.suspended += 1
        try:
            yield
        finally:
            self.suspended -= 1

    def forget_all(self) -> None:
        """Drop every cache (after loading a file or undo: data may differ from what we saw)."""
        self.last_inputs.clear()
        self.last_results.clear()
        self.reported.clear()
        self.resting_due.clear()
        self.armature_generations.clear()
        self.rig_generations.clear()
        self.records_pending.clear()
        self.renames_pending.clear()
        self.bones_being_edited.clear()
        self.bump()

    def report_once(self, key, message: str, problem: str | None = None) -> bool:
        """Print ``message`` the first time its ``problem`` (default: the message itself) occurs
        for ``key``; True when it was printed."""
        entry = (key, message if problem is None else problem)
        if entry in self.reported:
            return False
        self.reported.add(entry)
        print(f"Quat IK: {message}")
        return True

    def clear_reports(self, key) -> None:
        for entry in [entry for entry in self.reported if entry[0] == key]:
            self.reported.discard(entry)


session = SessionState()


def on_setting_changed(owner, _context) -> None:
    """``update=`` callback of every setting a solve depends on (a plain function: Blender takes
    no bound method there). A chain's or a bone's setting concerns its own armature only: one
    slider on one rig no longer re-solves every Live chain of every rig (10 rigs of 16 chains:
    187 ms a tick)."""
    owner_id = getattr(owner, "id_data", None)
    session.bump(owner_id if getattr(owner_id, "type", None) == "ARMATURE" else None)


def on_mode_changed(owner, _context) -> None:
    """``update=`` callback of a chain's mode (when it solves): Live solves again, as after any
    setting, but no rig is built from it, so the rigs read are kept (a bake sets Manual, and the
    next bake or Live update reads the same rig)."""
    owner_id = getattr(owner, "id_data", None)
    session.bump(owner_id if getattr(owner_id, "type", None) == "ARMATURE" else None, rig=False)
