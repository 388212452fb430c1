/* Joint limits one joint at a time: solver/limits.py, reach_windows.py and limit_contacts.py.
 *
 * Every function is named after its numpy counterpart and forms the same expressions in the
 * same order, so the answers agree to rounding. The numpy code works on batches; here a row's
 * early exits (Newton settled, slope flat) are per direction, which only ever saves steps the
 * batch would take below the settling thresholds. */
#include "limits.h"

#include "qik_math.h"
#include "solve.h" /* qik_chain_is_valid (chain_check.c) */

/* reach_windows.py's constants, same names and values. */
#define CONTAINS_TOLERANCE 1e-12
#define NEWTON_SETTLED 1e-13  /* radians of rim angle: the elliptic clamp's Newton steps stop below this */
#define SECULAR_SETTLED 1e-13 /* ... and its secular equation's, in mu (in (0, 1)) */
#define SECULAR_STEPS 40      /* a bound: from the circular start Newton settles in 2-4 steps */
#define FRONT_MIN 1e-9        /* a direction this far in front of the window plane has a secular root */
#define COARSE_SAMPLES 64     /* _scanned_rim_angle's defaults */
#define REFINE_STEPS 10
#define SLOPE_STEP 1e-7 /* _scanned_rim_angle's finite-difference step for the slope's derivative */
/* limit_contacts.MOVED: a clamp that turned a joint less than this did not act on that part. */
#define MOVED 1e-9
/* AngleRange.is_full_circle's margin below one turn. */
#define FULL_CIRCLE_MARGIN 1e-12

#define TWO_PI (2.0 * QIK_PI)

/* ---------------------------------------------------------------- small vector helpers */

static void scale3(const double v[3], double s, double out[3])
{
    out[0] = v[0] * s;
    out[1] = v[1] * s;
    out[2] = v[2] * s;
}

/* reach_windows._unit: v / |v| (no guard, as numpy's). */
static void unit3(const double v[3], double out[3])
{
    double n = qik_length3(v);
    out[0] = v[0] / n;
    out[1] = v[1] / n;
    out[2] = v[2] / n;
}

static int is_finite4(const double q[4])
{
    return isfinite(q[0]) && isfinite(q[1]) && isfinite(q[2]) && isfinite(q[3]);
}

/* numpy's float remainder (npy_divmod): fmod, moved into [0, divisor) for a positive divisor. */
static double mod_turn(double a)
{
    double m = qik_fmod_turn(a);
    if (m != 0.0) {
        if (m < 0.0)
            m += TWO_PI;
    } else {
        m = 0.0; /* copysign(0, divisor) */
    }
    return m;
}

/* reach_windows._towards: unit tangent at ``reference`` along the great arc towards d; a fixed
 * perpendicular where d is (anti)parallel to it. */
static void towards(const double reference[3], const double d[3], double out[3])
{
    double along_reference = qik_dot3(d, reference);
    double along[3] = {d[0] - along_reference * reference[0], d[1] - along_reference * reference[1],
                       d[2] - along_reference * reference[2]};
    double norm = qik_length3(along);
    if (norm > 1e-12) {
        out[0] = along[0] / norm;
        out[1] = along[1] / norm;
        out[2] = along[2] / norm;
    } else {
        qik_any_perpendicular(reference, out);
    }
}

/* ---------------------------------------------------------------- AngleRange */

typedef struct {
    double minimum, maximum;
} angle_range;

static angle_range joint_range(const qik_joint *joint)
{
    angle_range range = {joint->range_min, joint->range_max};
    return range;
}

static double range_width(angle_range range) { return range.maximum - range.minimum; }

static int range_is_full_circle(angle_range range) { return range_width(range) >= TWO_PI - FULL_CIRCLE_MARGIN; }

/* AngleRange._past_minimum: how far round the circle from the minimum, in [0, 2pi). */
static double range_past_minimum(angle_range range, double angle) { return mod_turn(angle - range.minimum); }

static int range_contains(angle_range range, double angle, double tolerance)
{
    if (range_is_full_circle(range))
        return 1;
    double past = range_past_minimum(range, angle);
    return past <= range_width(range) + tolerance || past >= TWO_PI - tolerance;
}

/* AngleRange.clamp: outside, the nearer end measured round the circle. */
static double range_clamp(angle_range range, double angle)
{
    angle = qik_wrap_angle(angle);
    if (range_is_full_circle(range))
        return angle;
    double past = range_past_minimum(range, angle);
    if (past <= range_width(range))
        return angle;
    /* (past - width) beyond the maximum and (2pi - past) short of the minimum. */
    double end = TWO_PI - past <= past - range_width(range) ? range.minimum : range.maximum;
    return qik_wrap_angle(end);
}

static double range_distance_outside(angle_range range, double angle)
{
    angle = qik_wrap_angle(angle);
    return fabs(qik_wrap_angle(range_clamp(range, angle) - angle));
}

/* ---------------------------------------------------------------- ConeWindow */

static int cone_contains(const qik_window *window, const double d[3], double tolerance)
{
    return qik_dot3(d, window->center) >= cos(window->half_angle) - tolerance;
}

/* ConeWindow.closest (= crossing): the rim point on the great arc from the centre (Blow 2002). */
static void cone_closest(const qik_window *window, const double d[3], double out[3])
{
    if (cone_contains(window, d, 0.0)) {
        qik_copy3(out, d);
        return;
    }
    double w[3], c = cos(window->half_angle), s = sin(window->half_angle);
    towards(window->center, d, w);
    for (int i = 0; i < 3; i++)
        out[i] = c * window->center[i] + s * w[i];
}

/* ---------------------------------------------------------------- EllipticConeWindow */

/* EllipticConeWindow.contains: the quadratic cone x² + y² <= along², front nappe only. */
static int ellipse_contains(const qik_window *window, const double d[3], double tolerance)
{
    double along = qik_dot3(d, window->center);
    double x = qik_dot3(d, window->plane_x) / window->radii[0];
    double y = qik_dot3(d, window->plane_y) / window->radii[1];
    return along > -tolerance && x * x + y * y <= along * along + tolerance;
}

/* EllipticConeWindow.rim: the unit direction through the gnomonic ellipse at ``angle``. */
static void ellipse_rim(const qik_window *window, double angle, double out[3])
{
    double a_cos = window->radii[0] * cos(angle), b_sin = window->radii[1] * sin(angle), point[3];
    for (int i = 0; i < 3; i++)
        point[i] = window->center[i] + a_cos * window->plane_x[i] + b_sin * window->plane_y[i];
    unit3(point, out);
}

/* EllipticConeWindow.crossing: great arcs through the centre are rays from the origin in
 * gnomonic coordinates (Wilhelms & Van Gelder 2001's clamp on Blow 2002's window). */
static void ellipse_crossing(const qik_window *window, const double d[3], double out[3])
{
    if (ellipse_contains(window, d, 0.0)) {
        qik_copy3(out, d);
        return;
    }
    double x = qik_dot3(d, window->plane_x) / window->radii[0];
    double y = qik_dot3(d, window->plane_y) / window->radii[1];
    ellipse_rim(window, atan2(y, x), out);
}

/* EllipticConeWindow._rim_slope: d/dphi of d·rim(phi); for g = c + a cos phi·x + b sin phi·y,
 * rim' = (g' − rim (rim·g'))/|g| (the derivative of g/|g|). */
static double ellipse_rim_slope(const qik_window *window, const double d[3], double angle)
{
    double cos_angle = cos(angle), sin_angle = sin(angle);
    double a_cos = window->radii[0] * cos_angle, b_sin = window->radii[1] * sin_angle;
    double minus_a_sin = -window->radii[0] * sin_angle, b_cos = window->radii[1] * cos_angle;
    double g[3], g_prime[3], rim[3], rim_prime[3];
    for (int i = 0; i < 3; i++) {
        g[i] = window->center[i] + a_cos * window->plane_x[i] + b_sin * window->plane_y[i];
        g_prime[i] = minus_a_sin * window->plane_x[i] + b_cos * window->plane_y[i];
    }
    double length = qik_length3(g);
    for (int i = 0; i < 3; i++)
        rim[i] = g[i] / length;
    double along = qik_dot3(rim, g_prime);
    for (int i = 0; i < 3; i++)
        rim_prime[i] = (g_prime[i] - rim[i] * along) / length;
    return qik_dot3(d, rim_prime);
}

/* EllipticConeWindow._scanned_rim_angle: the rim angle maximising d·rim(phi) for any direction:
 * a coarse scan brackets the maximum, then Newton's method on its slope, kept inside the
 * bracket by bisection (a safeguarded Newton, Press et al., Numerical Recipes 9.4 "rtsafe"). */
static double ellipse_scanned_rim_angle(const qik_window *window, const double d[3])
{
    double step = TWO_PI / COARSE_SAMPLES, rim[3];
    int best = 0;
    ellipse_rim(window, 0.0, rim);
    double best_value = qik_dot3(d, rim);
    for (int i = 1; i < COARSE_SAMPLES; i++) {
        ellipse_rim(window, (double)i * step, rim);
        double value = qik_dot3(d, rim);
        if (value > best_value) { /* numpy's argmax: the first largest */
            best_value = value;
            best = i;
        }
    }
    double angle = (double)best * step, lo = angle - step, hi = angle + step;
    for (int k = 0; k < REFINE_STEPS; k++) {
        double slope = ellipse_rim_slope(window, d, angle);
        if (fabs(slope) < 1e-15)
            break;
        double curvature = (ellipse_rim_slope(window, d, angle + SLOPE_STEP) - slope) / SLOPE_STEP;
        if (slope > 0.0)
            lo = angle;
        else
            hi = angle;
        double newton = angle - slope / (curvature < 0.0 ? curvature : -1.0);
        int usable = curvature < 0.0 && newton >= lo && newton <= hi;
        double previous = angle;
        angle = usable ? newton : 0.5 * (lo + hi);
        if (fabs(angle - previous) < NEWTON_SETTLED)
            break; /* Newton converges quadratically: a step this small is the last one needed */
    }
    return angle;
}

/* reach_windows._secular_start: the root of the circular cone through the ellipse's radius
 * towards (x, y), a few Newton steps from the elliptic root (callers clip it into [0, 1]). */
static double secular_start(double x, double y, double z, double a, double b)
{
    double rho = sqrt(x * x + y * y);
    double radius = rho / sqrt((x * x) / (a * a) + (y * y) / (b * b));
    return (rho * radius - z * radius * radius) / (rho * radius + z);
}

/* reach_windows._secular_newton: k(mu) = (1 − mu)·|(Ax/(A²+mu), By/(B²+mu))| − z and the
 * Newton step from mu (Eberly 2013, "Distance from a point to an ellipse, an ellipsoid, or a
 * hyperellipsoid": the same secular equation). */
static double secular_newton(double mu, double xa, double yb, double z, double a2, double b2, double *newton)
{
    double ia = 1.0 / (a2 + mu), ib = 1.0 / (b2 + mu);
    double u = xa * ia, v = yb * ib;
    double r = sqrt(u * u + v * v);
    double k = (1.0 - mu) * r - z;
    double slope = -r - (1.0 - mu) * (u * u * ia + v * v * ib) / r;
    *newton = mu - k / slope;
    return k;
}

/* reach_windows._front_rim_angle_of_one: the rim angle of the nearest direction for a direction
 * in front of the window plane (z > 0), from its window coordinates: the ray through its
 * Euclidean projection onto the cone, p = (A²x/(A²+mu), B²y/(B²+mu), z/(1−mu)) (Lagrange;
 * Eberly 2013), mu by safeguarded Newton from the circular cone's root. */
static double ellipse_front_rim_angle(double x, double y, double z, double a, double b)
{
    double start = secular_start(x, y, z, a, b);
    double mu = 0.0 > start ? 0.0 : start; /* Python's min(max(start, 0), 1), NaN kept */
    mu = 1.0 < mu ? 1.0 : mu;
    double lo = 0.0, hi = 1.0;
    for (int i = 0; i < SECULAR_STEPS; i++) {
        double newton;
        double k = secular_newton(mu, x * a, y * b, z, a * a, b * b, &newton);
        if (k > 0.0)
            lo = mu;
        else
            hi = mu;
        double previous = mu;
        mu = lo <= newton && newton <= hi ? newton : 0.5 * (lo + hi);
        if (fabs(mu - previous) < SECULAR_SETTLED)
            break;
    }
    return atan2(y * b / (b * b + mu), x * a / (a * a + mu));
}

/* EllipticConeWindow.closest: the nearest rim direction (Blow 2002's clamp, exact). */
static void ellipse_closest(const qik_window *window, const double d[3], double out[3])
{
    if (ellipse_contains(window, d, 0.0)) {
        qik_copy3(out, d);
        return;
    }
    double angle;
    if (!window->orthonormal) { /* a skewed window plane: no secular equation in these axes */
        angle = ellipse_scanned_rim_angle(window, d);
    } else {
        double x = qik_dot3(d, window->plane_x), y = qik_dot3(d, window->plane_y), z = qik_dot3(d, window->center);
        if (z > FRONT_MIN)
            angle = ellipse_front_rim_angle(x, y, z, window->radii[0], window->radii[1]);
        else
            angle = ellipse_scanned_rim_angle(window, d);
    }
    ellipse_rim(window, angle, out);
}

/* ---------------------------------------------------------------- PolygonWindow */

static const double *corner_of(const qik_chain *chain, const qik_window *window, int32_t k)
{
    return chain->corner_directions + 3 * (int64_t)(window->corner_first + k);
}

static const double *normal_of(const qik_chain *chain, const qik_window *window, int32_t k)
{
    return chain->edge_normals + 3 * (int64_t)(window->corner_first + k);
}

/* PolygonWindow.contains: inside every edge's half-space n_k·d >= 0. */
static int polygon_contains(const qik_chain *chain, const qik_window *window, const double d[3], double tolerance)
{
    for (int32_t k = 0; k < window->corner_count; k++)
        if (!(qik_dot3(d, normal_of(chain, window, k)) >= -tolerance))
            return 0;
    return 1;
}

/* Edge k's candidate of PolygonWindow.closest: d projected onto the edge's plane, unit, and its
 * score d·p when it lands on the edge's arc, else -inf. */
static double polygon_edge_candidate(const qik_chain *chain, const qik_window *window, int32_t k, const double d[3],
                                     double on_plane[3])
{
    const double *normal = normal_of(chain, window, k), *start = corner_of(chain, window, k);
    const double *end = corner_of(chain, window, (k + 1) % window->corner_count);
    double along_normal = qik_dot3(d, normal), projected[3], start_side[3], end_side[3];
    for (int i = 0; i < 3; i++)
        projected[i] = d[i] - along_normal * normal[i];
    double length = qik_length3(projected), divisor = length > 1e-300 ? length : 1e-300;
    for (int i = 0; i < 3; i++)
        on_plane[i] = projected[i] / divisor;
    qik_cross(start, on_plane, start_side);
    qik_cross(on_plane, end, end_side);
    int within_edge = length > 1e-12 && qik_dot3(start_side, normal) >= 0.0 && qik_dot3(end_side, normal) >= 0.0;
    return within_edge ? qik_dot3(on_plane, d) : -INFINITY;
}

/* PolygonWindow.closest: maximise d·p over the cone's rim, edge projections that land on their
 * edge or corners (Blow 2002), the first best of edges then corners winning ties (argmax). */
static void polygon_closest(const qik_chain *chain, const qik_window *window, const double d[3], double out[3])
{
    if (polygon_contains(chain, window, d, 0.0)) {
        qik_copy3(out, d);
        return;
    }
    double best_score = polygon_edge_candidate(chain, window, 0, d, out), candidate[3];
    for (int32_t k = 1; k < window->corner_count; k++) {
        double score = polygon_edge_candidate(chain, window, k, d, candidate);
        if (score > best_score) {
            best_score = score;
            qik_copy3(out, candidate);
        }
    }
    for (int32_t k = 0; k < window->corner_count; k++) {
        const double *corner = corner_of(chain, window, k);
        double score = qik_dot3(d, corner);
        if (score > best_score) {
            best_score = score;
            qik_copy3(out, corner);
        }
    }
}

/* PolygonWindow.crossing: the first wall met on the great arc from the reference towards d
 * (Wilhelms & Van Gelder 2001): on p(phi) = cos phi·r + sin phi·w, wall k's n_k·p =
 * a cos phi + b sin phi with a = n_k·r > 0 first vanishes at phi = atan2(b, a) + pi/2. */
static void polygon_crossing(const qik_chain *chain, const qik_window *window, const double d[3], double out[3])
{
    if (polygon_contains(chain, window, d, 0.0)) {
        qik_copy3(out, d);
        return;
    }
    const double *r = window->reference;
    double w[3];
    towards(r, d, w);
    /* w points towards d, so d·w >= 0 but for rounding where d is opposite r (w the fixed
     * perpendicular): there numpy's atan2 may give -pi, an exit point at d itself, outside. */
    double target_angle = fabs(atan2(qik_dot3(d, w), qik_dot3(d, r)));
    double wall_angle = INFINITY;
    for (int32_t k = 0; k < window->corner_count; k++) {
        const double *normal = normal_of(chain, window, k);
        double angle = atan2(qik_dot3(w, normal), qik_dot3(normal, r)) + 0.5 * QIK_PI;
        if (angle < wall_angle)
            wall_angle = angle;
    }
    double angle = wall_angle < target_angle ? wall_angle : target_angle;
    double c = cos(angle), s = sin(angle);
    for (int i = 0; i < 3; i++)
        out[i] = c * r[i] + s * w[i];
}

/* ---------------------------------------------------------------- one window, by kind */

static int window_contains(const qik_chain *chain, const qik_window *window, const double d[3], double tolerance)
{
    switch (window->kind) {
    case QIK_CONE:
        return cone_contains(window, d, tolerance);
    case QIK_ELLIPSE:
        return ellipse_contains(window, d, tolerance);
    default:
        return polygon_contains(chain, window, d, tolerance);
    }
}

static void window_closest(const qik_chain *chain, const qik_window *window, const double d[3], double out[3])
{
    switch (window->kind) {
    case QIK_CONE:
        cone_closest(window, d, out);
        break;
    case QIK_ELLIPSE:
        ellipse_closest(window, d, out);
        break;
    default:
        polygon_closest(chain, window, d, out);
    }
}

static void window_crossing(const qik_chain *chain, const qik_window *window, const double d[3], double out[3])
{
    switch (window->kind) {
    case QIK_CONE:
        cone_closest(window, d, out); /* the arc from the centre meets the rim at the closest point */
        break;
    case QIK_ELLIPSE:
        ellipse_crossing(window, d, out);
        break;
    default:
        polygon_crossing(chain, window, d, out);
    }
}

/* ---------------------------------------------------------------- ReachWindows (a ball's union) */

static const qik_window *window_of(const qik_chain *chain, const qik_joint *joint, int32_t i)
{
    return chain->windows + joint->window_first + i;
}

static int reach_contains(const qik_chain *chain, const qik_joint *joint, const double d[3], double tolerance)
{
    for (int32_t i = 0; i < joint->window_count; i++)
        if (window_contains(chain, window_of(chain, joint, i), d, tolerance))
            return 1;
    return 0;
}

/* ReachWindows.early_accept: Blow 2002's inscribed-cone test; true guarantees inside. */
static int reach_early_accept(const qik_chain *chain, const qik_joint *joint, const double d[3])
{
    for (int32_t i = 0; i < joint->window_count; i++) {
        const qik_window *window = window_of(chain, joint, i);
        if (qik_dot3(d, window->accept_axis) >= window->accept_cos)
            return 1;
    }
    return 0;
}

/* ReachWindows.clamp: per window by the mode, the one nearest d wins (the first on a tie). */
static void reach_clamp(const qik_chain *chain, const qik_joint *joint, const double d[3], int boundary, double out[3])
{
    double best[3], candidate[3];
    for (int32_t i = 0; i < joint->window_count; i++) {
        const qik_window *window = window_of(chain, joint, i);
        double *into = i == 0 ? best : candidate;
        if (boundary)
            window_crossing(chain, window, d, into);
        else
            window_closest(chain, window, d, into);
        if (i > 0 && qik_dot3(candidate, d) > qik_dot3(best, d))
            qik_copy3(best, candidate);
    }
    qik_copy3(out, best);
}

/* ReachWindows.angle_outside: the angle from d to the nearest allowed direction; 0 inside. */
static double reach_angle_outside(const qik_chain *chain, const qik_joint *joint, const double d[3])
{
    if (reach_contains(chain, joint, d, CONTAINS_TOLERANCE))
        return 0.0;
    double nearest[3];
    reach_clamp(chain, joint, d, 0, nearest);
    return qik_direction_angle(nearest, d);
}

/* ---------------------------------------------------------------- BallJoint */

static int ball_has_twist_range(const qik_joint *joint) { return (joint->flags & QIK_HAS_RANGE) != 0; }

/* BallJoint.split: the bone direction and the twist the range limits (of M·q with a twist
 * reference M; swing-twist about +Y, Blow 2002). */
static double ball_split(const qik_joint *joint, const double q[4], double direction[3])
{
    if (!(joint->flags & QIK_TWIST_REFERENCE))
        return qik_swing_twist_y(q, direction);
    double referenced[4], referenced_direction[3];
    qik_rotate_y_axis(q, direction);
    qik_mul(joint->twist_reference, q, referenced);
    return qik_swing_twist_y(referenced, referenced_direction);
}

/* BallJoint._join: the rotation with this direction and twist (split's inverse; with a twist
 * reference M, M·q = S(M·d)·T(twist)). */
static void ball_join(const qik_joint *joint, const double direction[3], double twist, double out[4])
{
    if (!(joint->flags & QIK_TWIST_REFERENCE)) {
        qik_from_swing_twist_y(direction, twist, out);
        return;
    }
    double referenced_direction[3], referenced[4], unreference[4];
    qik_rotate(joint->twist_reference, direction, referenced_direction);
    qik_from_swing_twist_y(referenced_direction, twist, referenced);
    qik_conj(joint->twist_reference, unreference);
    qik_mul(unreference, referenced, out);
}

/* BallJoint._inside: certainly no clamping needed, by the cheapest tests first (Blow 2002's
 * fast paths: the inscribed cones, then the windows, then the twist range). */
static int ball_inside(const qik_chain *chain, const qik_joint *joint, const double direction[3], double twist)
{
    int inside = 1;
    if (joint->window_count > 0) {
        if (joint->flags & QIK_FAST_PATHS)
            inside = reach_early_accept(chain, joint, direction) || reach_contains(chain, joint, direction, 0.0);
        else
            inside = reach_contains(chain, joint, direction, 0.0);
    }
    if (ball_has_twist_range(joint) && !range_is_full_circle(joint_range(joint)))
        inside = inside && range_contains(joint_range(joint), twist, 0.0);
    return inside;
}

/* The windows' part of ball_inside: certainly no swing clamping needed. */
static int ball_direction_inside(const qik_chain *chain, const qik_joint *joint, const double direction[3])
{
    if (joint->window_count == 0)
        return 1;
    if (joint->flags & QIK_FAST_PATHS)
        return reach_early_accept(chain, joint, direction) || reach_contains(chain, joint, direction, 0.0);
    return reach_contains(chain, joint, direction, 0.0);
}

/* Whether q's twist (split's, without a twist reference) lies inside the twist range by a
 * margin, without forming it: twist = 2·atan2(y, w) and atan t <= t for t >= 0, so for w > 0
 * |twist| <= 2|y|/w; a range around 0 holding ±2|y|/w (less a margin far above atan2's
 * rounding) holds the twist too, and range_contains would say so. False: not known. */
static int ball_twist_surely_inside(const qik_joint *joint, const double q[4])
{
    if (!ball_has_twist_range(joint))
        return 1;
    angle_range range = joint_range(joint);
    double reach = -range.minimum < range.maximum ? -range.minimum : range.maximum;
    if (joint->flags & QIK_TWIST_REFERENCE || !(reach > 1e-6) || !(range.maximum < QIK_PI) ||
        !(range.minimum > -QIK_PI) || !(q[0] > 1e-9))
        return 0;
    return 2.0 * fabs(q[2]) < q[0] * reach * (1.0 - 1e-9);
}

/* BallJoint.clamp: normalise, split, and outside the limit clamp the direction into the
 * windows and the twist into its range, then join (Blow 2002's swing-twist clamp). A pose
 * the fast tests above show inside returns before the split's atan2. */
static void ball_clamp(const qik_chain *chain, const qik_joint *joint, double q[4])
{
    qik_normalize(q);
    if (joint->window_count == 0 && !ball_has_twist_range(joint))
        return;
    double direction[3];
    if (ball_twist_surely_inside(joint, q)) {
        qik_rotate_y_axis(q, direction); /* split's direction, to the bit */
        if (ball_direction_inside(chain, joint, direction))
            return;
    }
    double twist = ball_split(joint, q, direction);
    if (ball_inside(chain, joint, direction, twist))
        return;
    if (joint->window_count > 0)
        reach_clamp(chain, joint, direction, (joint->flags & QIK_BOUNDARY_MODE) != 0, direction);
    if (ball_has_twist_range(joint))
        twist = range_clamp(joint_range(joint), twist);
    ball_join(joint, direction, twist, q);
}

/* BallJoint.violation: the swing angle outside the windows plus the twist outside its range. */
/* BallJoint.twist_clamped: the twist brought into its range, the direction kept exactly. */
void qik_twist_clamp_joint(const qik_chain *chain, int32_t bone, double q[4])
{
    const qik_joint *joint = chain->joints + bone;
    if (joint->kind != QIK_BALL || !ball_has_twist_range(joint) || range_is_full_circle(joint_range(joint)))
        return;
    double direction[3];
    double twist = ball_split(joint, q, direction);
    if (!range_contains(joint_range(joint), twist, 0.0))
        ball_join(joint, direction, range_clamp(joint_range(joint), twist), q);
}

static double ball_violation(const qik_chain *chain, const qik_joint *joint, const double q[4])
{
    double unit[4], direction[3];
    qik_copy4(unit, q);
    qik_normalize(unit);
    double twist = ball_split(joint, unit, direction);
    double outside = 0.0;
    if (joint->window_count > 0)
        outside = outside + reach_angle_outside(chain, joint, direction);
    if (ball_has_twist_range(joint))
        outside = outside + range_distance_outside(joint_range(joint), twist);
    return outside;
}

/* ---------------------------------------------------------------- HingeJoint */

/* HingeJoint.clamp_angle: the range, or a wrap when unlimited. */
static double hinge_clamp_angle(const qik_joint *joint, double angle)
{
    return joint->flags & QIK_HAS_RANGE ? range_clamp(joint_range(joint), angle) : qik_wrap_angle(angle);
}

/* HingeJoint.clamp: the angle about the axis nearest q (of q as given, not normalised), in its
 * range, rebuilt about the axis (van den Bergen 2014's revolute joint). */
static void hinge_clamp(const qik_joint *joint, double q[4])
{
    double angle = hinge_clamp_angle(joint, qik_twist_about(q, joint->axis));
    qik_from_axis_angle(joint->axis, angle, q);
}

/* ---------------------------------------------------------------- limits.h */

void qik_clamp_joint(const qik_chain *chain, int32_t bone, double q[4])
{
    const qik_joint *joint = chain->joints + bone;
    switch (joint->kind) {
    case QIK_FIXED: /* FixedJoint.clamp: the rest orientation */
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
        break;
    case QIK_HINGE:
        hinge_clamp(joint, q);
        break;
    case QIK_BALL:
        ball_clamp(chain, joint, q);
        break;
    default: /* FreeJoint.clamp */
        qik_normalize(q);
    }
}

double qik_joint_violation(const qik_chain *chain, int32_t bone, const double q[4])
{
    static const double identity[4] = {1.0, 0.0, 0.0, 0.0};
    const qik_joint *joint = chain->joints + bone;
    switch (joint->kind) {
    case QIK_FIXED:
        return qik_angle_between(q, identity);
    case QIK_HINGE: {
        double clamped[4];
        qik_copy4(clamped, q);
        hinge_clamp(joint, clamped);
        return qik_angle_between(q, clamped);
    }
    case QIK_BALL:
        return ball_violation(chain, joint, q);
    default:
        return 0.0;
    }
}

/* limit_contacts._unit_or_zero. */
static void unit_or_zero(const double v[3], double out[3])
{
    double size = qik_length3(v);
    if (size > MOVED) {
        out[0] = v[0] / size;
        out[1] = v[1] / size;
        out[2] = v[2] / size;
    } else {
        out[0] = out[1] = out[2] = 0.0;
    }
}

/* LimitContacts._ball_axes for one joint: the swing arc's axis d_turned × d_clamped, and the
 * bone's own axis for a twist the range changed (a turn about the bone changes its twist by as
 * much, whatever the split). */
static void ball_contact_axes(const qik_joint *joint, const double turned[4], const double clamped[4],
                              double axes[2][3])
{
    double direction[3], direction_before[3], across[3];
    double twist_after = qik_swing_twist_y(clamped, direction);
    double twist_before = qik_swing_twist_y(turned, direction_before);
    qik_cross(direction_before, direction, across);
    unit_or_zero(across, axes[0]);
    double twist_change = 0.0;
    if (ball_has_twist_range(joint) && !range_is_full_circle(joint_range(joint))) {
        if (joint->flags & QIK_TWIST_REFERENCE) {
            double ignored[3];
            twist_after = ball_split(joint, clamped, ignored);
            twist_before = ball_split(joint, turned, ignored);
        }
        twist_change = twist_after - twist_before;
    }
    twist_change = qik_wrap_angle(twist_change);
    if (fabs(twist_change) > MOVED)
        scale3(direction, twist_change > 0.0 ? 1.0 : -1.0, axes[1]);
    else
        axes[1][0] = axes[1][1] = axes[1][2] = 0.0;
}

void qik_contact_axes(const qik_chain *chain, int32_t bone, const double turned[4], const double clamped[4],
                      double axes[2][3])
{
    const qik_joint *joint = chain->joints + bone;
    if (joint->kind == QIK_BALL) {
        ball_contact_axes(joint, turned, clamped, axes);
        return;
    }
    /* Other kinds press along the rotation the clamp made: rotation_vector(clamped·turned*). */
    double unturned[4], back[4], vector[3];
    qik_conj(turned, unturned);
    qik_mul(clamped, unturned, back);
    qik_rotation_vector(back, vector);
    unit_or_zero(vector, axes[0]);
    axes[1][0] = axes[1][1] = axes[1][2] = 0.0;
}

/* ---------------------------------------------------------------- the exported batches */

static int all_finite(const double *values, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(values[i]))
            return 0;
    return 1;
}

QIK_EXPORT int32_t qik_clamp(const qik_chain *chain, int64_t rows, double *rotations)
{
    if (!qik_chain_is_valid(chain) || rows < 0 || (rows > 0 && !rotations))
        return QIK_BAD_INPUT;
    int32_t status = QIK_OK, n = chain->n_bones;
    for (int64_t row = 0; row < rows; row++) {
        double *pose = rotations + row * n * 4;
        if (!all_finite(pose, (int64_t)n * 4)) {
            status = QIK_NOT_FINITE; /* the row is left as it came */
            continue;
        }
        for (int32_t bone = 0; bone < n; bone++) {
            double q[4];
            qik_copy4(q, pose + 4 * bone);
            qik_clamp_joint(chain, bone, q);
            if (is_finite4(q))
                qik_copy4(pose + 4 * bone, q);
            else
                status = QIK_NOT_FINITE; /* that bone is left as it came */
        }
    }
    return status;
}

QIK_EXPORT int32_t qik_violation(const qik_chain *chain, int64_t rows, const double *rotations, double *violation)
{
    if (!qik_chain_is_valid(chain) || rows < 0 || (rows > 0 && (!rotations || !violation)))
        return QIK_BAD_INPUT;
    int32_t status = QIK_OK, n = chain->n_bones;
    for (int64_t row = 0; row < rows; row++) {
        const double *pose = rotations + row * n * 4;
        double *outside = violation + row * n;
        int finite = all_finite(pose, (int64_t)n * 4);
        for (int32_t bone = 0; bone < n; bone++) {
            outside[bone] = finite ? qik_joint_violation(chain, bone, pose + 4 * bone) : NAN;
            if (!isfinite(outside[bone]))
                status = QIK_NOT_FINITE;
        }
    }
    return status;
}
