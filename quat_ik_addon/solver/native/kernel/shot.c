/* A shot's frame-by-frame loops (solver/sequence.py) in one call each: the Python loop crossed
 * into the kernel once per frame step, and its bookkeeping around each crossing cost more than
 * the solves (the 3-bone benchmark shot: ~100 crossings of a few rows per jump repair). The
 * carries and blend walks are the jump repair's (repair.c), which runs them through shot.h.
 *
 * Each call writes the shot's arrays in place, so everything it could refuse is checked before
 * the first write (QIK_BAD_INPUT then means the shot is untouched). A step whose solve comes out
 * non-finite is a miss that writes nothing (the walker or piece stays where it was) and the call
 * answers QIK_NOT_FINITE at the end: the shot it leaves is still finite and consistent. */
#include <stdlib.h>

#include "limits.h"
#include "qik_math.h"
#include "shot.h"
#include "solve.h"

static int64_t clip(int64_t value, int64_t low, int64_t high) { return value < low ? low : value > high ? high : value; }

static int64_t magnitude(int64_t value) { return value < 0 ? -value : value; }

static int64_t at_least_one(int64_t value) { return value > 1 ? value : 1; }

/* sequence._Frames.solve_rows for one row without restarts: ``q`` (the start) solved in place
 * for frame ``frame``'s goal, made unit with w >= 0; the frame's iterations, answer and its
 * errors recorded. Returns whether it met the goal, or -1 where a value came out non-finite
 * (nothing recorded then). */
static int solve_step(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                      const qik_shot *shot, int64_t frame, double *q, double *scratch, double *missed_by)
{
    int32_t n = chain->n_bones;
    qik_row_goal goal = qik_row_goal_at(goals, frame);
    double position_error, orientation_error, effector[3];
    int64_t iterations =
        qik_run_row(chain, &goal, settings, q, NULL, scratch, &position_error, &orientation_error, effector);
    qik_finish_row(chain, &goal, q, scratch, &position_error, &orientation_error, effector);
    if (!qik_all_finite(q, 4 * (int64_t)n) || !isfinite(position_error) || !isfinite(orientation_error) ||
        !qik_all_finite(effector, 3))
        return -1;
    shot->iterations[frame] += iterations;
    memcpy(shot->answers + 4 * n * frame, q, 4 * (size_t)n * sizeof(double));
    shot->answer_position_error[frame] = position_error;
    shot->answer_orientation_error[frame] = orientation_error;
    qik_copy3(shot->answer_effector + 3 * frame, effector);
    if (missed_by != NULL)
        *missed_by = qik_combined_error(chain, position_error, orientation_error);
    return qik_reached(settings, position_error, orientation_error);
}

/* sequence._carry's within_reach: of the carries ``going`` (count of them), those whose next
 * position lies in the shot and within their bound; those past it ran out (ranked in order).
 * Returns how many go on (compacted in place). */
static int64_t within_reach(const qik_carry_request *carry, const int64_t *position, int64_t *going, int64_t count,
                            int64_t *next_rank)
{
    int64_t kept = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t c = going[k], at = position[c];
        if (at < 0 || at >= carry->order_count)
            continue;
        int near = carry->bounds != NULL
                       ? carry->directions[c] * (carry->bounds[c] - at) >= 0
                       : magnitude(carry->order[at] - carry->order[carry->origins[c]]) <= carry->carry_frames;
        if (near) {
            going[kept++] = c;
        } else {
            carry->ran_out_rank[c] = (*next_rank)++;
            carry->beyond[c] = carry->order[at];
        }
    }
    return kept;
}

int32_t qik_run_carries(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                        const qik_shot *shot, const qik_carry_request *carry)
{
    int64_t carries = carry->carries, last = carry->order_count - 1;
    if (carries == 0)
        return QIK_OK;
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    int64_t workspace = qik_workspace_doubles(n);
    /* previous and step poses per carry; speed, running, moved, gap; position, going; held, joined */
    double *memory = malloc(((size_t)workspace + 2 * (size_t)carries * pose_doubles + 4 * (size_t)carries) *
                            sizeof(double));
    int64_t *indices = malloc(2 * (size_t)carries * sizeof(int64_t));
    unsigned char *flags = malloc(2 * (size_t)carries);
    if (memory == NULL || indices == NULL || flags == NULL) {
        free(memory);
        free(indices);
        free(flags);
        return QIK_BAD_INPUT;
    }
    double *scratch = memory, *previous = memory + workspace, *poses = previous + carries * pose_doubles;
    double *speed = poses + carries * pose_doubles, *running = speed + carries, *moved = running + carries;
    double *gap = moved + carries;
    int64_t *position = indices, *going = indices + carries;
    unsigned char *held = flags, *joined = flags + carries;
    const int64_t *order = carry->order;
    double *rotations = shot->rotations;
    int32_t status = QIK_OK;

    for (int64_t c = 0; c < carries; c++) {
        int64_t origin = carry->origins[c], direction = carry->directions[c];
        int64_t behind = clip(origin - direction, 0, last);
        const double *from = rotations + pose_doubles * order[origin], *back = rotations + pose_doubles * order[behind];
        speed[c] = qik_pose_distance(from, back, n) / (double)at_least_one(magnitude(order[origin] - order[behind]));
        running[c] = speed[c];
        position[c] = origin + direction;
        memcpy(previous + c * pose_doubles, rotations + pose_doubles * order[origin], pose_doubles * sizeof(double));
        carry->carried_count[c] = 0;
        carry->kept[c] = 0;
        carry->ran_out_rank[c] = -1;
        carry->beyond[c] = -1;
        going[c] = c;
    }
    int64_t next_rank = 0;
    int64_t count = within_reach(carry, position, going, carries, &next_rank);
    while (count > 0) {
        /* Each going carry's next step, solved warm from its last; read before any keep below. */
        for (int64_t k = 0; k < count; k++) {
            int64_t c = going[k], direction = carry->directions[c], step = order[position[c]];
            double *q = poses + c * pose_doubles;
            memcpy(q, previous + c * pose_doubles, pose_doubles * sizeof(double));
            int met = solve_step(chain, goals, settings, shot, step, q, scratch, NULL);
            if (met < 0)
                status = QIK_NOT_FINITE;
            gap[c] = (double)magnitude(step - order[position[c] - direction]);
            int64_t beyond = order[clip(position[c] + direction, 0, last)];
            double there = qik_pose_distance(rotations + pose_doubles * step, rotations + pose_doubles * beyond, n) /
                           (double)at_least_one(magnitude(beyond - step));
            moved[c] = qik_pose_distance(q, previous + c * pose_doubles, n);
            double pace = running[c] > there ? running[c] : there;
            held[c] = met == 1 && moved[c] <= 2.0 * pace * gap[c] + carry->jump_slack;
        }
        for (int64_t k = 0; k < count; k++) {
            int64_t c = going[k], step = order[position[c]];
            if (!held[c])
                continue;
            const double *q = poses + c * pose_doubles;
            memcpy(previous + c * pose_doubles, q, pose_doubles * sizeof(double));
            running[c] = moved[c] / gap[c];
            memcpy(carry->carried + (carry->slot_first[c] + carry->carried_count[c]) * pose_doubles, q,
                   pose_doubles * sizeof(double));
            carry->carried_count[c]++;
            int at_end = position[c] == 0 || position[c] == last;
            joined[c] = at_end || qik_pose_distance(q, rotations + pose_doubles * step, n) <=
                                      2.0 * speed[c] * gap[c] + carry->jump_slack;
        }
        /* Joined carries are kept in order; one whose rival was kept first is not. */
        for (int64_t k = 0; k < count; k++) {
            int64_t c = going[k];
            if (!held[c] || !joined[c] || (carry->rivals != NULL && carry->rivals[c] >= 0 && carry->kept[carry->rivals[c]]))
                continue;
            for (int64_t s = 0; s < carry->carried_count[c]; s++) {
                int64_t frame = order[carry->origins[c] + carry->directions[c] * (s + 1)];
                memcpy(rotations + pose_doubles * frame, carry->carried + (carry->slot_first[c] + s) * pose_doubles,
                       pose_doubles * sizeof(double));
                shot->met[frame] = 1;
                shot->solved[frame] = 1;
            }
            carry->kept[c] = 1;
        }
        int64_t on = 0;
        for (int64_t k = 0; k < count; k++) {
            int64_t c = going[k];
            if (!held[c] || joined[c] || (carry->rivals != NULL && carry->rivals[c] >= 0 && carry->kept[carry->rivals[c]]))
                continue;
            position[c] += carry->directions[c];
            going[on++] = c;
        }
        count = within_reach(carry, position, going, on, &next_rank);
    }
    free(memory);
    free(indices);
    free(flags);
    return status;
}

int32_t qik_run_blend(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                      const qik_shot *shot, const qik_blend_request *blend)
{
    int64_t longest = 0;
    for (int64_t w = 0; w < blend->walkers; w++)
        longest = blend->lengths[w] > longest ? blend->lengths[w] : longest;
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    double *scratch = malloc(((size_t)qik_workspace_doubles(n) + pose_doubles) * sizeof(double));
    if (scratch == NULL)
        return QIK_BAD_INPUT;
    double *start = scratch + qik_workspace_doubles(n);
    int32_t status = QIK_OK;
    /* Step-major, walkers side by side, as the numpy loop: a frame two walkers solve keeps the
     * later answer alike. */
    for (int64_t step = 0; step < longest; step++) {
        for (int64_t w = 0; w < blend->walkers; w++) {
            if (step >= blend->lengths[w])
                continue;
            int64_t left = blend->lengths[w] - 1 - step, row = blend->offsets[w] + left;
            double *walker = blend->walker_poses + w * pose_doubles, *q = blend->walked + row * pose_doubles;
            for (int32_t i = 0; i < n; i++) {
                double inverse[4], towards[4], share[4];
                qik_conj(walker + 4 * i, inverse);
                qik_mul(inverse, blend->carried + row * pose_doubles + 4 * i, towards);
                qik_slerp_from_identity(towards, 1.0 / ((double)left + 1.0), share);
                qik_mul(walker + 4 * i, share, q + 4 * i);
                qik_clamp_joint(chain, i, q + 4 * i);
            }
            memcpy(start, q, pose_doubles * sizeof(double));
            int met = solve_step(chain, goals, settings, shot, blend->frames[row], q, scratch, NULL);
            if (met < 0) { /* a miss at the blended start */
                memcpy(q, start, pose_doubles * sizeof(double));
                status = QIK_NOT_FINITE;
                met = 0;
            }
            blend->walked_met[row] = (uint8_t)met;
            memcpy(walker, q, pose_doubles * sizeof(double));
        }
    }
    free(scratch);
    return status;
}

/* A walker's step as _best_per_frame ranks it: by frame, then met first, then the smaller
 * miss, then the walker's order. */
typedef struct {
    int64_t step;
    int32_t missed;
    double missed_by;
    int64_t walker;
} ranked_step;

static int by_rank(const void *a, const void *b)
{
    const ranked_step *p = a, *q = b;
    if (p->step != q->step)
        return p->step < q->step ? -1 : 1;
    if (p->missed != q->missed)
        return p->missed < q->missed ? -1 : 1;
    if (p->missed_by != q->missed_by)
        return p->missed_by < q->missed_by ? -1 : 1;
    return p->walker < q->walker ? -1 : p->walker > q->walker;
}

/* sequence._Frames.miss of a frame's current pose. */
static double current_miss(const qik_chain *chain, const qik_goals *goals, const qik_shot *shot, int64_t frame,
                           double *scratch)
{
    qik_row_goal goal = qik_row_goal_at(goals, frame);
    double position_error, orientation_error, effector[3];
    qik_goal_errors(chain, &goal, shot->rotations + 4 * (int64_t)chain->n_bones * frame, scratch, &position_error,
                    &orientation_error, effector);
    return qik_combined_error(chain, position_error, orientation_error);
}

QIK_EXPORT int32_t qik_walk_out(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                                const qik_settings *tracking_settings, const qik_shot *shot,
                                const qik_walk_request *walk)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(met_settings) ||
        !qik_settings_are_valid(tracking_settings) || shot == NULL || walk == NULL || walk->walkers < 0 ||
        walk->order_count < 0)
        return QIK_BAD_INPUT;
    int64_t walkers = walk->walkers, last_position = walk->order_count - 1;
    if (walkers == 0)
        return QIK_OK;
    if (shot->rotations == NULL || shot->met == NULL || shot->solved == NULL || shot->iterations == NULL ||
        shot->answers == NULL || shot->answer_position_error == NULL || shot->answer_orientation_error == NULL ||
        shot->answer_effector == NULL || walk->order == NULL || walk->seeds == NULL || walk->directions == NULL ||
        walk->until == NULL || walk->order_count < 1)
        return QIK_BAD_INPUT;
    for (int64_t p = 0; p < walk->order_count; p++)
        if (walk->order[p] < 0 || walk->order[p] >= shot->frames)
            return QIK_BAD_INPUT;
    for (int64_t w = 0; w < walkers; w++)
        if (walk->seeds[w] < 0 || walk->seeds[w] > last_position || walk->until[w] < 0 ||
            walk->until[w] > last_position || (walk->directions[w] != 1 && walk->directions[w] != -1))
            return QIK_BAD_INPUT;
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    int64_t workspace = qik_workspace_doubles(n);
    /* scratch; per walker: pose, step pose, before, missed_by */
    double *memory = malloc(((size_t)workspace + 2 * (size_t)walkers * pose_doubles + 2 * (size_t)walkers) *
                            sizeof(double));
    int64_t *indices = malloc(2 * (size_t)walkers * sizeof(int64_t)); /* position, going */
    unsigned char *flags = malloc(2 * (size_t)walkers);               /* met before, met */
    ranked_step *ranked = malloc((size_t)walkers * sizeof(ranked_step));
    if (memory == NULL || indices == NULL || flags == NULL || ranked == NULL) {
        free(memory);
        free(indices);
        free(flags);
        free(ranked);
        return QIK_BAD_INPUT;
    }
    double *scratch = memory, *pose = memory + workspace, *stepped = pose + walkers * pose_doubles;
    double *before = stepped + walkers * pose_doubles, *missed_by = before + walkers;
    int64_t *position = indices, *going = indices + walkers;
    unsigned char *met_before = flags, *met = flags + walkers;
    const int64_t *order = walk->order;
    int32_t status = QIK_OK;
    for (int64_t w = 0; w < walkers; w++) {
        position[w] = walk->seeds[w];
        int64_t frame = order[position[w]];
        memcpy(pose + w * pose_doubles, shot->rotations + frame * pose_doubles, pose_doubles * sizeof(double));
        met_before[w] = shot->met[frame] != 0;
        going[w] = w;
    }
    int64_t count = walkers;
    while (count > 0) {
        /* Walkers go on into frames that missed their goal, up to their last position. */
        int64_t on = 0;
        for (int64_t k = 0; k < count; k++) {
            int64_t w = going[k], ahead = position[w] + walk->directions[w];
            /* (a bound behind the walker, which the numpy loop is never given, ends it at the shot's end) */
            if (position[w] != walk->until[w] && ahead >= 0 && ahead <= last_position && !shot->met[order[ahead]])
                going[on++] = w;
        }
        count = on;
        if (count == 0)
            break;
        for (int64_t k = 0; k < count; k++) {
            int64_t w = going[k], step = order[position[w] + walk->directions[w]];
            before[w] = shot->solved[step] ? current_miss(chain, goals, shot, step, scratch) : INFINITY;
        }
        /* solve_warm: rows that met the step before with met_settings, then the others tracking the miss. */
        for (int group = 1; group >= 0; group--) {
            for (int64_t k = 0; k < count; k++) {
                int64_t w = going[k], step = order[position[w] + walk->directions[w]];
                if (met_before[w] != group)
                    continue;
                double *q = stepped + w * pose_doubles;
                memcpy(q, pose + w * pose_doubles, pose_doubles * sizeof(double));
                int reached = solve_step(chain, goals, group ? met_settings : tracking_settings, shot, step, q, scratch,
                                         missed_by + w);
                if (reached < 0) {
                    status = QIK_NOT_FINITE;
                    reached = 0;
                    missed_by[w] = INFINITY;
                }
                met[w] = (unsigned char)reached;
            }
        }
        for (int64_t k = 0; k < count; k++) {
            int64_t w = going[k];
            ranked[k] = (ranked_step){order[position[w] + walk->directions[w]], !met[w], missed_by[w], w};
        }
        qsort(ranked, (size_t)count, sizeof(ranked_step), by_rank);
        /* Kept: a step that met its goal or missed it by clearly less than the pose there, and
         * the best of the walkers on its frame; those walk on. */
        on = 0;
        for (int64_t k = 0; k < count; k++) {
            int64_t w = ranked[k].walker, step = ranked[k].step;
            int first = k == 0 || ranked[k - 1].step != step;
            if (!first || !(met[w] || missed_by[w] < before[w] - walk->margin))
                continue;
            memcpy(shot->rotations + step * pose_doubles, stepped + w * pose_doubles, pose_doubles * sizeof(double));
            shot->met[step] = met[w];
            shot->solved[step] = 1;
            memcpy(pose + w * pose_doubles, stepped + w * pose_doubles, pose_doubles * sizeof(double));
            met_before[w] = met[w];
            position[w] += walk->directions[w];
            going[on++] = w;
        }
        /* Back in walker order, as the numpy loop keeps them. */
        for (int64_t k = 1; k < on; k++)
            for (int64_t j = k; j > 0 && going[j - 1] > going[j]; j--) {
                int64_t swap = going[j];
                going[j] = going[j - 1];
                going[j - 1] = swap;
            }
        count = on;
    }
    free(memory);
    free(indices);
    free(flags);
    free(ranked);
    return status;
}

QIK_EXPORT int32_t qik_follow(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                              const qik_settings *tracking_settings, const qik_shot *shot,
                              const qik_follow_request *follow)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(met_settings) ||
        !qik_settings_are_valid(tracking_settings) || shot == NULL || follow == NULL || follow->pieces < 0 ||
        follow->followed_count < 0)
        return QIK_BAD_INPUT;
    int64_t pieces = follow->pieces, count = follow->followed_count;
    if (pieces == 0)
        return QIK_OK;
    if (shot->iterations == NULL || shot->answers == NULL || shot->answer_position_error == NULL ||
        shot->answer_orientation_error == NULL || shot->answer_effector == NULL || follow->followed == NULL ||
        follow->begins == NULL || follow->ends == NULL || follow->pose == NULL || follow->met == NULL ||
        follow->poses == NULL || follow->poses_met == NULL)
        return QIK_BAD_INPUT;
    for (int64_t i = 0; i < count; i++)
        if (follow->followed[i] < 0 || follow->followed[i] >= shot->frames)
            return QIK_BAD_INPUT;
    int64_t longest = 0;
    for (int64_t k = 0; k < pieces; k++) {
        if (follow->begins[k] < 0 || follow->begins[k] >= count || follow->ends[k] < 0 || follow->ends[k] >= count)
            return QIK_BAD_INPUT;
        int64_t length = magnitude(follow->ends[k] - follow->begins[k]);
        longest = length > longest ? length : longest;
    }
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    double *scratch = malloc(((size_t)qik_workspace_doubles(n) + pose_doubles) * sizeof(double));
    unsigned char *met_before = malloc((size_t)pieces);
    if (scratch == NULL || met_before == NULL) {
        free(scratch);
        free(met_before);
        return QIK_BAD_INPUT;
    }
    double *kept = scratch + qik_workspace_doubles(n);
    for (int64_t k = 0; k < pieces; k++)
        met_before[k] = follow->met[k] != 0;
    int32_t status = QIK_OK;
    for (int64_t step = 1; step <= longest; step++) {
        /* solve_warm: pieces that met the step before first, then those tracking a miss. */
        for (int group = 1; group >= 0; group--) {
            for (int64_t k = 0; k < pieces; k++) {
                int64_t length = magnitude(follow->ends[k] - follow->begins[k]);
                if (step > length || met_before[k] != group)
                    continue;
                int64_t direction = follow->ends[k] > follow->begins[k] ? 1 : -1;
                int64_t index = follow->begins[k] + step * direction;
                double *q = follow->pose + k * pose_doubles;
                memcpy(kept, q, pose_doubles * sizeof(double));
                int met = solve_step(chain, goals, group ? met_settings : tracking_settings, shot,
                                     follow->followed[index], q, scratch, NULL);
                if (met < 0) { /* a miss that stays where it was */
                    memcpy(q, kept, pose_doubles * sizeof(double));
                    status = QIK_NOT_FINITE;
                    met = 0;
                }
                follow->met[k] = (uint8_t)met;
                if (step < length) {
                    memcpy(follow->poses + index * pose_doubles, q, pose_doubles * sizeof(double));
                    follow->poses_met[index] = (uint8_t)met;
                }
            }
        }
        for (int64_t k = 0; k < pieces; k++)
            met_before[k] = follow->met[k];
    }
    free(scratch);
    free(met_before);
    return status;
}

QIK_EXPORT int32_t qik_carry_tip_twist_along(const qik_chain *chain, int64_t frames, double *rotations,
                                             const double *start)
{
    if (!qik_chain_is_valid(chain) || frames < 0 || (frames > 0 && (rotations == NULL || start == NULL)))
        return QIK_BAD_INPUT;
    int32_t n = chain->n_bones, tip = n - 1;
    const double y_axis[3] = {0.0, 1.0, 0.0};
    double before[3], swing_before[4], ignored[3];
    qik_rotate_y_axis(start + 4 * tip, before);
    qik_rotation_from_y(before, swing_before);
    double start_twist = qik_swing_twist_y(start + 4 * tip, ignored), turned = 0.0;
    int32_t status = QIK_OK;
    for (int64_t f = 0; f < frames; f++) {
        double *q = rotations + 4 * (int64_t)n * f + 4 * tip;
        double direction[3], swing_now[4], turn[4], turned_before[4], inverse[4], step[4];
        qik_rotate_y_axis(q, direction);
        qik_rotation_from_y(direction, swing_now);
        qik_rotation_between(before, direction, turn);
        qik_mul(turn, swing_before, turned_before);
        qik_conj(swing_now, inverse);
        qik_mul(inverse, turned_before, step);
        turned += qik_twist_about(step, y_axis); /* numpy's cumsum, then the start's twist added */
        double twist = start_twist + turned;
        double about_y[4] = {cos(0.5 * twist), 0.0, sin(0.5 * twist), 0.0}, carried[4];
        qik_mul(swing_now, about_y, carried);
        qik_canonical(carried);
        qik_twist_clamp_joint(chain, tip, carried);
        if (qik_all_finite(carried, 4))
            qik_copy4(q, carried);
        else
            status = QIK_NOT_FINITE; /* that frame's tip left as it was */
        qik_copy3(before, direction);
        qik_copy4(swing_before, swing_now);
    }
    return status;
}

/* sequence._Frames.solve_rows' record of one finished solve (not finite: nothing recorded). */
static void record(const qik_shot *shot, int32_t n, int64_t frame, const double *q, int64_t iterations,
                   double position_error, double orientation_error, const double effector[3])
{
    shot->iterations[frame] += iterations;
    memcpy(shot->answers + 4 * (size_t)n * frame, q, 4 * (size_t)n * sizeof(double));
    shot->answer_position_error[frame] = position_error;
    shot->answer_orientation_error[frame] = orientation_error;
    qik_copy3(shot->answer_effector + 3 * frame, effector);
}

/* The first index of the increasing ``values`` at or past ``value`` (numpy's searchsorted). */
static int64_t search(const int64_t *values, int64_t count, int64_t value)
{
    int64_t low = 0, high = count;
    while (low < high) {
        int64_t middle = low + (high - low) / 2;
        if (values[middle] < value)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

QIK_EXPORT int32_t qik_fill_between(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                                    const qik_settings *tracking_settings, const qik_shot *shot,
                                    const qik_fill_request *fill)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(met_settings) ||
        !qik_settings_are_valid(tracking_settings) || shot == NULL || fill == NULL || fill->followed_count < 0 ||
        fill->between_count < 0 || !(fill->margin >= 0.0))
        return QIK_BAD_INPUT;
    int64_t count = fill->between_count, followed_count = fill->followed_count;
    if (count == 0)
        return QIK_OK;
    if (shot->rotations == NULL || shot->met == NULL || shot->solved == NULL || shot->iterations == NULL ||
        shot->answers == NULL || shot->answer_position_error == NULL || shot->answer_orientation_error == NULL ||
        shot->answer_effector == NULL || fill->followed == NULL || fill->between == NULL || fill->guesses == NULL ||
        followed_count < 2)
        return QIK_BAD_INPUT;
    const int64_t *followed = fill->followed, *between = fill->between;
    for (int64_t p = 0; p < followed_count; p++)
        if (followed[p] < 0 || followed[p] >= shot->frames || (p > 0 && followed[p] <= followed[p - 1]))
            return QIK_BAD_INPUT;
    for (int64_t r = 0; r < count; r++) {
        int64_t after = search(followed, followed_count, between[r]);
        if (between[r] <= followed[0] || after >= followed_count || followed[after] == between[r] ||
            (r > 0 && between[r] <= between[r - 1]))
            return QIK_BAD_INPUT; /* strictly between two followed frames, increasing */
    }
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    int64_t workspace = qik_workspace_doubles(n);
    /* scratch, a start, per row its pose and own miss */
    double *memory = malloc(((size_t)workspace + pose_doubles + (size_t)count * (pose_doubles + 1)) * sizeof(double));
    unsigned char *flags = malloc(2 * (size_t)count); /* per row: its neighbours met, it met */
    if (memory == NULL || flags == NULL) {
        free(memory);
        free(flags);
        return QIK_BAD_INPUT;
    }
    double *scratch = memory, *start = memory + workspace, *poses = start + pose_doubles, *own = poses + count * pose_doubles;
    unsigned char *neighbours_met = flags, *met = flags + count;
    int32_t status = QIK_OK;
    double position_error, orientation_error, effector[3];
    int64_t iterations;
    for (int64_t r = 0; r < count; r++) {
        int64_t after = search(followed, followed_count, between[r]);
        neighbours_met[r] = shot->met[followed[after - 1]] && shot->met[followed[after]];
    }
    /* From the guesses, as solve.solve: the rows whose neighbours both met with the warm budget,
     * then those tracking a miss. */
    for (int group = 1; group >= 0; group--) {
        const qik_settings *settings = group ? met_settings : tracking_settings;
        for (int64_t r = 0; r < count; r++) {
            if (neighbours_met[r] != group)
                continue;
            qik_row_goal goal = qik_row_goal_at(goals, between[r]);
            double *q = poses + r * pose_doubles;
            memcpy(start, fill->guesses + r * pose_doubles, pose_doubles * sizeof(double));
            int reached = qik_solve_row(chain, &goal, settings, start, q, NULL, fill->carry_tip_twist, scratch,
                                        &iterations, &position_error, &orientation_error, effector);
            if (reached < 0) { /* a miss at its (clamped) start, recording nothing */
                memcpy(q, start, pose_doubles * sizeof(double));
                status = QIK_NOT_FINITE;
                reached = 0;
            } else {
                record(shot, n, between[r], q, iterations, position_error, orientation_error, effector);
            }
            met[r] = (unsigned char)reached;
        }
    }
    /* A row missed though both neighbours met: again from the nearer neighbour's pose, kept where it meets. */
    for (int64_t r = 0; r < count; r++) {
        if (!neighbours_met[r] || met[r])
            continue;
        int64_t after = search(followed, followed_count, between[r]);
        int64_t left = followed[after - 1], right = followed[after];
        int64_t nearer = between[r] - left <= right - between[r] ? left : right;
        memcpy(start, shot->rotations + nearer * pose_doubles, pose_doubles * sizeof(double));
        int reached = solve_step(chain, goals, met_settings, shot, between[r], start, scratch, NULL);
        if (reached < 0)
            status = QIK_NOT_FINITE;
        else if (reached) {
            memcpy(poses + r * pose_doubles, start, pose_doubles * sizeof(double));
            met[r] = 1;
        }
    }
    /* Between two misses, a row missing by clearly more than both: again from the nearer neighbour,
     * tracking the miss, kept where it meets or misses by less. */
    for (int64_t r = 0; r < count; r++) {
        own[r] = INFINITY;
        if (neighbours_met[r])
            continue;
        int64_t after = search(followed, followed_count, between[r]);
        int64_t left = followed[after - 1], right = followed[after];
        qik_row_goal goal = qik_row_goal_at(goals, between[r]);
        qik_goal_errors(chain, &goal, poses + r * pose_doubles, scratch, &position_error, &orientation_error, effector);
        own[r] = qik_combined_error(chain, position_error, orientation_error);
        double beside = current_miss(chain, goals, shot, left, scratch);
        double right_miss = current_miss(chain, goals, shot, right, scratch);
        beside = isnan(beside) || isnan(right_miss) ? NAN : beside > right_miss ? beside : right_miss;
        if (!(own[r] > beside + fill->margin))
            own[r] = INFINITY; /* not outlying */
    }
    for (int64_t r = 0; r < count; r++) {
        if (neighbours_met[r] || own[r] == INFINITY)
            continue;
        int64_t after = search(followed, followed_count, between[r]);
        int64_t left = followed[after - 1], right = followed[after];
        int64_t nearer = between[r] - left <= right - between[r] ? left : right;
        memcpy(start, shot->rotations + nearer * pose_doubles, pose_doubles * sizeof(double));
        double missed_by;
        int reached = solve_step(chain, goals, tracking_settings, shot, between[r], start, scratch, &missed_by);
        if (reached < 0) {
            status = QIK_NOT_FINITE;
            continue;
        }
        if (reached || missed_by < own[r]) {
            memcpy(poses + r * pose_doubles, start, pose_doubles * sizeof(double));
            met[r] = (unsigned char)reached;
        }
    }
    for (int64_t r = 0; r < count; r++) {
        memcpy(shot->rotations + between[r] * pose_doubles, poses + r * pose_doubles, pose_doubles * sizeof(double));
        shot->met[between[r]] = met[r];
        shot->solved[between[r]] = 1;
    }
    free(memory);
    free(flags);
    return status;
}
