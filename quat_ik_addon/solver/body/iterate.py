"""Prioritised DLS iterations on a batch of body poses, under the joint limits and stretch ranges.

Each step (``priority.prioritised_step``) is clamped to the limits afterwards, as ``dls.py``
does: every joint by its limit's own clamp, every stretch into its range. A joint the clamp
turned back presses on its limit, and the next step keeps its columns off the axes it pressed
along (``limit_contacts``), so the other joints make up for it instead of the step being
clamped away again. The damping λ adapts per row Levenberg–Marquardt style: halved after a
step that is taken (``ranking.step_accepted``), four times after one that is not, and back to
its start when a row goes on to the next level. Each task's residual is clamped to
``CLAMPED_REACH`` and where a step turns too far, the lower levels' part of it shrinks before
the higher levels' part does, so that goals out of reach do not slow the higher levels down. A
level settles once its excess stops falling (``BodySettings.stall_ratio``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .. import quaternion as quat
from ..limits.contacts import SLOTS
from .goals import Tasks, task_errors
from .jacobian import linearise
from .priority import prioritised_step
from .ranking import level_excess, step_accepted
from .settings import BodySettings
from .skeleton import Body, BodyPose

Array = NDArray[np.float64]

MAX_TURN = 0.5  # radians: a step never turns one joint further than this (as ``dls``)
MAX_STRETCH = 0.25  # a step never changes one bone's Y scale by more than this
NORMALISED_ONLY = 1e-10  # a clamp that moved no component further only normalised (as ``dls``)
FLOOR = 1e-30  # × size²: an excess this small is rounding
# A frozen level (out of reach) may rise by this share of its least excess: a miss of d grows
# by at most d·CREEP_FROZEN/2 (``ranking.step_accepted``).
CREEP_FROZEN = 1e-3
# × size: the most one task's residual asks of a step (the error vector clamped to a largest
# length, Buss & Kim 2005). A far target otherwise asks for turns that swamp the step.
CLAMPED_REACH = 0.3
# A polish's λ starts at this share of ``BodySettings.damping``: its levels are met to the working
# tolerance already, where the linear model holds, and λ's full start cost a few steps per level.
POLISH_DAMPING = 0.01


@dataclass(frozen=True)
class Measure:
    """How a batch of poses is judged: tolerances, and whether stretch back to rest is a level."""

    tolerance: float
    angle_tolerance: float
    stretchy: NDArray[np.intp]  # bones whose stretch is solved for (empty: lengths held)

    def excess(self, body: Body, tasks: Tasks, pose: BodyPose) -> Array:
        """(N, L) the levels' excesses (``ranking.level_excess``), and with stretch in use one
        more column: Σ (L·(1 − s))² over the stretchy bones."""
        position_error, orientation_error = task_errors(tasks, pose, body.size)
        excess = level_excess(tasks, position_error, orientation_error, self.tolerance, self.angle_tolerance, body.size)
        if self.stretchy.size:
            rest = np.sum((body.lengths[self.stretchy] * (1.0 - pose.stretch[:, self.stretchy])) ** 2, axis=1)
            excess = np.concatenate((excess, rest[:, None]), axis=1)
        return excess


def _padded(levels_mask: NDArray[np.bool_], levels: int) -> NDArray[np.bool_]:
    """(k, levels): a mask of the goal levels widened by False for a stretch level after them."""
    padded = np.zeros((len(levels_mask), levels), dtype=bool)
    padded[:, : levels_mask.shape[1]] = levels_mask
    return padded


def _stepped(
    body: Body,
    pose: BodyPose,
    rotations: Array,
    stretch: Array,
    judged: Array,
    pulled: Array,
    stretchy: NDArray[np.intp],
) -> tuple[Array, Array, Array]:
    """The rotations turned by a step in the Jacobian's coordinates (N, D) before and after the
    clamp to the limits, and the stretch after it, clamped into its ranges. The step is the
    ``judged`` levels' part plus the ``pulled`` lower levels' part; where it turns or stretches
    too far, the pulled part shrinks first, so that a far lower goal does not slow the higher
    levels' steps down (the priority order applied to the step's length too)."""
    judged_turn, judged_grow = _turns(body, judged, stretchy)
    pulled_turn, pulled_grow = _turns(body, pulled, stretchy)
    judged_shrink = _shrink(judged_turn, judged_grow)
    # What the judged part leaves of each bound goes to the pulled part (the triangle inequality).
    left_turn = MAX_TURN - judged_shrink * _largest(judged_turn)
    left_grow = MAX_STRETCH - judged_shrink * np.max(np.abs(judged_grow), axis=1, initial=0.0)
    pulled_shrink = np.clip(
        np.minimum(
            left_turn / np.maximum(_largest(pulled_turn), 1e-300),
            left_grow / np.maximum(np.max(np.abs(pulled_grow), axis=1, initial=0.0), 1e-300),
        ),
        0.0,
        1.0,
    )
    turn = judged_turn * judged_shrink[:, None, None] + pulled_turn * pulled_shrink[:, None, None]
    grow = judged_grow * judged_shrink[:, None] + pulled_grow * pulled_shrink[:, None]
    local_turn = quat.rotate(quat.conjugate(pose.pre_rotations), turn)
    turned = quat.multiply(quat.from_rotation_vector(local_turn), rotations)
    stretched = stretch.copy()
    if stretchy.size:
        stretched[:, stretchy] += grow
        stretched = body.clamp_stretch(stretched)
    return turned, body.clamp_rotations(turned), stretched


def _turns(body: Body, step: Array, stretchy: NDArray[np.intp]) -> tuple[Array, Array]:
    """From a step in weighted coordinates (N, D) back to joint turns (N, B, 3) and stretches
    (N, K) (``jacobian``: √share)."""
    n_bones = body.n_bones
    turn = step[:, : 3 * n_bones].reshape(len(step), n_bones, 3) * np.sqrt(body.turn_shares)[None, :, None]
    return turn, step[:, 3 * n_bones :] * np.sqrt(body.stretch_shares[stretchy])


def _largest(turn: Array) -> Array:
    return np.max(quat.length(turn), axis=1)


def _shrink(turn: Array, grow: Array) -> Array:
    """(N,) the factor that keeps every turn within ``MAX_TURN`` and stretch within ``MAX_STRETCH``."""
    largest_grow = np.max(np.abs(grow), axis=1, initial=0.0)
    return np.minimum(
        1.0, np.minimum(MAX_TURN / np.maximum(_largest(turn), 1e-300), MAX_STRETCH / np.maximum(largest_grow, 1e-300))
    )


def _press(
    body: Body, pressed: Array, rows: NDArray[np.intp], taken: NDArray[np.bool_], turned: Array, clamped: Array
) -> None:
    """Update ``pressed`` (N, B, SLOTS, 3) after a step of the given rows (in place).

    The joints a step's clamp turned back are kept off those axes from the next step on, and
    stay so while steps are taken (released, a joint pushed into its limit again and the steps
    alternated between failing and creeping). A step that fails without pressing anything new
    releases them all: the goal may need a joint off its limit in a way the linear model does
    not see (as ``dls.run_dls``)."""
    acted = np.any(np.abs(clamped - turned) > NORMALISED_ONLY, axis=-1)
    pressed[rows[~taken & ~np.any(acted, axis=1)]] = 0.0
    acted_rows, acted_joints = np.nonzero(acted)
    if acted_rows.size:
        axes = body.limit_contacts.axes(turned, clamped, acted_rows, acted_joints)
        at = rows[acted_rows], acted_joints
        pressed[at] = np.where(np.any(axes != 0.0, axis=-1, keepdims=True), axes, pressed[at])


def _clamped(residual: Array, task_rows: int, reach: float) -> Array:
    """The residual (N, M) with each task's three rows (the first ``task_rows``, in threes)
    shortened to at most ``reach`` (a new array)."""
    clamped = residual.copy()
    blocks = clamped[:, :task_rows].reshape(len(residual), -1, 3)
    length = np.linalg.norm(blocks, axis=-1, keepdims=True)
    blocks *= np.minimum(1.0, reach / np.maximum(length, 1e-300))
    clamped[:, :task_rows] = blocks.reshape(len(residual), task_rows)
    return clamped


def _take(pose: BodyPose, rows: NDArray[np.intp]) -> BodyPose:
    return BodyPose(pose.heads[rows], pose.pre_rotations[rows], pose.rotations[rows], pose.stretch[rows])


def _put(pose: BodyPose, rows: NDArray[np.intp], other: BodyPose) -> None:
    pose.heads[rows] = other.heads
    pose.pre_rotations[rows] = other.pre_rotations
    pose.rotations[rows] = other.rotations
    pose.stretch[rows] = other.stretch


def iterate(
    body: Body,
    tasks: Tasks,
    rotations: Array,
    stretch: Array,
    settings: BodySettings,
    measure: Measure,
    *,
    max_iterations: int,
    creep: float,
    frozen: NDArray[np.bool_] | None = None,
    lean: bool = False,
) -> tuple[Array, Array, NDArray[np.int64]]:
    """Steps on (N, B, 4) rotations and (N, B) stretch inside the limits; returns the poses
    taken last (each better than the one before by ``ranking.step_accepted``) and the steps
    tried per row. ``creep``: see ``step_accepted``. ``frozen`` (N, L): levels that only hold
    still, their residual taken as zero (their rows still bound what the lower levels may
    move), and that may creep by ``CREEP_FROZEN``, as levels that stall do. ``lean``: every
    step pulls only the levels down to the first one not yet met (see ``lean`` below)."""
    rotations, stretch = rotations.copy(), stretch.copy()
    count, n_bones = rotations.shape[:2]
    size = body.size
    floor = FLOOR * size**2
    stretchy = measure.stretchy
    pose = body.forward_kinematics(rotations, stretch)
    excess = measure.excess(body, tasks, pose)
    levels = excess.shape[1]
    best = excess.copy()
    start_damping = settings.damping * size * (1.0 if frozen is None else POLISH_DAMPING)
    damping = np.full(count, start_damping)
    iterations = np.zeros(count, dtype=np.int64)
    # The depth level's least excess after each of its last ``stall_iterations`` steps (a ring;
    # inf until that many were taken) and the steps since the row went on to it.
    window = max(settings.stall_iterations, 1)
    history = np.full((count, window), np.inf)
    since = np.zeros(count, dtype=np.int64)
    # An excess this small a gain is rounding at the body's size.
    noticeable = settings.distance_tolerance(size) ** 2
    # The excess below which a level is done: rounding for the goals' levels (their tolerances are
    # already taken off); for stretch back to rest, lengths within the tolerance of rest.
    met_below = np.full(levels, floor)
    if stretchy.size:
        met_below[-1] = noticeable
    pressed = np.zeros((count, n_bones, SLOTS, 3))
    # Levels done with: frozen, or stalled at their closest (then they may creep as frozen ones).
    settled = np.zeros((count, levels), dtype=bool)
    if frozen is not None:
        held = _padded(frozen, levels)
        settled |= held
    creeps = np.where(settled, CREEP_FROZEN, creep)
    # A polish (``frozen`` given) pulls each level only once the ones above are met.
    always_lean = lean or frozen is not None
    lean = np.full(count, always_lean)
    depths = np.zeros(count, dtype=np.intp)
    level_of_column = np.arange(levels)
    for _ in range(max_iterations):
        # Levels are judged one after another (lexicographic): a step is taken for what it does
        # to the levels down to the first one neither met nor settled (the depth).
        open_levels = (excess > met_below) & ~settled
        rows = np.nonzero(np.any(open_levels, axis=1))[0]
        if rows.size == 0:
            break
        depth = np.argmax(open_levels[rows], axis=1) + 1
        # A row that goes on to a new level starts counting its stall afresh.
        moved_on = rows[depth != depths[rows]]
        history[moved_on] = np.inf
        since[moved_on] = 0
        # and trusts the linear model afresh: λ grown by the level above's misses says nothing of it.
        damping[moved_on] = start_damping
        depths[rows] = depth
        used = level_of_column[None, :] < depth[:, None]  # (k, levels)
        # A level's least excess counts from when it is first used.
        best[rows] = np.where(used, best[rows], excess[rows])
        all_rows = rows.size == count
        row_tasks = tasks if all_rows else tasks.take(rows)
        row_pose = pose if all_rows else _take(pose, rows)
        linear = linearise(body, row_tasks, row_pose, stretchy, pressed[rows])
        residual = _clamped(linear.residual, linear.residual.shape[1] - stretchy.size, CLAMPED_REACH * size)
        # Levels below the depth pull too while their pull does no harm: after a step that was
        # not taken, only the levels down to the depth pull (solving the levels strictly one
        # after another left the lower ones in worse local minima).
        pulled = np.where(lean[rows, None], used, True)
        if frozen is not None:
            pulled &= ~held[rows]
        for k, level_rows in enumerate(linear.level_rows):
            residual[:, level_rows] *= pulled[:, k, None]
        parts = prioritised_step(linear.jacobian, residual, linear.level_rows, damping[rows], size)
        judged = np.einsum("lnd,nl->nd", parts, used.astype(float))
        turned, trial, trial_stretch = _stepped(
            body, row_pose, rotations[rows], stretch[rows], judged, parts.sum(axis=0) - judged, stretchy
        )
        trial_pose = body.forward_kinematics(trial, trial_stretch)
        trial_excess = measure.excess(body, row_tasks, trial_pose)
        before = excess[rows]
        taken = step_accepted(trial_excess * used, before * used, best[rows] * used, creeps[rows], floor)
        iterations[rows] += 1
        accepted = rows[taken]
        rotations[accepted] = trial[taken]
        stretch[accepted] = trial_stretch[taken]
        _put(pose, accepted, _take(trial_pose, np.nonzero(taken)[0]))
        excess[accepted] = trial_excess[taken]
        best[accepted] = np.minimum(best[accepted], trial_excess[taken])
        # Levenberg–Marquardt: trust the linear model more after a success, less after a miss.
        # A full step that is not taken is tried lean first (``lean``), at the same damping.
        tried_lean = lean[rows] | np.all(used, axis=1)
        change = np.where(taken, 0.5, np.where(tried_lean, 4.0, 1.0))
        damping[rows] = np.clip(change * damping[rows], 1e-6 * size, 1e3 * size)
        if not always_lean:
            lean[rows] = ~taken
        # A level whose least excess fell by less than ``stall_ratio`` of itself over its last
        # ``stall_iterations`` steps is as close as it gets: settle it, and go on to the next
        # (a stopping test on relative reduction, as for least squares in Nocedal & Wright 2006, ch. 10).
        now = best[rows, depth - 1]
        slot = since[rows] % window
        then = history[rows, slot]
        counted = np.isfinite(then)
        then = np.where(counted, then, 0.0)
        stalled = counted & (then - now <= settings.stall_ratio * then + noticeable)
        history[rows, slot] = now
        since[rows] += 1
        settled[rows[stalled], depth[stalled] - 1] = True
        creeps[rows[stalled], depth[stalled] - 1] = CREEP_FROZEN
        _press(body, pressed, rows, taken, turned, trial)
    return rotations, stretch, iterations
