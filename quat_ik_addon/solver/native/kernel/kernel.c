/* The kernel's solve entry point (qik.h): solve.run_method one row at a time. */
#include <stdlib.h>

#include "limits.h"
#include "qik_math.h"
#include "solve.h"

QIK_EXPORT int32_t qik_interface_version(void) { return QIK_INTERFACE_VERSION; }

/* What the Python side promises (binding.py checks it first); checked again so that a broken
 * promise is a status, not a crash. */
int qik_goals_are_valid(const qik_goals *goals)
{
    if (goals == NULL || goals->positions == NULL)
        return 0;
    if (goals->kind == QIK_ORIENTATION)
        return goals->orientations != NULL;
    if (goals->kind == QIK_DIRECTION)
        return goals->directions != NULL;
    return goals->kind == QIK_POSITION;
}

int qik_settings_are_valid(const qik_settings *settings)
{
    return settings != NULL && settings->method >= QIK_CCD && settings->method <= QIK_TRANSPOSE &&
           (settings->order == QIK_TIP_TO_BASE || settings->order == QIK_BASE_TO_TIP);
}

int qik_all_finite(const double *values, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(values[i]))
            return 0;
    return 1;
}

qik_row_goal qik_row_goal_at(const qik_goals *goals, int64_t row)
{
    qik_row_goal goal = {goals->kind,
                         goals->positions + 3 * row,
                         goals->kind == QIK_ORIENTATION ? goals->orientations + 4 * row : NULL,
                         goals->kind == QIK_DIRECTION ? goals->directions + 3 * row : NULL,
                         goals->aim_axis,
                         goals->position_weight,
                         goals->orientation_weight};
    return goal;
}

int64_t qik_run_row(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, double *q,
                       const double *preferred, double *scratch, double *position_error, double *orientation_error,
                       double effector[3])
{
    qik_budget budget = {settings->max_iterations, settings->stall_iterations, settings->stall_ratio};
    int met = 0;
    int64_t iterations = 0;
    switch (settings->method) {
    case QIK_CCD:
        iterations = qik_run_ccd(chain, goal, settings, &budget, q, preferred, scratch);
        break;
    case QIK_CCD_DLS: /* CCD's cheap global moves, then DLS's fast final convergence */
        budget.max_iterations = settings->ccd_iterations_before_dls;
        iterations = qik_run_ccd(chain, goal, settings, &budget, q, preferred, scratch);
        return iterations + qik_run_dls(chain, goal, settings, 0, settings->max_iterations, q, preferred, scratch,
                                        &met, position_error, orientation_error, effector);
    case QIK_DLS:
    case QIK_TRANSPOSE:
        return qik_run_dls(chain, goal, settings, settings->method == QIK_TRANSPOSE, settings->max_iterations, q,
                           preferred, scratch, &met, position_error, orientation_error, effector);
    default: /* QIK_DLS_CCD: CCD finishes what DLS left unmet (a joint pressed on a limit) */
        iterations = qik_run_dls(chain, goal, settings, 0, settings->max_iterations, q, preferred, scratch, &met,
                                 position_error, orientation_error, effector);
        if (met)
            return iterations;
        budget = (qik_budget){settings->finish_max_iterations, settings->finish_stall_iterations,
                              settings->finish_stall_ratio};
        iterations += qik_run_ccd(chain, goal, settings, &budget, q, preferred, scratch);
        break;
    }
    qik_goal_errors(chain, goal, q, scratch, position_error, orientation_error, effector);
    return iterations;
}

QIK_EXPORT int32_t qik_run_method(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                  int64_t rows, double *rotations, const double *preferred, int64_t *iterations,
                                  double *position_error, double *orientation_error, double *effector)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(settings) || rows < 0 ||
        (rows > 0 && (rotations == NULL || iterations == NULL || position_error == NULL ||
                      orientation_error == NULL || effector == NULL)))
        return QIK_BAD_INPUT;
    int32_t n = chain->n_bones;
    double *scratch = malloc((size_t)(qik_workspace_doubles(n) + 4 * (int64_t)n) * sizeof(double));
    if (scratch == NULL)
        return QIK_BAD_INPUT;
    double *start = scratch + qik_workspace_doubles(n);
    int32_t status = QIK_OK;
    for (int64_t row = 0; row < rows; row++) {
        qik_row_goal goal = qik_row_goal_at(goals, row);
        double *q = rotations + 4 * n * row;
        memcpy(start, q, 4 * (size_t)n * sizeof(double));
        iterations[row] = qik_run_row(chain, &goal, settings, q, preferred == NULL ? NULL : preferred + 4 * n * row,
                                  scratch, position_error + row, orientation_error + row, effector + 3 * row);
        if (!qik_all_finite(q, 4 * (int64_t)n) || !isfinite(position_error[row]) || !isfinite(orientation_error[row]) ||
            !qik_all_finite(effector + 3 * row, 3)) {
            memcpy(q, start, 4 * (size_t)n * sizeof(double)); /* never NaN out: the row as it came */
            status = QIK_NOT_FINITE;
        }
    }
    free(scratch);
    return status;
}

QIK_EXPORT int32_t qik_measure(const qik_chain *chain, const qik_goals *goals, int64_t rows, const double *rotations,
                               double *position_error, double *orientation_error, double *effector)
{
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || rows < 0 ||
        (rows > 0 && (rotations == NULL || position_error == NULL || orientation_error == NULL || effector == NULL)))
        return QIK_BAD_INPUT;
    int32_t n = chain->n_bones;
    double *scratch = malloc((size_t)qik_workspace_doubles(n) * sizeof(double));
    if (scratch == NULL)
        return QIK_BAD_INPUT;
    for (int64_t row = 0; row < rows; row++) {
        qik_row_goal goal = qik_row_goal_at(goals, row);
        qik_goal_errors(chain, &goal, rotations + 4 * n * row, scratch, position_error + row, orientation_error + row,
                        effector + 3 * row);
    }
    free(scratch);
    return QIK_OK;
}

QIK_EXPORT int32_t qik_pose_distance_rows(int32_t n_bones, int64_t rows, const double *a, const double *b,
                                          double *distance)
{
    if (n_bones < 1 || rows < 0 || (rows > 0 && (a == NULL || b == NULL || distance == NULL)))
        return QIK_BAD_INPUT;
    for (int64_t row = 0; row < rows; row++)
        distance[row] = qik_pose_distance(a + 4 * n_bones * row, b + 4 * n_bones * row, n_bones);
    return QIK_OK;
}

/* free_twist.carry_tip_twist and within_tip_twist_range for one row's pose q from its start. */
static void carry_tip(const qik_chain *chain, double *q, const double *start)
{
    int32_t tip = chain->n_bones - 1;
    double from[3], to[3], turn[4], *tip_q = q + 4 * tip;
    qik_rotate_y_axis(start + 4 * tip, from);
    qik_rotate_y_axis(tip_q, to);
    qik_rotation_between(from, to, turn);
    qik_mul(turn, start + 4 * tip, tip_q);
    qik_canonical(tip_q);
    qik_twist_clamp_joint(chain, tip, tip_q);
}

QIK_EXPORT int32_t qik_carry_tip_twist(const qik_chain *chain, int64_t rows, double *rotations, const double *starts)
{
    if (!qik_chain_is_valid(chain) || rows < 0 || (rows > 0 && (rotations == NULL || starts == NULL)))
        return QIK_BAD_INPUT;
    int32_t n = chain->n_bones;
    for (int64_t row = 0; row < rows; row++)
        carry_tip(chain, rotations + 4 * n * row, starts + 4 * n * row);
    return QIK_OK;
}

#define UNIT_SLACK 1e-13 /* solve.UNIT_SLACK: |q|² this close to 1 is unit to rounding */

int qik_finish_row(const qik_chain *chain, const qik_row_goal *goal, double *q, double *scratch,
                      double *position_error, double *orientation_error, double effector[3])
{
    int unit = 1;
    for (int32_t i = 0; i < chain->n_bones; i++)
        unit = unit && fabs(qik_dot4(q + 4 * i, q + 4 * i) - 1.0) <= UNIT_SLACK;
    for (int32_t i = 0; i < chain->n_bones; i++) {
        if (!unit)
            qik_normalize(q + 4 * i);
        qik_canonical(q + 4 * i);
    }
    if (!unit)
        qik_goal_errors(chain, goal, q, scratch, position_error, orientation_error, effector);
    return !unit;
}

QIK_EXPORT int32_t qik_solve(const qik_solve_call *call)
{
    if (call == NULL)
        return QIK_BAD_INPUT;
    const qik_chain *chain = call->chain;
    const qik_goals *goals = call->goals;
    const qik_settings *settings = call->settings;
    int64_t rows = call->rows, *iterations = call->iterations;
    double *starts = call->starts, *rotations = call->rotations, *position_error = call->position_error;
    double *orientation_error = call->orientation_error, *effector = call->effector;
    uint8_t *met = call->met;
    const double *preferred = call->preferred;
    int32_t carry_tip_twist = call->carry_tip_twist;
    if (!qik_chain_is_valid(chain) || !qik_goals_are_valid(goals) || !qik_settings_are_valid(settings) || rows < 0 ||
        (rows > 0 && (starts == NULL || rotations == NULL || iterations == NULL || position_error == NULL ||
                      orientation_error == NULL || effector == NULL || met == NULL)))
        return QIK_BAD_INPUT;
    int32_t n = chain->n_bones;
    double *scratch = malloc((size_t)qik_workspace_doubles(n) * sizeof(double));
    if (scratch == NULL)
        return QIK_BAD_INPUT;
    int32_t status = QIK_OK;
    for (int64_t row = 0; row < rows; row++) {
        qik_row_goal goal = qik_row_goal_at(goals, row);
        double *start = starts + 4 * n * row, *q = rotations + 4 * n * row;
        int reached = qik_solve_row(chain, &goal, settings, start, q, preferred == NULL ? NULL : preferred + 4 * n * row,
                                    carry_tip_twist, scratch, iterations + row, position_error + row,
                                    orientation_error + row, effector + 3 * row);
        met[row] = (uint8_t)(reached == 1);
        if (reached < 0)
            status = QIK_NOT_FINITE; /* the caller runs numpy on the whole batch */
    }
    free(scratch);
    return status;
}

int qik_solve_row(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, double *start,
                  double *q, const double *preferred, int carry_tip_twist, double *scratch, int64_t *iterations,
                  double *position_error, double *orientation_error, double effector[3])
{
    int32_t n = chain->n_bones;
    for (int32_t i = 0; i < n; i++)
        qik_clamp_joint(chain, i, start + 4 * i);
    memcpy(q, start, 4 * (size_t)n * sizeof(double));
    *iterations = qik_run_row(chain, goal, settings, q, preferred, scratch, position_error, orientation_error, effector);
    qik_finish_row(chain, goal, q, scratch, position_error, orientation_error, effector);
    int met = qik_reached(settings, *position_error, *orientation_error);
    if (carry_tip_twist)
        carry_tip(chain, q, start);
    if (!qik_all_finite(q, 4 * (int64_t)n) || !isfinite(*position_error) || !isfinite(*orientation_error) ||
        !qik_all_finite(effector, 3) || !qik_all_finite(start, 4 * (int64_t)n))
        return -1;
    return met;
}
