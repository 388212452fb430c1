/* One round of restarts (solve._restart) in one call: every candidate solved from its random start,
 * the best kept per row. The Python side draws the candidates (numpy's generator, so both paths
 * draw alike) and decides which rows restart; ranking the answers there cost a dozen numpy calls a
 * round and a crossing more. */
#include <stdlib.h>

#include "limits.h"
#include "qik_math.h"
#include "solve.h"

/* solve._first_least: the first of ``count`` values within ``slack`` of their least. */
static int64_t first_least(const double *values, int64_t count, double slack)
{
    double least = values[0];
    for (int64_t c = 1; c < count; c++)
        least = values[c] < least ? values[c] : least;
    for (int64_t c = 0; c < count; c++)
        if (values[c] <= least + slack)
            return c;
    return 0;
}

static int round_is_valid(const qik_restart_request *round)
{
    if (round == NULL || round->rows < 0 || round->unmet < 0 || round->candidates < 0)
        return 0;
    if (round->unmet == 0)
        return 1;
    if (round->candidates < 1 || round->unmet > round->rows || round->rotations == NULL ||
        round->position_error == NULL || round->orientation_error == NULL || round->iterations == NULL ||
        round->unmet_rows == NULL || round->starts == NULL || round->taken == NULL ||
        (round->take_rule != QIK_TAKE_CLOSER && round->take_rule != QIK_TAKE_GAIN && round->take_rule != QIK_TAKE_MET) ||
        !(round->tie >= 0.0) || !(round->switch_gain >= 0.0) || round->candidates > INT64_MAX / round->unmet)
        return 0;
    for (int64_t u = 0; u < round->unmet; u++)
        if (round->unmet_rows[u] < 0 || round->unmet_rows[u] >= round->rows)
            return 0;
    return 1;
}

QIK_EXPORT int32_t qik_restart_round(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                     const qik_restart_request *round)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(settings) ||
        !round_is_valid(round))
        return QIK_BAD_INPUT;
    int64_t unmet = round->unmet, candidates = round->candidates, trials = unmet * candidates;
    if (unmet == 0)
        return QIK_OK;
    int32_t n = chain->n_bones;
    size_t pose_doubles = 4 * (size_t)n;
    int64_t workspace = qik_workspace_doubles(n);
    /* scratch; per trial: position and orientation error, its rank, its fallback; iterations */
    double *memory = malloc(((size_t)workspace + 4 * (size_t)trials) * sizeof(double));
    int64_t *trial_iterations = malloc((size_t)trials * sizeof(int64_t));
    if (memory == NULL || trial_iterations == NULL) {
        free(memory);
        free(trial_iterations);
        return QIK_BAD_INPUT;
    }
    double *scratch = memory, *position = memory + workspace, *orientation = position + trials;
    double *rank = orientation + trials, *fallback = rank + trials;
    /* Every candidate first (methods.ladder.run_method's rows): nothing is written unless all are finite. */
    int32_t status = QIK_OK;
    for (int64_t t = 0; t < trials && status == QIK_OK; t++) {
        int64_t row = round->unmet_rows[t / candidates];
        qik_row_goal goal = qik_row_goal_at(goals, row);
        double *q = round->starts + (size_t)t * pose_doubles, effector[3];
        const double *preferred =
            round->preferred == NULL || settings->rest_pull == 0.0 ? NULL : round->preferred + (size_t)row * pose_doubles;
        trial_iterations[t] = qik_run_row(chain, &goal, settings, q, preferred, scratch, position + t, orientation + t,
                                          effector);
        if (!qik_all_finite(q, 4 * (int64_t)n) || !isfinite(position[t]) || !isfinite(orientation[t]))
            status = QIK_NOT_FINITE; /* the caller runs the round on numpy */
    }
    if (status != QIK_OK) {
        free(memory);
        free(trial_iterations);
        return status;
    }
    /* Rank: goals met first, then nearest the reference pose, else the smallest error. */
    for (int64_t u = 0; u < unmet; u++) {
        int64_t row = round->unmet_rows[u], first = u * candidates, added = 0;
        int any_met = 0;
        for (int64_t c = 0; c < candidates; c++) {
            int64_t t = first + c;
            int met = qik_reached(settings, position[t], orientation[t]);
            double closeness = round->reference != NULL
                                   ? qik_pose_distance(round->starts + (size_t)t * pose_doubles,
                                                       round->reference + (size_t)row * pose_doubles, n)
                                   : qik_combined_error(chain, position[t], orientation[t]);
            rank[t] = met ? closeness : INFINITY;
            fallback[t] = qik_combined_error(chain, position[t], orientation[t]);
            any_met = any_met || met;
            added += trial_iterations[t];
        }
        int64_t pick = first + first_least(any_met ? rank + first : fallback + first, candidates, round->tie);
        double current = qik_combined_error(chain, round->position_error[row], round->orientation_error[row]);
        int take = any_met;
        if (round->take_rule == QIK_TAKE_CLOSER) /* no reference: a closer miss is better */
            take = take || fallback[pick] < current - round->tie;
        else if (round->take_rule == QIK_TAKE_GAIN) /* another branch, only for a clearly closer miss */
            take = take || fallback[pick] < current - round->switch_gain;
        round->taken[u] = (uint8_t)take;
        if (take) {
            memcpy(round->rotations + (size_t)row * pose_doubles, round->starts + (size_t)pick * pose_doubles,
                   pose_doubles * sizeof(double));
            round->position_error[row] = position[pick];
            round->orientation_error[row] = orientation[pick];
        }
        round->iterations[row] += added;
    }
    free(memory);
    free(trial_iterations);
    return QIK_OK;
}
