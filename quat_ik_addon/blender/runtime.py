"""Session state of the Blender layer: never saved, rebuilt after loading a file.

* ``generation`` counts changes that concern every chain (undo, file load, most operators),
  ``armature_generations`` those of one armature's own chain and bone settings (a slider);
  a live chain re-solves when its armature's pair (``generation_of``), or the chain's
  inputs, differ from what it last solved with.
* ``suspend_solving()`` stops the handlers while a bake steps through frames.
* ``stats`` counts handler calls and solves, so tests and the benchmark can check that a
  handler costs nothing when nothing changed and never loops on its own writes.
* ``last_inputs`` / ``last_results`` remember, per chain, what the handlers last solved.
* ``reported`` remembers failures already printed, so a failing chain prints once.
* ``own_poses`` remembers, per bone, what a chain with Influence below 1 wrote and the bone's
  own pose it was blended from (``own_pose``).
* ``bone_names`` remembers each armature's bone names, so chains follow renames
  (``bone_renames``); ``records_pending`` the armatures whose bones changed while one was in
  Edit Mode, and ``renames_pending`` their bones renamed meanwhile (``chain_records``).
* ``limits_before_edit`` holds each armature's joint limits as it entered Edit Mode
  (``symmetrized_limits``); ``seen_in_collections`` the objects chains point at that were seen
  in a collection (``deleted_targets``). Undo keeps both; loading a file forgets them.
* ``resting_due`` holds, per armature, when its Live chains left short of their goals are
  finished and the inputs they were solved with (``handlers.run_resting``).
"""

from __future__ import annotations

from collections import Counter
from contextlib import contextmanager

generation = 0
armature_generations: dict = {}  # armature object name_full -> changes of its own settings
_suspended = 0
stats: Counter = Counter()
last_inputs: dict = {}
last_results: dict = {}
reported: set = set()
last_bake_seconds: dict = {}  # wall time of the last bake's steps (for the benchmark)
bake_seconds_per_bone_frame: float | None = None  # measured by the last long bake (``bake.bake_cost``)
bake_progress: dict = {}  # the modal bake running now: phase, fraction, next step (empty when none)
resting_due: dict = {}
# (armature, chain name) -> (what it was measured for, seconds): the longest full solve of a Live
# chain since it or its settings changed (``pose_solve.solves_lightly``); loading a file forgets it.
full_solve_seconds: dict = {}
own_poses: dict = {}  # (armature object, bone) -> (own pose wxyz, written wxyz)
bone_names: dict = {}  # armature data -> (bone names, {name: where it lies}) (``bone_renames``)
bones_being_edited: set = set()  # armatures seen in Edit Mode, not yet out of it (``bone_renames``)
news: list = []  # lines the handlers' own changes wait to report in the window (``news``)
limits_before_edit: dict = {}  # armature -> {object: {bone: limit settings}} as it entered Edit Mode (``symmetrized_limits``)
seen_in_collections: set = set()  # objects chains point at, once seen in a collection (``chain_records``)
records_pending: dict = {}  # armature data name -> bones added, waiting for Edit Mode to end (``chain_records``)
renames_pending: dict = {}  # armature data name -> {old bone name: new}, waiting with them
# Whether Live updates may solve lightly and leave the full solve until the inputs rest (chains
# on numpy; the kernel solves them in full anyway): None = when Blender runs timers (not in the
# background); the benchmark sets True to measure what a user dragging feels.
finish_at_rest: bool | None = None


def finishes_at_rest(background: bool) -> bool:
    return (not background) if finish_at_rest is None else finish_at_rest


def bump(ob=None) -> None:
    """Mark the settings of armature object ``ob``'s chains as changed (every chain's without)."""
    global generation
    if ob is None:
        generation += 1
    else:
        armature_generations[ob.name_full] = armature_generations.get(ob.name_full, 0) + 1


def generation_of(ob) -> tuple[int, int]:
    """What a Live chain of ``ob`` compares to know whether settings changed since its solve."""
    return generation, armature_generations.get(ob.name_full, 0)


def on_setting_changed(owner, _context) -> None:
    """``update=`` callback of every setting a solve depends on. A chain's or a bone's setting
    concerns its own armature only: one slider on one rig no longer re-solves every Live chain
    of every rig (10 rigs of 16 chains: 187 ms a tick)."""
    owner_id = getattr(owner, "id_data", None)
    bump(owner_id if getattr(owner_id, "type", None) == "ARMATURE" else None)


def solving_suspended() -> bool:
    return _suspended > 0


@contextmanager
def suspend_solving():
    """Handlers do nothing inside this block (a bake gathering inputs frame by frame)."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def forget_all() -> None:
    """Drop every cache (after loading a file or undo: data may differ from what we saw)."""
    last_inputs.clear()
    last_results.clear()
    reported.clear()
    resting_due.clear()
    armature_generations.clear()
    records_pending.clear()
    renames_pending.clear()
    bones_being_edited.clear()
    bump()


def report_once(key, message: str, problem: str | None = None) -> bool:
    """Print ``message`` the first time its ``problem`` (default: the message itself) occurs for
    ``key``; True when it was printed."""
    entry = (key, message if problem is None else problem)
    if entry in reported:
        return False
    reported.add(entry)
    print(f"Quat IK: {message}")
    return True


def clear_reports(key) -> None:
    for entry in [entry for entry in reported if entry[0] == key]:
        reported.discard(entry)
