/* Random and hostile inputs for the kernel's entry points (qik.h), run under ASan and UBSan.
 *
 *   fuzz_kernel SEED CASES [FIRST]
 *
 * runs cases FIRST .. FIRST+CASES-1 (FIRST defaults to 0); case i draws everything from its own
 * generator seeded by (SEED, i), so `fuzz_kernel SEED 1 i` replays case i alone. Built and run by
 * tests/solver/native/test_sanitizer_fuzz.py together with every C file of kernel/.
 *
 * Each case is either
 *   - valid: what the Python side sends (solver/native): unit quaternions and axes, windows as
 *     reach_windows.py builds them, counts and indices in range, start poses clamped by
 *     qik_clamp first as solve.run_method's are. Every call must return QIK_OK and every output
 *     must be finite (unit rotations, non-negative violations and errors);
 *   - hostile: a valid case with a few things broken: NaN, infinities, huge and tiny numbers,
 *     zero-length quaternions, offsets and bones, degenerate windows (zero half-angles and radii,
 *     collinear or repeated polygon corners, 0-2 corners), inverted and odd ranges, indices out
 *     of range, unknown kinds, methods and orders, no bones or negative rows, NULL where qik.h
 *     allows it (orientations, directions, preferred). The kernel must not crash or touch
 *     memory outside the arrays (the sanitizers see that), must answer one of its status codes,
 *     and QIK_OK must still mean every output is finite.
 *
 * qik_solve then solves the case's rows again through its argument struct (qik_solve_call), and
 * the rows are measured (qik_measure, qik_pose_distance_rows) and given a round of restarts
 * (qik_restart_round: random unmet rows, candidates from random poses, each rule); hostile cases
 * break its rows, counts, rule and starts. A refused round must leave the rows as they were.
 *
 * Then each case's chain becomes a body (qik_body_stage, qik_body_task_errors): random parents
 * (a tree, bones listed parents first), stretchy bones, tasks on random bones at random levels
 * asking positions, orientations or directions, the case's rows as start poses. Hostile cases
 * break parents, stretchy indices, task bones, flags, levels, weights, targets, stretch, the
 * body's size and the stage's budgets. The same rules hold: a known status, QIK_OK only with
 * finite outputs, and QIK_OK for every valid case.
 *
 * After the single solves, each case's rows are taken as the frames of a shot (their poses as
 * run_method left them) and the shot's loops run on it (qik_repair_jumps, qik_fill_between, qik_walk_out,
 * qik_follow, qik_carry_tip_twist_along) with random orders, pieces and walkers; hostile cases break their
 * indices, directions, counts and pointers too. These write the shot in place, so QIK_BAD_INPUT
 * must also mean the shot was left exactly as it was.
 *
 * Every array is allocated at its exact size, so a read one past its end is an ASan report.
 * Exit status: 0 all cases passed, 1 a check failed (the case is printed), 2 bad arguments.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qik.h"

#if defined(__SANITIZE_ADDRESS__) /* gcc -fsanitize=address: an ASan report names its case (UBSan's do not) */
#include <sanitizer/common_interface_defs.h>
#define ON_SANITIZER_REPORT(callback) __sanitizer_set_death_callback(callback)
#else
#define ON_SANITIZER_REPORT(callback) ((void)(callback))
#endif

#define PI 3.14159265358979323846
#define MAX_BONES 10
#define MAX_ROWS 4

/* ---------------------------------------------------------------- random numbers */

/* splitmix64 (Steele, Lea & Flood 2014): small, and good enough to drive a fuzzer. */
typedef struct {
    uint64_t state;
} rng_t;

static uint64_t next_u64(rng_t *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double uniform(rng_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next_u64(rng) >> 11) * 0x1.0p-53);
}

static int below(rng_t *rng, int n) { return (int)(next_u64(rng) % (uint64_t)n); }

static int chance(rng_t *rng, double p) { return uniform(rng, 0.0, 1.0) < p; }

static double gaussian(rng_t *rng)
{
    double u = uniform(rng, 1e-300, 1.0), v = uniform(rng, 0.0, 2.0 * PI);
    return sqrt(-2.0 * log(u)) * cos(v); /* Box-Muller */
}

/* A value the Python side would never send. */
static double hostile_double(rng_t *rng)
{
    switch (below(rng, 14)) {
    case 0:
        return NAN;
    case 1:
        return INFINITY;
    case 2:
        return -INFINITY;
    case 3:
        return DBL_MAX;
    case 4:
        return -DBL_MAX;
    case 5:
        return 1e300;
    case 6:
        return -1e300;
    case 7:
        return 1e-300;
    case 8:
        return DBL_MIN / 1024.0; /* subnormal */
    case 9:
        return 0.0;
    case 10:
        return -0.0;
    case 11:
        return uniform(rng, -1e-12, 1e-12);
    case 12:
        return uniform(rng, -1e9, 1e9);
    default:
        return uniform(rng, -10.0, 10.0);
    }
}

static int32_t hostile_int32(rng_t *rng)
{
    static const int32_t values[] = {INT32_MIN, -1000, -2, -1, 0, 1, 2, 3, 7, 1000, INT32_MAX};
    return values[below(rng, (int)(sizeof values / sizeof values[0]))];
}

/* Iteration budgets: hostile, but not so large that a case runs for minutes. */
static int32_t hostile_budget(rng_t *rng)
{
    static const int32_t values[] = {INT32_MIN, -1000, -1, 0, 1, 2, 50, 200};
    return values[below(rng, (int)(sizeof values / sizeof values[0]))];
}

/* ---------------------------------------------------------------- vectors */

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static void unit3(double v[3])
{
    double length = sqrt(dot3(v, v));
    for (int i = 0; i < 3; i++)
        v[i] /= length;
}

static void random_unit3(rng_t *rng, double out[3])
{
    do {
        for (int i = 0; i < 3; i++)
            out[i] = gaussian(rng);
    } while (dot3(out, out) < 1e-6);
    unit3(out);
}

static void random_unit4(rng_t *rng, double out[4])
{
    double length2;
    do {
        length2 = 0.0;
        for (int i = 0; i < 4; i++) {
            out[i] = gaussian(rng);
            length2 += out[i] * out[i];
        }
    } while (length2 < 1e-6);
    for (int i = 0; i < 4; i++)
        out[i] /= sqrt(length2);
}

/* A right-handed orthonormal frame: plane_x, plane_y = center × plane_x, center. */
static void random_frame(rng_t *rng, double center[3], double plane_x[3], double plane_y[3])
{
    double other[3];
    random_unit3(rng, center);
    do {
        random_unit3(rng, other);
        cross3(center, other, plane_x);
    } while (dot3(plane_x, plane_x) < 1e-3);
    unit3(plane_x);
    cross3(center, plane_x, plane_y);
    unit3(plane_y);
}

static int all_finite(const double *values, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(values[i]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- a case */

typedef struct {
    int hostile;
    int32_t n;    /* bones, as given to the kernel (hostile: may be <= 0) */
    int64_t rows; /* as given (hostile: may be <= 0) */
    int32_t n_windows, n_corners;
    double *rest_rotations, *rest_offsets, *step_vectors;
    qik_joint *joints;
    qik_window *windows;
    double *corners, *normals;
    double *positions, *orientations, *directions;
    double *rotations, *preferred;
    double *violation, *position_error, *orientation_error, *effector;
    int64_t *iterations;
    int pass_orientations, pass_directions, pass_preferred;
    qik_chain chain;
    qik_goals goals;
    qik_settings settings;
} fuzz_case;

/* Exactly count × size bytes (zero included: ASan then flags any read of it). */
static void *allocate(int64_t count, size_t size)
{
    size_t bytes = count > 0 ? (size_t)count * size : 0;
    void *memory = malloc(bytes);
    if (memory == NULL && bytes > 0) {
        fprintf(stderr, "fuzz_kernel: out of memory\n");
        exit(2);
    }
    if (bytes > 0)
        memset(memory, 0, bytes);
    return memory;
}

static void free_case(fuzz_case *c)
{
    void *arrays[] = {c->rest_rotations, c->rest_offsets, c->step_vectors, c->joints,         c->windows,
                      c->corners,        c->normals,      c->positions,    c->orientations,   c->directions,
                      c->rotations,      c->preferred,    c->violation,    c->position_error, c->orientation_error,
                      c->effector,       c->iterations};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
}

/* reach_windows.PolygonWindow: corners and inward edge normals of a convex polygon in the
 * window's gnomonic plane, reversed when clockwise seen from outside; Blow's inscribed cone
 * around the reference direction (the corners' mean). */
static void make_polygon(rng_t *rng, qik_window *window, double *corners, double *normals)
{
    int32_t k_count = window->corner_count;
    double vertices[8][2], angles[8], gaps[8], total = 0.0, min_gap = 0.3;
    double a = uniform(rng, 0.1, 1.5), b = uniform(rng, 0.1, 1.5), start = uniform(rng, 0.0, 2.0 * PI);
    for (int32_t k = 0; k < k_count; k++)
        total += gaps[k] = uniform(rng, 0.05, 1.0);
    double angle = start;
    for (int32_t k = 0; k < k_count; k++) {
        angles[k] = angle;
        angle += min_gap + gaps[k] / total * (2.0 * PI - min_gap * k_count);
    }
    for (int32_t k = 0; k < k_count; k++) {
        vertices[k][0] = a * cos(angles[k]);
        vertices[k][1] = b * sin(angles[k]);
    }
    double mean[2] = {0.0, 0.0};
    for (int32_t k = 0; k < k_count; k++) {
        mean[0] += vertices[k][0] / k_count;
        mean[1] += vertices[k][1] / k_count;
    }
    double reference[3];
    for (int i = 0; i < 3; i++)
        reference[i] = window->center[i] + mean[0] * window->plane_x[i] + mean[1] * window->plane_y[i];
    unit3(reference);
    for (int reversed = 0; reversed < 2; reversed++) {
        double inward = 0.0;
        for (int32_t k = 0; k < k_count; k++) {
            int32_t i0 = reversed ? k_count - 1 - k : k, i1 = reversed ? (2 * k_count - 2 - k) % k_count : (k + 1) % k_count;
            double point[3], edge[3];
            for (int i = 0; i < 3; i++) {
                point[i] = window->center[i] + vertices[i0][0] * window->plane_x[i] + vertices[i0][1] * window->plane_y[i];
                edge[i] = (vertices[i1][0] - vertices[i0][0]) * window->plane_x[i] +
                          (vertices[i1][1] - vertices[i0][1]) * window->plane_y[i];
            }
            cross3(point, edge, normals + 3 * k);
            unit3(normals + 3 * k);
            memcpy(corners + 3 * k, point, sizeof point);
            unit3(corners + 3 * k);
            inward += dot3(normals + 3 * k, reference);
        }
        if (inward >= 0.0)
            break;
    }
    double accept_angle = INFINITY;
    for (int32_t k = 0; k < k_count; k++) {
        double s = dot3(normals + 3 * k, reference);
        s = s < -1.0 ? -1.0 : s > 1.0 ? 1.0 : s;
        accept_angle = fmin(accept_angle, asin(s));
    }
    memcpy(window->accept_axis, reference, sizeof reference);
    window->accept_cos = cos(accept_angle);
    memcpy(window->reference, reference, sizeof reference);
}

static void make_window(rng_t *rng, qik_window *window, int32_t kind, int32_t corner_first, double *corners,
                        double *normals)
{
    window->kind = kind;
    window->corner_first = corner_first;
    window->corner_count = 0;
    random_frame(rng, window->center, window->plane_x, window->plane_y);
    window->orthonormal = 1;
    memcpy(window->accept_axis, window->center, sizeof window->center);
    memcpy(window->reference, window->center, sizeof window->center);
    switch (kind) {
    case QIK_CONE:
        window->half_angle = chance(rng, 0.05) ? PI : uniform(rng, 0.05, PI);
        window->accept_cos = cos(window->half_angle);
        break;
    case QIK_ELLIPSE: {
        double a = uniform(rng, 0.05, 1.45), b = uniform(rng, 0.05, 1.45);
        window->radii[0] = tan(a);
        window->radii[1] = tan(b);
        window->accept_cos = cos(fmin(a, b));
        if (chance(rng, 0.3)) { /* unit axes a little off perpendicular: the scanned rim */
            for (int i = 0; i < 3; i++) {
                window->plane_x[i] += uniform(rng, -1e-3, 1e-3);
                window->plane_y[i] += uniform(rng, -1e-3, 1e-3);
            }
            unit3(window->plane_x);
            unit3(window->plane_y);
            window->orthonormal = 0;
        }
        break;
    }
    default:
        window->corner_count = 3 + below(rng, 5);
        make_polygon(rng, window, corners + 3 * (int64_t)corner_first, normals + 3 * (int64_t)corner_first);
    }
}

static void make_range(rng_t *rng, double *range_min, double *range_max)
{
    if (chance(rng, 0.15)) {
        *range_min = -PI;
        *range_max = PI;
        return;
    }
    *range_min = uniform(rng, -PI, PI);
    *range_max = *range_min + uniform(rng, 0.0, 2.0 * PI - 1e-3);
}

/* What solver/native would send for a random limited chain and goal. */
static void make_valid_case(rng_t *rng, fuzz_case *c, int32_t n, int64_t rows)
{
    int32_t nb = n > 0 ? n : 0;
    int64_t nr = rows > 0 ? rows : 0;
    c->n = n;
    c->rows = rows;

    /* Plan the windows first so every table is allocated at its exact size. */
    int32_t kinds[MAX_BONES], window_counts[MAX_BONES], window_kinds[MAX_BONES][3];
    c->n_windows = c->n_corners = 0;
    for (int32_t i = 0; i < nb; i++) {
        kinds[i] = below(rng, 4);
        window_counts[i] = kinds[i] == QIK_BALL ? below(rng, 4) : 0;
        for (int32_t w = 0; w < window_counts[i]; w++) {
            window_kinds[i][w] = below(rng, 3);
            c->n_corners += window_kinds[i][w] == QIK_POLYGON ? 7 : 0; /* room for 3-7 corners */
        }
        c->n_windows += window_counts[i];
    }
    c->rest_rotations = allocate(4 * (int64_t)nb, sizeof(double));
    c->rest_offsets = allocate(3 * (int64_t)nb, sizeof(double));
    c->step_vectors = allocate(3 * (int64_t)nb, sizeof(double));
    c->joints = allocate(nb, sizeof(qik_joint));
    c->windows = allocate(c->n_windows, sizeof(qik_window));
    c->corners = allocate(3 * (int64_t)c->n_corners, sizeof(double));
    c->normals = allocate(3 * (int64_t)c->n_corners, sizeof(double));

    double reach = 0.0;
    int has_shares = 0;
    int32_t window_at = 0, corner_at = 0;
    for (int32_t i = 0; i < nb; i++) {
        double *rest = c->rest_rotations + 4 * i, *step = c->step_vectors + 3 * i;
        if (chance(rng, 0.3)) {
            rest[0] = 1.0;
        } else {
            random_unit4(rng, rest);
        }
        double length = uniform(rng, 0.1, 1.0);
        if (chance(rng, 0.7)) { /* a connected bone along its +Y */
            step[1] = length;
        } else {
            random_unit3(rng, step);
            for (int k = 0; k < 3; k++)
                step[k] *= length;
        }
        reach += length;

        qik_joint *joint = c->joints + i;
        joint->kind = kinds[i];
        joint->stiffness = chance(rng, 0.6) ? 0.0 : uniform(rng, 0.0, 0.95);
        joint->share = 1.0 - joint->stiffness;
        joint->twist_reference[0] = 1.0;
        if (joint->kind == QIK_FIXED) {
            joint->stiffness = 0.0;
            joint->share = 1.0;
        }
        has_shares |= joint->stiffness > 0.0 || joint->kind == QIK_FIXED;
        if (joint->kind == QIK_HINGE) {
            random_unit3(rng, joint->axis);
            if (chance(rng, 0.7)) {
                joint->flags |= QIK_HAS_RANGE;
                make_range(rng, &joint->range_min, &joint->range_max);
            }
        } else if (joint->kind == QIK_BALL) {
            joint->flags = below(rng, 16); /* any of the four flags */
            if (joint->flags & QIK_HAS_RANGE)
                make_range(rng, &joint->range_min, &joint->range_max);
            if (joint->flags & QIK_TWIST_REFERENCE)
                random_unit4(rng, joint->twist_reference);
            joint->window_first = window_at;
            joint->window_count = window_counts[i];
            for (int32_t w = 0; w < window_counts[i]; w++) {
                make_window(rng, c->windows + window_at, window_kinds[i][w], corner_at, c->corners, c->normals);
                corner_at += c->windows[window_at].corner_count;
                window_at++;
            }
        }
    }
    /* rest_offsets: the root's head anywhere near the origin, then each bone's step. */
    if (nb > 0)
        for (int k = 0; k < 3; k++)
            c->rest_offsets[k] = chance(rng, 0.5) ? 0.0 : uniform(rng, -1.0, 1.0);
    for (int32_t i = 1; i < nb; i++)
        memcpy(c->rest_offsets + 3 * i, c->step_vectors + 3 * (i - 1), 3 * sizeof(double));

    c->chain = (qik_chain){n,           c->n_windows,    c->n_corners, has_shares, c->rest_rotations,
                           c->rest_offsets, c->step_vectors, c->joints, c->windows, c->corners,
                           c->normals,  reach};

    /* Goals. */
    c->goals.kind = below(rng, 3);
    c->pass_orientations = c->goals.kind == QIK_ORIENTATION || chance(rng, 0.2);
    c->pass_directions = c->goals.kind == QIK_DIRECTION || chance(rng, 0.2);
    c->positions = allocate(3 * nr, sizeof(double));
    c->orientations = allocate(4 * nr, sizeof(double));
    c->directions = allocate(3 * nr, sizeof(double));
    for (int64_t r = 0; r < nr; r++) {
        double *p = c->positions + 3 * r, scale = uniform(rng, 0.0, 1.3 * reach);
        random_unit3(rng, p);
        for (int k = 0; k < 3; k++)
            p[k] *= scale;
        random_unit4(rng, c->orientations + 4 * r);
        random_unit3(rng, c->directions + 3 * r);
    }
    random_unit3(rng, c->goals.aim_axis);
    c->goals.position_weight = uniform(rng, 0.1, 2.0);
    c->goals.orientation_weight = uniform(rng, 0.05, 2.0);

    /* Settings (solver/settings.py's ranges). */
    qik_settings *s = &c->settings;
    s->method = below(rng, 5);
    s->order = below(rng, 2);
    s->max_iterations = 1 + below(rng, 30);
    s->stall_iterations = 1 + below(rng, 8);
    s->ccd_iterations_before_dls = below(rng, 10);
    s->finish_max_iterations = 1 + below(rng, 20);
    s->finish_stall_iterations = 1 + below(rng, 8);
    s->tolerance = pow(10.0, uniform(rng, -7.0, -3.0)) * reach;
    s->angle_tolerance = pow(10.0, uniform(rng, -5.0, -2.0));
    s->stall_ratio = uniform(rng, 0.5, 0.999);
    s->finish_stall_ratio = uniform(rng, 0.5, 0.999);
    s->damping = uniform(rng, 0.001, 0.5) * reach;
    s->rest_pull = chance(rng, 0.5) ? 0.0 : uniform(rng, 0.01, 0.5);

    /* Poses: random unit rotations (run() clamps them before the solve, as run_method's are). */
    c->rotations = allocate(4 * nr * nb, sizeof(double));
    c->preferred = allocate(4 * nr * nb, sizeof(double));
    for (int64_t q = 0; q < nr * nb; q++) {
        random_unit4(rng, c->rotations + 4 * q);
        random_unit4(rng, c->preferred + 4 * q);
    }
    c->pass_preferred = s->rest_pull != 0.0 || chance(rng, 0.3);

    c->violation = allocate(nr * nb, sizeof(double));
    c->position_error = allocate(nr, sizeof(double));
    c->orientation_error = allocate(nr, sizeof(double));
    c->effector = allocate(3 * nr, sizeof(double));
    c->iterations = allocate(nr, sizeof(int64_t));
}

/* ---------------------------------------------------------------- breaking a valid case */

static double *pick(rng_t *rng, double *array, int64_t count, int width)
{
    return count > 0 ? array + width * (int64_t)below(rng, (int)count) : NULL;
}

static void break_joint(rng_t *rng, fuzz_case *c, qik_joint *joint)
{
    switch (below(rng, 9)) {
    case 0:
        joint->kind = hostile_int32(rng);
        break;
    case 1:
        joint->flags = hostile_int32(rng);
        break;
    case 2: /* inverted, NaN, infinite or wider than a turn */
        joint->flags |= QIK_HAS_RANGE;
        joint->range_min = chance(rng, 0.5) ? hostile_double(rng) : uniform(rng, 0.0, PI);
        joint->range_max = chance(rng, 0.5) ? hostile_double(rng) : joint->range_min - uniform(rng, 0.0, PI);
        break;
    case 3:
        memset(joint->axis, 0, sizeof joint->axis); /* zero-length hinge axis */
        break;
    case 4:
        joint->axis[below(rng, 3)] = hostile_double(rng);
        break;
    case 5:
        joint->stiffness = hostile_double(rng);
        joint->share = hostile_double(rng);
        break;
    case 6: /* windows outside the table */
        joint->window_first = chance(rng, 0.5) ? hostile_int32(rng) : c->n_windows - joint->window_count + 1;
        break;
    case 7:
        joint->window_count = hostile_int32(rng);
        break;
    default:
        joint->flags |= QIK_TWIST_REFERENCE;
        if (chance(rng, 0.5))
            memset(joint->twist_reference, 0, sizeof joint->twist_reference);
        else
            joint->twist_reference[below(rng, 4)] = hostile_double(rng);
    }
}

static void break_window(rng_t *rng, fuzz_case *c, qik_window *window)
{
    switch (below(rng, 10)) {
    case 0:
        window->kind = hostile_int32(rng);
        break;
    case 1: /* zero, negative or past a half turn */
        window->half_angle = chance(rng, 0.4) ? 0.0 : chance(rng, 0.5) ? -uniform(rng, 0.0, 4.0) : hostile_double(rng);
        break;
    case 2:
        window->radii[below(rng, 2)] = chance(rng, 0.5) ? 0.0 : hostile_double(rng);
        break;
    case 3:
        memset(window->center, 0, sizeof window->center);
        break;
    case 4: {
        double *vectors[] = {window->center, window->plane_x, window->plane_y, window->accept_axis,
                             window->reference};
        vectors[below(rng, 5)][below(rng, 3)] = hostile_double(rng);
        break;
    }
    case 5:
        window->accept_cos = hostile_double(rng);
        break;
    case 6:
        window->orthonormal = hostile_int32(rng);
        break;
    case 7: /* too few corners for a polygon */
        window->kind = QIK_POLYGON;
        window->corner_count = below(rng, 3);
        break;
    case 8: /* corners outside the table */
        window->kind = QIK_POLYGON;
        window->corner_first = chance(rng, 0.5) ? hostile_int32(rng) : c->n_corners - window->corner_count + 1;
        window->corner_count = chance(rng, 0.5) ? window->corner_count : hostile_int32(rng);
        break;
    default: { /* a degenerate polygon: repeated or collinear corners, zero or NaN normals */
        if (window->kind != QIK_POLYGON || window->corner_count < 3 || window->corner_first < 0 ||
            (int64_t)window->corner_first + window->corner_count > c->n_corners)
            break; /* only where the arrays really hold the corners */
        double *corners = c->corners + 3 * (int64_t)window->corner_first;
        double *normals = c->normals + 3 * (int64_t)window->corner_first;
        int mode = below(rng, 3);
        for (int32_t k = 0; k < window->corner_count; k++) {
            if (mode == 0) { /* all the same corner */
                memcpy(corners + 3 * k, corners, 3 * sizeof(double));
                memset(normals + 3 * k, 0, 3 * sizeof(double));
            } else if (mode == 1) { /* all on one great circle through the centre */
                double t = uniform(rng, -1.0, 1.0);
                for (int i = 0; i < 3; i++)
                    corners[3 * k + i] = cos(t) * window->center[i] + sin(t) * window->plane_x[i];
                memcpy(normals + 3 * k, window->plane_y, 3 * sizeof(double));
            } else {
                normals[3 * k + below(rng, 3)] = NAN;
            }
        }
    }
    }
}

/* Break 1-4 things of a valid case. */
static void break_case(rng_t *rng, fuzz_case *c)
{
    int32_t nb = c->n > 0 ? c->n : 0;
    int64_t nr = c->rows > 0 ? c->rows : 0;
    for (int count = 1 + below(rng, 4); count > 0; count--) {
        double *value;
        switch (below(rng, 16)) {
        case 0: { /* any number of the chain */
            double *arrays[] = {c->rest_rotations, c->rest_offsets, c->step_vectors};
            int widths[] = {4, 3, 3}, which = below(rng, 3);
            if ((value = pick(rng, arrays[which], nb, widths[which])) != NULL)
                value[below(rng, widths[which])] = hostile_double(rng);
            break;
        }
        case 1: /* a zero-length rest rotation */
            if ((value = pick(rng, c->rest_rotations, nb, 4)) != NULL)
                memset(value, 0, 4 * sizeof(double));
            break;
        case 2: /* a zero-length offset or bone */
            if ((value = pick(rng, chance(rng, 0.5) ? c->rest_offsets : c->step_vectors, nb, 3)) != NULL)
                memset(value, 0, 3 * sizeof(double));
            break;
        case 3:
        case 4:
            if (nb > 0)
                break_joint(rng, c, c->joints + below(rng, nb));
            break;
        case 5:
        case 6:
            if (c->n_windows > 0)
                break_window(rng, c, c->windows + below(rng, c->n_windows));
            break;
        case 7: /* table sizes that do not cover the indices (never larger than the arrays) */
            if (chance(rng, 0.5))
                c->chain.n_windows = chance(rng, 0.3) ? -1 : below(rng, c->n_windows + 1);
            else
                c->chain.n_corners = chance(rng, 0.3) ? -1 : below(rng, c->n_corners + 1);
            break;
        case 8:
            c->chain.reach = hostile_double(rng);
            c->chain.has_shares = hostile_int32(rng);
            break;
        case 9: /* goals */
            switch (below(rng, 4)) {
            case 0:
                c->goals.kind = hostile_int32(rng);
                break;
            case 1:
                c->goals.aim_axis[below(rng, 3)] = chance(rng, 0.3) ? 0.0 : hostile_double(rng);
                break;
            case 2:
                c->goals.position_weight = hostile_double(rng);
                c->goals.orientation_weight = hostile_double(rng);
                break;
            default: /* NULL where the goal kind needs it */
                c->pass_orientations = 0;
                c->pass_directions = 0;
            }
            break;
        case 10: { /* goal values */
            double *arrays[] = {c->positions, c->orientations, c->directions};
            int widths[] = {3, 4, 3}, which = below(rng, 3);
            if ((value = pick(rng, arrays[which], nr, widths[which])) != NULL) {
                if (chance(rng, 0.3))
                    memset(value, 0, (size_t)widths[which] * sizeof(double));
                else
                    value[below(rng, widths[which])] = hostile_double(rng);
            }
            break;
        }
        case 11: /* unknown methods and orders, odd budgets */
            switch (below(rng, 3)) {
            case 0:
                c->settings.method = hostile_int32(rng);
                break;
            case 1:
                c->settings.order = hostile_int32(rng);
                break;
            default: {
                int32_t *budgets[] = {&c->settings.max_iterations, &c->settings.stall_iterations,
                                      &c->settings.ccd_iterations_before_dls, &c->settings.finish_max_iterations,
                                      &c->settings.finish_stall_iterations};
                int which = below(rng, 5);
                *budgets[which] = which == 1 || which == 4 ? hostile_int32(rng) : hostile_budget(rng);
            }
            }
            break;
        case 12: { /* tolerances, ratios, damping, rest pull */
            double *numbers[] = {&c->settings.tolerance,          &c->settings.angle_tolerance, &c->settings.stall_ratio,
                                 &c->settings.finish_stall_ratio, &c->settings.damping,         &c->settings.rest_pull};
            *numbers[below(rng, 6)] = hostile_double(rng);
            break;
        }
        case 13: /* a rest pull without preferred poses */
            c->settings.rest_pull = uniform(rng, 0.01, 1.0);
            c->pass_preferred = 0;
            break;
        case 14: /* start or preferred poses */
            if ((value = pick(rng, chance(rng, 0.5) ? c->rotations : c->preferred, nr * nb, 4)) != NULL) {
                if (chance(rng, 0.4))
                    memset(value, 0, 4 * sizeof(double));
                else
                    value[below(rng, 4)] = hostile_double(rng);
            }
            break;
        default: /* NULL preferred poses, orientations or directions */
            c->pass_preferred = chance(rng, 0.5) ? 0 : c->pass_preferred;
            c->pass_orientations = chance(rng, 0.5) ? 0 : c->pass_orientations;
            c->pass_directions = chance(rng, 0.5) ? 0 : c->pass_directions;
        }
    }
}

/* ---------------------------------------------------------------- running a case */

static uint64_t seed;
static int64_t case_index;
static int64_t answers[2][3];      /* qik_run_method's status counts, valid and hostile cases */
static int64_t body_answers[2][3]; /* qik_body_stage's, alike */

static int fail(const fuzz_case *c, const char *call, const char *what, int32_t status)
{
    fprintf(stderr,
            "fuzz_kernel: case %" PRId64 " (%s, %d bones, %" PRId64 " rows, method %d, order %d): %s %s"
            " (status %d)\n  replay: fuzz_kernel %" PRIu64 " 1 %" PRId64 "\n",
            case_index, c->hostile ? "hostile" : "valid", c->n, c->rows, c->settings.method, c->settings.order, call,
            what, status, seed, case_index);
    return 1;
}

static void report_case(void)
{
    fprintf(stderr, "fuzz_kernel: the report above came from case %" PRId64 "; replay: fuzz_kernel %" PRIu64 " 1 %" PRId64 "\n",
            case_index, seed, case_index);
}

static int known_status(int32_t status) { return status == QIK_OK || status == QIK_BAD_INPUT || status == QIK_NOT_FINITE; }

/* qik_clamp on ``poses``: valid cases need OK and unit rotations; QIK_OK always means finite. */
static int check_clamp(const fuzz_case *c, double *poses, int64_t count)
{
    int32_t status = qik_clamp(&c->chain, c->rows, poses);
    if (!known_status(status))
        return fail(c, "qik_clamp", "answered an unknown status", status);
    if (status == QIK_OK && !all_finite(poses, 4 * count))
        return fail(c, "qik_clamp", "answered QIK_OK with a non-finite rotation", status);
    if (c->hostile)
        return 0;
    if (status != QIK_OK)
        return fail(c, "qik_clamp", "did not answer QIK_OK for a valid input", status);
    for (int64_t q = 0; q < count; q++) {
        const double *r = poses + 4 * q;
        if (fabs(sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]) - 1.0) > 1e-9)
            return fail(c, "qik_clamp", "returned a rotation that is not unit", status);
    }
    return 0;
}

/* qik_solve through its argument struct, from the poses qik_run_method left (its own copy, as
 * the starts it clamps in place), into outputs of its own; the tip's twist carried every other
 * case. A NULL struct is refused; valid cases need QIK_OK and unit rotations. */
static int check_solve(fuzz_case *c, int64_t count, int64_t rows)
{
    if (qik_solve(NULL) != QIK_BAD_INPUT)
        return fail(c, "qik_solve", "did not refuse a NULL argument struct", QIK_OK);
    double *starts = allocate(4 * count, sizeof(double)), *solved = allocate(4 * count, sizeof(double));
    double *position_error = allocate(rows, sizeof(double)), *orientation_error = allocate(rows, sizeof(double));
    double *effector = allocate(3 * rows, sizeof(double));
    int64_t *iterations = allocate(rows, sizeof(int64_t));
    uint8_t *met = allocate(rows, 1);
    if (count > 0)
        memcpy(starts, c->rotations, (size_t)(4 * count) * sizeof(double));
    qik_solve_call call = {&c->chain,         &c->goals, &c->settings, c->rows, starts, solved,
                           c->pass_preferred ? c->preferred : NULL, (int32_t)(case_index % 2), 0, iterations,
                           position_error,    orientation_error, effector,     met};
    int32_t status = qik_solve(&call);
    int failed = 0;
    if (!known_status(status))
        failed = fail(c, "qik_solve", "answered an unknown status", status);
    else if (status == QIK_OK && !(all_finite(solved, 4 * count) && all_finite(position_error, rows) &&
                                   all_finite(orientation_error, rows) && all_finite(effector, 3 * rows)))
        failed = fail(c, "qik_solve", "answered QIK_OK with a non-finite output", status);
    else if (!c->hostile && status != QIK_OK)
        failed = fail(c, "qik_solve", "did not answer QIK_OK for a valid input", status);
    for (int64_t q = 0; !failed && !c->hostile && q < count; q++) {
        const double *r = solved + 4 * q;
        if (fabs(sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]) - 1.0) > 1e-9)
            failed = fail(c, "qik_solve", "returned a rotation that is not unit", status);
    }
    for (int64_t r = 0; !failed && status == QIK_OK && r < rows; r++)
        if (met[r] > 1)
            failed = fail(c, "qik_solve", "answered a met flag other than 0 or 1", status);
    void *arrays[] = {starts, solved, position_error, orientation_error, effector, iterations, met};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    return failed;
}

static int run_case(fuzz_case *c)
{
    int64_t count = (c->n > 0 ? c->n : 0) * (c->rows > 0 ? c->rows : 0);
    c->goals.positions = c->positions;
    c->goals.orientations = c->pass_orientations ? c->orientations : NULL;
    c->goals.directions = c->pass_directions ? c->directions : NULL;

    if (check_clamp(c, c->rotations, count) || (c->pass_preferred && check_clamp(c, c->preferred, count)))
        return 1;

    int32_t status = qik_violation(&c->chain, c->rows, c->rotations, c->violation);
    if (!known_status(status))
        return fail(c, "qik_violation", "answered an unknown status", status);
    if (status == QIK_OK && !all_finite(c->violation, count))
        return fail(c, "qik_violation", "answered QIK_OK with a non-finite violation", status);
    if (!c->hostile) {
        if (status != QIK_OK)
            return fail(c, "qik_violation", "did not answer QIK_OK for a valid input", status);
        for (int64_t i = 0; i < count; i++)
            if (!(c->violation[i] >= 0.0))
                return fail(c, "qik_violation", "returned a negative violation", status);
    }

    int64_t rows = c->rows > 0 ? c->rows : 0;
    status = qik_run_method(&c->chain, &c->goals, &c->settings, c->rows, c->rotations,
                            c->pass_preferred ? c->preferred : NULL, c->iterations, c->position_error,
                            c->orientation_error, c->effector);
    if (!known_status(status))
        return fail(c, "qik_run_method", "answered an unknown status", status);
    answers[c->hostile != 0][status]++;
    if (status == QIK_OK &&
        !(all_finite(c->rotations, 4 * count) && all_finite(c->position_error, rows) &&
          all_finite(c->orientation_error, rows) && all_finite(c->effector, 3 * rows)))
        return fail(c, "qik_run_method", "answered QIK_OK with a non-finite output", status);
    if (!c->hostile) {
        if (status != QIK_OK)
            return fail(c, "qik_run_method", "did not answer QIK_OK for a valid input", status);
        for (int64_t r = 0; r < rows; r++)
            if (c->iterations[r] < 0 || !(c->position_error[r] >= 0.0) || !(c->orientation_error[r] >= 0.0))
                return fail(c, "qik_run_method", "returned negative iterations or errors", status);
    }
    return check_solve(c, count, rows);
}

/* qik_measure and qik_pose_distance_rows on the case's rows, then a restart round on them: valid
 * cases need QIK_OK and finite answers, a refused round must leave the rows as they were. */
static int run_round_case(rng_t *rng, fuzz_case *c)
{
    int64_t rows = c->rows > 0 ? c->rows : 0, count = (c->n > 0 ? c->n : 0) * rows;
    double *position_error = allocate(rows, sizeof(double)), *orientation_error = allocate(rows, sizeof(double));
    double *effector = allocate(3 * rows, sizeof(double)), *distance = allocate(rows, sizeof(double));
    int failed = 0;
    int32_t status = qik_measure(&c->chain, &c->goals, c->rows, c->rotations, position_error, orientation_error, effector);
    if (!known_status(status))
        failed = fail(c, "qik_measure", "answered an unknown status", status);
    else if (!c->hostile && (status != QIK_OK || !all_finite(position_error, rows) ||
                             !all_finite(orientation_error, rows) || !all_finite(effector, 3 * rows)))
        failed = fail(c, "qik_measure", "did not measure a valid input to finite errors", status);
    status = qik_pose_distance_rows(c->n, c->rows, c->rotations, c->preferred, distance);
    if (!failed && !known_status(status))
        failed = fail(c, "qik_pose_distance_rows", "answered an unknown status", status);
    for (int64_t r = 0; !failed && !c->hostile && r < rows; r++)
        if (status != QIK_OK || !(distance[r] >= 0.0 && distance[r] <= PI + 1e-12))
            failed = fail(c, "qik_pose_distance_rows", "did not answer an angle in [0, pi] for a valid input", status);

    /* A round: unmet rows (increasing), candidates from random poses clamped into the limits. */
    int64_t unmet = rows > 0 ? 1 + below(rng, (int)rows) : 0, candidates = 1 + below(rng, 3);
    int64_t *unmet_rows = allocate(unmet, sizeof(int64_t)), *iterations = allocate(rows, sizeof(int64_t));
    for (int64_t u = 0, row = 0; u < unmet; u++, row++) {
        while (rows - row > unmet - u && chance(rng, 0.4))
            row++;
        unmet_rows[u] = row;
    }
    int32_t n = c->n > 0 ? c->n : 0;
    double *starts = allocate(4 * n * unmet * candidates, sizeof(double));
    for (int64_t q = 0; q < n * unmet * candidates; q++)
        random_unit4(rng, starts + 4 * q);
    if (!c->hostile && qik_clamp(&c->chain, unmet * candidates, starts) != QIK_OK)
        failed = failed || fail(c, "qik_clamp", "did not clamp a valid round's starts", QIK_BAD_INPUT);
    uint8_t *taken = allocate(unmet, 1);
    qik_restart_request round = {c->rows,
                                 c->rotations,
                                 position_error,
                                 orientation_error,
                                 iterations,
                                 chance(rng, 0.5) ? c->preferred : NULL,
                                 c->pass_preferred ? c->preferred : NULL,
                                 unmet,
                                 unmet_rows,
                                 candidates,
                                 starts,
                                 below(rng, 3),
                                 0,
                                 uniform(rng, 0.0, 0.01),
                                 1e-9,
                                 taken};
    if (c->hostile) {
        int broken = below(rng, 7);
        if (broken == 0 && unmet > 0)
            unmet_rows[below(rng, (int)unmet)] = chance(rng, 0.5) ? -1 : rows + below(rng, 3);
        else if (broken == 1)
            round.candidates = below(rng, 2) - 1; /* 0 or -1 */
        else if (broken == 2)
            round.take_rule = chance(rng, 0.5) ? -1 : 3 + below(rng, 5);
        else if (broken == 3)
            round.tie = chance(rng, 0.5) ? NAN : -1.0;
        else if (broken == 4 && unmet * candidates * n > 0)
            starts[below(rng, (int)(4 * n * unmet * candidates))] = hostile_double(rng);
        else if (broken == 5)
            round.unmet = rows + 1 + below(rng, 3);
        else
            round.starts = NULL;
    }
    double *rotations_before = allocate(4 * count, sizeof(double)), *errors_before = allocate(rows, sizeof(double));
    if (count > 0)
        memcpy(rotations_before, c->rotations, (size_t)(4 * count) * sizeof(double));
    if (rows > 0)
        memcpy(errors_before, position_error, (size_t)rows * sizeof(double));
    status = qik_restart_round(&c->chain, &c->goals, &c->settings, &round);
    int unchanged = (count == 0 || !memcmp(rotations_before, c->rotations, (size_t)(4 * count) * sizeof(double))) &&
                    (rows == 0 || !memcmp(errors_before, position_error, (size_t)rows * sizeof(double)));
    if (!failed && !known_status(status))
        failed = fail(c, "qik_restart_round", "answered an unknown status", status);
    else if (!failed && status != QIK_OK && !unchanged)
        failed = fail(c, "qik_restart_round", "refused the round after writing its rows", status);
    else if (!failed && !c->hostile && status != QIK_OK)
        failed = fail(c, "qik_restart_round", "did not answer QIK_OK for a valid input", status);
    for (int64_t u = 0; !failed && status == QIK_OK && u < round.unmet && round.candidates > 0; u++) {
        int64_t row = unmet_rows[u];
        if (taken[u] > 1)
            failed = fail(c, "qik_restart_round", "answered a taken flag other than 0 or 1", status);
        else if (taken[u] && !(all_finite(c->rotations + 4 * n * row, 4 * n) && isfinite(position_error[row])))
            failed = fail(c, "qik_restart_round", "answered QIK_OK with a non-finite row taken", status);
    }
    void *arrays[] = {position_error, orientation_error, effector, distance, unmet_rows, iterations, starts, taken,
                      rotations_before, errors_before};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    return failed;
}

/* ---------------------------------------------------------------- a shot's loops */

static int64_t *random_indices(rng_t *rng, int64_t count, int64_t below_value, int hostile)
{
    int64_t *values = allocate(count, sizeof(int64_t));
    for (int64_t i = 0; i < count; i++) {
        values[i] = below_value > 0 ? (int64_t)(next_u64(rng) % (uint64_t)below_value) : 0;
        if (hostile && chance(rng, 0.05))
            values[i] = chance(rng, 0.5) ? -1 - below(rng, 3) : below_value + below(rng, 3);
    }
    return values;
}

static int64_t *random_directions(rng_t *rng, int64_t count, int hostile)
{
    int64_t *values = allocate(count, sizeof(int64_t));
    for (int64_t i = 0; i < count; i++)
        values[i] = hostile && chance(rng, 0.05) ? below(rng, 3) * 2 - 2 + chance(rng, 0.5) : chance(rng, 0.5) ? 1 : -1;
    return values;
}

/* The shot's arrays before a call: QIK_BAD_INPUT must leave them as they were (the calls write
 * in place, so they check everything first). */
typedef struct {
    double *rotations, *answers;
    uint8_t *met, *solved;
    int64_t *iterations;
} shot_copy;

static shot_copy copy_shot(const qik_shot *shot, int32_t n)
{
    int64_t frames = shot->frames;
    shot_copy copy = {allocate(4 * n * frames, sizeof(double)), allocate(4 * n * frames, sizeof(double)),
                      allocate(frames, 1), allocate(frames, 1), allocate(frames, sizeof(int64_t))};
    memcpy(copy.rotations, shot->rotations, (size_t)(4 * n * frames) * sizeof(double));
    memcpy(copy.answers, shot->answers, (size_t)(4 * n * frames) * sizeof(double));
    memcpy(copy.met, shot->met, (size_t)frames);
    memcpy(copy.solved, shot->solved, (size_t)frames);
    memcpy(copy.iterations, shot->iterations, (size_t)frames * sizeof(int64_t));
    return copy;
}

static int shot_unchanged(const shot_copy *copy, const qik_shot *shot, int32_t n)
{
    int64_t frames = shot->frames;
    int same = !memcmp(copy->rotations, shot->rotations, (size_t)(4 * n * frames) * sizeof(double)) &&
               !memcmp(copy->answers, shot->answers, (size_t)(4 * n * frames) * sizeof(double)) &&
               !memcmp(copy->met, shot->met, (size_t)frames) && !memcmp(copy->solved, shot->solved, (size_t)frames) &&
               !memcmp(copy->iterations, shot->iterations, (size_t)frames * sizeof(int64_t));
    free(copy->rotations);
    free(copy->answers);
    free(copy->met);
    free(copy->solved);
    free(copy->iterations);
    return same;
}

static int check_shot_status(const fuzz_case *c, const char *call, int32_t status, const qik_shot *shot, int32_t n,
                             shot_copy *before)
{
    if (!shot_unchanged(before, shot, n) && status == QIK_BAD_INPUT)
        return fail(c, call, "refused the input after writing the shot", status);
    if (!known_status(status))
        return fail(c, call, "answered an unknown status", status);
    if (c->hostile)
        return 0;
    if (status != QIK_OK)
        return fail(c, call, "did not answer QIK_OK for a valid input", status);
    if (!all_finite(shot->rotations, 4 * (int64_t)n * shot->frames))
        return fail(c, call, "left a non-finite pose in the shot", status);
    return 0;
}

static int run_shot_case(rng_t *rng, fuzz_case *c)
{
    if (c->n <= 0 || c->rows <= 0)
        return 0;
    int32_t n = c->n;
    int64_t frames = c->rows, hostile = c->hostile;
    qik_shot shot = {frames,
                     c->rotations,
                     allocate(frames, 1),
                     allocate(frames, 1),
                     allocate(frames, sizeof(int64_t)),
                     allocate(4 * n * frames, sizeof(double)),
                     allocate(frames, sizeof(double)),
                     allocate(frames, sizeof(double)),
                     allocate(3 * frames, sizeof(double))};
    for (int64_t f = 0; f < frames; f++) {
        shot.met[f] = (uint8_t)chance(rng, 0.5);
        shot.solved[f] = (uint8_t)chance(rng, 0.8);
    }
    /* An order of frames as sequence sends it: increasing (hostile: an entry anywhere). */
    int64_t order_count = 1 + below(rng, (int)frames);
    int64_t *order = allocate(order_count, sizeof(int64_t));
    for (int64_t p = 0, frame = 0; p < order_count; p++, frame++) {
        while (frames - frame > order_count - p && chance(rng, 0.3))
            frame++;
        order[p] = frame;
    }
    if (hostile && chance(rng, 0.2))
        order[below(rng, (int)order_count)] = chance(rng, 0.5) ? below(rng, (int)frames) : frames + below(rng, 3);

    /* The jump repair along the order: carries and blends of whatever jumps the random shot has. */
    qik_repair_request repair = {order_count, order, 1 + below(rng, 8), below(rng, 4), 1e-3, uniform(rng, 0.0, 0.5)};
    if (hostile && chance(rng, 0.2)) {
        int broken = below(rng, 4);
        if (broken == 0)
            repair.order = NULL;
        else if (broken == 1)
            repair.carry_frames = -1 - below(rng, 3);
        else if (broken == 2)
            repair.jump_slack = NAN;
        else
            repair.order_count = chance(rng, 0.5) ? -1 : frames + 1 + below(rng, 3);
    }
    shot_copy before = copy_shot(&shot, n);
    int failed = 0;
    if (repair.order_count <= order_count) { /* (never past the array: ASan would report that, not the kernel) */
        int32_t status = qik_repair_jumps(&c->chain, &c->goals, &c->settings, &shot, &repair);
        failed = check_shot_status(c, "qik_repair_jumps", status, &shot, n, &before);
    } else {
        shot_unchanged(&before, &shot, n);
    }

    /* The frames between the order's, from random guesses. */
    int64_t between_count = 0;
    int64_t *between = allocate(frames, sizeof(int64_t));
    for (int64_t frame = order[0] + 1, p = 1; p < order_count && frame < frames; frame++) {
        while (p < order_count && order[p] < frame)
            p++;
        if (p < order_count && order[p] != frame && chance(rng, 0.8))
            between[between_count++] = frame;
    }
    double *guesses = allocate(4 * n * between_count, sizeof(double));
    for (int64_t r = 0; r < between_count * n; r++)
        random_unit4(rng, guesses + 4 * r);
    qik_fill_request fill = {order_count, order, between_count, between, guesses, chance(rng, 0.5), 0, 0.002};
    if (hostile && chance(rng, 0.3)) {
        int broken = below(rng, 4);
        if (broken == 0 && between_count > 0)
            between[below(rng, (int)between_count)] = chance(rng, 0.5) ? order[0] : frames + below(rng, 3);
        else if (broken == 1 && between_count > 0)
            guesses[below(rng, (int)(4 * n * between_count))] = hostile_double(rng);
        else if (broken == 2)
            fill.margin = NAN;
        else
            fill.guesses = NULL;
    }
    if (!failed) {
        before = copy_shot(&shot, n);
        int32_t status = qik_fill_between(&c->chain, &c->goals, &c->settings, &c->settings, &shot, &fill);
        failed = check_shot_status(c, "qik_fill_between", status, &shot, n, &before);
    }

    /* Walkers out from random seeds. */
    int64_t walking = below(rng, 4);
    int64_t *seeds = random_indices(rng, walking, order_count, hostile);
    int64_t *walk_directions = random_directions(rng, walking, hostile);
    int64_t *until = random_indices(rng, walking, order_count, hostile);
    qik_walk_request walk = {order_count, order, walking, seeds, walk_directions, until, uniform(rng, 0.0, 0.01)};
    if (!failed) {
        before = copy_shot(&shot, n);
        int32_t status = qik_walk_out(&c->chain, &c->goals, &c->settings, &c->settings, &shot, &walk);
        failed = check_shot_status(c, "qik_walk_out", status, &shot, n, &before);
    }

    /* Pieces followed between random followed indices. */
    int64_t pieces = below(rng, 4);
    int64_t *begins = random_indices(rng, pieces, order_count, hostile), *ends = random_indices(rng, pieces, order_count, hostile);
    double *follow_pose = allocate(4 * n * pieces, sizeof(double)), *follow_poses = allocate(4 * n * order_count, sizeof(double));
    uint8_t *follow_met = allocate(pieces, 1), *follow_poses_met = allocate(order_count, 1);
    for (int64_t r = 0; r < pieces * n; r++)
        random_unit4(rng, follow_pose + 4 * r);
    if (hostile && pieces > 0 && chance(rng, 0.2))
        follow_pose[below(rng, (int)(4 * n * pieces))] = hostile_double(rng);
    qik_follow_request follow = {order_count, order, pieces, begins, ends, follow_pose, follow_met, follow_poses,
                                 follow_poses_met};
    if (!failed) {
        before = copy_shot(&shot, n);
        int32_t status = qik_follow(&c->chain, &c->goals, &c->settings, &c->settings, &shot, &follow);
        failed = check_shot_status(c, "qik_follow", status, &shot, n, &before);
        if (!failed && !hostile && !all_finite(follow_pose, 4 * n * pieces))
            failed = fail(c, "qik_follow", "arrived at a non-finite pose", status);
    }

    /* The tip's twist carried along the shot from a random start. */
    double *tip_start = allocate(4 * n, sizeof(double));
    for (int32_t i = 0; i < n; i++)
        random_unit4(rng, tip_start + 4 * i);
    if (hostile && chance(rng, 0.2))
        tip_start[below(rng, 4 * n)] = hostile_double(rng);
    if (!failed) {
        int32_t status = qik_carry_tip_twist_along(&c->chain, frames, c->rotations, tip_start);
        if (!known_status(status))
            failed = fail(c, "qik_carry_tip_twist_along", "answered an unknown status", status);
        else if (!hostile && (status != QIK_OK || !all_finite(c->rotations, 4 * (int64_t)n * frames)))
            failed = fail(c, "qik_carry_tip_twist_along", "did not carry a valid shot to finite poses", status);
    }
    free(tip_start);

    void *arrays[] = {begins,          ends,       follow_pose, follow_poses,    follow_met, follow_poses_met,
                      shot.met,        shot.solved, shot.iterations, shot.answers, shot.answer_position_error,
                      shot.answer_orientation_error, shot.answer_effector, order, seeds, walk_directions, until,
                      between,         guesses};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    return failed;
}

/* ---------------------------------------------------------------- a body */

#define MAX_TASKS 5

/* Frees every array; 0, so that a failure's status passes through ``|``. */
static int free_all(void **arrays, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(arrays[i]);
    return 0;
}

static int run_body_case(rng_t *rng, fuzz_case *c)
{
    int32_t n = c->n > 0 ? c->n : 0;
    int64_t rows = c->rows > 0 ? c->rows : 0;
    int hostile = c->hostile;
    int32_t *parents = allocate(n, sizeof(int32_t)), *stretchy = allocate(n, sizeof(int32_t));
    double *lengths = allocate(n, sizeof(double)), *shares = allocate(n, sizeof(double));
    double *hinge_axes = allocate(3 * (int64_t)n, sizeof(double)), *low = allocate(n, sizeof(double));
    double *high = allocate(n, sizeof(double)), *stretch_shares = allocate(n, sizeof(double));
    int32_t n_stretchy = 0;
    for (int32_t b = 0; b < n; b++) {
        parents[b] = b == 0 || chance(rng, 0.1) ? -1 : b - 1 - below(rng, b < 3 ? b : 3);
        lengths[b] = uniform(rng, 0.05, 1.0);
        shares[b] = c->joints[b].kind == QIK_FIXED ? 0.0 : chance(rng, 0.7) ? 1.0 : uniform(rng, 0.0, 1.0);
        if (c->joints[b].kind == QIK_HINGE)
            memcpy(hinge_axes + 3 * b, c->joints[b].axis, 3 * sizeof(double));
        low[b] = high[b] = 1.0;
        if (chance(rng, 0.3)) {
            low[b] = uniform(rng, 0.5, 1.0);
            high[b] = uniform(rng, 1.0, 2.0);
            stretch_shares[b] = uniform(rng, 0.0, 1.0);
            stretchy[n_stretchy++] = b;
        }
    }
    int32_t n_tasks = 1 + below(rng, MAX_TASKS), n_levels = 1 + below(rng, n_tasks);
    int32_t bones[MAX_TASKS], flags[MAX_TASKS], level_of[MAX_TASKS];
    double points[3 * MAX_TASKS], aims[3 * MAX_TASKS], position_weights[MAX_TASKS], orientation_weights[MAX_TASKS];
    for (int32_t t = 0; t < n_tasks; t++) {
        bones[t] = n > 0 ? below(rng, n) : 0;
        static const int32_t kinds[] = {1, 2, 3, 4, 5};
        flags[t] = kinds[below(rng, 5)];
        level_of[t] = t < n_levels ? t : below(rng, n_levels);
        for (int k = 0; k < 3; k++)
            points[3 * t + k] = k == 1 ? uniform(rng, 0.0, 1.0) : uniform(rng, -0.1, 0.1);
        random_unit3(rng, aims + 3 * t);
        position_weights[t] = flags[t] & QIK_TASK_POSITION ? uniform(rng, 0.0, 2.0) : 0.0;
        orientation_weights[t] = flags[t] & (QIK_TASK_ORIENTATION | QIK_TASK_DIRECTION) ? uniform(rng, 0.0, 2.0) : 0.0;
    }
    double *positions = allocate(3 * n_tasks * rows, sizeof(double));
    double *orientations = allocate(4 * n_tasks * rows, sizeof(double));
    double *directions = allocate(3 * n_tasks * rows, sizeof(double));
    for (int64_t i = 0; i < n_tasks * rows; i++) {
        random_unit3(rng, positions + 3 * i);
        for (int k = 0; k < 3; k++)
            positions[3 * i + k] *= uniform(rng, 0.0, 3.0);
        random_unit4(rng, orientations + 4 * i);
        random_unit3(rng, directions + 3 * i);
    }
    double *rotations = allocate(4 * (int64_t)n * rows, sizeof(double));
    if (n * rows > 0)
        memcpy(rotations, c->rotations, (size_t)(4 * (int64_t)n * rows) * sizeof(double));
    double *stretch = allocate((int64_t)n * rows, sizeof(double));
    for (int64_t i = 0; i < (int64_t)n * rows; i++)
        stretch[i] = 1.0;
    int64_t *iterations = allocate(rows, sizeof(int64_t));
    /* the kernel reads n_levels from the tasks (up to n_tasks), which hostile cases change */
    double *excess = allocate(rows * (MAX_TASKS + 1), sizeof(double));
    double *position_error = allocate(rows * n_tasks, sizeof(double));
    double *orientation_error = allocate(rows * n_tasks, sizeof(double));

    qik_body body = {c->n, n_stretchy, parents, stretchy, c->rest_rotations, c->rest_offsets, lengths, shares,
                     hinge_axes, low, high, stretch_shares, &c->chain, 0.5 + c->chain.reach};
    qik_body_tasks tasks = {n_tasks, n_levels, bones, flags, level_of, points, aims, position_weights,
                            orientation_weights, positions, orientations, directions};
    /* short budgets: a stage costs its steps, and every case runs one */
    qik_body_settings settings = {1 + below(rng, 8), below(rng, 4), below(rng, 8), chance(rng, 0.3),
                                  chance(rng, 0.5), 0, 0.05 * body.size, uniform(rng, 0.0, 0.5),
                                  1e-12 * body.size * body.size, 1e-3, 1e-3 * body.size, 1e-3, 1e-6 * body.size,
                                  1e-6};
    int64_t given_rows = c->rows;
    if (hostile) {
        for (int broken = 0, count = 1 + below(rng, 3); broken < count; broken++) {
            switch (below(rng, 16)) {
            case 0:
                if (n > 0)
                    parents[below(rng, n)] = hostile_int32(rng);
                break;
            case 1:
                body.n_stretchy = hostile_int32(rng);
                break;
            case 2:
                if (n_stretchy > 0)
                    stretchy[below(rng, n_stretchy)] = hostile_int32(rng);
                break;
            case 3:
                bones[below(rng, n_tasks)] = hostile_int32(rng);
                break;
            case 4:
                flags[below(rng, n_tasks)] = chance(rng, 0.5) ? hostile_int32(rng) : 6;
                break;
            case 5:
                level_of[below(rng, n_tasks)] = hostile_int32(rng);
                break;
            case 6:
                tasks.n_levels = hostile_int32(rng);
                break;
            case 7:
                position_weights[below(rng, n_tasks)] = hostile_double(rng);
                break;
            case 8:
                if (rows > 0)
                    positions[below(rng, (int)(3 * n_tasks * rows))] = hostile_double(rng);
                break;
            case 9:
                if (rows > 0)
                    orientations[below(rng, (int)(4 * n_tasks * rows))] = hostile_double(rng);
                break;
            case 10:
                if (n * rows > 0)
                    stretch[below(rng, (int)(n * rows))] = hostile_double(rng);
                break;
            case 11:
                body.size = hostile_double(rng);
                break;
            case 12:
                settings.max_iterations = hostile_budget(rng);
                settings.polish_iterations = hostile_budget(rng);
                settings.stall_iterations = hostile_int32(rng);
                break;
            case 13:
                settings.damping = hostile_double(rng);
                settings.stall_ratio = hostile_double(rng);
                break;
            case 14:
                if (n > 0)
                    lengths[below(rng, n)] = chance(rng, 0.5) ? 0.0 : hostile_double(rng);
                break;
            default:
                tasks.n_tasks = chance(rng, 0.5) ? 0 : hostile_int32(rng) < 0 ? -1 : MAX_TASKS + 1;
                if (tasks.n_tasks > MAX_TASKS)
                    tasks.n_tasks = 0; /* a count past the arrays would be the fuzzer's own overflow */
                break;
            }
        }
    }
    void *arrays[] = {parents,   stretchy,     lengths,    shares,    hinge_axes, low,        high,
                      stretch_shares, positions, orientations, directions, rotations, stretch, iterations,
                      excess, position_error, orientation_error};
    size_t count = sizeof arrays / sizeof arrays[0];
    int failed = 0;
    int32_t status = qik_body_stage(&body, &tasks, &settings, given_rows, rotations, stretch, iterations, excess);
    if (!known_status(status))
        return fail(c, "qik_body_stage", "answered an unknown status", status) | free_all(arrays, count);
    body_answers[hostile != 0][status]++;
    if (status == QIK_OK && !(all_finite(rotations, 4 * (int64_t)n * rows) && all_finite(stretch, n * rows) &&
                              all_finite(excess, rows * (n_levels + 1))))
        failed = fail(c, "qik_body_stage", "answered QIK_OK with a non-finite output", status);
    else if (!hostile && status != QIK_OK)
        failed = fail(c, "qik_body_stage", "did not answer QIK_OK for a valid input", status);
    if (!failed) {
        status = qik_body_task_errors(&body, &tasks, given_rows, rotations, stretch, position_error, orientation_error);
        if (!known_status(status))
            failed = fail(c, "qik_body_task_errors", "answered an unknown status", status);
        else if (status == QIK_OK &&
                 !(all_finite(position_error, rows * n_tasks) && all_finite(orientation_error, rows * n_tasks)))
            failed = fail(c, "qik_body_task_errors", "answered QIK_OK with a non-finite output", status);
        else if (!hostile && status != QIK_OK)
            failed = fail(c, "qik_body_task_errors", "did not answer QIK_OK for a valid input", status);
    }
    return failed | free_all(arrays, count);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: fuzz_kernel SEED CASES [FIRST]\n");
        return 2;
    }
    seed = strtoull(argv[1], NULL, 0);
    int64_t cases = strtoll(argv[2], NULL, 0), first = argc == 4 ? strtoll(argv[3], NULL, 0) : 0;
    if (cases < 0 || first < 0) {
        fprintf(stderr, "fuzz_kernel: CASES and FIRST must not be negative\n");
        return 2;
    }
    if (qik_interface_version() != QIK_INTERFACE_VERSION) {
        fprintf(stderr, "fuzz_kernel: qik_interface_version() is %d, qik.h says %d\n", qik_interface_version(),
                QIK_INTERFACE_VERSION);
        return 1;
    }
    ON_SANITIZER_REPORT(report_case);
    int64_t hostile_cases = 0;
    for (case_index = first; case_index < first + cases; case_index++) {
        rng_t rng = {seed};
        rng.state = next_u64(&rng) ^ (uint64_t)case_index * 0xD1B54A32D192ED03u;
        int hostile = chance(&rng, 0.5);
        int32_t n = 1 + below(&rng, MAX_BONES);
        int64_t rows = 1 + below(&rng, MAX_ROWS);
        if (hostile && chance(&rng, 0.04))
            n = chance(&rng, 0.5) ? 0 : hostile_int32(&rng) < 0 ? -1 : INT32_MIN;
        if (hostile && chance(&rng, 0.04))
            rows = chance(&rng, 0.5) ? 0 : chance(&rng, 0.5) ? -1 : INT64_MIN;

        fuzz_case c;
        memset(&c, 0, sizeof c);
        make_valid_case(&rng, &c, n, rows);
        c.hostile = hostile;
        if (hostile) {
            break_case(&rng, &c);
            hostile_cases++;
        }
        int failed = run_case(&c) || run_round_case(&rng, &c) || run_shot_case(&rng, &c) || run_body_case(&rng, &c);
        free_case(&c);
        if (failed)
            return 1;
    }
    printf("fuzz_kernel: seed %" PRIu64 ", cases %" PRId64 "..%" PRId64 " (%" PRId64 " hostile): all passed\n", seed,
           first, first + cases - 1, hostile_cases);
    /* How far the cases got: a hostile case refused at the door tests little. */
    for (int hostile = 0; hostile < 2; hostile++)
        printf("  qik_run_method on %s cases: %" PRId64 " QIK_OK, %" PRId64 " QIK_BAD_INPUT, %" PRId64
               " QIK_NOT_FINITE\n",
               hostile ? "hostile" : "valid", answers[hostile][QIK_OK], answers[hostile][QIK_BAD_INPUT],
               answers[hostile][QIK_NOT_FINITE]);
    for (int hostile = 0; hostile < 2; hostile++)
        printf("  qik_body_stage on %s cases: %" PRId64 " QIK_OK, %" PRId64 " QIK_BAD_INPUT, %" PRId64
               " QIK_NOT_FINITE\n",
               hostile ? "hostile" : "valid", body_answers[hostile][QIK_OK], body_answers[hostile][QIK_BAD_INPUT],
               body_answers[hostile][QIK_NOT_FINITE]);
    return 0;
}
