"""The Bake operator: chains over a frame range into keyframes (see ``bake/bake.py``).

From the UI (invoke) it runs modally: a progress bar and a status line while it reads the
frames and solves the chains one by one, each in a worker thread (numpy only) so the window
stays live; Esc cancels with nothing changed, stopping a chain's solve at its next step. From
Python or the command line (exec) it runs to the end in one go and prints a progress line
every 10% of frames read (and of chains solved, for several chains), for bakes of 100 frames
or more, and a chain's own progress once it has solved for a while. Undoable either way.

A range longer than ``bake.BLOCK_FRAMES`` is read and solved a block at a time (the progress
goes block by block), so its working memory stays bounded; its keys are written at the end,
and Esc still leaves the scene as it was. Before a long bake starts, its dialog says what it
will cost (``bake.bake_cost``: time and the keys' memory), and a bake from Python or the
command line prints that estimate first.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Iterator

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ...solver import interrupt
from .. import compat

CHAIN_SETS = (
    ("ALL", "All", "Every enabled chain of the armature"),
    ("ACTIVE", "Active", "The chain selected in the panel"),
    ("SELECTED", "Selected Bones", "Enabled chains with a selected bone"),
)

DESTINATIONS = (
    ("ACTIVE_ACTION", "Active Action", "Into the armature's active action (a new one if it has none)"),
    ("NEW_ACTION", "New Action", "Into a new action that becomes active (the old one is kept with a fake user)"),
    ("NLA", "New NLA Strip", "Into a new action on a new NLA track (the active action is not changed)"),
)

INTERPOLATIONS = (
    ("BEZIER", "Bezier", "Smooth curves through the keys"),
    ("LINEAR", "Linear", "Straight lines between keys (exact with Remove Redundant Keys)"),
    ("CONSTANT", "Constant", "Hold each key until the next"),
)

MODAL_BUDGET_S = 0.05
# How often the modal bake looks in while reading (it reads on each look, for up to the budget)
# and while a chain solves in its worker thread: a look needs the GIL, and one every ms slowed
# the solve by ~20% (one every 20 ms costs nothing measurable, and moves the bar smoothly).
READ_POLL_S = 0.001
SOLVE_POLL_S = 0.02


SLOW_CHAIN_S = 2.0  # a chain solving longer than this prints its own progress in the background
# A bake expected to take this long (or of more than one block) says what it will cost first.
LONG_BAKE_S = 10.0


class _ConsoleProgress:
    """A background bake's console lines, for bakes of 100 frames or more: every tenth of the
    frames read and, for several chains, of the chains solved; and a chain's own progress
    (the solver's checkpoints, ``within_chain``) once it has been solving for ``SLOW_CHAIN_S``."""

    def __init__(self, job) -> None:
        self.job = job
        self.frames, self.names = len(job.frames), [rig.chain_name for rig in job.rigs]
        self.started = self.chain_started = time.perf_counter()
        self.tenths = {"read": 0, "solve": 0}
        self.solved, self.chain_fraction = 0, 0.0
        cost = long_bake_cost(job)
        if cost is not None:
            self._print(f"{cost.text()}, {job.block_count} block(s) of up to {_block_frames():,} frames")

    def _print(self, text: str) -> None:
        print(f"Quat IK bake: {text} ({time.perf_counter() - self.started:.1f} s)")

    def step(self, phase: str, fraction: float) -> None:
        """After each frame read and each chain solved (``QUATIK_OT_bake._steps``)."""
        if phase == "solve" and round(fraction * len(self.names)) != self.solved:
            self.solved, self.chain_started, self.chain_fraction = (
                round(fraction * len(self.names)),
                time.perf_counter(),
                0.0,
            )
        blocks = self.job.block_count
        fraction = (self.job.block_index + fraction) / blocks  # of the whole range
        tenths = int(fraction * 10.0 + 1e-9)
        if self.frames < 100 or tenths <= self.tenths[phase]:
            return
        self.tenths[phase] = tenths
        if phase == "read":
            self._print(f"{fraction:4.0%} of {self.frames} frames read")
        elif blocks > 1:
            self._print(f"{fraction:4.0%} of {self.frames} frames solved")
        elif len(self.names) > 1:
            self._print(f"{self.solved} of {len(self.names)} chains solved")

    def within_chain(self, fraction: float) -> None:
        """At each of the solver's checkpoints (a looping shot passes them twice: once counts)."""
        slow = time.perf_counter() - self.chain_started >= SLOW_CHAIN_S
        if self.frames >= 100 and slow and self.chain_fraction < fraction < 1.0:
            self._print(f"solving '{self.names[self.solved]}': {fraction:.0%}")
        self.chain_fraction = max(self.chain_fraction, fraction)


def _block_frames() -> int:
    from ..bake import bake

    return bake.BLOCK_FRAMES


def long_bake_cost(job):
    """``bake.bake_cost`` of a Bake when it is long (``LONG_BAKE_S`` or more than one block), else None."""
    from ..bake import bake

    cost = bake.bake_cost(len(job.frames), sum(len(rig.bone_names) for rig in job.rigs))
    return cost if cost.seconds >= LONG_BAKE_S or job.block_count > 1 else None


class QUATIK_OT_bake(bpy.types.Operator):
    """Bake Quat IK chains into keyframes over a frame range"""

    bl_idname = "quat_ik.bake"
    bl_label = "Bake Quat IK"
    bl_description = "Solve the chains on every frame of a range and key the bones' rotations"
    bl_options = {"REGISTER", "UNDO"}

    armature: StringProperty(name="Armature", description="Armature object to bake (empty: the active object)")
    chains: EnumProperty(name="Chains", description="Which chains to bake", items=CHAIN_SETS)
    chain_name: StringProperty(
        name="Chain Name", description="Bake only the chain with this name (or tip bone); overrides Chains"
    )
    frame_start: IntProperty(name="Start Frame", description="First frame to bake (default: the scene's)", default=1)
    frame_end: IntProperty(name="End Frame", description="Last frame to bake (default: the scene's)", default=250)
    step: IntProperty(
        name="Frame Step",
        description="Key every this many frames and the last; other keys in the range are replaced",
        default=1,
        min=1,
        max=1000,
    )
    destination: EnumProperty(name="Into", description="Where the keys go", items=DESTINATIONS)
    interpolation: EnumProperty(name="Interpolation", description="Interpolation of the new keys", items=INTERPOLATIONS)
    simplify: BoolProperty(
        name="Remove Redundant Keys",
        description=(
            "Drop keys that straight lines through the kept keys reproduce within the tolerance "
            "(with Constant interpolation: keys within the tolerance of the key held before them)"
        ),
    )
    simplify_tolerance: FloatProperty(
        name="Tolerance",
        description=(
            "Largest change (radians or quaternion units) a dropped key may make with Linear or Constant "
            "interpolation; Bezier curves bulge between the kept keys and may stray further"
        ),
        default=1e-3,
        min=0.0,
        precision=5,
    )
    ease_jumps: IntProperty(
        name="Ease Jumps",
        description=(
            "Spread each jump of the pose from one solution branch to another over this many frames, "
            "missing the target on the way where no smooth crossing reaches it (0: keep the jumps and reach the target on both sides)"
        ),
        default=0,
        min=0,
        soft_max=60,
    )
    cyclic: BoolProperty(
        name="Cyclic",
        description=(
            "The range loops, as a walk cycle: solve so the pose at the last frame leads smoothly into the first "
            "and the keys loop without a pop (a last frame whose target repeats the first's gets the first "
            "frame's pose)"
        ),
    )
    time_limit: FloatProperty(
        name="Time Limit",
        description=(
            "Seconds each chain's shot may spend improving its frames (searching for missed goals and other "
            "solution branches) before it keeps what it has (0: no limit)"
        ),
        default=0.0,
        min=0.0,
        soft_max=600.0,
        step=100,
        precision=1,
    )
    set_manual: BoolProperty(
        name="Set Chains to Manual",
        description="Switch the baked chains to Manual mode so they do not solve over their new keys",
        default=True,
    )
    interactive: BoolProperty(options={"HIDDEN", "SKIP_SAVE"})

    @classmethod
    def poll(cls, context):
        if context.scene is None:
            compat.poll_message(cls, "No scene")
            return False
        return True

    # ------------------------------------------------------------------ setup

    def _armature(self, context):
        from ..errors import ChainError

        if self.armature:
            ob = bpy.data.objects.get(self.armature)
            if ob is None:
                raise ChainError(f"Armature '{self.armature}' not found")
            return ob
        if context.object is None:
            raise ChainError("No active object: select an armature or give one")
        return context.object

    def _chains(self, ob):
        """The chains asked for, with every chain solved with them as one body (a body is baked
        whole: its shared bones take all its goals)."""
        from ..chains import settings as chain_settings

        return chain_settings.with_bodies(ob, self._chosen_chains(ob))

    def _chosen_chains(self, ob):
        from ..chains import settings as chain_settings
        from ..errors import ChainError
        from ..rig import reader

        reader.check_armature(ob)
        all_chains = list(ob.quat_ik.chains)
        if self.chain_name:
            found = [c for c in all_chains if c.name == self.chain_name] or [
                c for c in all_chains if c.tip_bone == self.chain_name
            ]
            if not found:
                names = ", ".join(c.name for c in all_chains) or "none"
                raise ChainError(f"No chain '{self.chain_name}' on '{ob.name}' (chains: {names})")
            return found
        if self.chains == "ACTIVE":
            chain = chain_settings.active_chain(ob)
            return [chain] if chain is not None else []
        enabled = [c for c in all_chains if c.enabled]
        if self.chains == "SELECTED":
            return [
                c
                for c in enabled
                if any(
                    compat.is_bone_selected(ob, name)
                    for name in reader.chain_bone_names(ob, c.tip_bone, c.chain_length)
                )
            ]
        return enabled

    def _make_bake(self, context):
        from ..bake import bake

        scene = context.scene
        ob = self._armature(context)
        props = self.properties
        start = self.frame_start if props.is_property_set("frame_start") else scene.frame_start
        end = self.frame_end if props.is_property_set("frame_end") else scene.frame_end
        settings = bake.BakeSettings(
            frame_start=start,
            frame_end=end,
            step=self.step,
            destination=self.destination,
            interpolation=self.interpolation,
            simplify=self.simplify,
            simplify_tolerance=self.simplify_tolerance,
            ease_jumps=self.ease_jumps,
            cyclic=self.cyclic,
            set_manual=self.set_manual,
            time_limit=self.time_limit if self.time_limit > 0.0 else None,
        )
        return bake.Bake(scene, ob, self._chains(ob), settings)

    def _finish(self, job) -> set[str]:
        """Write the solved keys and report (the steps before have solved every chain)."""
        from ..errors import ChainError

        try:
            summary = job.write()
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        for warning in summary.warnings:
            self.report({"WARNING"}, warning)
        total = summary.frames * summary.chains
        times = ", ".join(f"{step} {seconds:.2f} s" for step, seconds in summary.seconds.items())
        self.report(
            {"INFO"},
            f"Baked {summary.chains} chain(s) over {summary.frames} frames into '{summary.action_name}': "
            f"{summary.keys} keys, {summary.converged_frames}/{total} reached, largest error {summary.max_error:.4g} "
            f"({times})",
        )
        return {"FINISHED"}

    @staticmethod
    def _steps(job, depsgraph_getter, threaded: bool = False) -> Iterator[tuple[str, float, str]]:
        """Read the inputs, then solve chain by chain, changing nothing: yields (phase "read"
        or "solve", the fraction of that phase done, what is being done) after each frame
        read and each chain solved, and ``threaded`` while a chain solves in a worker thread.
        A range of several blocks goes on block by block (``job.block_index``; fractions are of
        the block's phase); ``_finish`` writes the keys."""
        blocks = job.block_count

        def in_block(doing: str) -> str:
            if blocks == 1:
                return doing
            first, end = job.blocks[job.block_index]
            return f"frames {int(job.frames[first])}-{int(job.frames[end - 1])} of {len(job.frames)}: {doing}"

        for fraction in job.gather(depsgraph_getter):
            yield "read", fraction, in_block("reading frame inputs")
        names = [rig.chain_name for rig in job.rigs]

        def solving(solved: int) -> str:
            if solved < len(names):
                return in_block(f"solving '{names[solved]}' ({solved + 1} of {len(names)})")
            return in_block("writing keys" if job.block_index + 1 == blocks else "solved")

        yield "solve", 0.0, solving(0)
        for solved, within in job.solve_steps(threaded):
            yield "solve", (solved + within) / len(names), solving(solved)
        for phase, fraction in job.block_steps(threaded):
            if phase == "read":
                yield "read", fraction, in_block("reading frame inputs")
            else:
                yield "solve", fraction, solving(min(int(fraction * len(names)), len(names)))

    # ------------------------------------------------------------------ exec (Python, command line)

    def execute(self, context):
        from ..errors import ChainError

        try:
            job = self._make_bake(context)
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        if self.interactive and context.window is not None and not bpy.app.background:
            return self._start_modal(context, job)
        progress = _ConsoleProgress(job)
        try:
            with interrupt.stoppable(threading.Event(), progress.within_chain):
                for phase, fraction, _doing in self._steps(job, context.evaluated_depsgraph_get):
                    progress.step(phase, fraction)
        except ChainError as error:
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        return self._finish(job)

    # ------------------------------------------------------------------ invoke + modal (UI)

    def invoke(self, context, event):
        scene = context.scene
        if not self.properties.is_property_set("frame_start"):
            self.frame_start = scene.frame_start
        if not self.properties.is_property_set("frame_end"):
            self.frame_end = scene.frame_end
        self.interactive = True
        return context.window_manager.invoke_props_dialog(self, width=320)

    def _start_modal(self, context, job):
        from ..runtime.state import session

        wm = context.window_manager
        self._job = job
        # Chains solve in a worker thread: the window stays live and Esc stops a long solve.
        self._steps_left = self._steps(job, context.evaluated_depsgraph_get, threaded=True)
        self._timer = wm.event_timer_add(READ_POLL_S, window=context.window)
        wm.modal_handler_add(self)
        wm.progress_begin(0, 1000)
        self._show_status(context, "reading frame inputs")
        session.bake_progress.update(
            phase="read", fraction=0.0, following="reading frame inputs", poll_s=self._timer.time_step
        )
        return {"RUNNING_MODAL"}

    def _poll_every(self, context, seconds: float) -> None:
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        self._timer = wm.event_timer_add(seconds, window=context.window)

    @staticmethod
    def _show_status(context, doing: str) -> None:
        context.workspace.status_text_set(f"Quat IK bake: {doing}... (Esc to cancel)")

    def _stop_modal(self, context) -> None:
        from ..runtime.state import session

        session.bake_progress.clear()
        wm = context.window_manager
        wm.event_timer_remove(self._timer)
        wm.progress_end()
        context.workspace.status_text_set(None)

    def modal(self, context, event):
        from ..errors import ChainError
        from ..runtime.state import session

        if event.type == "ESC":
            # Runs the reading's finally (the frame goes back) or stops the solve running.
            self._steps_left.close()
            self._stop_modal(context)
            self.report({"WARNING"}, "Bake cancelled: nothing changed")
            return {"CANCELLED"}
        if event.type != "TIMER":
            return {"RUNNING_MODAL"}
        deadline = time.perf_counter() + MODAL_BUDGET_S
        try:
            # Back to Blender within the budget, and after every chain solved (one may take
            # seconds): the bar and the status line move, and Esc is seen between steps.
            for phase, fraction, following in self._steps_left:
                # Reading fills the first half of (each block's share of) the bar, solving the second.
                within = 500 * fraction + (500 if phase == "solve" else 0)
                job = self._job
                context.window_manager.progress_update(int((1000 * job.block_index + within) / job.block_count))
                if phase == "solve" and self._timer.time_step != SOLVE_POLL_S:
                    self._poll_every(context, SOLVE_POLL_S)
                session.bake_progress.update(
                    phase=phase, fraction=fraction, following=following, poll_s=self._timer.time_step
                )
                if phase == "solve" or time.perf_counter() > deadline:
                    self._show_status(context, following)
                    return {"RUNNING_MODAL"}
        except ChainError as error:
            self._stop_modal(context)
            self.report({"ERROR"}, str(error))
            return {"CANCELLED"}
        except Exception as error:  # a bug: say so, and leave no progress bar or timer behind
            traceback.print_exc()
            self._stop_modal(context)
            self.report({"ERROR"}, f"Bake failed, nothing changed: {type(error).__name__}: {error}")
            return {"CANCELLED"}
        self._stop_modal(context)
        return self._finish(self._job)

    def draw(self, context):
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column(align=True)
        col.prop(self, "frame_start", text="Frames Start")
        col.prop(self, "frame_end", text="End")
        col.prop(self, "step")
        layout.prop(self, "chains")
        layout.prop(self, "destination")
        layout.prop(self, "interpolation")
        layout.prop(self, "simplify")
        if self.simplify:
            layout.prop(self, "simplify_tolerance")
        layout.prop(self, "ease_jumps")
        layout.prop(self, "cyclic")
        layout.prop(self, "time_limit")
        layout.prop(self, "set_manual")
        cost = self._cost_shown(context)
        if cost is not None:
            box = layout.box()
            box.label(text=cost.text(), icon="TIME")
            if cost.frames > _block_frames() and not self.cyclic:
                box.label(text=f"Solved {_block_frames():,} frames at a time, keyed at the end")

    def _cost_shown(self, context):
        """What the bake in the dialog will cost, when it is long enough to say (else None)."""
        from ..bake import bake
        from ..errors import ChainError
        from ..rig import reader

        frames = bake.frame_count(self.frame_start, self.frame_end, self.step)
        try:
            ob = self._armature(context)
            bones = sum(len(reader.chain_bone_names(ob, c.tip_bone, c.chain_length)) for c in self._chains(ob))
        except ChainError:
            return None  # the bake will say what is wrong when it starts
        cost = bake.bake_cost(frames, bones)
        return cost if bones and (cost.seconds >= LONG_BAKE_S or frames > _block_frames()) else None


CLASSES = (QUATIK_OT_bake,)
