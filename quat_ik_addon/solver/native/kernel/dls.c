/* Damped least squares on the chain's Jacobian for one row (solver/dls.py; van den Bergen
 * 2014), with the joints pressed on their limits kept off those axes (Rosen 1960's active set)
 * and let go of by their Lagrange multipliers' sign (Nocedal & Wright 2006, §16.5). */
#include "limits.h"
#include "qik_math.h"
#include "solve.h"

#define MAX_JOINT_STEP 0.5 /* radians: a damped step never turns one joint further than this */
#define NEGLIGIBLE 1e-9    /* relative: a column or a multiplier this small is rounding */
#define NORMALISED_ONLY 1e-10 /* a clamp that moved no component further did not act */
#define MAX_ROWS 6         /* goal rows: 3 for the position, 3 more for an orientation or direction */
#define SLOTS 2            /* pressed axes per joint (limit_contacts.SLOTS) */

/* Every loop over the goal rows below runs with m a constant (3 or 6): ROWS_INLINE bodies are
 * inlined into one copy per row count, which the compiler unrolls. The operations and their
 * order are the loops' own, so the answers are the same to the bit. */
#define ROWS_INLINE static inline __attribute__((always_inline))

/* Solve the m × m system a·x = b by Gaussian elimination with partial pivoting (as LAPACK's
 * gesv, which numpy.linalg.solve calls). ``a`` and ``b`` are overwritten; x is left in b. */
ROWS_INLINE void solve_small(int m, double a[MAX_ROWS][MAX_ROWS], double b[MAX_ROWS])
{
    for (int c = 0; c < m; c++) {
        int pivot = c;
        for (int r = c + 1; r < m; r++)
            if (fabs(a[r][c]) > fabs(a[pivot][c]))
                pivot = r;
        if (pivot != c) {
            for (int j = 0; j < m; j++) {
                double t = a[c][j];
                a[c][j] = a[pivot][j];
                a[pivot][j] = t;
            }
            double t = b[c];
            b[c] = b[pivot];
            b[pivot] = t;
        }
        for (int r = c + 1; r < m; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < m; j++)
                a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int c = m - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < m; j++)
            s -= a[c][j] * b[j];
        b[c] = s / a[c][c];
    }
}

/* One row's linearised problem: the Jacobian J (m × 3n, row-major), the weighted residual, and
 * what dls._AllowedTurns knows (hinge axes in the root frame, pressed projectors). */
typedef struct {
    const qik_chain *chain;
    int32_t n, m;
    double *jacobian;    /* (m, 3n) */
    double residual[MAX_ROWS];
    double *hinge_axes;  /* (n, 3) a hinge's axis in the root frame */
    double *pressed;     /* (n, SLOTS, 3) pressed axes, joint frame (persist across iterations) */
    double *inwards;     /* (n, SLOTS, 3) the same axes in the root frame */
    double *projectors;  /* (n, 9) I − Σ inwards inwardsᵀ */
    double *columns;     /* (n, MAX_ROWS, SLOTS) how a turn inwards about each held axis moves the rows */
    unsigned char *held; /* (n) joints pressed this iteration */
    int any_held;
} linear_model;

static double weight_of(const qik_chain *chain, int32_t i)
{
    return chain->has_shares ? sqrt(chain->joints[i].share) : 1.0;
}

/* dls._orientation_residual: the rotation vector that would fix the tip, and the rows that count. */
static int orientation_residual(const qik_row_goal *goal, const double tip[4], double error_vector[3],
                                double counted[3][3])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            counted[i][j] = i == j ? 1.0 : 0.0;
    if (goal->kind == QIK_ORIENTATION) {
        double fix[4], back[4];
        qik_conj(tip, back);
        qik_mul(goal->orientation, back, fix);
        qik_rotation_vector(fix, error_vector);
        return 1;
    }
    if (goal->kind == QIK_DIRECTION) {
        double aim[3], turn[4];
        qik_rotate(tip, goal->aim_axis, aim);
        qik_rotation_between(aim, goal->direction, turn);
        double angle = qik_direction_angle(aim, goal->direction), size = qik_length3(turn + 1);
        size = size > 1e-300 ? size : 1e-300;
        for (int i = 0; i < 3; i++) {
            error_vector[i] = turn[1 + i] / size * angle;
            for (int j = 0; j < 3; j++) /* turning about the aim axis itself changes nothing that counts */
                counted[i][j] -= aim[i] * aim[j];
        }
        return 1;
    }
    return 0;
}

/* dls._Problem.linearise with keep_pressed and of_blocks. */
static void linearise(linear_model *model, const qik_row_goal *goal, const qik_pose *pose)
{
    const qik_chain *chain = model->chain;
    int32_t n = model->n, width = 3 * n;
    double position_scale = sqrt(goal->position_weight);
    double orientation_scale = sqrt(goal->orientation_weight) * chain->reach;
    double error_vector[3], counted[3][3];
    int oriented = orientation_residual(goal, pose->rotations + 4 * (n - 1), error_vector, counted);
    model->m = oriented ? 6 : 3;
    double *J = model->jacobian;
    for (int r = 0; r < 3; r++)
        model->residual[r] = position_scale * (goal->position[r] - pose->effector[r]);
    if (oriented)
        for (int r = 0; r < 3; r++)
            model->residual[3 + r] = orientation_scale * error_vector[r];
    model->any_held = 0;
    for (int32_t i = 0; i < n; i++) {
        const double *head = pose->heads + 3 * i, *pre = pose->pre_rotations + 4 * i;
        double lever[3] = {pose->effector[0] - head[0], pose->effector[1] - head[1], pose->effector[2] - head[2]};
        /* column l: how a turn about root axis l moves the effector, e_l × lever */
        double block[MAX_ROWS][3] = {
            {0.0, lever[2], -lever[1]}, {-lever[2], 0.0, lever[0]}, {lever[1], -lever[0], 0.0}};
        for (int r = 0; r < 3; r++)
            for (int l = 0; l < 3; l++)
                block[r][l] *= position_scale;
        if (oriented)
            for (int r = 0; r < 3; r++)
                for (int l = 0; l < 3; l++)
                    block[3 + r][l] = orientation_scale * counted[r][l];
        /* keep_pressed: joints pressed on their limits stay off those axes */
        double *axes = model->pressed + 6 * i, *inwards = model->inwards + 6 * i;
        model->held[i] = (unsigned char)(axes[0] != 0.0 || axes[1] != 0.0 || axes[2] != 0.0 || axes[3] != 0.0 ||
                                         axes[4] != 0.0 || axes[5] != 0.0);
        if (model->held[i]) {
            model->any_held = 1;
            double *projector = model->projectors + 9 * i;
            for (int s = 0; s < SLOTS; s++) {
                qik_rotate(pre, axes + 3 * s, inwards + 3 * s);
                for (int r = 0; r < model->m; r++)
                    model->columns[(i * MAX_ROWS + r) * SLOTS + s] = qik_dot3(block[r], inwards + 3 * s);
            }
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    projector[3 * a + b] = (a == b ? 1.0 : 0.0) - inwards[a] * inwards[b] - inwards[3 + a] * inwards[3 + b];
        }
        /* of_blocks: the projector onto the rotations the joint allows */
        const qik_joint *joint = chain->joints + i;
        if (joint->kind == QIK_HINGE) {
            double *axis = model->hinge_axes + 3 * i;
            qik_rotate(pre, joint->axis, axis);
            for (int r = 0; r < model->m; r++) {
                double along = qik_dot3(block[r], axis);
                for (int l = 0; l < 3; l++)
                    block[r][l] = along * axis[l];
            }
        } else if (joint->kind == QIK_FIXED) {
            for (int r = 0; r < model->m; r++)
                block[r][0] = block[r][1] = block[r][2] = 0.0;
        }
        if (model->held[i]) {
            const double *projector = model->projectors + 9 * i;
            for (int r = 0; r < model->m; r++) {
                double row[3];
                for (int l = 0; l < 3; l++)
                    row[l] = block[r][0] * projector[l] + block[r][1] * projector[3 + l] + block[r][2] * projector[6 + l];
                qik_copy3(block[r], row);
            }
        }
        double weight = weight_of(chain, i);
        for (int r = 0; r < model->m; r++)
            for (int l = 0; l < 3; l++)
                J[r * width + 3 * i + l] = block[r][l] * weight;
    }
}

/* _AllowedTurns.of_vectors: each joint's rotation vector projected (in place). */
static void allowed_vectors(const linear_model *model, double *vectors)
{
    const qik_chain *chain = model->chain;
    for (int32_t i = 0; i < model->n; i++) {
        double *v = vectors + 3 * i;
        const qik_joint *joint = chain->joints + i;
        if (joint->kind == QIK_HINGE) {
            const double *axis = model->hinge_axes + 3 * i;
            double along = qik_dot3(axis, v);
            for (int l = 0; l < 3; l++)
                v[l] = axis[l] * along;
        } else if (joint->kind == QIK_FIXED) {
            v[0] = v[1] = v[2] = 0.0;
        }
        if (model->held[i]) {
            const double *p = model->projectors + 9 * i;
            double out[3];
            for (int a = 0; a < 3; a++)
                out[a] = p[3 * a] * v[0] + p[3 * a + 1] * v[1] + p[3 * a + 2] * v[2];
            qik_copy3(v, out);
        }
        double weight = weight_of(chain, i);
        for (int l = 0; l < 3; l++)
            v[l] *= weight;
    }
}

ROWS_INLINE void jacobian_times_rows(int m, const linear_model *model, const double *step, double out[MAX_ROWS])
{
    int32_t width = 3 * model->n;
    for (int r = 0; r < m; r++) {
        double s = 0.0;
        for (int32_t c = 0; c < width; c++)
            s += model->jacobian[r * width + c] * step[c];
        out[r] = s;
    }
}

ROWS_INLINE void jacobian_transpose_times(int m, const linear_model *model, const double y[MAX_ROWS], double *out)
{
    int32_t width = 3 * model->n;
    for (int32_t c = 0; c < width; c++) {
        double s = 0.0;
        for (int r = 0; r < m; r++)
            s += model->jacobian[r * width + c] * y[r];
        out[c] = s;
    }
}

static void jacobian_times(const linear_model *model, const double *step, double out[MAX_ROWS])
{
    if (model->m == 3)
        jacobian_times_rows(3, model, step, out);
    else
        jacobian_times_rows(MAX_ROWS, model, step, out);
}

/* dls._linear_step: (J Jᵀ + λ²I) y = e and Jᵀy, plus the pull in J's null space; or a Jᵀe step
 * of Buss's optimal length (Buss 2004, "Introduction to inverse kinematics", §4). */
ROWS_INLINE void linear_step_rows(int m, const linear_model *model, double damping, int transpose,
                                  const double *pull, double *toward, double *step)
{
    int32_t width = 3 * model->n;
    if (transpose) {
        double moved[MAX_ROWS];
        jacobian_transpose_times(m, model, model->residual, step);
        jacobian_times_rows(m, model, step, moved);
        double along = 0.0, size = 0.0;
        for (int r = 0; r < m; r++) {
            along += model->residual[r] * moved[r];
            size += moved[r] * moved[r];
        }
        double length = along / (size > 1e-300 ? size : 1e-300);
        for (int32_t c = 0; c < width; c++)
            step[c] *= length;
        return;
    }
    double normal[MAX_ROWS][MAX_ROWS], system[MAX_ROWS][MAX_ROWS], y[MAX_ROWS];
    for (int i = 0; i < m; i++) /* J Jᵀ is symmetric to the bit: each product is formed either way */
        for (int j = i; j < m; j++) {
            double s = 0.0;
            for (int32_t c = 0; c < width; c++)
                s += model->jacobian[i * width + c] * model->jacobian[j * width + c];
            normal[i][j] = s;
            normal[j][i] = s;
        }
    for (int i = 0; i < m; i++)
        normal[i][i] += damping * damping;
    memcpy(system, normal, sizeof(normal));
    memcpy(y, model->residual, sizeof(y));
    solve_small(m, system, y);
    jacobian_transpose_times(m, model, y, step);
    if (pull == NULL)
        return;
    memcpy(toward, pull, (size_t)width * sizeof(double));
    allowed_vectors(model, toward);
    /* Project with (almost) no damping: a damped projector leaks the pull into what the goals see. */
    double floor = 1e-5 * model->chain->reach, seen[MAX_ROWS];
    memcpy(system, normal, sizeof(normal));
    for (int i = 0; i < m; i++)
        system[i][i] -= damping * damping - floor * floor;
    jacobian_times_rows(m, model, toward, seen);
    solve_small(m, system, seen);
    for (int32_t c = 0; c < width; c++) {
        double s = 0.0;
        for (int r = 0; r < m; r++)
            s += model->jacobian[r * width + c] * seen[r];
        step[c] += toward[c] - s;
    }
}

static void linear_step(const linear_model *model, double damping, int transpose, const double *pull, double *toward,
                        double *step)
{
    if (model->m == 3)
        linear_step_rows(3, model, damping, transpose, pull, toward, step);
    else
        linear_step_rows(MAX_ROWS, model, damping, transpose, pull, toward, step);
}

/* _AllowedTurns.let_go: held axes whose multiplier says turning inwards would reduce what the
 * step leaves (``left``) go back into the Jacobian; returns whether any did. */
static int let_go(linear_model *model, const double left[MAX_ROWS])
{
    const qik_chain *chain = model->chain;
    int m = model->m, any = 0;
    int32_t width = 3 * model->n;
    double left_size = 0.0;
    for (int r = 0; r < m; r++)
        left_size += left[r] * left[r];
    left_size = sqrt(left_size);
    for (int32_t i = 0; i < model->n; i++) {
        if (!model->held[i])
            continue;
        int released = 0;
        double *inwards = model->inwards + 6 * i, *axes = model->pressed + 6 * i;
        for (int s = 0; s < SLOTS; s++) {
            double size = 0.0, multiplier = 0.0;
            for (int r = 0; r < m; r++) {
                double column = model->columns[(i * MAX_ROWS + r) * SLOTS + s];
                size += column * column;
                multiplier += column * left[r];
            }
            size = sqrt(size);
            /* Clearly positive only: a column of rounding noise has a multiplier of no sign. */
            if (!(size > NEGLIGIBLE * chain->reach && multiplier > NEGLIGIBLE * size * left_size))
                continue;
            double weight = weight_of(chain, i);
            for (int r = 0; r < m; r++) {
                double column = model->columns[(i * MAX_ROWS + r) * SLOTS + s];
                for (int l = 0; l < 3; l++)
                    model->jacobian[r * width + 3 * i + l] += column * inwards[3 * s + l] * weight;
            }
            inwards[3 * s] = inwards[3 * s + 1] = inwards[3 * s + 2] = 0.0;
            axes[3 * s] = axes[3 * s + 1] = axes[3 * s + 2] = 0.0;
            released = 1;
        }
        if (released) {
            double *projector = model->projectors + 9 * i;
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    projector[3 * a + b] = (a == b ? 1.0 : 0.0) - inwards[a] * inwards[b] - inwards[3 + a] * inwards[3 + b];
            any = 1;
        }
    }
    return any;
}

/* dls._press: the contacts of joints the clamp turned back; a part it left keeps its axis. */
static void press(const qik_chain *chain, double *pressed, const double *clamped, const double *turned)
{
    for (int32_t i = 0; i < chain->n_bones; i++) {
        const double *c = clamped + 4 * i, *t = turned + 4 * i;
        if (!(fabs(c[0] - t[0]) > NORMALISED_ONLY || fabs(c[1] - t[1]) > NORMALISED_ONLY ||
              fabs(c[2] - t[2]) > NORMALISED_ONLY || fabs(c[3] - t[3]) > NORMALISED_ONLY))
            continue;
        double axes[SLOTS][3];
        qik_contact_axes(chain, i, t, c, axes);
        for (int s = 0; s < SLOTS; s++)
            if (axes[s][0] != 0.0 || axes[s][1] != 0.0 || axes[s][2] != 0.0)
                qik_copy3(pressed + 6 * i + 3 * s, axes[s]);
    }
}

int64_t qik_run_dls(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings, int transpose,
                    int32_t max_iterations, double *q, const double *preferred, double *scratch, int *met,
                    double *position_error, double *orientation_error, double effector[3])
{
    int32_t n = chain->n_bones;
    double *cursor = scratch;
    qik_pose pose = {qik_take(&cursor, 3 * n), qik_take(&cursor, 4 * n), qik_take(&cursor, 4 * n), {0, 0, 0}};
    qik_pose trial_pose = {qik_take(&cursor, 3 * n), qik_take(&cursor, 4 * n), qik_take(&cursor, 4 * n), {0, 0, 0}};
    double *trial = qik_take(&cursor, 4 * n), *turned = qik_take(&cursor, 4 * n);
    double *step = qik_take(&cursor, 3 * n), *pull = qik_take(&cursor, 3 * n), *toward = qik_take(&cursor, 3 * n);
    linear_model model = {chain, n, 3, qik_take(&cursor, MAX_ROWS * 3 * n), {0}, qik_take(&cursor, 3 * n),
                          qik_take(&cursor, 6 * n), qik_take(&cursor, 6 * n), qik_take(&cursor, 9 * n),
                          qik_take(&cursor, MAX_ROWS * SLOTS * n), (unsigned char *)qik_take(&cursor, n), 0};
    memset(model.pressed, 0, 6 * (size_t)n * sizeof(double));
    int use_pull = preferred != NULL && settings->rest_pull > 0.0 && !transpose;

    qik_forward_kinematics(chain, q, &pose);
    double p_error = qik_position_error(goal, pose.effector);
    double o_error = qik_orientation_error(goal, pose.rotations + 4 * (n - 1));
    double error = qik_combined_error(chain, p_error, o_error);
    double damping = settings->damping;
    int64_t iterations = 0, failures = 0;
    int active = !qik_reached(settings, p_error, o_error);
    *met = !active;
    for (int32_t k = 0; k < max_iterations && active; k++) {
        linearise(&model, goal, &pose);
        if (use_pull) { /* dls._toward_preferred: root-frame turns from the pose to the preferred one */
            for (int32_t i = 0; i < n; i++) {
                double back[4], toward_q[4], local[3];
                qik_conj(q + 4 * i, back);
                qik_mul(preferred + 4 * i, back, toward_q);
                qik_rotation_vector(toward_q, local);
                qik_rotate(pose.pre_rotations + 4 * i, local, pull + 3 * i);
                for (int l = 0; l < 3; l++)
                    pull[3 * i + l] *= settings->rest_pull;
            }
        }
        linear_step(&model, damping, transpose, use_pull ? pull : NULL, toward, step);
        if (model.any_held) {
            double moved[MAX_ROWS], left[MAX_ROWS];
            jacobian_times(&model, step, moved);
            for (int r = 0; r < model.m; r++)
                left[r] = model.residual[r] - moved[r];
            if (let_go(&model, left)) /* the step again, with those joints free to turn inwards */
                linear_step(&model, damping, transpose, use_pull ? pull : NULL, toward, step);
        }
        double largest = 0.0;
        for (int32_t i = 0; i < n; i++) {
            double weight = weight_of(chain, i), *s = step + 3 * i;
            s[0] *= weight; /* from weighted coordinates back to joint turns */
            s[1] *= weight;
            s[2] *= weight;
            double size = qik_length3(s);
            largest = size > largest ? size : largest;
        }
        double limit = MAX_JOINT_STEP / (largest > 1e-300 ? largest : 1e-300), factor = limit < 1.0 ? limit : 1.0;
        for (int32_t c = 0; c < 3 * n; c++)
            step[c] *= factor;
        /* dls._apply: turn each joint by its root-frame rotation vector, then clamp to its limit. */
        for (int32_t i = 0; i < n; i++) {
            double to_local[4], local[3], turn[4];
            qik_conj(pose.pre_rotations + 4 * i, to_local);
            qik_rotate(to_local, step + 3 * i, local);
            qik_from_rotation_vector(local, turn);
            qik_mul(turn, q + 4 * i, turned + 4 * i);
            qik_copy4(trial + 4 * i, turned + 4 * i);
            qik_clamp_joint(chain, i, trial + 4 * i);
        }
        qik_forward_kinematics(chain, trial, &trial_pose);
        double trial_position = qik_position_error(goal, trial_pose.effector);
        double trial_orientation = qik_orientation_error(goal, trial_pose.rotations + 4 * (n - 1));
        double trial_error = qik_combined_error(chain, trial_position, trial_orientation);
        int better = trial_error < error;
        if (better) {
            memcpy(q, trial, 4 * (size_t)n * sizeof(double));
            qik_pose swap = pose;
            pose = trial_pose;
            trial_pose = swap;
        }
        iterations++;
        /* Levenberg–Marquardt: trust the linear model more after a success, less after a miss. */
        damping = better ? damping * 0.5 : damping * 4.0;
        double low = 1e-6 * chain->reach, high = 1e3 * chain->reach;
        damping = damping < low ? low : (damping > high ? high : damping);
        double gain = error - trial_error;
        int slow = !better || gain < settings->stall_ratio * error;
        failures = slow ? failures + 1 : 0;
        if (better)
            error = trial_error;
        int reached = qik_reached(settings, trial_position, trial_orientation) && better;
        active = !reached && failures < settings->stall_iterations;
        *met = reached;
        if (!better)
            memset(model.pressed, 0, 6 * (size_t)n * sizeof(double));
        else if (active)
            press(chain, model.pressed, trial, turned);
    }
    *position_error = qik_position_error(goal, pose.effector);
    *orientation_error = qik_orientation_error(goal, pose.rotations + 4 * (n - 1));
    qik_copy3(effector, pose.effector);
    return iterations;
}
