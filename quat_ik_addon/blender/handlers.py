"""App handlers: Live and Per Frame solving. Registered once by register(), removed by unregister().

All are ``@persistent`` so they survive loading another file. None of them raises: a failing
chain stores its message on the chain (for the panel), prints it once, and keeps its pose.
The solver modules are imported on first use, so registering costs nothing.
"""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent

from . import compat, runtime

LIVE_MODES = frozenset({"LIVE", "PER_FRAME"})
FRAME_MODES = frozenset({"PER_FRAME"})


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


def _fingerprint(ob, chains, depsgraph):
    from . import rig_reader
    from .errors import ChainError

    parts = [runtime.generation]
    for chain in chains:
        try:
            parts.append(rig_reader.input_fingerprint(ob, chain, depsgraph))
        except ChainError as error:
            parts.append(str(error))
    return tuple(parts)


def _solve(ob, chains, depsgraph, *, reason: str) -> None:
    """Solve and write; failures are recorded on the chains and printed once, never raised."""
    from . import pose_solve

    runtime.stats["solves"] += 1
    reports = pose_solve.solve_current_frame(ob, chains, depsgraph, warm_start=lambda c: c.mode == "LIVE")
    for report in reports:
        key = (ob.name_full, report.chain.name)
        if report.error:
            runtime.stats["failures"] += 1
            runtime.report_once(key, f"{reason} solve on '{ob.name}' failed: {report.error}")
        else:
            runtime.clear_reports(key)


def _run_guarded(ob, what: str, function) -> None:
    try:
        function()
    except Exception as error:  # a handler must never raise into Blender
        runtime.stats["failures"] += 1
        runtime.report_once((ob.name_full, what), f"{what} on '{ob.name}' failed unexpectedly: {error!r}")


@persistent
def on_depsgraph_update_post(scene, depsgraph=None) -> None:
    """Runs after Blender evaluates an edit (a moved target, a changed setting, undo).

    Re-solves Live and Per Frame chains whose inputs changed since their last solve, starting
    Live chains from the current pose. Must not raise, must not call operators or
    ``frame_set``, and must not write anything unless a solved value changed: its own writes
    re-evaluate the scene without calling handlers again, and even if they did, the inputs'
    fingerprint would be unchanged and nothing would happen.
    """
    runtime.stats["depsgraph_calls"] += 1
    if runtime.solving_suspended() or depsgraph is None:
        return
    for ob, chains in _armatures(scene, LIVE_MODES):
        key = ("live", ob.name_full)

        def work(ob=ob, chains=chains, key=key):
            fingerprint = _fingerprint(ob, chains, depsgraph)
            if runtime.last_inputs.get(key) == fingerprint:
                return
            runtime.last_inputs[key] = fingerprint
            _solve(ob, chains, depsgraph, reason="Live")

        _run_guarded(ob, "Live solve", work)


@persistent
def on_frame_change_post(scene, depsgraph=None) -> None:
    """Runs after every frame change (playback, scrubbing, ``frame_set``, each rendered frame).

    Solves Per Frame chains from rest, so a frame always gets the same pose whatever frame
    came before (playback and a render of one frame agree). Must not raise and must not
    change the frame; writes only rotations that changed. Renders started from the UI run
    it beside the render: enable Render > Lock Interface there, as for any handler that
    changes data (``blender --background -a`` needs nothing).
    """
    runtime.stats["frame_calls"] += 1
    if runtime.solving_suspended():
        return
    if depsgraph is None:
        depsgraph = bpy.context.evaluated_depsgraph_get()
    for ob, chains in _armatures(scene, FRAME_MODES):
        key = ("live", ob.name_full)

        def work(ob=ob, chains=chains, key=key):
            _solve(ob, chains, depsgraph, reason="Per-frame")
            # The live handler need not solve the same inputs again.
            runtime.last_inputs[key] = _fingerprint(ob, _chains(ob, LIVE_MODES), depsgraph)

        _run_guarded(ob, "Per-frame solve", work)


@persistent
def on_load_post(*_args) -> None:
    """Runs after a file loads. Forgets what was solved in the previous file; writes nothing."""
    runtime.forget_all()


@persistent
def on_undo_redo_post(*_args) -> None:
    """Runs after undo/redo. Data was replaced under us: forget fingerprints; writes nothing."""
    runtime.forget_all()


_HANDLERS = (
    ("depsgraph_update_post", on_depsgraph_update_post),
    ("frame_change_post", on_frame_change_post),
    ("load_post", on_load_post),
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
    """Remove every handler register() installed."""
    for list_name, function in _HANDLERS:
        _remove_ours(getattr(bpy.app.handlers, list_name), function)
    runtime.forget_all()


def _remove_ours(handlers: list, function) -> None:
    # Match by module and name too: reloading the add-on creates new function objects.
    for existing in list(handlers):
        if existing is function or (
            getattr(existing, "__module__", None) == function.__module__
            and getattr(existing, "__qualname__", None) == function.__qualname__
        ):
            handlers.remove(existing)
