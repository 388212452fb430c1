"""App handlers: Live and Per Frame solving. Registered once by register(), removed by unregister().

All are ``@persistent`` so they survive loading another file. None of them raises: a failing
chain stores its message on the chain (for the panel), prints it once, and keeps its pose.
The solver modules are imported on first use, so registering costs nothing.

A Live update solves the chains whose inputs changed and the chains hanging below them
(``live_inputs``), not every chain of the armature.

While a Live chain's inputs keep changing (a target being dragged) each update solves it
with its full settings where the native kernel solves it (a dragged frame as fully as a
resting one); on numpy it gets a few iterations and no restarts, so the viewport never
stalls, and a chain left short of its goal is finished with its full settings (iterations
and restarts) by a ``bpy.app.timers`` callback once its inputs have rested ``REST_SECONDS``
(``run_resting``). In the background no event loop runs timers, so there every update is a
full solve (``session.finishes_at_rest`` decides).

After a file loads, its Per Frame chains are solved at the current frame (``on_load_post``):
a pose the file saved, or that its keys give, is not what the chain shows on every frame.
"""

from __future__ import annotations

import contextlib
import sys
import time

import bpy
from bpy.app.handlers import persistent

from .. import compat
from ..chains import bone_renames, deleted_targets, records, tip_records
from ..limits import symmetrized
from ..ui import news
from .state import session

LIVE_MODES = frozenset({"LIVE", "PER_FRAME"})
FRAME_MODES = frozenset({"PER_FRAME"})
_BLENDER_PACKAGE = __package__.rpartition(".")[0]  # modules perhaps not imported yet are looked up under it
REST_SECONDS = 0.25  # inputs unchanged this long: the drag has paused, finish what it left


def _chains(ob, modes):
    return [c for c in ob.quat_ik.chains if c.enabled and c.mode in modes]


def _armatures(scene, modes):
    """(armature, chains) pairs of the scene with enabled chains in ``modes``."""
    found = []
    for ob in scene.objects:
        if ob.type != "ARMATURE" or ob.mode == "EDIT" or not compat.is_editable(ob):
            continue  # edit mode: bones are changing; linked: its pose cannot be written
        settings = getattr(ob, "quat_ik", None)
        if settings is None or not settings.chains:
            continue
        chains = _chains(ob, modes)
        if chains:
            found.append((ob, chains))
    return found


def _inputs_key(ob, depsgraph) -> tuple:
    """Where the inputs an armature's chains were last solved with are kept: per view layer.
    An armature in two scenes shown at once (two windows, different frames) reads other inputs
    in each; kept per armature, each window's update found the other's and solved again, and
    each solve's write updated the other window: a loop of solves with no edit."""
    return ("live", ob.name_full, depsgraph.scene.name_full, depsgraph.view_layer.name)


def _solve(ob, chains, depsgraph, *, reason: str, effort=None) -> list:
    """Solve and write; failures are recorded on the chains and printed once, never raised.
    ``effort``: how hard Live chains work (``solving.current_frame.Effort``; default their full settings)."""
    from ..chains.settings import with_bodies
    from ..solving import current_frame

    # A body is solved whole, whichever of its chains changed (its Manual chains wait to be asked).
    chains = with_bodies(ob, chains, among=lambda chain: chain.mode in LIVE_MODES)
    session.stats["solves"] += 1
    session.stats["chains_solved"] += len(chains)
    reports = current_frame.solve_current_frame(
        ob, chains, depsgraph, warm_start=lambda c: c.mode == "LIVE", effort=effort or current_frame.Effort.FULL
    )
    for report in reports:
        key = (ob.name_full, report.chain.name)
        if report.error:
            session.stats["failures"] += 1
            if ob.data.name_full in session.records_pending:
                continue  # Separate: its chains are sorted out once Edit Mode ends (``chains.records``)
            # Once per problem, whichever handler meets it first (a Per Frame chain is solved on
            # edits and on frame changes alike).
            session.report_once(key, f"'{ob.name}' not solved {reason}: {report.error}", report.error)
        else:
            session.clear_reports(key)
    return reports


def _solve_live(ob, chains, changed, depsgraph, fingerprints) -> None:
    """A Live update of ``changed`` (of the armature's ``chains``: those whose inputs changed,
    ``fingerprints`` now): lightly while the inputs move on numpy, when a timer can finish the
    job at rest (``solving.current_frame.Effort.MOVING``)."""
    from ..solving import current_frame
    from . import live_inputs

    if not session.finishes_at_rest(bpy.app.background):
        _solve(ob, changed, depsgraph, reason="after an edit")
        return
    reports = _solve(ob, changed, depsgraph, reason="after an edit", effort=current_frame.Effort.MOVING)
    # Chains solved lightly and short of their goals: this update's, and those an earlier
    # update left that this one did not solve (their inputs did not change). A chain solved
    # in full (on the kernel) has had all a resting solve would give it.
    short = {
        r.chain.name
        for r in reports
        if r.solution is not None and r.light and r.chain.mode == "LIVE" and not r.chain.status_converged
    }
    _due, _inputs, short_before = session.resting_due.get(ob.name_full, (None, None, ()))
    short |= set(short_before) - {r.chain.name for r in reports}
    if short:
        # What must not change before the rest: the inputs our own writes do not move.
        unmoved = live_inputs.unmoved_by(ob, chains, fingerprints, changed)
        session.resting_due[ob.name_full] = (time.monotonic() + REST_SECONDS, unmoved, tuple(sorted(short)))
        if not bpy.app.timers.is_registered(run_resting):
            bpy.app.timers.register(run_resting, first_interval=REST_SECONDS)
    else:
        session.resting_due.pop(ob.name_full, None)


def run_resting(now: float | None = None) -> float | None:
    """Timer callback: finish the Live chains left short of their goals on armatures whose
    inputs have rested since their last update (moved again since: that update waits anew).
    Returns the seconds to the next one due, or None when none waits (which ends the timer)."""
    now = time.monotonic() if now is None else now
    for name, (due, fingerprint, short) in list(session.resting_due.items()):
        if due > now:
            continue
        del session.resting_due[name]
        ob = bpy.data.objects.get(name)
        if ob is None or ob.type != "ARMATURE" or session.solving_suspended():
            continue  # deleted or renamed since; or a bake runs (its own pose wins)

        def work(ob=ob, fingerprint=fingerprint, short=short):
            from . import live_inputs

            depsgraph = bpy.context.evaluated_depsgraph_get()
            if not live_inputs.same_inputs(
                live_inputs.fingerprints(ob, _chains(ob, LIVE_MODES), depsgraph), fingerprint
            ):
                return  # changed in a way no update has solved yet: the next update decides
            unfinished = [c for c in _chains(ob, {"LIVE"}) if c.name in short and not c.status_converged]
            if unfinished:
                session.stats["resting_solves"] += 1
                _solve(ob, unfinished, depsgraph, reason="after an edit")

        _run_guarded(ob, "Live solve", work)
    due = [when for when, _inputs, _short in session.resting_due.values()]
    return max(min(due) - now, 0.01) if due else None


def _visibility_snapshot(armatures):
    """One listing of the view layer's enabled objects for all the chains a handler reads
    (``rig.reader.visibility_snapshot``); nothing to import or list without chains."""
    if not armatures:
        return contextlib.nullcontext()
    from ..rig import reader

    return reader.visibility_snapshot()


def _run_guarded(ob, what: str, function) -> None:
    try:
        function()
    except Exception as error:  # a handler must never raise into Blender
        session.stats["failures"] += 1
        session.report_once((ob.name_full, what), f"{what} on '{ob.name}' failed unexpectedly: {error!r}")


def _follow_bone_edits(touched: list) -> None:
    """Renamed bones, and chains whose tip bones were joined into or separated from an armature."""
    changes = bone_renames.follow(touched)
    news.tell(records.reconcile(changes.added, changes.renamed))


@persistent
def on_depsgraph_update_post(scene, depsgraph=None) -> None:
    """Runs after Blender evaluates an edit (a moved target, a changed setting, undo).

    Re-solves Live and Per Frame chains whose inputs changed since their last solve, starting
    Live chains from the current pose; before that, follows bone edits (renames, Join,
    Separate, Symmetrize's limit copies) and lets go of objects deleted under a chain. Must not
    raise, must not call operators or ``frame_set``, and must not write anything unless a
    solved value changed or such an edit asks for it: its own writes re-evaluate the scene
    without calling handlers again, and even if they did, the inputs' fingerprint (kept per
    view layer) would be unchanged and nothing would happen.
    """
    session.stats["depsgraph_calls"] += 1
    if session.solving_suspended() or depsgraph is None:
        return
    started = time.perf_counter()
    try:
        _follow_and_solve(scene, depsgraph)
    finally:
        # What a Live update costs in Quat IK itself, beside Blender's evaluations around it
        # (read by the Blender benchmark).
        session.stats["depsgraph_seconds"] += time.perf_counter() - started


def _follow_and_solve(scene, depsgraph) -> None:
    """``on_depsgraph_update_post``'s work."""
    touched = bone_renames.touched_armatures(depsgraph)
    _run_guarded(scene, "Mirroring copied joint limits", lambda: news.tell(symmetrized.follow(touched)))
    _run_guarded(scene, "Following bone edits", lambda: _follow_bone_edits(touched))
    # Deleting an object updates its collections (3.4: only the scene, where it was in the
    # scene's own collection); a drag updates objects alone.
    if depsgraph.id_type_updated("COLLECTION") or depsgraph.id_type_updated("SCENE"):
        _run_guarded(scene, "Releasing deleted objects", lambda: news.tell(deleted_targets.release_deleted()))
    armatures = _armatures(scene, LIVE_MODES)
    with _visibility_snapshot(armatures):
        for ob, chains in armatures:
            key = _inputs_key(ob, depsgraph)

            def work(ob=ob, chains=chains, key=key):
                from . import live_inputs

                now = live_inputs.fingerprints(ob, chains, depsgraph)
                before = session.last_inputs.get(key)
                if before == now:
                    return
                session.last_inputs[key] = now
                changed = live_inputs.chains_to_solve(ob, chains, now, before)
                if changed:
                    _solve_live(ob, chains, changed, depsgraph, now)

            _run_guarded(ob, "Live solve", work)


@persistent
def on_frame_change_post(scene, depsgraph=None) -> None:
    """Runs after every frame change (playback, scrubbing, ``frame_set``, each rendered frame).

    Solves Per Frame chains from a fixed start (``solver.start_poses.cold_start``), so a frame
    always gets the same pose whatever frame came before (playback and a render of one frame
    agree), and the Live chains hanging below them, warm. Must not raise and must not
    change the frame; writes only rotations that changed. Renders started from the UI run
    it beside the render: enable Render > Lock Interface there, as for any handler that
    changes data (``blender --background -a`` needs nothing).
    """
    session.stats["frame_calls"] += 1
    if session.solving_suspended():
        return
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    _solve_per_frame(scene, depsgraph, reason="on a frame change")


def _solve_per_frame(scene, depsgraph, *, reason: str) -> None:
    """Solve the scene's Per Frame chains at its current frame (as ``on_frame_change_post``)."""
    armatures = _armatures(scene, FRAME_MODES)
    with _visibility_snapshot(armatures):
        for ob, _chains_per_frame in armatures:
            key = _inputs_key(ob, depsgraph)

            def work(ob=ob, key=key):
                from . import live_inputs

                # The Per Frame chains, and the Live chains hanging below them (moved with them).
                chains = _chains(ob, LIVE_MODES)
                per_frame = {index for index, chain in enumerate(chains) if chain.mode in FRAME_MODES}
                solving = live_inputs.with_chains_below(ob, chains, per_frame)
                _solve(ob, solving, depsgraph, reason=reason)
                # The live handler need not solve the same inputs again (the other Live chains'
                # stay as they last solved them: the next edit catches them up).
                session.last_inputs[key] = live_inputs.solved_now(
                    session.last_inputs.get(key), live_inputs.fingerprints(ob, chains, depsgraph), solving
                )

            _run_guarded(ob, "Per-frame solve", work)


@persistent
def on_load_post(*_args) -> None:
    """Runs after a file loads (and after Blender starts with a file, once the add-on is
    registered, with a full context, unlike ``register()``). Forgets what was solved in the
    previous file, writes the records of chains saved before they had them
    (``chains.records``), and solves the scene's Per Frame chains at its current frame as a frame
    change would (``_solve_loaded``), so the pose shown is the solved one before any frame
    changes (a pose saved from another frame, or the one the bones' keys give, is not). Must
    not raise, call operators or change the frame."""
    _forget_session()
    session.limits_before_edit.clear()  # (undo keeps them: an undo inside Edit Mode stays in it)
    session.seen_in_collections.clear()
    session.own_poses.clear()  # (undo keeps them: a bone still holding what was written checks itself)
    session.full_solve_seconds.clear()
    session.missed_while_moving.clear()
    bone_renames.remember_all()
    _run_guarded(bpy.context.scene, "Recording chains", tip_records.write_all)
    solve_cache = sys.modules.get(f"{_BLENDER_PACKAGE}.solving.cache")  # imported once something solved
    if solve_cache is not None:
        solve_cache.clear()  # (keyed by the inputs, never stale: this only frees the memory)
    scene = bpy.context.scene
    if scene is not None and not session.solving_suspended() and _armatures(scene, FRAME_MODES):
        _run_guarded(scene, "Per-frame solve", lambda: _solve_loaded(scene))


def _solve_loaded(scene) -> None:
    """``on_load_post``'s solve: what a frame change solves (``_solve_per_frame``), which also
    remembers what it solved from, so the update Blender ends its loading with, where it calls
    handlers, does not solve those chains again."""
    # Blender evaluates the loaded file only after load_post, so it is evaluated here (without
    # our update handler, which would solve every chain of every armature).
    with session.suspend_solving():
        depsgraph = bpy.context.evaluated_depsgraph_get()
    _solve_per_frame(scene, depsgraph, reason="when the file loaded")


def _forget_session() -> None:
    """Forget what was solved and read (``session.forget_all``), the rigs read and the bodies
    made for them included: after undo or a file load the objects they hold may be gone."""
    session.forget_all()
    rig_reader = sys.modules.get(f"{_BLENDER_PACKAGE}.rig.reader")  # imported once something was read
    if rig_reader is not None:
        rig_reader.forget_rigs()
    body_jobs = sys.modules.get(f"{_BLENDER_PACKAGE}.solving.body_jobs")  # imported once a body was solved
    if body_jobs is not None:
        body_jobs.forget_bodies()


@persistent
def on_undo_redo_post(*_args) -> None:
    """Runs after undo/redo. Data was replaced under us: forget fingerprints; writes nothing
    (the next update reads the chains' records again: the step Join pushed is the one before
    the joined chains were listed, so redoing a Join lists them there)."""
    _forget_session()
    bone_renames.remember_all()
    records.read_again()


@persistent
def on_save_pre(*_args) -> None:
    """Runs before a file saves: objects deleted or joined away, held only by chains,
    are let go so they are not saved (``deleted_targets``; not deleted here, while
    Blender writes the file)."""
    _run_guarded(bpy.context.scene, "Releasing deleted objects", lambda: deleted_targets.release_deleted(delete=False))


_HANDLERS = (
    ("depsgraph_update_post", on_depsgraph_update_post),
    ("frame_change_post", on_frame_change_post),
    ("load_post", on_load_post),
    ("save_pre", on_save_pre),
    ("undo_post", on_undo_redo_post),
    ("redo_post", on_undo_redo_post),
)


def register() -> None:
    """Install each handler once (a second register() does not add duplicates)."""
    for list_name, function in _HANDLERS:
        handlers = getattr(bpy.app.handlers, list_name)
        _remove_ours(handlers, function)
        handlers.append(function)


def unregister() -> None:
    """Remove every handler register() installed, and the timer that finishes Live chains at rest."""
    for list_name, function in _HANDLERS:
        _remove_ours(getattr(bpy.app.handlers, list_name), function)
    if bpy.app.timers.is_registered(run_resting):
        bpy.app.timers.unregister(run_resting)
    news.stop()
    _forget_session()
    session.limits_before_edit.clear()


def _remove_ours(handlers: list, function) -> None:
    # Match by module and name too: reloading the add-on creates new function objects.
    for existing in list(handlers):
        if existing is function or (
            getattr(existing, "__module__", None) == function.__module__
            and getattr(existing, "__qualname__", None) == function.__qualname__
        ):
            handlers.remove(existing)
