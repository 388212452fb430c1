"""Bake chains over a frame range into keyframes, in three steps.

1. ``gather()``: every chain's inputs for every frame (a generator, so a modal operator can
   show progress and stop on Esc). When ``input_sampling`` can vouch for all chains, they come
   straight from the F-curves and no frame is stepped; otherwise it steps through the frames
   once (``scene.frame_set``) and reads them from the evaluated scene, restoring the current
   frame however it ends, and the transforms changed there without keys, which the frame
   changes would replace (``unkeyed_edits``). The live/per-frame handlers are off meanwhile.
2. ``solve()``: one batched solve per chain for all frames (``chain_solve``).
3. ``write()``: all keys in bulk (``keyframes``), each bone in its rotation mode, into the
   active action, a new action, or a new NLA strip. Keys outside the range and on other
   bones are untouched.

Everything that can be wrong with the chains is checked when the Bake is created, before
anything changes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

import bpy
import numpy as np

from . import (
    chain_solve,
    compat,
    input_sampling,
    keyframes,
    locks,
    own_pose,
    pose_solve,
    rig_reader,
    rotation_modes,
    runtime,
    solve_adapter,
    unkeyed_edits,
)
from .errors import ChainError

DESTINATIONS = ("ACTIVE_ACTION", "NEW_ACTION", "NLA")
LISTED_JUMPS = 5  # frames named in a bake's jump warning; the panel's Next Pose Jump finds them all


def jumps_warning(frames: np.ndarray, turns: np.ndarray) -> str:
    """The bake report's line on a chain's pose jumps (frames where the pose appears, turns in
    radians)."""
    largest = int(np.argmax(turns))
    where = f"{np.degrees(turns[largest]):.0f}° at frame {int(frames[largest])}"
    if len(frames) > 1:
        listed = ", ".join(str(int(frame)) for frame in frames[:LISTED_JUMPS])
        if len(frames) > LISTED_JUMPS:
            listed += f" and {len(frames) - LISTED_JUMPS} more"
        where = f"at {len(frames)} frames ({listed}), up to {where}"
    return (
        f"the pose jumps between solution branches {where}, where no pose that moves on smoothly comes as "
        "close to the target; key a pose or widen the limits there"
    )


@dataclass(frozen=True)
class BakeSettings:
    frame_start: int
    frame_end: int
    step: int = 1
    destination: str = "ACTIVE_ACTION"
    interpolation: str = "BEZIER"
    simplify: bool = False
    simplify_tolerance: float = 1e-4
    set_manual: bool = True
    ease_jumps: int = 0  # frames each pose jump is eased over, where need be missing the target on the way (0: kept)
    cyclic: bool = False  # the range loops: its last frame leads into its first (``solver.cycles``)
    sample_inputs: bool = True  # False: always step frames to gather (tests compare the two)


@dataclass(frozen=True)
class BakeSummary:
    chains: int
    frames: int
    keys: int
    action_name: str
    converged_frames: int
    max_error: float
    warnings: tuple[str, ...]
    seconds: dict  # wall time of each step: "gather", "solve", "write"
    gather_path: str = ""  # how the inputs were gathered: "sampled" or "frame_set"


class Bake:
    """One bake of ``chains`` (priority order) of armature ``ob``; see the module docstring."""

    def __init__(self, scene, ob, chains, settings: BakeSettings) -> None:
        if settings.frame_end < settings.frame_start:
            raise ChainError(f"Frame range {settings.frame_start}-{settings.frame_end} is empty")
        if settings.step < 1:
            raise ChainError("Frame step must be at least 1")
        if settings.simplify and not (math.isfinite(settings.simplify_tolerance) and settings.simplify_tolerance >= 0):
            raise ChainError(f"Redundant-key tolerance must be a number, 0 or more, not {settings.simplify_tolerance}")
        if settings.ease_jumps < 0:
            raise ChainError("Frames to ease jumps over cannot be negative")
        if not chains:
            raise ChainError(f"No chains to bake on '{ob.name}'")
        if settings.destination not in DESTINATIONS:
            raise ChainError(f"Unknown bake destination {settings.destination!r}")
        if not -compat.MAX_FRAME <= settings.frame_start <= settings.frame_end <= compat.MAX_FRAME:
            raise ChainError(
                f"Frame range {settings.frame_start}-{settings.frame_end} reaches past Blender's frames "
                f"(-{compat.MAX_FRAME} to {compat.MAX_FRAME})"
            )
        rig_reader.check_armature(ob)
        anim = ob.animation_data
        remap = scene.render.frame_map_old, scene.render.frame_map_new
        if remap[0] != remap[1]:
            # Frame f shows the animation at f·old/new: keys written at f would play elsewhere.
            raise ChainError(
                f"Time Remapping is on ({remap[0]} → {remap[1]}, Output Properties > Frame Range): "
                "set Old and New equal to bake"
            )
        if anim is not None and anim.use_tweak_mode:
            # The tweaked strip's action plays remapped in time: keys would land on other frames.
            raise ChainError(f"'{ob.name}' is in NLA tweak mode: leave it (Tab in the NLA editor) before baking")
        if settings.destination == "ACTIVE_ACTION" and anim is not None and anim.action is not None:
            if not compat.is_editable(anim.action):
                raise ChainError(f"The active action '{anim.action.name}' is linked and cannot be changed")
        self.scene = scene
        self.ob = ob
        self.chains = list(chains)
        self.settings = settings
        self.rigs, self.options = [], []
        for chain in self.chains:
            try:
                rig, options = pose_solve.rig_and_options(ob, chain)
            except ChainError as error:
                raise ChainError(f"Chain '{chain.name}': {error}") from None
            if settings.ease_jumps:  # in keys: a bake keys every step-th frame
                options = replace(options, ease_jumps=-(-settings.ease_jumps // settings.step))
            if settings.cyclic:
                options = replace(options, cyclic=True)
            self.rigs.append(rig)
            self.options.append(options)
        # What each chain was built from at this frame: stepping frames checks it holds.
        self.built_from = [rig_reader.frozen_values(ob, rig.bone_names) for rig in self.rigs]
        self.frames = np.arange(settings.frame_start, settings.frame_end + 1, settings.step, dtype=float)
        if self.frames[-1] != settings.frame_end:
            self.frames = np.append(self.frames, float(settings.frame_end))  # the range ends where asked
        # Per chain: a StackedInputs (sampled) or a list of FrameInputs, one per frame (stepped).
        self.inputs: list[chain_solve.StackedInputs | list[rig_reader.FrameInputs]] = [[] for _ in self.chains]
        self.solutions: list[chain_solve.ChainSolution] = []
        self.seconds = {"gather": 0.0, "solve": 0.0, "write": 0.0}
        self.gather_path = ""  # "sampled" or "frame_set" once gathered
        self.sampling_refused = ""  # why the inputs could not be sampled, for messages and tests

    # 1. ----------------------------------------------------------------- gather

    def gather(self, depsgraph_getter) -> Iterator[float]:
        """Read every chain's inputs for every frame; yields the fraction done.

        Sampled from the F-curves when ``input_sampling`` vouches for every chain (one yield, no
        frame changes), else read frame by frame (a yield after each frame). ``gather_path``
        says which ran. ``depsgraph_getter()`` returns the evaluated depsgraph
        (``context.evaluated_depsgraph_get``).
        """
        if self.settings.sample_inputs and self._sample(depsgraph_getter):
            yield 1.0
            return
        yield from self._step_frames(depsgraph_getter)

    def _sample(self, depsgraph_getter) -> bool:
        """Fill ``inputs`` from the F-curves if every chain allows it; False (inputs untouched) if not."""
        started = time.perf_counter()
        sampled = []
        with runtime.suspend_solving():
            depsgraph = depsgraph_getter()
            for rig in self.rigs:
                inputs, why_not = input_sampling.sample_or_reason(rig, self.frames, depsgraph)
                if inputs is None:
                    self.sampling_refused = f"chain '{rig.chain_name}': {why_not}"
                    break
                sampled.append(inputs)
        self.seconds["gather"] += time.perf_counter() - started
        if len(sampled) < len(self.rigs):
            return False
        self.inputs = sampled
        self.gather_path = "sampled"
        return True

    def _step_frames(self, depsgraph_getter) -> Iterator[float]:
        """Read inputs frame by frame; yields the fraction done after each frame."""
        self.gather_path = "frame_set"
        scene = self.scene
        frame, subframe = scene.frame_current, scene.frame_subframe
        edits = unkeyed_edits.UnkeyedEdits(scene)  # the frame changes below would replace them
        try:
            with runtime.suspend_solving():
                depsgraph = depsgraph_getter()
                for i, f in enumerate(self.frames):
                    started = time.perf_counter()
                    scene.frame_set(int(f))
                    with rig_reader.visibility_snapshot():  # (per frame: visibility may be animated)
                        for rig, inputs, built_from in zip(self.rigs, self.inputs, self.built_from, strict=True):
                            try:
                                rig_reader.check_frozen(rig, built_from)
                                inputs.append(rig_reader.read_frame_inputs(rig, depsgraph))
                            except ChainError as error:
                                raise ChainError(f"Chain '{rig.chain_name}', frame {int(f)}: {error}") from None
                    self.seconds["gather"] += time.perf_counter() - started
                    yield (i + 1) / len(self.frames)
        finally:
            with runtime.suspend_solving():
                scene.frame_set(frame, subframe=subframe)
                edits.restore()

    def gather_all(self, depsgraph_getter, progress=None) -> None:
        for fraction in self.gather(depsgraph_getter):
            if progress is not None:
                progress(fraction)

    # 2. ----------------------------------------------------------------- solve

    def solve(self) -> list[chain_solve.ChainSolution]:
        for _ in self.solve_steps():
            pass
        return self.solutions

    def solve_steps(self, threaded: bool = False) -> Iterator[tuple[int, float]]:
        """Solve the chains one after another, yielding (chains solved, fraction of the next
        one's solve done) once each chain is solved and, ``threaded``, while a chain's solve
        runs in a worker thread (``chain_solve.SolvingInThread``: closing this generator stops
        it). ``solutions`` holds the chains solved so far; a ChainError names the first that
        failed, after all are solved. Changes nothing in the scene."""
        started = time.perf_counter()
        self.inputs = [
            inputs if isinstance(inputs, chain_solve.StackedInputs) else chain_solve.StackedInputs.stack(inputs)
            for inputs in self.inputs
        ]
        jobs = [
            chain_solve.ChainJob(
                rig=rig,
                options=options,
                inputs=inputs,
                warm_start=False,
                sequence=True,
                own_rotations=self._own_rotations(rig, inputs),
                start_pose=self._pose_before_range(rig),
            )
            for rig, options, inputs in zip(self.rigs, self.options, self.inputs, strict=True)
        ]
        self.solutions = []
        solving = chain_solve.SolvingInThread() if threaded else chain_solve.solve_inline
        steps = chain_solve.solve_chains_stepwise(jobs, self.solutions, solving)
        while True:  # (the time between steps, spent elsewhere by a modal bake, does not count)
            step = next(steps, False)
            self.seconds["solve"] += time.perf_counter() - started
            if step is False:
                break
            within = 0.0 if step is not None else solving.fraction  # None: still solving
            yield len(self.solutions), within
            started = time.perf_counter()
        failed = [s.error for s in self.solutions if s.error is not None]
        if failed:
            raise ChainError(failed[0])  # names its chain (``chain_solve``)

    def _pose_before_range(self, rig) -> np.ndarray | None:
        """(n, 4) the chain's pose keyed one step before the range, where the active action keys
        every bone it writes there: a bake of part of an animation starts from it and joins it
        (from rest, the first frame may land on another branch than the keys before it)."""
        anim = self.ob.animation_data
        if anim is None or anim.action is None:
            return None
        pose = np.tile((1.0, 0.0, 0.0, 0.0), (len(rig.bone_names), 1))
        for i, (name, writable) in enumerate(zip(rig.bone_names, rig.writable, strict=True)):
            if not writable:
                continue  # held by locks: identity in the solver's terms
            pose_bone = self.ob.pose.bones[name]
            mode = pose_bone.rotation_mode
            values = self._previous_values(anim.action, pose_bone, *rotation_modes.data_path_and_size(mode))
            if values is None:
                return None
            pose[i] = tuple(rotation_modes.quaternion_of(mode, values))
        return pose

    @staticmethod
    def _own_rotations(rig, inputs: chain_solve.StackedInputs):
        """The bones' own pose the chain's Influence blends with, where it is below 1: what was
        read, except where a bone still holds what Live or Per Frame wrote (``own_pose``)."""
        if inputs.influence is None or np.all(inputs.influence >= 1.0):
            return None
        return own_pose.own_rotations(rig, inputs.rotations)

    # 3. ----------------------------------------------------------------- write

    def _target_action(self):
        ob, destination = self.ob, self.settings.destination
        anim = ob.animation_data or ob.animation_data_create()
        if destination == "ACTIVE_ACTION" and anim.action is not None:
            return anim.action
        action = self._new_action()
        if destination != "NLA":  # the NLA strip comes after the keys: see _add_nla_strip
            previous = anim.action
            if previous is not None and not previous.use_fake_user:
                previous.use_fake_user = True  # replaced, not lost: it stays in the file
            compat.assign_action(ob, action)
        return action

    def _add_nla_strip(self, action) -> None:
        """A new track playing ``action``; made once the keys are in, because a strip takes its
        frame range from its action when created (from an empty action: one frame)."""
        track = self.ob.animation_data.nla_tracks.new()
        track.name = "Quat IK Bake"
        compat.new_nla_strip(self.ob, track, action.name, self.settings.frame_start, action)

    def _new_action(self):
        return bpy.data.actions.new(f"{self.ob.name}_QuatIK")

    def _previous_values(self, action, pose_bone, path: str, size: int):
        """The bone's value just before the range, to continue from (None if no channel is keyed
        there): keyed channels as their curves play, the others as the bone holds them."""
        found = compat.find_channels(action, self.ob)
        if found is None:
            return None
        fcurves = found[0]
        before = self.frames[0] - self.settings.step
        values = list(getattr(pose_bone, path))
        keyed = False
        for index in range(size):
            fcurve = fcurves.find(pose_bone.path_from_id(path), index=index)  # (escapes the bone's name)
            if fcurve is not None and len(fcurve.keyframe_points):
                values[index] = fcurve.evaluate(before)
                keyed = keyed or fcurve.keyframe_points[0].co[0] <= before
        return values if keyed else None

    def write(self) -> BakeSummary:
        """Write every solved chain's keys; returns a summary."""
        started = time.perf_counter()
        action = self._target_action()
        settings = self.settings
        frame_range = (float(settings.frame_start), float(settings.frame_end))  # with a step, keys between go too
        channels = []
        for solution in self.solutions:
            rig = solution.rig
            for i, (name, writable) in enumerate(zip(rig.bone_names, rig.writable, strict=True)):
                if not writable:
                    continue
                pose_bone = self.ob.pose.bones[name]
                mode = pose_bone.rotation_mode
                path, size = rotation_modes.data_path_and_size(mode)
                previous = self._previous_values(action, pose_bone, path, size)
                held = locks.HeldChannels.of(pose_bone)
                values = held.restore(rotation_modes.channel_values(mode, solution.outcome.rotations[:, i], previous))
                keep = np.arange(len(self.frames))
                if settings.simplify:
                    keep = keyframes.simplify(self.frames, values, settings.simplify_tolerance, settings.interpolation)
                for index in range(size):
                    if held.locked[index]:
                        continue  # a locked channel keeps its value: no keys
                    channels.append(
                        keyframes.ChannelKeys(
                            data_path=pose_bone.path_from_id(path),
                            index=index,
                            group=name,
                            frames=self.frames[keep],
                            values=values[keep, index],
                        )
                    )
        keys = keyframes.write_channels(
            action, self.ob, channels, frame_range=frame_range, interpolation=settings.interpolation
        )
        if settings.destination == "NLA":
            self._add_nla_strip(action)
        warnings = []
        converged, max_error = 0, 0.0
        for chain, solution in zip(self.chains, self.solutions, strict=True):
            outcome = solution.outcome
            converged += int(np.sum(outcome.converged))
            max_error = max(max_error, float(np.max(outcome.position_error)))
            warnings += [f"{rig_reader.chain_label(chain)}: {w}" for w in solution.rig.warnings]
            jump_frames, turns = solve_adapter.visible_jumps(outcome, self.frames)
            if jump_frames.size:
                warnings.append(f"{rig_reader.chain_label(chain)}: {jumps_warning(jump_frames, turns)}")
            if outcome.wrap_jump:
                warnings.append(f"{rig_reader.chain_label(chain)}: {self._wrap_warning(outcome.wrap_jump)}")
            report = pose_solve.ChainReport(chain, solution, None)
            pose_solve.record_status(chain, report, jump_frames, float(np.max(turns, initial=0.0)))
            if settings.set_manual and chain.mode != "MANUAL":
                chain.mode = "MANUAL"  # the keys now drive the bones; do not solve over them
        anim = self.ob.animation_data
        if settings.destination == "NLA" and anim.action is not None:
            warnings.append(f"the active action '{anim.action.name}' plays on top of the new NLA strip")
        warnings += self._played_differently(action, channels)
        self._show_new_keys()
        self.seconds["write"] = time.perf_counter() - started
        runtime.last_bake_seconds = {**self.seconds, "gather_path": self.gather_path}
        return BakeSummary(
            chains=len(self.chains),
            frames=len(self.frames),
            keys=keys,
            action_name=action.name,
            converged_frames=converged,
            max_error=max_error,
            warnings=tuple(warnings),
            seconds=dict(self.seconds),
            gather_path=self.gather_path,
        )

    def _played_differently(self, action, channels) -> list[str]:
        """Warnings for what makes the keys play otherwise than they were solved: F-curve
        modifiers that change values (Cycles only repeats them), and an active action blended
        with NLA tracks below it instead of replacing them."""
        found = []
        fcurves = compat.find_channels(action, self.ob)
        if fcurves is not None:
            modified = set()
            for channel in channels:
                fcurve = fcurves[0].find(channel.data_path, index=channel.index)
                if fcurve is not None and any(m.active and not m.mute and m.type != "CYCLES" for m in fcurve.modifiers):
                    modified.add(channel.group)
            if modified:
                found.append(f"F-curve modifiers on {', '.join(sorted(modified))} change the baked keys as they play")
        anim = self.ob.animation_data
        below = [track for track in anim.nla_tracks if not track.mute and len(track.strips)]
        plays_action = self.settings.destination != "NLA"
        if plays_action and below and (anim.action_blend_type != "REPLACE" or anim.action_influence < 1.0):
            found.append(
                f"the action plays blended ({anim.action_blend_type.title()}, influence {anim.action_influence:g}) "
                "with the NLA tracks below it: what plays is not the baked pose"
            )
        return found

    def _wrap_warning(self, turn: float) -> str:
        first, last = int(self.frames[0]), int(self.frames[-1])
        return (
            f"the loop does not close: the pose jumps {np.degrees(turn):.0f}° where frame {last} leads into frame "
            f"{first}, between solution branches; key a pose or widen the limits there"
        )

    def _show_new_keys(self) -> None:
        """Evaluate the scene's depsgraphs so the pose shows the new keys at the current frame.

        Writing keys already tags the animation for re-evaluation (checked in 3.4, 4.2, 4.5 and
        5.0), so a viewport shows them at its next redraw anyway; evaluating here also puts the
        baked values in the pose bones' properties for Python code that reads them right after
        the bake. Unlike ``frame_set`` this re-evaluates only what the new keys changed, and runs
        no frame-change handlers.
        """
        with runtime.suspend_solving():
            for view_layer in self.scene.view_layers:
                depsgraph = view_layer.depsgraph  # None for a view layer never evaluated
                if depsgraph is not None:
                    depsgraph.update()
