/* A shot's jump repair (sequence._repair_jumps with _blend_jumps and _carry_through) in one call:
 * in Python, what runs between its carries and blends (finding the jumps, choosing which carries
 * to blend, judging each blend) cost four times their solves on the Blender benchmark's 3-bone
 * shot. The steps, their order and their keeps are the numpy loop's. */
#include <stdlib.h>

#include "qik_math.h"
#include "shot.h"
#include "solve.h"

/* numpy.maximum: NaN where either is. */
static double nan_maximum(double a, double b) { return isnan(a) || isnan(b) ? NAN : (a > b ? a : b); }

/* What one call holds throughout: the request, the shot and scratch sized by the order. */
typedef struct {
    const qik_chain *chain;
    const qik_goals *goals;
    const qik_settings *settings;
    const qik_shot *shot;
    const qik_repair_request *repair;
    size_t pose_doubles;
    double *speed;        /* (order_count) a step's turn per frame */
    int64_t *jumps;       /* (order_count) positions */
    uint8_t *tried;       /* (order_count) jumps whose carries and blends failed */
    uint8_t *failed;      /* (order_count) jumps whose carries failed this round */
    uint8_t *waiting;     /* (order_count) jumps whose blend waits for one beside it */
    uint8_t *jump_now;    /* (order_count) positions where the pose jumps now */
    uint8_t *changed;     /* (frames) frames a blend kept this round */
} repair_state;

/* pose_jumps.jump_positions along the order: positions j where the pose turns more than twice as
 * fast (per frame) as on either step beside it. Returns how many, written to state->jumps. */
static int64_t jump_positions(repair_state *state)
{
    const qik_repair_request *repair = state->repair;
    const int64_t *order = repair->order;
    const double *rotations = state->shot->rotations;
    int64_t steps = repair->order_count - 1, found = 0;
    int32_t n = state->chain->n_bones;
    for (int64_t p = 0; p < steps; p++)
        state->speed[p] = qik_pose_distance(rotations + state->pose_doubles * order[p + 1],
                                            rotations + state->pose_doubles * order[p], n) /
                          (double)(order[p + 1] - order[p]);
    for (int64_t p = 0; p < steps; p++) {
        double beside = nan_maximum(p > 0 ? state->speed[p - 1] : 0.0, p + 1 < steps ? state->speed[p + 1] : 0.0);
        if (state->speed[p] > 2.0 * beside + repair->jump_slack)
            state->jumps[found++] = p + 1;
    }
    return found;
}

/* A batch of carries (sequence._carry) and what they leave: the request points into the arrays. */
typedef struct {
    qik_carry_request request;
    int64_t *origins, *directions, *bounds, *rivals, *slot_first, *slot_count; /* bounds, rivals: or NULL */
    int64_t *ran_out; /* the carries that ran out, in the order they did */
    int64_t ran_out_count;
    int64_t *block;   /* the index arrays, one allocation */
    uint8_t *kept;
    double *carried;
} carry_batch;

static void carry_batch_free(carry_batch *batch)
{
    free(batch->block);
    free(batch->kept);
    free(batch->carried);
}

/* Room for ``carries`` carries, their origins and directions to be filled in, with bounds and
 * rivals when asked. Returns 0 where memory ran out. */
static int carry_batch_make(carry_batch *batch, const repair_state *state, int64_t carries, int bounded)
{
    const qik_repair_request *repair = state->repair;
    memset(batch, 0, sizeof(*batch));
    int64_t arrays = bounded ? 10 : 8;
    batch->block = malloc((size_t)(arrays * carries + 1) * sizeof(int64_t));
    batch->kept = malloc((size_t)carries + 1);
    if (batch->block == NULL || batch->kept == NULL)
        return 0;
    int64_t *next = batch->block;
    batch->origins = next;
    batch->directions = next + carries;
    batch->slot_first = next + 2 * carries;
    batch->slot_count = next + 3 * carries;
    batch->ran_out = next + 4 * carries;
    batch->bounds = bounded ? next + 8 * carries : NULL;
    batch->rivals = bounded ? next + 9 * carries : NULL;
    qik_carry_request *request = &batch->request;
    request->order_count = repair->order_count;
    request->order = repair->order;
    request->carries = carries;
    request->origins = batch->origins;
    request->directions = batch->directions;
    request->bounds = batch->bounds;
    request->rivals = batch->rivals;
    request->slot_first = batch->slot_first;
    request->slot_count = batch->slot_count;
    request->carried_count = next + 5 * carries;
    request->ran_out_rank = next + 6 * carries;
    request->beyond = next + 7 * carries;
    request->kept = batch->kept;
    request->carry_frames = repair->carry_frames;
    request->jump_slack = repair->jump_slack;
    return 1;
}

/* Run the batch (origins, directions, bounds and rivals filled in): each carry's slots for the
 * positions it may pass, then the carry loop (shot.h), then the carries that ran out, by rank. */
static int32_t carry_batch_run(carry_batch *batch, const repair_state *state)
{
    qik_carry_request *request = &batch->request;
    int64_t carries = request->carries, slots = 0, last = request->order_count - 1;
    int64_t *slot_first = batch->slot_first, *slot_count = batch->slot_count;
    for (int64_t c = 0; c < carries; c++) {
        int64_t origin = request->origins[c], direction = request->directions[c];
        int64_t room = request->bounds != NULL ? direction * (request->bounds[c] - origin) : request->carry_frames;
        int64_t to_end = direction > 0 ? last - origin : origin;
        room = room < 0 ? 0 : room > to_end ? to_end : room;
        slot_first[c] = slots;
        slot_count[c] = room;
        slots += room;
    }
    request->slots = slots;
    batch->carried = malloc(((size_t)slots * state->pose_doubles + 1) * sizeof(double));
    if (batch->carried == NULL)
        return QIK_BAD_INPUT;
    request->carried = batch->carried;
    int32_t status = qik_run_carries(state->chain, state->goals, state->settings, state->shot, request);
    if (status == QIK_BAD_INPUT)
        return status;
    batch->ran_out_count = 0;
    for (int64_t c = 0; c < carries; c++)
        if (request->ran_out_rank[c] >= 0) {
            batch->ran_out[request->ran_out_rank[c]] = c;
            batch->ran_out_count++;
        }
    return status;
}

/* Where a carry's jump is: the position after it. */
static int64_t jump_of(const qik_carry_request *request, int64_t c)
{
    return request->directions[c] < 0 ? request->origins[c] : request->origins[c] + 1;
}

/* The frame at a carry's s-th carried slot (nearest first). */
static int64_t carried_frame(const qik_carry_request *request, int64_t c, int64_t s)
{
    return request->order[request->origins[c] + request->directions[c] * (s + 1)];
}

/* sequence._blend_jumps for the carries ``chosen`` (count of them, in the order they ran out):
 * walkers from past each carry's far end blend the old branch into the carried one, and each
 * blend is kept where every step meets its goal and turns no faster than allowed. Jumps whose
 * window overlaps one kept before are marked in state->waiting. */
static int32_t blend_carries(repair_state *state, const carry_batch *batch, const int64_t *chosen, int64_t count)
{
    if (count == 0)
        return QIK_OK;
    const qik_carry_request *request = &batch->request;
    const qik_shot *shot = state->shot;
    size_t pose_doubles = state->pose_doubles;
    int32_t n = state->chain->n_bones;
    int64_t rows = 0;
    for (int64_t k = 0; k < count; k++)
        rows += request->carried_count[chosen[k]];
    int64_t *indices = malloc((size_t)(3 * count + rows + 1) * sizeof(int64_t));
    double *poses = malloc(((size_t)(2 * rows + count) * pose_doubles + 1) * sizeof(double));
    uint8_t *walked_met = malloc((size_t)rows + 1);
    if (indices == NULL || poses == NULL || walked_met == NULL) {
        free(indices);
        free(poses);
        free(walked_met);
        return QIK_BAD_INPUT;
    }
    int64_t *lengths = indices, *offsets = indices + count, *window = indices + 2 * count;
    double *carried = poses, *walked = poses + rows * pose_doubles, *walkers = walked + rows * pose_doubles;
    int64_t row = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t c = chosen[k], length = request->carried_count[c];
        lengths[k] = length;
        offsets[k] = row;
        for (int64_t s = 0; s < length; s++, row++)
            window[row] = carried_frame(request, c, s);
        memcpy(carried + offsets[k] * pose_doubles, request->carried + request->slot_first[c] * pose_doubles,
               (size_t)length * pose_doubles * sizeof(double));
        memcpy(walkers + k * pose_doubles, shot->rotations + request->beyond[c] * pose_doubles,
               pose_doubles * sizeof(double));
    }
    qik_blend_request blend = {count, rows, lengths, offsets, window, carried, walkers, walked, walked_met};
    int32_t status = qik_run_blend(state->chain, state->goals, state->settings, shot, &blend);
    if (status == QIK_BAD_INPUT) {
        free(indices);
        free(poses);
        free(walked_met);
        return status;
    }
    memset(state->changed, 0, (size_t)shot->frames);
    for (int64_t k = 0; k < count; k++) {
        int64_t c = chosen[k], length = lengths[k], first = offsets[k];
        int64_t beside = request->order[request->origins[c]], beyond = request->beyond[c];
        int overlaps = state->changed[beside] || state->changed[beyond];
        for (int64_t s = 0; s < length; s++)
            overlaps = overlaps || state->changed[window[first + s]];
        if (overlaps) {
            state->waiting[jump_of(request, c)] = 1;
            continue;
        }
        int all_met = 1;
        for (int64_t s = 0; s < length; s++)
            all_met = all_met && walked_met[first + s];
        if (!all_met || length == 0)
            continue;
        /* The blended path (beside, the walked frames, beyond) against the carried branch's own speed. */
        const double *beside_pose = shot->rotations + beside * pose_doubles;
        double fastest = 0.0, allowed = 0.0;
        int64_t previous_frame = beside, span = 0;
        const double *previous = beside_pose;
        for (int64_t s = 0; s <= length; s++) {
            int64_t frame = s < length ? window[first + s] : beyond;
            const double *pose = s < length ? walked + (first + s) * pose_doubles : shot->rotations + beyond * pose_doubles;
            int64_t gap = frame > previous_frame ? frame - previous_frame : previous_frame - frame;
            fastest = nan_maximum(fastest, qik_pose_distance(pose, previous, n) / (double)gap);
            if (s < length) {
                const double *own = request->carried + (request->slot_first[c] + s) * pose_doubles;
                const double *own_before =
                    s == 0 ? beside_pose : request->carried + (request->slot_first[c] + s - 1) * pose_doubles;
                double own_speed = qik_pose_distance(own, own_before, n) / (double)gap;
                allowed = s == 0 ? own_speed : nan_maximum(allowed, own_speed);
            }
            span += gap;
            previous_frame = frame;
            previous = pose;
        }
        allowed += qik_pose_distance(beside_pose, shot->rotations + window[first] * pose_doubles, n) / (double)span;
        if (!(fastest <= 2.0 * allowed + state->repair->jump_slack))
            continue;
        for (int64_t s = 0; s < length; s++) {
            int64_t frame = window[first + s];
            memcpy(shot->rotations + frame * pose_doubles, walked + (first + s) * pose_doubles,
                   pose_doubles * sizeof(double));
            shot->met[frame] = walked_met[first + s];
            shot->solved[frame] = 1;
            state->changed[frame] = 1;
        }
    }
    free(indices);
    free(poses);
    free(walked_met);
    return status;
}

/* sequence._carry_through: visible jumps between frames that both met their goals, carried without a
 * frame limit, the new branch back and the old one on, each up to the visible jump beside it. */
static int32_t carry_through(repair_state *state)
{
    const qik_repair_request *repair = state->repair;
    const qik_shot *shot = state->shot;
    const int64_t *order = repair->order;
    int32_t n = state->chain->n_bones;
    int64_t found = jump_positions(state), count = 0;
    for (int64_t k = 0; k < found; k++) {
        int64_t j = state->jumps[k], frame = order[j], before = order[j - 1];
        double turn = qik_pose_distance(shot->rotations + frame * state->pose_doubles,
                                        shot->rotations + before * state->pose_doubles, n);
        if (turn >= repair->visible_jump && shot->met[frame] && shot->met[before])
            state->jumps[count++] = j;
    }
    if (count == 0)
        return QIK_OK;
    carry_batch batch;
    if (!carry_batch_make(&batch, state, 2 * count, 1)) {
        carry_batch_free(&batch);
        return QIK_BAD_INPUT;
    }
    int64_t *origins = batch.origins, *directions = batch.directions, *bounds = batch.bounds, *rivals = batch.rivals;
    /* The new branch back and the old one on, side by side; the first kept stops the other. The
     * first frame stays (a loop's second lap carried over it wrapped with a pop). */
    for (int64_t k = 0; k < count; k++) {
        int64_t j = state->jumps[k];
        origins[k] = j;
        directions[k] = -1;
        bounds[k] = k == 0 ? 1 : state->jumps[k - 1];
        rivals[k] = count + k;
        origins[count + k] = j - 1;
        directions[count + k] = 1;
        bounds[count + k] = k + 1 < count ? state->jumps[k + 1] - 1 : repair->order_count - 1;
        rivals[count + k] = k;
    }
    int32_t status = carry_batch_run(&batch, state);
    carry_batch_free(&batch);
    return status;
}

/* One round of sequence._repair_jumps' loop over ``count`` jumps (state->jumps): the new branch
 * carried back, the old one on where that failed, and blends where both ran out beside each other. */
static int32_t repair_round(repair_state *state, int64_t count)
{
    int64_t order_count = state->repair->order_count;
    carry_batch back, on;
    memset(&on, 0, sizeof(on));
    if (!carry_batch_make(&back, state, count, 0)) {
        carry_batch_free(&back);
        return QIK_BAD_INPUT;
    }
    for (int64_t k = 0; k < count; k++) {
        back.origins[k] = state->jumps[k];
        back.directions[k] = -1;
    }
    int32_t status = carry_batch_run(&back, state), step_status = QIK_OK;
    int64_t failing = 0;
    for (int64_t k = 0; k < count && status != QIK_BAD_INPUT; k++)
        failing += !back.kept[k];
    if (status == QIK_BAD_INPUT || !carry_batch_make(&on, state, failing, 0)) {
        carry_batch_free(&back);
        carry_batch_free(&on);
        return QIK_BAD_INPUT;
    }
    for (int64_t k = 0, f = 0; k < count; k++)
        if (!back.kept[k]) {
            on.origins[f] = state->jumps[k] - 1;
            on.directions[f++] = 1;
        }
    step_status = carry_batch_run(&on, state);
    status = step_status == QIK_OK ? status : step_status;
    memset(state->failed, 0, (size_t)order_count);
    memset(state->waiting, 0, (size_t)order_count);
    for (int64_t f = 0; f < failing && status != QIK_BAD_INPUT; f++)
        if (!on.kept[f])
            state->failed[on.request.origins[f] + 1] = 1;
    /* Blends of the carries back that ran out beside the old branch, then of those on, where the
     * pose still jumps there and no blend before waits at it. */
    int64_t *chosen = malloc((size_t)(back.ran_out_count + on.ran_out_count + 1) * sizeof(int64_t));
    if (status == QIK_BAD_INPUT || chosen == NULL) {
        free(chosen);
        carry_batch_free(&back);
        carry_batch_free(&on);
        return QIK_BAD_INPUT;
    }
    int64_t picked = 0;
    for (int64_t r = 0; r < back.ran_out_count; r++)
        if (state->failed[jump_of(&back.request, back.ran_out[r])])
            chosen[picked++] = back.ran_out[r];
    step_status = blend_carries(state, &back, chosen, picked);
    status = step_status == QIK_OK ? status : step_status;
    if (status != QIK_BAD_INPUT) {
        memset(state->jump_now, 0, (size_t)order_count);
        for (int64_t k = 0, found = jump_positions(state); k < found; k++)
            state->jump_now[state->jumps[k]] = 1;
        picked = 0;
        for (int64_t r = 0; r < on.ran_out_count; r++) {
            int64_t j = jump_of(&on.request, on.ran_out[r]);
            if (state->failed[j] && state->jump_now[j] && !state->waiting[j])
                chosen[picked++] = on.ran_out[r];
        }
        step_status = blend_carries(state, &on, chosen, picked);
        status = step_status == QIK_OK ? status : step_status;
    }
    free(chosen);
    carry_batch_free(&back);
    carry_batch_free(&on);
    return status;
}

QIK_EXPORT int32_t qik_repair_jumps(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                    const qik_shot *shot, const qik_repair_request *repair)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(settings) ||
        shot == NULL || repair == NULL || shot->frames < 0 || repair->order_count < 0 || repair->carry_frames < 0 ||
        repair->blend_rounds < 0 || !(repair->jump_slack >= 0.0) || !(repair->visible_jump >= 0.0))
        return QIK_BAD_INPUT;
    int64_t order_count = repair->order_count;
    if (order_count < 2)
        return QIK_OK; /* no step, so no jump */
    if (shot->rotations == NULL || shot->met == NULL || shot->solved == NULL || shot->iterations == NULL ||
        shot->answers == NULL || shot->answer_position_error == NULL || shot->answer_orientation_error == NULL ||
        shot->answer_effector == NULL || repair->order == NULL)
        return QIK_BAD_INPUT;
    for (int64_t p = 0; p < order_count; p++)
        if (repair->order[p] < 0 || repair->order[p] >= shot->frames ||
            (p > 0 && repair->order[p] <= repair->order[p - 1]))
            return QIK_BAD_INPUT;
    repair_state state = {chain, goals, settings, shot, repair, 4 * (size_t)chain->n_bones, NULL, NULL, NULL, NULL,
                          NULL, NULL, NULL};
    state.speed = malloc((size_t)order_count * sizeof(double));
    state.jumps = malloc((size_t)order_count * sizeof(int64_t));
    uint8_t *flags = malloc(4 * (size_t)order_count + (size_t)shot->frames);
    if (state.speed == NULL || state.jumps == NULL || flags == NULL) {
        free(state.speed);
        free(state.jumps);
        free(flags);
        return QIK_BAD_INPUT;
    }
    state.tried = flags;
    state.failed = flags + order_count;
    state.waiting = flags + 2 * order_count;
    state.jump_now = flags + 3 * order_count;
    state.changed = flags + 4 * order_count;
    memset(state.tried, 0, (size_t)order_count);
    int32_t status = QIK_OK;
    int through = 1; /* the numpy loop returns without carrying through where no jump is left to try */
    for (int64_t round = 0; round < repair->blend_rounds; round++) {
        int64_t found = jump_positions(&state), count = 0;
        for (int64_t k = 0; k < found; k++) {
            int64_t j = state.jumps[k];
            if (shot->met[repair->order[j]] && shot->met[repair->order[j - 1]] && !state.tried[j])
                state.jumps[count++] = j;
        }
        if (count == 0) {
            through = 0;
            break;
        }
        int32_t round_status = repair_round(&state, count);
        if (round_status == QIK_BAD_INPUT) { /* memory ran out: the shot stays as the repair left it */
            status = QIK_NOT_FINITE;
            through = 0;
            break;
        }
        status = round_status == QIK_OK ? status : round_status;
        int any_waiting = 0;
        for (int64_t j = 0; j < order_count; j++)
            any_waiting = any_waiting || state.waiting[j];
        if (!any_waiting)
            break;
        for (int64_t j = 0; j < order_count; j++)
            state.tried[j] = state.tried[j] || (state.failed[j] && !state.waiting[j]);
    }
    if (through) {
        int32_t through_status = carry_through(&state);
        status = through_status == QIK_BAD_INPUT ? QIK_NOT_FINITE : through_status == QIK_OK ? status : through_status;
    }
    free(state.speed);
    free(state.jumps);
    free(flags);
    return status;
}
