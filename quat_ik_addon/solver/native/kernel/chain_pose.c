/* Forward kinematics and goal errors for one row (solver/chain.py, ccd.py, goals.py). */
#include "qik_math.h"
#include "solve.h"

/* Per bone: poses for FK (3 + 4 + 4) twice (current and trial), poses q (4) four times
 * (best, trial, turned, spare), DLS blocks (6 × 3) twice, the Jacobian (6 × 3), pressed axes
 * and their turned copies (2 × 3 twice), projectors (9), held columns (6 × 2), steps (3 × 3),
 * base-to-tip carry (3 + 4); rounded up generously, plus room for the m × m systems. */
#define PER_BONE_DOUBLES 160
#define FIXED_DOUBLES 256

int64_t qik_workspace_doubles(int32_t n_bones) { return (int64_t)n_bones * PER_BONE_DOUBLES + FIXED_DOUBLES; }

double *qik_take(double **cursor, int64_t count)
{
    double *taken = *cursor;
    *cursor += count;
    return taken;
}

/* G_i = G_{i-1}·L_i·q_i; head_i = head_{i-1} + G_{i-1}·offset_i; effector = head_{n-1} + G_{n-1}·tip
 * (Blender's pose evaluation, chain.py's docstring). */
void qik_forward_kinematics(const qik_chain *chain, const double *q, qik_pose *pose)
{
    double frame[4] = {1.0, 0.0, 0.0, 0.0};
    double head[3];
    qik_copy3(head, chain->rest_offsets);
    for (int32_t i = 0; i < chain->n_bones; i++) {
        double *pre = pose->pre_rotations + 4 * i, *posed = pose->rotations + 4 * i;
        const double *rest = chain->rest_rotations + 4 * i;
        if (rest[0] == 1.0 && rest[1] == 0.0 && rest[2] == 0.0 && rest[3] == 0.0)
            qik_copy4(pre, frame); /* the product with the identity, but for the signs of zeros */
        else
            qik_mul(frame, rest, pre);
        qik_mul(pre, q + 4 * i, posed);
        qik_copy3(pose->heads + 3 * i, head);
        double step[3];
        qik_rotate(posed, chain->step_vectors + 3 * i, step);
        head[0] += step[0];
        head[1] += step[1];
        head[2] += step[2];
        qik_copy4(frame, posed);
    }
    qik_copy3(pose->effector, head);
}

double qik_orientation_error(const qik_row_goal *goal, const double tip[4])
{
    if (goal->kind == QIK_ORIENTATION)
        return qik_angle_between(tip, goal->orientation);
    if (goal->kind == QIK_DIRECTION) {
        double aim[3];
        qik_rotate(tip, goal->aim_axis, aim);
        return qik_direction_angle(aim, goal->direction);
    }
    return 0.0;
}

double qik_position_error(const qik_row_goal *goal, const double effector[3])
{
    double d[3] = {effector[0] - goal->position[0], effector[1] - goal->position[1], effector[2] - goal->position[2]};
    return qik_length3(d);
}

/* ccd.combined_error: distance plus reach × angle. */
double qik_combined_error(const qik_chain *chain, double position_error, double orientation_error)
{
    return position_error + chain->reach * orientation_error;
}

int qik_reached(const qik_settings *settings, double position_error, double orientation_error)
{
    return position_error <= settings->tolerance && orientation_error <= settings->angle_tolerance;
}

void qik_goal_errors(const qik_chain *chain, const qik_row_goal *goal, const double *q, double *scratch,
                     double *position_error, double *orientation_error, double effector[3])
{
    int32_t n = chain->n_bones;
    qik_pose pose = {scratch, scratch + 3 * n, scratch + 7 * n, {0.0, 0.0, 0.0}};
    qik_forward_kinematics(chain, q, &pose);
    *position_error = qik_position_error(goal, pose.effector);
    *orientation_error = qik_orientation_error(goal, pose.rotations + 4 * (n - 1));
    qik_copy3(effector, pose.effector);
}
