/* Whole bodies (qik.h's qik_body_stage): solver/body/solve.py's _stage, one row at a time.
 *
 * The numpy modules are the reference and this file follows them step by step, named alike:
 * forward kinematics (skeleton.py), the Jacobian and residual by priority level (jacobian.py),
 * the prioritised damped step (priority.py), the clamps, the acceptance test and the stall test
 * (iterate.py, ranking.py). Only the linear algebra differs: numpy takes one SVD of each level's
 * projected rows; here the same decomposition comes from one-sided Jacobi rotations of those
 * rows (Hestenes 1958), which needs no D×D matrix: the higher levels' null space is kept as the
 * orthonormal rows they used (P = I − QᵀQ), and a level's rows are projected as J − (J Qᵀ) Q. */
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "qik_math.h"
#include "solve.h"

/* iterate.py and priority.py's constants (tests compare the two paths, so change both). */
#define MAX_TURN 0.5          /* radians: the most one step turns one joint */
#define MAX_STRETCH 0.25      /* the most one step changes one bone's Y scale */
#define NORMALISED_ONLY 1e-10 /* a clamp that moved no component further only normalised */
#define FLOOR 1e-30           /* × size²: an excess this small is rounding */
#define CREEP_FROZEN 1e-3     /* the share a settled level may rise by */
#define CLAMPED_REACH 0.3     /* × size: the most one task's residual asks (Buss & Kim 2005) */
#define RANK 1e-6             /* × size: a singular value this small is a direction no level can use */
#define POLISH_DAMPING 0.01   /* a polish's λ starts at this share of the settings' (its levels are met) */
#define JACOBI_SWEEPS 60      /* one-sided Jacobi converges quadratically; this is a safety bound */
#define ORTHOGONAL 1e-13      /* rows whose cosine is this small count as orthogonal (a few ulps of d terms) */
#define BIGGEST_COUNT 1000000 /* bones or tasks: far beyond any rig, and safe from overflow below */

/* ---------------------------------------------------------------- one call's sizes and memory */

typedef struct {
    const qik_body *body;
    const qik_body_tasks *tasks;
    const qik_body_settings *settings;
    int32_t n;          /* bones */
    int32_t t;          /* tasks */
    int32_t levels;     /* goal and pin levels */
    int32_t window;     /* the stall test's ring: max(stall_iterations, 1), no longer than a stage's steps */
    int32_t task_rows;  /* Jacobian rows the tasks give (3 per position, 3 per orientation) */
    int32_t max_k;      /* stretch columns when stretch is in use */
    /* scratch, sized for the stage with stretch */
    double *q, *s, *heads, *pre, *rot;
    double *trial_q, *trial_s, *turned, *trial_heads, *trial_pre, *trial_rot;
    double *pressed; /* (n, 2, 3) unit axes (joint frame) each joint keeps off */
    double *points;  /* (t, 3) */
    double *jacobian, *residual, *block, *left, *basis, *packed, *norms;
    int32_t *support;       /* (d) the columns a level's packed rows keep */
    int32_t *basis_support; /* (m, d) each basis row's columns, and how many: basis_used (m) */
    int32_t *basis_used;
    double *step, *judged;
    double *excess, *best, *trial_excess, *creeps, *history;
    int32_t *row_level;
    unsigned char *settled, *held, *frozen;
} body_call;

/* How a stage judges poses (iterate.Measure). */
typedef struct {
    double tolerance;
    double angle_tolerance;
    int use_stretch;
} measure;

/* One row's targets. */
typedef struct {
    const double *positions;    /* (t, 3) */
    const double *orientations; /* (t, 4) */
    const double *directions;   /* (t, 3) */
} row_targets;

static int32_t stretch_columns(const body_call *call, const measure *how)
{
    return how->use_stretch ? call->max_k : 0;
}
static int32_t all_levels(const body_call *call, const measure *how)
{
    return call->levels + (how->use_stretch ? 1 : 0);
}
static int32_t columns(const body_call *call, const measure *how) { return 3 * call->n + stretch_columns(call, how); }
static int32_t jacobian_rows(const body_call *call, const measure *how)
{
    return call->task_rows + stretch_columns(call, how);
}

/* ---------------------------------------------------------------- forward kinematics and errors */

/* Body.forward_kinematics for one row: G_b = G_p·L_b·R(q_b), head_b = head_p + G_p·S_p·offset_b. */
static void forward_kinematics(const qik_body *body, const double *q, const double *s, double *heads, double *pre,
                               double *rot)
{
    for (int32_t b = 0; b < body->n_bones; b++) {
        int32_t p = body->parents[b];
        if (p < 0) {
            qik_copy4(pre + 4 * b, body->rest_rotations + 4 * b);
            qik_copy3(heads + 3 * b, body->rest_offsets + 3 * b);
        } else {
            double scaled[3], moved[3];
            qik_mul(rot + 4 * p, body->rest_rotations + 4 * b, pre + 4 * b);
            qik_copy3(scaled, body->rest_offsets + 3 * b);
            scaled[1] *= s[p];
            qik_rotate(rot + 4 * p, scaled, moved);
            for (int i = 0; i < 3; i++)
                heads[3 * b + i] = heads[3 * p + i] + moved[i];
        }
        qik_mul(pre + 4 * b, q + 4 * b, rot + 4 * b);
    }
}

/* BodyPose.points: head + G·S·local for every task's point. */
static void task_points(const body_call *call, const double *heads, const double *rot, const double *s, double *points)
{
    const qik_body_tasks *tasks = call->tasks;
    for (int32_t t = 0; t < call->t; t++) {
        int32_t b = tasks->bones[t];
        double scaled[3], moved[3];
        qik_copy3(scaled, tasks->points + 3 * t);
        scaled[1] *= s[b];
        qik_rotate(rot + 4 * b, scaled, moved);
        for (int i = 0; i < 3; i++)
            points[3 * t + i] = heads[3 * b + i] + moved[i];
    }
}

static double distance3(const double a[3], const double b[3])
{
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return qik_length3(d);
}

/* goals.task_errors for task t: position error, and orientation error (radians). */
static void task_error(const body_call *call, const row_targets *targets, int32_t t, const double *points,
                       const double *rot, double *position_error, double *orientation_error)
{
    const qik_body_tasks *tasks = call->tasks;
    int32_t flags = tasks->flags[t];
    const double *frame = rot + 4 * tasks->bones[t];
    *position_error = flags & QIK_TASK_POSITION ? distance3(targets->positions + 3 * t, points + 3 * t) : 0.0;
    *orientation_error = 0.0;
    if (flags & QIK_TASK_ORIENTATION) {
        *orientation_error = qik_angle_between(frame, targets->orientations + 4 * t);
    } else if (flags & QIK_TASK_DIRECTION) {
        double aim[3];
        qik_rotate(frame, tasks->aim_axes + 3 * t, aim);
        *orientation_error = qik_direction_angle(aim, targets->directions + 3 * t);
    }
}

/* Measure.excess (ranking.level_excess): per level Σ weight·max(0, error² − tolerance²), and with
 * stretch one more: Σ (L·(1 − s))² over the stretchy bones. */
static void level_excess(const body_call *call, const row_targets *targets, const measure *how, const double *heads,
                         const double *rot, const double *s, double *points, double *excess)
{
    const qik_body *body = call->body;
    const qik_body_tasks *tasks = call->tasks;
    double size_squared = body->size * body->size;
    task_points(call, heads, rot, s, points);
    for (int32_t k = 0; k < all_levels(call, how); k++)
        excess[k] = 0.0;
    for (int32_t t = 0; t < call->t; t++) {
        double position_error, orientation_error;
        task_error(call, targets, t, points, rot, &position_error, &orientation_error);
        double over = tasks->position_weights[t] *
                      fmax(position_error * position_error - how->tolerance * how->tolerance, 0.0);
        over += tasks->orientation_weights[t] * size_squared *
                fmax(orientation_error * orientation_error - how->angle_tolerance * how->angle_tolerance, 0.0);
        excess[tasks->level_of[t]] += over;
    }
    if (how->use_stretch) {
        double rest = 0.0;
        for (int32_t j = 0; j < body->n_stretchy; j++) {
            int32_t c = body->stretchy[j];
            double away = body->lengths[c] * (1.0 - s[c]);
            rest += away * away;
        }
        excess[call->levels] = rest;
    }
}

/* ---------------------------------------------------------------- the Jacobian (jacobian.py) */

/* jacobian.orientation_residual: the rotation vector that fixes task t's orientation or
 * direction, and the projector onto the turns that count (across the aim axis for a direction). */
static void orientation_residual(const body_call *call, const row_targets *targets, int32_t t, const double frame[4],
                                 double error[3], double counted[3][3])
{
    const qik_body_tasks *tasks = call->tasks;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            counted[i][j] = i == j ? 1.0 : 0.0;
    if (tasks->flags[t] & QIK_TASK_ORIENTATION) {
        double unframe[4], fix[4];
        qik_conj(frame, unframe);
        qik_mul(targets->orientations + 4 * t, unframe, fix);
        qik_rotation_vector(fix, error);
        return;
    }
    double aim[3], turn[4];
    const double *wanted = targets->directions + 3 * t;
    qik_rotate(frame, tasks->aim_axes + 3 * t, aim);
    qik_rotation_between(aim, wanted, turn);
    double angle = qik_direction_angle(aim, wanted);
    double length = fmax(qik_length3(turn + 1), 1e-300);
    for (int i = 0; i < 3; i++) {
        error[i] = turn[1 + i] / length * angle;
        for (int j = 0; j < 3; j++)
            counted[i][j] -= aim[i] * aim[j];
    }
}

/* A position task's stretch columns: d(point)/ds_c = G_c·ŷ·y, y the Y coordinate (c's frame) of
 * the next point on the way from c's head to the task's point: a child's head, or the point. */
static void stretch_block(const body_call *call, int32_t t, double scale, const double *rot, double *rows, int32_t d)
{
    const qik_body *body = call->body;
    int32_t bone = call->tasks->bones[t];
    int32_t first = 3 * call->n;
    for (int32_t j = 0; j < body->n_stretchy; j++) {
        int32_t c = body->stretchy[j];
        double y = 0.0;
        /* walk from the task's bone up: c moves the point only when it is on that way */
        for (int32_t on = bone, before = -1; on >= 0; before = on, on = body->parents[on]) {
            if (on == c) {
                y = on == bone ? call->tasks->points[3 * t + 1] : body->rest_offsets[3 * before + 1];
                break;
            }
        }
        double axis[3];
        qik_rotate_y_axis(rot + 4 * c, axis);
        double share = sqrt(body->stretch_shares[c]);
        for (int i = 0; i < 3; i++)
            rows[i * d + first + j] = scale * axis[i] * y * share;
    }
}

/* jacobian.linearise: J (rows, d) and the weighted residual at a pose, each row's level. */
static void linearise(body_call *call, const row_targets *targets, const measure *how, const double *heads,
                      const double *rot, const double *s)
{
    const qik_body *body = call->body;
    const qik_body_tasks *tasks = call->tasks;
    int32_t d = columns(call, how), m = jacobian_rows(call, how);
    double *jacobian = call->jacobian;
    memset(jacobian, 0, (size_t)m * (size_t)d * sizeof(double));
    task_points(call, heads, rot, s, call->points);
    int32_t row = 0;
    for (int32_t t = 0; t < call->t; t++) {
        int32_t bone = tasks->bones[t], flags = tasks->flags[t];
        const double *point = call->points + 3 * t;
        if (flags & QIK_TASK_POSITION) {
            double scale = sqrt(tasks->position_weights[t]);
            double *rows = jacobian + (int64_t)row * d;
            /* u × lever for the turns u of every bone that carries this one (van den Bergen 2014) */
            for (int32_t a = bone; a >= 0; a = body->parents[a]) {
                double v[3] = {point[0] - heads[3 * a], point[1] - heads[3 * a + 1], point[2] - heads[3 * a + 2]};
                double minus_cross[3][3] = {{0.0, v[2], -v[1]}, {-v[2], 0.0, v[0]}, {v[1], -v[0], 0.0}};
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        rows[i * d + 3 * a + j] = minus_cross[i][j] * scale;
            }
            for (int i = 0; i < 3; i++)
                call->residual[row + i] = scale * (targets->positions[3 * t + i] - point[i]);
            if (how->use_stretch)
                stretch_block(call, t, scale, rot, rows, d);
            for (int i = 0; i < 3; i++)
                call->row_level[row + i] = tasks->level_of[t];
            row += 3;
        }
        if (flags & (QIK_TASK_ORIENTATION | QIK_TASK_DIRECTION)) {
            double scale = sqrt(tasks->orientation_weights[t]) * body->size;
            double error[3], counted[3][3];
            orientation_residual(call, targets, t, rot + 4 * bone, error, counted);
            double *rows = jacobian + (int64_t)row * d;
            for (int32_t a = bone; a >= 0; a = body->parents[a])
                for (int i = 0; i < 3; i++)
                    for (int j = 0; j < 3; j++)
                        rows[i * d + 3 * a + j] = counted[i][j] * scale;
            for (int i = 0; i < 3; i++) {
                call->residual[row + i] = scale * error[i];
                call->row_level[row + i] = tasks->level_of[t];
            }
            row += 3;
        }
    }
    if (how->use_stretch) {
        /* the last level: each stretchy bone back to its rest length, L·(1 − s) */
        for (int32_t j = 0; j < body->n_stretchy; j++, row++) {
            int32_t c = body->stretchy[j];
            jacobian[(int64_t)row * d + 3 * call->n + j] = body->lengths[c] * sqrt(body->stretch_shares[c]);
            call->residual[row] = body->lengths[c] * (1.0 - s[c]);
            call->row_level[row] = call->levels;
        }
    }
}

/* The 3 columns of bone a in every row, times the 3×3 matrix m (row vector · m). */
static void turn_columns_times(double *jacobian, int32_t m, int32_t d, int32_t a, double matrix[3][3])
{
    for (int32_t r = 0; r < m; r++) {
        double *u = jacobian + (int64_t)r * d + 3 * a;
        double out[3];
        for (int j = 0; j < 3; j++)
            out[j] = u[0] * matrix[0][j] + u[1] * matrix[1][j] + u[2] * matrix[2][j];
        qik_copy3(u, out);
    }
}

/* jacobian._allowed: each joint's columns onto the turns it allows: a aᵀ for a hinge, I − Σ a aᵀ
 * off the axes it presses a limit along, then × √share (weighted least norm). */
static void allowed_turns(body_call *call, const measure *how, const double *pre)
{
    const qik_body *body = call->body;
    int32_t d = columns(call, how), m = jacobian_rows(call, how);
    for (int32_t a = 0; a < call->n; a++) {
        const double *hinge = body->hinge_axes + 3 * a;
        if (hinge[0] != 0.0 || hinge[1] != 0.0 || hinge[2] != 0.0) {
            double axis[3], projector[3][3];
            qik_rotate(pre + 4 * a, hinge, axis);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    projector[i][j] = axis[i] * axis[j];
            turn_columns_times(call->jacobian, m, d, a, projector);
        }
        const double *pressed = call->pressed + 6 * a;
        int any = 0;
        for (int i = 0; i < 6; i++)
            any |= pressed[i] != 0.0;
        if (any) {
            double inwards[2][3], off[3][3];
            qik_rotate(pre + 4 * a, pressed, inwards[0]);
            qik_rotate(pre + 4 * a, pressed + 3, inwards[1]);
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    off[i][j] = (i == j ? 1.0 : 0.0) - (inwards[0][i] * inwards[0][j] + inwards[1][i] * inwards[1][j]);
            turn_columns_times(call->jacobian, m, d, a, off);
        }
        double share = sqrt(body->turn_shares[a]);
        for (int32_t r = 0; r < m; r++)
            for (int j = 0; j < 3; j++)
                call->jacobian[(int64_t)r * d + 3 * a + j] *= share;
    }
}

/* iterate._clamped: each task's three residual rows shortened to at most ``reach``. */
static void clamp_residual(double *residual, int32_t task_rows, double reach)
{
    for (int32_t r = 0; r < task_rows; r += 3) {
        double length = qik_length3(residual + r);
        double scale = fmin(1.0, reach / fmax(length, 1e-300));
        for (int i = 0; i < 3; i++)
            residual[r + i] *= scale;
    }
}

/* ---------------------------------------------------------------- the prioritised step (priority.py) */

/* Σ a·b in four interleaved sums: a single running sum waits on each addition in turn. */
static double dot(const double *a, const double *b, int32_t count)
{
    double sums[4] = {0.0, 0.0, 0.0, 0.0};
    int32_t i = 0;
    for (; i + 4 <= count; i += 4) {
        sums[0] += a[i] * b[i];
        sums[1] += a[i + 1] * b[i + 1];
        sums[2] += a[i + 2] * b[i + 2];
        sums[3] += a[i + 3] * b[i + 3];
    }
    for (; i < count; i++)
        sums[i & 3] += a[i] * b[i];
    return (sums[0] + sums[1]) + (sums[2] + sums[3]);
}

/* One-sided Jacobi (Hestenes 1958) on the m rows of ``block`` (each d long): rotate pairs of
 * rows until they are orthogonal, applying the same rotations to ``left``. Then block = Σ Vᵀ and
 * left = Uᵀ·left of the block's SVD U Σ Vᵀ, rows of zero length where its rank falls short. */
static void orthogonalise_rows(double *block, double *left, double *norms, int32_t m, int32_t d)
{
    for (int sweep = 0; sweep < JACOBI_SWEEPS; sweep++) {
        int rotated = 0;
        /* each row's squared length, exact at a sweep's start and updated by its rotations */
        for (int32_t i = 0; i < m; i++)
            norms[i] = dot(block + (int64_t)i * d, block + (int64_t)i * d, d);
        for (int32_t i = 0; i < m; i++) {
            for (int32_t j = i + 1; j < m; j++) {
                double *a = block + (int64_t)i * d, *b = block + (int64_t)j * d;
                double alpha = norms[i], beta = norms[j], gamma = dot(a, b, d);
                if (!(fabs(gamma) > ORTHOGONAL * sqrt(alpha * beta)) || alpha == 0.0 || beta == 0.0)
                    continue;
                /* the rotation that zeroes the pair's inner product (Golub & Van Loan 2013, §8.6) */
                double zeta = (beta - alpha) / (2.0 * gamma);
                double tangent = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                double c = 1.0 / sqrt(1.0 + tangent * tangent), s = c * tangent;
                for (int32_t k = 0; k < d; k++) {
                    double x = a[k], y = b[k];
                    a[k] = c * x - s * y;
                    b[k] = s * x + c * y;
                }
                norms[i] = fmax(alpha - tangent * gamma, 0.0);
                norms[j] = fmax(beta + tangent * gamma, 0.0);
                double x = left[i], y = left[j];
                left[i] = c * x - s * y;
                left[j] = s * x + c * y;
                rotated = 1;
            }
        }
        if (!rotated)
            break;
    }
}

/* The level's rows projected past the higher levels (J_k − (J_k Qᵀ) Q), packed on the columns
 * where any of them is nonzero (a level moves only the bones that carry its effectors, so the
 * decomposition runs on a few of the body's columns). Returns how many columns. */
static int32_t projected_rows(body_call *call, int32_t rows, int32_t d, int32_t basis_rows)
{
    for (int32_t r = 0; r < rows; r++) {
        double *target = call->block + (int64_t)r * d;
        for (int32_t b = 0; b < basis_rows; b++) {
            /* basis rows are kept packed on their own columns */
            const double *q = call->basis + (int64_t)b * d;
            const int32_t *at = call->basis_support + (int64_t)b * d;
            int32_t count = call->basis_used[b];
            double along = 0.0;
            for (int32_t c = 0; c < count; c++)
                along += target[at[c]] * q[c];
            if (along == 0.0)
                continue;
            for (int32_t c = 0; c < count; c++)
                target[at[c]] -= along * q[c];
        }
    }
    int32_t used = 0;
    for (int32_t k = 0; k < d; k++) {
        int nonzero = 0;
        for (int32_t r = 0; r < rows && !nonzero; r++)
            nonzero = call->block[(int64_t)r * d + k] != 0.0;
        if (nonzero)
            call->support[used++] = k;
    }
    for (int32_t r = 0; r < rows; r++)
        for (int32_t c = 0; c < used; c++)
            call->packed[(int64_t)r * used + c] = call->block[(int64_t)r * d + call->support[c]];
    return used;
}

/* priority.prioritised_step: level by level, Δ_k = (J_k P_{k−1})^{+λ}(e_k − J_k Δ) with
 * J^{+λ} = V diag(σ/(σ² + λ²)) Uᵀ (Buss & Kim 2005), P_k the undamped, rank-truncated null space
 * of levels 1…k (Siciliano & Slotine 1991; Baerlocher & Boulic 2004). Leaves the whole step in
 * call->step and the part of the levels before ``depth`` in call->judged. */
static void prioritised_step(body_call *call, const measure *how, double damping, int32_t depth)
{
    int32_t d = columns(call, how), m = jacobian_rows(call, how), levels = all_levels(call, how);
    double rank = RANK * call->body->size, lambda_squared = damping * damping;
    int32_t basis_rows = 0;
    memset(call->step, 0, (size_t)d * sizeof(double));
    memset(call->judged, 0, (size_t)d * sizeof(double));
    int32_t last = levels - 1;
    for (int32_t level = 0; level < levels; level++) {
        int32_t rows = 0;
        for (int32_t r = 0; r < m; r++) {
            if (call->row_level[r] != level)
                continue;
            const double *source = call->jacobian + (int64_t)r * d;
            memcpy(call->block + (int64_t)rows * d, source, (size_t)d * sizeof(double));
            call->left[rows] = call->residual[r] - dot(source, call->step, d);
            rows++;
        }
        if (rows == 0)
            continue;
        int32_t used = projected_rows(call, rows, d, basis_rows);
        orthogonalise_rows(call->packed, call->left, call->norms, rows, used);
        for (int32_t r = 0; r < rows; r++) {
            const double *row = call->packed + (int64_t)r * used;
            double gain = call->left[r] / (dot(row, row, used) + lambda_squared);
            for (int32_t c = 0; c < used; c++) {
                double part = row[c] * gain;
                part = isfinite(part) ? part : 0.0;
                call->step[call->support[c]] += part;
                if (level < depth)
                    call->judged[call->support[c]] += part;
            }
        }
        if (level == last)
            break;
        for (int32_t r = 0; r < rows; r++) {
            const double *row = call->packed + (int64_t)r * used;
            double sigma = sqrt(dot(row, row, used));
            if (!(sigma > rank))
                continue;
            double *q = call->basis + (int64_t)basis_rows * d;
            int32_t *at = call->basis_support + (int64_t)basis_rows * d;
            for (int32_t c = 0; c < used; c++) {
                q[c] = row[c] / sigma;
                at[c] = call->support[c];
            }
            call->basis_used[basis_rows++] = used;
        }
    }
}

/* ---------------------------------------------------------------- the step taken (iterate.py) */

/* iterate._turns: a step in weighted coordinates back to joint turns (n, 3) and stretches (k). */
static void step_turns(const body_call *call, const measure *how, const double *step, double *turn, double *grow)
{
    const qik_body *body = call->body;
    for (int32_t a = 0; a < call->n; a++) {
        double share = sqrt(body->turn_shares[a]);
        for (int j = 0; j < 3; j++)
            turn[3 * a + j] = step[3 * a + j] * share;
    }
    for (int32_t j = 0; j < stretch_columns(call, how); j++)
        grow[j] = step[3 * call->n + j] * sqrt(body->stretch_shares[body->stretchy[j]]);
}

static double largest_turn(const double *turn, int32_t n)
{
    double largest = -INFINITY;
    for (int32_t a = 0; a < n; a++)
        largest = fmax(largest, qik_length3(turn + 3 * a));
    return largest;
}

static double largest_grow(const double *grow, int32_t k)
{
    double largest = 0.0;
    for (int32_t j = 0; j < k; j++)
        largest = fmax(largest, fabs(grow[j]));
    return largest;
}

/* iterate._stepped: the pose turned by the step, before (``turned``) and after the clamp to the
 * limits (trial_q), and the stretch after it, clamped into its ranges. Where the step turns or
 * stretches too far, the pulled lower levels' part shrinks before the judged part does. */
static void stepped(body_call *call, const measure *how)
{
    const qik_body *body = call->body;
    int32_t n = call->n, k = stretch_columns(call, how), d = columns(call, how);
    /* judged and pulled turns share the block memory, which the step no longer needs */
    double *judged_turn = call->block, *pulled_turn = judged_turn + 3 * n;
    double *judged_grow = pulled_turn + 3 * n, *pulled_grow = judged_grow + k;
    double *pulled = pulled_grow + k;
    for (int32_t i = 0; i < d; i++)
        pulled[i] = call->step[i] - call->judged[i];
    step_turns(call, how, call->judged, judged_turn, judged_grow);
    step_turns(call, how, pulled, pulled_turn, pulled_grow);
    double judged_largest = largest_turn(judged_turn, n), judged_largest_grow = largest_grow(judged_grow, k);
    double judged_shrink = fmin(1.0, fmin(MAX_TURN / fmax(judged_largest, 1e-300),
                                          MAX_STRETCH / fmax(judged_largest_grow, 1e-300)));
    /* what the judged part leaves of each bound goes to the pulled part (the triangle inequality) */
    double left_turn = MAX_TURN - judged_shrink * judged_largest;
    double left_grow = MAX_STRETCH - judged_shrink * judged_largest_grow;
    double pulled_shrink = fmin(left_turn / fmax(largest_turn(pulled_turn, n), 1e-300),
                                left_grow / fmax(largest_grow(pulled_grow, k), 1e-300));
    pulled_shrink = fmin(fmax(pulled_shrink, 0.0), 1.0);
    for (int32_t a = 0; a < n; a++) {
        double turn[3], local[3], unpre[4], spin[4];
        for (int j = 0; j < 3; j++)
            turn[j] = judged_turn[3 * a + j] * judged_shrink + pulled_turn[3 * a + j] * pulled_shrink;
        qik_conj(call->pre + 4 * a, unpre);
        qik_rotate(unpre, turn, local);
        qik_from_rotation_vector(local, spin);
        qik_mul(spin, call->q + 4 * a, call->turned + 4 * a);
        qik_copy4(call->trial_q + 4 * a, call->turned + 4 * a);
        qik_clamp_joint(body->limits, a, call->trial_q + 4 * a);
    }
    memcpy(call->trial_s, call->s, (size_t)n * sizeof(double));
    if (k) {
        for (int32_t j = 0; j < k; j++) {
            int32_t c = body->stretchy[j];
            call->trial_s[c] += judged_grow[j] * judged_shrink + pulled_grow[j] * pulled_shrink;
        }
        for (int32_t a = 0; a < n; a++)
            call->trial_s[a] = fmin(fmax(call->trial_s[a], body->stretch_low[a]), body->stretch_high[a]);
    }
}

/* ranking.step_accepted: at the first used level where the trial differs it must improve; a level
 * that does not decide may rise to its least excess × (1 + creep) (Nocedal & Wright 2006, §15.5). */
static int step_accepted(const body_call *call, int32_t levels, int32_t depth, double floor)
{
    for (int32_t k = 0; k < levels; k++) {
        double used = k < depth ? 1.0 : 0.0;
        double trial = call->trial_excess[k] * used, current = call->excess[k] * used, best = call->best[k] * used;
        int improved = current > floor && trial < current - floor;
        int worse = trial > best * (1.0 + call->creeps[k]) + floor;
        if (improved)
            return 1;
        if (worse)
            return 0;
    }
    return 0;
}

/* iterate._press: joints the clamp turned back are kept off those axes from the next step on; a
 * step that fails without pressing anything new releases them all. */
static void press(body_call *call, int taken)
{
    const qik_body *body = call->body;
    int any_acted = 0;
    for (int32_t a = 0; a < call->n; a++) {
        const double *turned = call->turned + 4 * a, *clamped = call->trial_q + 4 * a;
        int acted = 0;
        for (int i = 0; i < 4; i++)
            acted |= fabs(clamped[i] - turned[i]) > NORMALISED_ONLY;
        if (!acted)
            continue;
        any_acted = 1;
    }
    if (!taken && !any_acted) {
        memset(call->pressed, 0, (size_t)call->n * 6 * sizeof(double));
        return;
    }
    for (int32_t a = 0; a < call->n; a++) {
        const double *turned = call->turned + 4 * a, *clamped = call->trial_q + 4 * a;
        int acted = 0;
        for (int i = 0; i < 4; i++)
            acted |= fabs(clamped[i] - turned[i]) > NORMALISED_ONLY;
        if (!acted)
            continue;
        double axes[2][3];
        qik_contact_axes(body->limits, a, turned, clamped, axes);
        for (int slot = 0; slot < 2; slot++)
            if (axes[slot][0] != 0.0 || axes[slot][1] != 0.0 || axes[slot][2] != 0.0)
                qik_copy3(call->pressed + 6 * a + 3 * slot, axes[slot]);
    }
}

/* ---------------------------------------------------------------- iterate (iterate.py) */

static int all_finite(const double *values, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(values[i]))
            return 0;
    return 1;
}

/* iterate.iterate for one row on call->q and call->s (in place): returns the steps tried, or −1
 * where a trial pose came out not finite. ``frozen`` (levels) or NULL: levels that only hold. */
static int64_t iterate(body_call *call, const row_targets *targets, const measure *how, int32_t max_iterations,
                       double creep, int lean_always, const unsigned char *frozen)
{
    const qik_body *body = call->body;
    const qik_body_settings *settings = call->settings;
    double size = body->size, floor = FLOOR * size * size;
    int32_t n = call->n, levels = all_levels(call, how);
    forward_kinematics(body, call->q, call->s, call->heads, call->pre, call->rot);
    level_excess(call, targets, how, call->heads, call->rot, call->s, call->points, call->excess);
    memcpy(call->best, call->excess, (size_t)levels * sizeof(double));
    double start_damping = frozen == NULL ? settings->damping : settings->damping * POLISH_DAMPING;
    double damping = start_damping;
    /* a level is done below this excess: rounding for the goals' levels (their tolerances are
     * taken off already); for stretch back to rest, lengths within the tolerance of rest */
    double stretch_met_below = how->use_stretch ? settings->noticeable : floor;
    for (int32_t w = 0; w < call->window; w++)
        call->history[w] = INFINITY;
    int64_t since = 0, iterations = 0;
    memset(call->pressed, 0, (size_t)n * 6 * sizeof(double));
    for (int32_t k = 0; k < levels; k++) {
        call->held[k] = frozen != NULL && k < call->levels && frozen[k];
        call->settled[k] = call->held[k];
        call->creeps[k] = call->settled[k] ? CREEP_FROZEN : creep;
    }
    /* a polish (frozen given) pulls each level only once the ones above are met */
    int always_lean = lean_always || frozen != NULL;
    int lean = always_lean;
    int32_t depth_before = 0;
    for (int32_t iteration = 0; iteration < max_iterations; iteration++) {
        /* the depth: the first level neither met nor settled; levels are judged down to it */
        int32_t depth = 0;
        for (int32_t k = 0; k < levels && depth == 0; k++)
            if (call->excess[k] > (k == call->levels ? stretch_met_below : floor) && !call->settled[k])
                depth = k + 1;
        if (depth == 0)
            break;
        if (depth != depth_before) { /* a new level: its stall counts afresh, λ trusts the model afresh */
            for (int32_t w = 0; w < call->window; w++)
                call->history[w] = INFINITY;
            since = 0;
            damping = start_damping;
        }
        depth_before = depth;
        for (int32_t k = depth; k < levels; k++) /* a level's least excess counts from when it is used */
            call->best[k] = call->excess[k];
        linearise(call, targets, how, call->heads, call->rot, call->s);
        allowed_turns(call, how, call->pre);
        clamp_residual(call->residual, call->task_rows, CLAMPED_REACH * size);
        /* levels below the depth pull too while their pull does no harm (``lean`` after a miss) */
        for (int32_t r = 0; r < jacobian_rows(call, how); r++) {
            int32_t k = call->row_level[r];
            int pulled = (lean ? k < depth : 1) && !call->held[k];
            if (!pulled)
                call->residual[r] = 0.0;
        }
        prioritised_step(call, how, damping, depth);
        stepped(call, how);
        iterations++;
        if (!all_finite(call->trial_q, 4 * (int64_t)n) || !all_finite(call->trial_s, n))
            return -1;
        forward_kinematics(body, call->trial_q, call->trial_s, call->trial_heads, call->trial_pre, call->trial_rot);
        level_excess(call, targets, how, call->trial_heads, call->trial_rot, call->trial_s, call->points,
                     call->trial_excess);
        int taken = step_accepted(call, levels, depth, floor);
        if (taken) {
            memcpy(call->q, call->trial_q, 4 * (size_t)n * sizeof(double));
            memcpy(call->s, call->trial_s, (size_t)n * sizeof(double));
            memcpy(call->heads, call->trial_heads, 3 * (size_t)n * sizeof(double));
            memcpy(call->pre, call->trial_pre, 4 * (size_t)n * sizeof(double));
            memcpy(call->rot, call->trial_rot, 4 * (size_t)n * sizeof(double));
            for (int32_t k = 0; k < levels; k++) {
                call->excess[k] = call->trial_excess[k];
                call->best[k] = fmin(call->best[k], call->trial_excess[k]);
            }
        }
        /* Levenberg–Marquardt: trust the linear model more after a success, less after a miss;
         * a full step not taken is tried lean first, at the same damping */
        int tried_lean = lean || depth == levels;
        double change = taken ? 0.5 : tried_lean ? 4.0 : 1.0;
        damping = fmin(fmax(change * damping, 1e-6 * size), 1e3 * size);
        if (!always_lean)
            lean = !taken;
        /* a level whose least excess fell by less than stall_ratio of itself over its last
         * stall_iterations steps settles (Nocedal & Wright 2006, ch. 10) */
        double now = call->best[depth - 1];
        double *slot = call->history + since % call->window;
        int counted = isfinite(*slot);
        double then = counted ? *slot : 0.0;
        int stalled = counted && (then - now <= settings->stall_ratio * then + settings->noticeable);
        *slot = now;
        since++;
        if (stalled) {
            call->settled[depth - 1] = 1;
            call->creeps[depth - 1] = CREEP_FROZEN;
        }
        press(call, taken);
    }
    return iterations;
}

/* solve._stage for one row: iterations with met levels free to drift to the working tolerance,
 * then the polish, which moves only the levels met to the working tolerance. */
static int64_t stage_row(body_call *call, const row_targets *targets, double *excess_out)
{
    const qik_body_settings *settings = call->settings;
    double floor = FLOOR * call->body->size * call->body->size;
    int use_stretch = call->max_k > 0; /* stretch asked for, and some bone can stretch */
    measure working = {settings->working_tolerance, settings->working_angle_tolerance, use_stretch};
    measure strict = {settings->tolerance, settings->angle_tolerance, use_stretch};
    int64_t first = iterate(call, targets, &working, settings->max_iterations, settings->creep, settings->lean, NULL);
    if (first < 0)
        return -1;
    /* call->excess is the working excess at the pose the first part returned */
    for (int32_t k = 0; k < call->levels; k++)
        call->frozen[k] = call->excess[k] > floor;
    int64_t more = iterate(call, targets, &strict, settings->polish_iterations, 0.0, 0, call->frozen);
    if (more < 0)
        return -1;
    for (int32_t k = 0; k <= call->levels; k++)
        excess_out[k] = k < all_levels(call, &strict) ? call->excess[k] : 0.0;
    return first + more;
}

/* ---------------------------------------------------------------- checks and the entry point */

static int body_is_valid(const qik_body *body)
{
    if (body == NULL || body->n_bones < 1 || body->n_bones > BIGGEST_COUNT || body->n_stretchy < 0 ||
        body->n_stretchy > body->n_bones || body->parents == NULL || (body->n_stretchy > 0 && !body->stretchy) ||
        !body->rest_rotations || !body->rest_offsets || !body->lengths || !body->turn_shares || !body->hinge_axes ||
        !body->stretch_low || !body->stretch_high || !body->stretch_shares || !qik_chain_is_valid(body->limits) ||
        body->limits->n_bones != body->n_bones || !(isfinite(body->size) && body->size > 0.0))
        return 0;
    for (int32_t b = 0; b < body->n_bones; b++)
        if (body->parents[b] < -1 || body->parents[b] >= b)
            return 0;
    for (int32_t j = 0; j < body->n_stretchy; j++)
        if (body->stretchy[j] < 0 || body->stretchy[j] >= body->n_bones)
            return 0;
    int64_t n = body->n_bones;
    return all_finite(body->rest_rotations, 4 * n) && all_finite(body->rest_offsets, 3 * n) &&
           all_finite(body->lengths, n) && all_finite(body->turn_shares, n) && all_finite(body->hinge_axes, 3 * n) &&
           all_finite(body->stretch_low, n) && all_finite(body->stretch_high, n) &&
           all_finite(body->stretch_shares, n);
}

static int tasks_are_valid(const qik_body_tasks *tasks, int32_t n_bones)
{
    if (tasks == NULL || tasks->n_tasks < 1 || tasks->n_tasks > BIGGEST_COUNT || tasks->n_levels < 1 ||
        tasks->n_levels > tasks->n_tasks || !tasks->bones || !tasks->flags || !tasks->level_of || !tasks->points ||
        !tasks->aim_axes || !tasks->position_weights || !tasks->orientation_weights)
        return 0;
    for (int32_t t = 0; t < tasks->n_tasks; t++) {
        int32_t flags = tasks->flags[t];
        if (tasks->bones[t] < 0 || tasks->bones[t] >= n_bones || tasks->level_of[t] < 0 ||
            tasks->level_of[t] >= tasks->n_levels || flags < 1 || flags > 7 ||
            ((flags & QIK_TASK_ORIENTATION) && (flags & QIK_TASK_DIRECTION)))
            return 0;
        if (((flags & QIK_TASK_POSITION) && !tasks->positions) ||
            ((flags & QIK_TASK_ORIENTATION) && !tasks->orientations) ||
            ((flags & QIK_TASK_DIRECTION) && !tasks->directions))
            return 0;
        if (!(isfinite(tasks->position_weights[t]) && tasks->position_weights[t] >= 0.0 &&
              isfinite(tasks->orientation_weights[t]) && tasks->orientation_weights[t] >= 0.0))
            return 0;
    }
    return all_finite(tasks->points, 3 * (int64_t)tasks->n_tasks) &&
           all_finite(tasks->aim_axes, 3 * (int64_t)tasks->n_tasks);
}

static int settings_are_valid(const qik_body_settings *settings)
{
    return settings != NULL && settings->max_iterations >= 0 && settings->polish_iterations >= 0 &&
           settings->stall_iterations >= 0 && isfinite(settings->damping) && settings->damping > 0.0 &&
           settings->stall_ratio >= 0.0 && settings->stall_ratio < 1.0 && isfinite(settings->noticeable) &&
           settings->noticeable >= 0.0 && isfinite(settings->creep) && settings->creep >= 0.0 &&
           isfinite(settings->working_tolerance) && isfinite(settings->working_angle_tolerance) &&
           isfinite(settings->tolerance) && isfinite(settings->angle_tolerance);
}

/* The row's inputs: finite where they are read. */
static int row_is_finite(const body_call *call, const row_targets *targets, const double *q, const double *s)
{
    if (!all_finite(q, 4 * (int64_t)call->n) || !all_finite(s, call->n))
        return 0;
    for (int32_t t = 0; t < call->t; t++) {
        int32_t flags = call->tasks->flags[t];
        if (((flags & QIK_TASK_POSITION) && !all_finite(targets->positions + 3 * t, 3)) ||
            ((flags & QIK_TASK_ORIENTATION) && !all_finite(targets->orientations + 4 * t, 4)) ||
            ((flags & QIK_TASK_DIRECTION) && !all_finite(targets->directions + 3 * t, 3)))
            return 0;
    }
    return 1;
}

/* Carve the call's scratch out of one block; returns the block (NULL if it cannot be had). */
static void *carve(body_call *call)
{
    int64_t n = call->n, t = call->t, k = call->max_k, levels = call->levels + 1;
    int64_t m = call->task_rows + k, d = 3 * n + k;
    int64_t block = m * d > 6 * n + 2 * k + d ? m * d : 6 * n + 2 * k + d; /* also stepped's turns */
    int64_t doubles = 42 * n + 3 * t + 3 * m * d + block + 3 * m + 2 * d + 4 * levels + call->window;
    int64_t bytes = doubles * (int64_t)sizeof(double) + (2 * m + d + m * d) * (int64_t)sizeof(int32_t) + 3 * levels;
    if (bytes <= 0 || bytes > ((int64_t)1 << 40))
        return NULL;
    double *memory = malloc((size_t)bytes);
    if (memory == NULL)
        return NULL;
    double *cursor = memory;
    call->q = qik_take(&cursor, 4 * n);
    call->s = qik_take(&cursor, n);
    call->heads = qik_take(&cursor, 3 * n);
    call->pre = qik_take(&cursor, 4 * n);
    call->rot = qik_take(&cursor, 4 * n);
    call->trial_q = qik_take(&cursor, 4 * n);
    call->trial_s = qik_take(&cursor, n);
    call->turned = qik_take(&cursor, 4 * n);
    call->trial_heads = qik_take(&cursor, 3 * n);
    call->trial_pre = qik_take(&cursor, 4 * n);
    call->trial_rot = qik_take(&cursor, 4 * n);
    call->pressed = qik_take(&cursor, 6 * n);
    call->points = qik_take(&cursor, 3 * t);
    call->jacobian = qik_take(&cursor, m * d);
    call->residual = qik_take(&cursor, m);
    call->block = qik_take(&cursor, block);
    call->left = qik_take(&cursor, m);
    call->norms = qik_take(&cursor, m);
    call->basis = qik_take(&cursor, m * d);
    call->packed = qik_take(&cursor, m * d);
    call->step = qik_take(&cursor, d);
    call->judged = qik_take(&cursor, d);
    call->excess = qik_take(&cursor, levels);
    call->best = qik_take(&cursor, levels);
    call->trial_excess = qik_take(&cursor, levels);
    call->creeps = qik_take(&cursor, levels);
    call->history = qik_take(&cursor, call->window);
    call->row_level = (int32_t *)cursor;
    call->support = call->row_level + m;
    call->basis_used = call->support + d;
    call->basis_support = call->basis_used + m;
    call->settled = (unsigned char *)(call->basis_support + m * d);
    call->held = call->settled + levels;
    call->frozen = call->held + levels;
    return memory;
}

static int32_t task_rows_of(const qik_body_tasks *tasks)
{
    int32_t rows = 0;
    for (int32_t t = 0; t < tasks->n_tasks; t++) {
        rows += tasks->flags[t] & QIK_TASK_POSITION ? 3 : 0;
        rows += tasks->flags[t] & (QIK_TASK_ORIENTATION | QIK_TASK_DIRECTION) ? 3 : 0;
    }
    return rows;
}

QIK_EXPORT int32_t qik_body_stage(const qik_body *body, const qik_body_tasks *tasks, const qik_body_settings *settings,
                                  int64_t rows, double *rotations, double *stretch, int64_t *iterations,
                                  double *excess)
{
    if (!body_is_valid(body) || !tasks_are_valid(tasks, body->n_bones) || !settings_are_valid(settings) ||
        rows < 0 || (rows > 0 && (!rotations || !stretch || !iterations || !excess)))
        return QIK_BAD_INPUT;
    if (rows == 0)
        return QIK_OK;
    body_call call = {0};
    call.body = body;
    call.tasks = tasks;
    call.settings = settings;
    call.n = body->n_bones;
    call.t = tasks->n_tasks;
    call.levels = tasks->n_levels;
    /* the stall test's ring: a ring longer than a stage's steps never wraps, so no longer is needed */
    int32_t steps = settings->max_iterations > settings->polish_iterations ? settings->max_iterations
                                                                           : settings->polish_iterations;
    call.window = settings->stall_iterations > 1 ? settings->stall_iterations : 1;
    call.window = call.window <= steps ? call.window : steps + 1;
    call.task_rows = task_rows_of(tasks);
    call.max_k = settings->use_stretch ? body->n_stretchy : 0; /* none: the stage holds lengths */
    void *memory = carve(&call);
    if (memory == NULL)
        return QIK_BAD_INPUT;
    int32_t status = QIK_OK;
    int64_t n = call.n, t = call.t;
    for (int64_t row = 0; row < rows; row++) {
        double *q = rotations + row * 4 * n, *s = stretch + row * n;
        row_targets targets = {tasks->positions ? tasks->positions + row * 3 * t : NULL,
                               tasks->orientations ? tasks->orientations + row * 4 * t : NULL,
                               tasks->directions ? tasks->directions + row * 3 * t : NULL};
        iterations[row] = 0;
        if (!row_is_finite(&call, &targets, q, s)) {
            status = QIK_NOT_FINITE;
            continue;
        }
        memcpy(call.q, q, 4 * (size_t)n * sizeof(double));
        memcpy(call.s, s, (size_t)n * sizeof(double));
        double *row_excess = excess + row * (call.levels + 1);
        int64_t taken = stage_row(&call, &targets, row_excess);
        if (taken < 0 || !all_finite(call.q, 4 * n) || !all_finite(call.s, n) ||
            !all_finite(row_excess, call.levels + 1)) {
            status = QIK_NOT_FINITE; /* the row is left as it came */
            continue;
        }
        memcpy(q, call.q, 4 * (size_t)n * sizeof(double));
        memcpy(s, call.s, (size_t)n * sizeof(double));
        iterations[row] = taken;
    }
    free(memory);
    return status;
}

QIK_EXPORT int32_t qik_body_task_errors(const qik_body *body, const qik_body_tasks *tasks, int64_t rows,
                                        const double *rotations, const double *stretch, double *position_error,
                                        double *orientation_error)
{
    if (!body_is_valid(body) || !tasks_are_valid(tasks, body->n_bones) || rows < 0 ||
        (rows > 0 && (!rotations || !stretch || !position_error || !orientation_error)))
        return QIK_BAD_INPUT;
    int64_t n = body->n_bones, t = tasks->n_tasks;
    if (rows == 0)
        return QIK_OK;
    double *memory = malloc((size_t)(11 * n + 3 * t) * sizeof(double));
    if (memory == NULL)
        return QIK_BAD_INPUT;
    body_call call = {0};
    call.body = body;
    call.tasks = tasks;
    call.n = body->n_bones;
    call.t = tasks->n_tasks;
    double *heads = memory, *pre = heads + 3 * n, *rot = pre + 4 * n, *points = rot + 4 * n;
    int32_t status = QIK_OK;
    for (int64_t row = 0; row < rows; row++) {
        const double *q = rotations + row * 4 * n, *s = stretch + row * n;
        row_targets targets = {tasks->positions ? tasks->positions + row * 3 * t : NULL,
                               tasks->orientations ? tasks->orientations + row * 4 * t : NULL,
                               tasks->directions ? tasks->directions + row * 3 * t : NULL};
        double *position = position_error + row * t, *orientation = orientation_error + row * t;
        if (!row_is_finite(&call, &targets, q, s)) {
            for (int64_t i = 0; i < t; i++)
                position[i] = orientation[i] = NAN;
            status = QIK_NOT_FINITE;
            continue;
        }
        forward_kinematics(body, q, s, heads, pre, rot);
        task_points(&call, heads, rot, s, points);
        for (int32_t i = 0; i < call.t; i++)
            task_error(&call, &targets, i, points, rot, position + i, orientation + i);
        if (!all_finite(position, t) || !all_finite(orientation, t))
            status = QIK_NOT_FINITE; /* targets so far that their distance overflows */
    }
    free(memory);
    return status;
}
