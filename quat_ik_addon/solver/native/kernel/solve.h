/* One row of a solve: forward kinematics, goal errors, CCD and DLS (solver/chain.py, ccd.py,
 * dls.py, goals.py). Rows of a batch never mix, so everything here works on one row's pose. */
#ifndef QIK_SOLVE_H
#define QIK_SOLVE_H

#include "qik.h"

/* Whether the chain's counts, kinds and table indices are consistent (chain_check.c): every
 * entry point checks it, so that a broken promise of the Python side is a status, not a crash. */
int qik_chain_is_valid(const qik_chain *chain);

/* One row's goal (qik_goals at a row). */
typedef struct {
    int32_t kind;
    const double *position;    /* 3 */
    const double *orientation; /* 4, or NULL */
    const double *direction;   /* 3, or NULL */
    const double *aim_axis;    /* 3 */
    double position_weight;
    double orientation_weight;
} qik_row_goal;

/* ChainPose of one row: arrays sized by the chain's bones. */
typedef struct {
    double *heads;         /* (n, 3) */
    double *pre_rotations; /* (n, 4) G_{i-1}·L_i */
    double *rotations;     /* (n, 4) G_i */
    double effector[3];
} qik_pose;

/* Doubles of scratch memory one row needs, allocated once per call. */
int64_t qik_workspace_doubles(int32_t n_bones);
/* Carve ``count`` doubles off the workspace's memory at *cursor. */
double *qik_take(double **cursor, int64_t count);

/* chain.forward_kinematics for one row (bone by bone, root to tip). */
void qik_forward_kinematics(const qik_chain *chain, const double *q, qik_pose *pose);

/* goals.orientation_error of a tip frame (radians; 0 without an orientation goal). */
double qik_orientation_error(const qik_row_goal *goal, const double tip[4]);
double qik_position_error(const qik_row_goal *goal, const double effector[3]);
double qik_combined_error(const qik_chain *chain, double position_error, double orientation_error);
int qik_reached(const qik_settings *settings, double position_error, double orientation_error);

typedef struct {
    int32_t max_iterations;
    int32_t stall_iterations;
    double stall_ratio;
} qik_budget;

/* ccd.run_ccd for one row: q (n, 4) in place becomes the best pose; returns the sweeps taken.
 * ``preferred`` (n, 4) or NULL. ``scratch``: qik_workspace_doubles(n) doubles. */
int64_t qik_run_ccd(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings,
                    const qik_budget *budget, double *q, const double *preferred, double *scratch);

/* dls.run_dls for one row (``transpose``: Buss's Jᵀe steps): q in place; returns the
 * iterations taken, sets *met and the errors and effector of the returned pose. */
int64_t qik_run_dls(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, int transpose,
                    int32_t max_iterations, double *q, const double *preferred, double *scratch, int *met,
                    double *position_error, double *orientation_error, double effector[3]);

/* What the Python side promises of a call's goals and settings, checked again (kernel.c). */
int qik_goals_are_valid(const qik_goals *goals);
int qik_settings_are_valid(const qik_settings *settings);
int qik_all_finite(const double *values, int64_t count);

/* One row's goal of a batch. */
qik_row_goal qik_row_goal_at(const qik_goals *goals, int64_t row);

/* solve.run_method for one row (q in place); returns the iterations, sets the measured errors. */
int64_t qik_run_row(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, double *q,
                    const double *preferred, double *scratch, double *position_error, double *orientation_error,
                    double effector[3]);

/* solve._restarted_result's finish: unit poses only get w >= 0 (their measure stands); others
 * are normalised and measured again. Returns whether it measured again. */
int qik_finish_row(const qik_chain *chain, const qik_row_goal *goal, double *q, double *scratch,
                   double *position_error, double *orientation_error, double effector[3]);

/* qik_solve for one row: ``start`` brought inside the limits in place, the method run from it into q,
 * q finished (qik_finish_row) and measured, then with ``carry_tip_twist`` the tip's unseen twist
 * carried from the start. Returns whether q meets the goal, or -1 where a value is not finite. */
int qik_solve_row(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, double *start,
                  double *q, const double *preferred, int carry_tip_twist, double *scratch, int64_t *iterations,
                  double *position_error, double *orientation_error, double effector[3]);

/* goal_errors of a pose: errors and effector by forward kinematics. */
void qik_goal_errors(const qik_chain *chain, const qik_row_goal *goal, const double *q, double *scratch,
                     double *position_error, double *orientation_error, double effector[3]);

#endif
