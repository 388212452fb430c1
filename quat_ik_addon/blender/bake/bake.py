"""Bake chains over a frame range into keyframes, in three steps.

1. ``gather()``: every chain's inputs for every frame (a generator, so a modal operator can
   show progress and stop on Esc). When ``input_sampling`` can vouch for all chains, they come
   straight from the F-curves and no frame is stepped; otherwise it steps through the frames
   once (``scene.frame_set``) and reads them from the evaluated scene, restoring the current
   frame however it ends, and the transforms changed there without keys, which the frame
   changes would replace (``unkeyed_edits``). The live/per-frame handlers are off meanwhile.
2. ``solve()``: one batched solve per chain for all frames (``solving.chain_jobs``).
3. ``write()``: all keys in bulk (``keyframes``), each bone in its rotation mode, into the
   active action, a new action, or a new NLA strip. Keys outside the range and on other
   bones are untouched.

Everything that can be wrong with the chains is checked when the Bake is created, before
anything changes.

A range longer than ``BLOCK_FRAMES`` is read and solved a block of frames at a time: each
block starts from the pose the block before it ended in (the solver's start pose, as a bake
joining keys before its range starts from them), and what a block leaves is its keys as the
single-precision numbers the curves will hold (4 bytes a key, where Blender takes about 80 for
each key it keeps), so the bake's working memory is one block's whatever the range. The keys
are written once every block is solved: nothing in the scene changes before, every block reads
its inputs from the scene as it was (the bones' own keys included), and Esc or an error leaves
the scene as it was. A range of one block runs as before; ``write()`` bakes any blocks left
after the first. A cyclic range is one block whatever its length: its last frame leads into
its first.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import bpy
import numpy as np

from ...solver.request import shot_jumps
from ...solver.request import within as within_time
from .. import compat
from ..errors import ChainError
from ..rig import locks, own_pose, reader, rotation_modes
from ..runtime.state import session
from ..solving import body_jobs, chain_jobs, current_frame, jobs
from . import input_sampling, keyframes, unkeyed_edits

DESTINATIONS = ("ACTIVE_ACTION", "NEW_ACTION", "NLA")
LISTED_JUMPS = 5  # frames named in a bake's jump warning; the panel's Next Pose Jump finds them all
# Frames read and solved at a time. A block's working memory (inputs, the solver's batches,
# the keys' values on their way) is about 11 KB a frame for a 30-bone chain: ~110 MB for a
# block of 10,000 frames, where 40,000 frames in one piece took 350 MB.
BLOCK_FRAMES = 10_000
# What a bake costs, for the estimate shown before a long one starts (``bake_cost``): seconds
# per bone and frame until a bake of this session has measured them (read, solved and keyed:
# 100,000 frames of a 30-bone chain took ~50 s; from 4 µs with inputs sampled from the curves
# to 60 µs stepping frames were measured), and the memory Blender takes for each key it holds
# (a BezTriple, 72 bytes, with the curve's arrays around it).
SECONDS_PER_BONE_FRAME = 2e-5
MEASURED_FROM_BONE_FRAMES = 10_000  # a bake this big measures the speed later estimates use
BYTES_PER_KEY = 80


def jumps_warning(frames: np.ndarray, turns: np.ndarray, pin_edges: dict[float, str] | None = None) -> str:
    """The bake report's line on a chain's pose jumps (frames where the pose appears, turns in
    radians). ``pin_edges``: frame -> what a pin of the chain's body does there ("pin 'foot.L'
    takes hold"): jumps there are the pin's, said as such."""
    at_pins = [f"{pin_edges[float(f)]} at frame {int(f)}" for f in frames if pin_edges and float(f) in pin_edges]
    if at_pins and len(at_pins) == len(frames):
        return (
            "the pose jumps where "
            + ", ".join(at_pins[:LISTED_JUMPS])
            + f" (up to {np.degrees(np.max(turns)):.0f}°): the pinned bone is held from there; key the pose "
            "toward where it is held before that frame, or start the pin where the bone already is"
        )
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
    cyclic: bool = False  # the range loops: its last frame leads into its first (``solver.shots.cycles``)
    sample_inputs: bool = True  # False: always step frames to gather (tests compare the two)
    time_limit: float | None = None  # seconds each chain's shot may spend improving its frames (None: no limit)


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


@dataclass(frozen=True)
class BakeCost:
    """What a bake of ``frames`` frames of ``bones`` bones is expected to take: about ``seconds``
    and ``key_bytes`` of memory for the keys it leaves in the file (its own working memory is one
    block's, ``BLOCK_FRAMES``)."""

    frames: int
    bones: int
    seconds: float
    key_bytes: int

    def text(self) -> str:
        """``"100,000 frames × 30 bones: about 60 s, 960 MB of keys"``."""
        seconds = self.seconds
        if seconds < 90:
            took = f"{max(1, round(seconds))} s"
        elif seconds < 5400:
            took = f"{round(seconds / 60)} min"
        else:
            took = f"{seconds / 3600:.1f} h"
        size = self.key_bytes / 1e6
        held = f"{size / 1000:.1f} GB" if size >= 1000 else f"{max(1, round(size))} MB"
        return f"{self.frames:,} frames × {self.bones} bones: about {took}, {held} of keys"


def bake_cost(frames: int, bones: int, channels_per_bone: int = 4) -> BakeCost:
    """The expected cost of baking ``frames`` frames of ``bones`` bones (keys: ``channels_per_bone``
    a bone, 4 for quaternions)."""
    speed = session.bake_seconds_per_bone_frame or SECONDS_PER_BONE_FRAME
    return BakeCost(
        frames=frames,
        bones=bones,
        seconds=frames * bones * speed,
        key_bytes=frames * bones * channels_per_bone * BYTES_PER_KEY,
    )


def frame_count(frame_start: int, frame_end: int, step: int) -> int:
    """Frames a bake keys: every ``step``-th from the start, and the end."""
    if frame_end < frame_start or step < 1:
        return 0
    return (frame_end - frame_start) // step + 1 + (1 if (frame_end - frame_start) % step else 0)


@dataclass
class _HeldChannel:
    """One curve's keys held until the bake writes them: frames and values, a piece a block."""

    data_path: str
    index: int
    group: str
    frames: list = field(default_factory=list)
    values: list = field(default_factory=list)


@dataclass
class _ChainTally:
    """A chain's results over the blocks solved so far (what its status and the summary report)."""

    converged: int = 0
    all_converged: bool = True
    max_error: float = 0.0
    max_orientation_error: float = 0.0
    max_iterations: int = 0
    max_restarts: int = 0
    jump_frames: list = field(default_factory=list)
    jump_turns: list = field(default_factory=list)
    # The latest block's ChainSolution: whole for a bake of one block, else one row holding the
    # figures of every block so far (what the chain's status shows).
    last_solution: object = None
    tail: tuple | None = None  # (frames (k,), rotations (k, n, 4)): the block before's last poses


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
        reader.check_armature(ob)
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
                rig, options = current_frame.rig_and_options(ob, chain)
            except ChainError as error:
                raise ChainError(f"Chain '{chain.name}': {error}") from None
            if settings.ease_jumps:  # in keys: a bake keys every step-th frame
                options = replace(options, ease_jumps=-(-settings.ease_jumps // settings.step))
            if settings.cyclic:
                options = replace(options, cyclic=True)
            if settings.time_limit is not None:
                options = within_time(options, settings.time_limit)
            self.rigs.append(rig)
            self.options.append(options)
        # What each chain was built from at this frame: stepping frames checks it holds.
        self.built_from = [reader.frozen_values(ob, rig.bone_names) for rig in self.rigs]
        self.frames = np.arange(settings.frame_start, settings.frame_end + 1, settings.step, dtype=float)
        if self.frames[-1] != settings.frame_end:
            self.frames = np.append(self.frames, float(settings.frame_end))  # the range ends where asked
        # Index ranges of self.frames baked one after another (one for a cyclic range: it loops).
        size = len(self.frames) if settings.cyclic else BLOCK_FRAMES
        self.blocks = [(first, min(first + size, len(self.frames))) for first in range(0, len(self.frames), size)]
        self.block_index = 0  # the block being read, solved or held
        self.blocks_done = 0  # blocks whose keys are held
        self._depsgraph_getter = None  # kept from the first gather, to read the blocks after it
        self._held: list[_HeldChannel] = []  # every curve's keys, block by block, until ``finish``
        self._last_values: dict = {}  # (chain, bone) -> channel values at the block before's last frame
        self._tallies = [_ChainTally() for _ in self.chains]
        self.pin_outcomes: dict = {}  # pin index -> body_jobs.PinOutcome, the worst over the blocks
        # Per chain: a StackedInputs (sampled) or a list of FrameInputs, one per frame (stepped).
        self.inputs: list[jobs.StackedInputs | list[reader.FrameInputs]] = [[] for _ in self.chains]
        self.solutions: list[jobs.ChainSolution] = []
        self.seconds = {"gather": 0.0, "solve": 0.0, "write": 0.0}
        self.gather_path = ""  # "sampled" or "frame_set" once gathered
        self.sampling_refused = ""  # why the inputs could not be sampled, for messages and tests

    @property
    def block_frames(self) -> np.ndarray:
        """The frames of the block being baked (all of them for a range of one block)."""
        first, end = self.blocks[self.block_index]
        return self.frames[first:end]

    @property
    def block_count(self) -> int:
        return len(self.blocks)

    # 1. ----------------------------------------------------------------- gather

    def gather(self, depsgraph_getter) -> Iterator[float]:
        """Read every chain's inputs for every frame; yields the fraction done.

        Sampled from the F-curves when ``input_sampling`` vouches for every chain (one yield, no
        frame changes), else read frame by frame (a yield after each frame). ``gather_path``
        says which ran. ``depsgraph_getter()`` returns the evaluated depsgraph
        (``context.evaluated_depsgraph_get``).
        """
        self._depsgraph_getter = depsgraph_getter
        if self.settings.sample_inputs and self._sample(depsgraph_getter):
            yield 1.0
            return
        yield from self._step_frames(depsgraph_getter)

    def _sample(self, depsgraph_getter) -> bool:
        """Fill ``inputs`` from the F-curves if every chain allows it; False (inputs untouched) if not."""
        started = time.perf_counter()
        sampled = []
        with session.suspend_solving():
            depsgraph = depsgraph_getter()
            for rig in self.rigs:
                inputs, why_not = input_sampling.sample_or_reason(rig, self.block_frames, depsgraph)
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
        frames = self.block_frames
        self.inputs = [[] for _ in self.chains]
        try:
            with session.suspend_solving():
                depsgraph = depsgraph_getter()
                for i, f in enumerate(frames):
                    started = time.perf_counter()
                    scene.frame_set(int(f))
                    with reader.visibility_snapshot():  # (per frame: visibility may be animated)
                        for rig, inputs, built_from in zip(self.rigs, self.inputs, self.built_from, strict=True):
                            try:
                                reader.check_frozen(rig, built_from)
                                inputs.append(reader.read_frame_inputs(rig, depsgraph))
                            except ChainError as error:
                                raise ChainError(f"Chain '{rig.chain_name}', frame {int(f)}: {error}") from None
                    self.seconds["gather"] += time.perf_counter() - started
                    yield (i + 1) / len(frames)
        finally:
            with session.suspend_solving():
                scene.frame_set(frame, subframe=subframe)
                edits.restore()

    def gather_all(self, depsgraph_getter, progress=None) -> None:
        for fraction in self.gather(depsgraph_getter):
            if progress is not None:
                progress(fraction)

    # 2. ----------------------------------------------------------------- solve

    def solve(self) -> list[jobs.ChainSolution]:
        for _ in self.solve_steps():
            pass
        return self.solutions

    def solve_steps(self, threaded: bool = False) -> Iterator[tuple[int, float]]:
        """Solve the chains one after another, yielding (chains solved, fraction of the next
        one's solve done) once each chain is solved and, ``threaded``, while a chain's solve
        runs in a worker thread (``chain_jobs.SolvingInThread``: closing this generator stops
        it). ``solutions`` holds the chains solved so far; a ChainError names the first that
        failed, after all are solved. Changes nothing in the scene."""
        started = time.perf_counter()
        self.inputs = [
            inputs if isinstance(inputs, jobs.StackedInputs) else jobs.StackedInputs.stack(inputs)
            for inputs in self.inputs
        ]
        chain_jobs_here = [
            jobs.ChainJob(
                rig=rig,
                options=options,
                inputs=inputs,
                warm_start=False,
                sequence=True,
                own_rotations=self._own_rotations(rig, inputs),
                start_pose=self._pose_before_block(k, rig),
                frames=self.block_frames,
                priority=chain.priority,
                weight=chain.weight,
            )
            for k, (chain, rig, options, inputs) in enumerate(
                zip(self.chains, self.rigs, self.options, self.inputs, strict=True)
            )
        ]
        self.solutions = []
        solving = chain_jobs.SolvingInThread() if threaded else chain_jobs.solve_inline
        steps = chain_jobs.solve_chains_stepwise(chain_jobs_here, self.solutions, solving)
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
            raise ChainError(failed[0])  # names its chain (``solving.chain_jobs``)

    def _pose_before_block(self, k: int, rig) -> np.ndarray | None:
        """(n, 4) where chain ``k``'s solve of this block starts: the pose keyed before the range
        for the first block, the last pose of the block before for the others."""
        if self.block_index == 0:
            return self._pose_before_range(rig)
        return self._tallies[k].tail[1][-1]

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
    def _own_rotations(rig, inputs: jobs.StackedInputs):
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
        """Hold the solved block's keys, bake the blocks left after it (each read and solved in
        turn), then write every key and finish: the chains' status, the NLA strip, the summary."""
        self.hold_keys()
        while self.block_index + 1 < self.block_count:
            self.next_block()
            self.gather_all(self._depsgraph_getter)
            self.solve()
            self.hold_keys()
        return self.finish()

    def next_block(self) -> None:
        """Move on to the next block: its inputs and solutions replace the last block's."""
        self.block_index += 1
        self.inputs = [[] for _ in self.chains]
        self.solutions = []

    def block_steps(self, threaded: bool = False) -> Iterator[tuple[str, float]]:
        """The blocks after the first (which the caller has read and solved): each block's keys
        are held and the next block read and solved, yielding ("read" or "solve", the fraction
        of this block's phase done) as ``gather`` and ``solve_steps`` do. Changes nothing in the
        scene; the last block is left solved, for ``write()``."""
        while self.block_index + 1 < self.block_count:
            self.hold_keys()
            self.next_block()
            for fraction in self.gather(self._depsgraph_getter):
                yield "read", fraction
            for solved, within in self.solve_steps(threaded):
                yield "solve", (solved + within) / len(self.rigs)

    def _keys_go_to(self):
        """The action the keys will be written into, if it exists already (else they go into a new one)."""
        anim = self.ob.animation_data
        if self.settings.destination == "ACTIVE_ACTION" and anim is not None:
            return anim.action
        return None

    def hold_keys(self) -> None:
        """This block's keys of every solved chain, as the single-precision numbers the curves
        will hold, kept until ``finish`` writes them; and its results tallied. Nothing in the
        scene changes, so the next block reads its inputs from the scene as the first did."""
        started = time.perf_counter()
        settings = self.settings
        frames = self.block_frames
        action = self._keys_go_to() if self.block_index == 0 else None
        # (A key's frame and value are single precision in Blender; without Remove Redundant
        # Keys every curve keys the block's frames, held once.)
        frames_held = frames.astype(np.float32)
        place = 0
        keyed = set()  # (body, bone) keyed by a chain of that body already: its chains share the bone
        for k, solution in enumerate(self.solutions):
            rig = solution.rig
            for i, (name, writable) in enumerate(zip(rig.bone_names, rig.writable, strict=True)):
                if not writable or (solution.body, name) in keyed:
                    continue
                if solution.body:
                    keyed.add((solution.body, name))
                pose_bone = self.ob.pose.bones[name]
                mode = pose_bone.rotation_mode
                path, size = rotation_modes.data_path_and_size(mode)
                if self.block_index == 0:
                    previous = None if action is None else self._previous_values(action, pose_bone, path, size)
                else:
                    previous = self._last_values[(k, name)]  # the key before: the block before's last
                held = locks.held_channels(pose_bone)
                values = held.restore(rotation_modes.channel_values(mode, solution.outcome.rotations[:, i], previous))
                self._last_values[(k, name)] = list(values[-1])
                keep = slice(None)
                if settings.simplify:
                    keep = keyframes.simplify(frames, values, settings.simplify_tolerance, settings.interpolation)
                for index in range(size):
                    if held.locked[index]:
                        continue  # a locked channel keeps its value: no keys
                    if self.block_index == 0:
                        self._held.append(_HeldChannel(pose_bone.path_from_id(path), index, name))
                    channel = self._held[place]
                    channel.frames.append(frames_held[keep])
                    channel.values.append(values[keep, index].astype(np.float32))
                    place += 1
                if solution.stretch is not None and pose_bone.quat_ik.use_stretch and not pose_bone.lock_scale[1]:
                    # The Y scale of a stretchy bone, keyed on every frame (it is 1 wherever the
                    # turns alone reach).
                    if self.block_index == 0:
                        self._held.append(_HeldChannel(pose_bone.path_from_id("scale"), 1, name))
                    channel = self._held[place]
                    channel.frames.append(frames_held)
                    channel.values.append(solution.stretch[:, i].astype(np.float32))
                    place += 1
        for tally, solution in zip(self._tallies, self.solutions, strict=True):
            self._tally(tally, solution, frames, keep_whole=self.block_count == 1)
        self.pin_outcomes = body_jobs.merged_pin_outcomes(
            [*self.pin_outcomes.values(), *(o for solution in self.solutions for o in solution.pin_outcomes)]
        )
        self.blocks_done += 1
        self.seconds["write"] += time.perf_counter() - started

    @staticmethod
    def _tally(tally: _ChainTally, solution, frames: np.ndarray, *, keep_whole: bool) -> None:
        """Add a keyed block's results to the chain's tally; the solution is kept whole for a bake
        of one block (its status reads it as it is), else only its last frame."""
        outcome = solution.outcome
        tally.converged += int(np.sum(outcome.converged))
        tally.all_converged = tally.all_converged and bool(np.all(outcome.converged))
        tally.max_error = max(tally.max_error, float(np.max(outcome.position_error)))
        tally.max_orientation_error = max(tally.max_orientation_error, float(np.max(outcome.orientation_error)))
        tally.max_iterations = max(tally.max_iterations, int(np.max(outcome.iterations)))
        tally.max_restarts = max(tally.max_restarts, int(np.max(outcome.restarts)))
        if tally.tail is None:
            jump_frames, turns = shot_jumps(outcome, frames)
        else:
            # The poses keyed last before this block come first, so a jump at the seam is seen
            # as any other (and one just after it is measured against the step before).
            kept_frames, kept = tally.tail
            joined = replace(outcome, rotations=np.concatenate((kept, outcome.rotations)))
            jump_frames, turns = shot_jumps(joined, np.concatenate((kept_frames, frames)))
            new = jump_frames > kept_frames[-1]
            jump_frames, turns = jump_frames[new], turns[new]
        tally.jump_frames += jump_frames.tolist()
        tally.jump_turns += turns.tolist()
        tally.tail = (frames[-2:].copy(), outcome.rotations[-2:].copy())
        if keep_whole:
            tally.last_solution = solution
            return
        last = slice(-1, None)  # (a block's arrays are what the next block must not hold on to)
        tally.last_solution = replace(
            solution,
            outcome=replace(
                outcome,
                rotations=outcome.rotations[last].copy(),
                position_error=np.array([tally.max_error]),
                orientation_error=np.array([tally.max_orientation_error]),
                iterations=np.array([tally.max_iterations]),
                restarts=np.array([tally.max_restarts]),
                converged=np.array([tally.all_converged]),
            ),
            root_world=None,
            target_root=None,
        )

    def finish(self) -> BakeSummary:
        """Once every block's keys are held: write them (into the active action, a new one, or a
        new NLA strip's), every chain's status and Manual mode, warnings, and the summary."""
        started = time.perf_counter()
        settings = self.settings
        action = self._target_action()
        frame_range = (float(settings.frame_start), float(settings.frame_end))  # with a step, keys between go too
        channels = []

        def held_channels():  # channel by channel, each let go once written
            while self._held:
                held = self._held.pop(0)
                channel = keyframes.ChannelKeys(
                    data_path=held.data_path,
                    index=held.index,
                    group=held.group,
                    frames=np.concatenate(held.frames),
                    values=np.concatenate(held.values),
                )
                held.frames.clear()
                held.values.clear()
                channels.append(held)  # (its curve, for the warnings below)
                yield channel

        keys = keyframes.write_channels(
            action, self.ob, held_channels(), frame_range=frame_range, interpolation=settings.interpolation
        )
        if settings.destination == "NLA":
            self._add_nla_strip(action)
        warnings = []
        converged, max_error = 0, 0.0
        for chain, tally in zip(self.chains, self._tallies, strict=True):
            solution = tally.last_solution
            converged += tally.converged
            max_error = max(max_error, tally.max_error)
            warnings += [f"{reader.chain_label(chain)}: {w}" for w in solution.rig.warnings]
            jump_frames, turns = np.array(tally.jump_frames), np.array(tally.jump_turns)
            if jump_frames.size:
                edges = self._pin_edges(solution)
                warnings.append(f"{reader.chain_label(chain)}: {jumps_warning(jump_frames, turns, edges)}")
            if solution.outcome.wrap_jump:
                warnings.append(f"{reader.chain_label(chain)}: {self._wrap_warning(solution.outcome.wrap_jump)}")
            report = current_frame.ChainReport(chain, solution, None)
            current_frame.record_status(chain, report, jump_frames, float(np.max(turns, initial=0.0)))
            if settings.set_manual and chain.mode != "MANUAL":
                chain.mode = "MANUAL"  # the keys now drive the bones; do not solve over them
        current_frame.record_pin_status(self.ob, [t.last_solution for t in self._tallies], self.pin_outcomes)
        warnings += [
            f"pin '{self.ob.quat_ik.pins[index].bone}' slipped by up to {outcome.error:.3g}"
            for index, outcome in sorted(self.pin_outcomes.items())
            if not outcome.held
        ]
        anim = self.ob.animation_data
        if settings.destination == "NLA" and anim.action is not None:
            warnings.append(f"the active action '{anim.action.name}' plays on top of the new NLA strip")
        warnings += self._played_differently(action, channels)
        self._show_new_keys()
        self.seconds["write"] += time.perf_counter() - started
        session.last_bake_seconds = {**self.seconds, "gather_path": self.gather_path}
        bone_frames = len(self.frames) * sum(len(rig.bone_names) for rig in self.rigs)
        if bone_frames >= MEASURED_FROM_BONE_FRAMES:
            session.bake_seconds_per_bone_frame = sum(self.seconds.values()) / bone_frames
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

    def _pin_edges(self, solution) -> dict[float, str]:
        """Frames where a pin on the bones of the solution's body takes hold or lets go."""
        if not solution.body:
            return {}
        bones = set()
        for chain in self.ob.quat_ik.chains:
            if chain.name in solution.body:
                bones.update(reader.chain_bone_names(self.ob, chain.tip_bone, chain.chain_length))
        edges = {}
        for pin in self.ob.quat_ik.pins:
            if pin.enabled and pin.bone in bones:
                edges[float(pin.frame_start)] = f"pin '{pin.bone}' takes hold"
                edges[float(pin.frame_end + 1)] = f"pin '{pin.bone}' lets go"
        return edges

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
        with session.suspend_solving():
            for view_layer in self.scene.view_layers:
                depsgraph = view_layer.depsgraph  # None for a view layer never evaluated
                if depsgraph is not None:
                    depsgraph.update()
