/* Vector and quaternion helpers for the kernel: solver/quaternion.py one value at a time.
 * Quaternions are double[4] (w, x, y, z); the formulas follow the numpy module's, named alike,
 * so a reader can set the two side by side. */
#ifndef QIK_MATH_H
#define QIK_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define QIK_PI 3.14159265358979323846
#define QIK_ANTIPARALLEL_EPSILON 1e-12 /* quaternion._ANTIPARALLEL_EPSILON */

static inline double qik_dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline double qik_dot4(const double a[4], const double b[4])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
}

static inline void qik_cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    out[0] = x;
    out[1] = y;
    out[2] = z;
}

static inline double qik_length3(const double v[3]) { return sqrt(qik_dot3(v, v)); }

static inline void qik_copy3(double out[3], const double v[3]) { memcpy(out, v, 3 * sizeof(double)); }
static inline void qik_copy4(double out[4], const double q[4]) { memcpy(out, q, 4 * sizeof(double)); }

/* quaternion.multiply (Hamilton product p·q); out may alias p or q. */
static inline void qik_mul(const double p[4], const double q[4], double out[4])
{
    double w = p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3];
    double x = p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2];
    double y = p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1];
    double z = p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0];
    out[0] = w;
    out[1] = x;
    out[2] = y;
    out[3] = z;
}

static inline void qik_conj(const double q[4], double out[4])
{
    out[0] = q[0];
    out[1] = -q[1];
    out[2] = -q[2];
    out[3] = -q[3];
}

/* quaternion.normalize: a zero quaternion becomes the identity. */
static inline void qik_normalize(double q[4])
{
    double n = sqrt(qik_dot4(q, q));
    if (n > 1e-300) {
        q[0] /= n;
        q[1] /= n;
        q[2] /= n;
        q[3] /= n;
    } else {
        q[0] = 1.0;
        q[1] = q[2] = q[3] = 0.0;
    }
}

/* quaternion.canonical: w >= 0. */
static inline void qik_canonical(double q[4])
{
    if (q[0] < 0.0) {
        q[0] = -q[0];
        q[1] = -q[1];
        q[2] = -q[2];
        q[3] = -q[3];
    }
}

/* quaternion.rotate: q·v·q* for a unit q (v + 2w(u×v) + 2u×(u×v)); out may alias v. */
static inline void qik_rotate(const double q[4], const double v[3], double out[3])
{
    const double *u = q + 1;
    double t[3], s[3];
    qik_cross(u, v, t);
    t[0] *= 2.0;
    t[1] *= 2.0;
    t[2] *= 2.0;
    qik_cross(u, t, s);
    out[0] = v[0] + q[0] * t[0] + s[0];
    out[1] = v[1] + q[0] * t[1] + s[1];
    out[2] = v[2] + q[0] * t[2] + s[2];
}

/* quaternion.rotate_y_axis: q·ŷ. */
static inline void qik_rotate_y_axis(const double q[4], double out[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    out[0] = 2.0 * (x * y - w * z);
    out[1] = w * w - x * x + y * y - z * z; /* as the numpy module forms it */
    out[2] = 2.0 * (y * z + w * x);
}

/* fmod(x, 2pi) to the bit without the library call for |x| < 4pi, the angles the solver forms
 * (a wrapped angle's sums and twice an atan2). fmod is exact, and so is x ∓ 2pi there (Sterbenz
 * 1974: y/2 <= x <= 2y gives x - y exactly); its result takes x's sign, -0 included. */
static inline double qik_fmod_turn(double x)
{
    const double turn = 2.0 * QIK_PI;
    if (x >= 0.0) {
        if (x < turn)
            return x;
        if (x < 2.0 * turn)
            return x - turn;
    } else if (x < 0.0) {
        if (x > -turn)
            return x;
        if (x > -2.0 * turn) {
            double r = x + turn;
            return r == 0.0 ? -0.0 : r;
        }
    }
    return fmod(x, turn);
}

/* quaternion.wrap_angle: into (-pi, pi]. */
static inline double qik_wrap_angle(double angle)
{
    double wrapped = qik_fmod_turn(angle + QIK_PI);
    if (wrapped < 0.0)
        wrapped += 2.0 * QIK_PI; /* numpy's mod takes the divisor's sign */
    wrapped -= QIK_PI;
    return wrapped == -QIK_PI ? QIK_PI : wrapped;
}

/* quaternion.from_axis_angle (unit axis). */
static inline void qik_from_axis_angle(const double axis[3], double angle, double out[4])
{
    double s = sin(0.5 * angle);
    out[0] = cos(0.5 * angle);
    out[1] = axis[0] * s;
    out[2] = axis[1] * s;
    out[3] = axis[2] * s;
}

/* quaternion.any_perpendicular: v crossed with the axis least aligned with it, unit. */
static inline void qik_any_perpendicular(const double v[3], double out[3])
{
    static const double x_axis[3] = {1.0, 0.0, 0.0}, z_axis[3] = {0.0, 0.0, 1.0};
    qik_cross(v, fabs(v[0]) <= fabs(v[2]) ? x_axis : z_axis, out);
    double n = qik_length3(out);
    n = n > 1e-300 ? n : 1e-300;
    out[0] /= n;
    out[1] /= n;
    out[2] /= n;
}

/* quaternion.rotation_between: the shortest-arc rotation taking a onto b (Blow 2002, Listing 1). */
static inline void qik_rotation_between(const double a[3], const double b[3], double out[4])
{
    double norm_ab = sqrt(qik_dot3(a, a) * qik_dot3(b, b));
    double dot = qik_dot3(a, b);
    double across[3];
    qik_cross(a, b, across);
    double cross_squared = qik_dot3(across, across);
    double denominator = norm_ab - dot > 1e-300 ? norm_ab - dot : 1e-300;
    double real = dot >= 0.0 ? norm_ab + dot : cross_squared / denominator;
    double threshold = QIK_ANTIPARALLEL_EPSILON * norm_ab;
    if (dot < 0.0 && cross_squared <= threshold * threshold) {
        qik_any_perpendicular(a, across);
        real = 0.0;
    }
    out[0] = real;
    out[1] = across[0];
    out[2] = across[1];
    out[3] = across[2];
    if (norm_ab <= 1e-300)
        out[0] = out[1] = out[2] = out[3] = 0.0;
    qik_normalize(out);
}

/* quaternion._simple_from_y: rotation_from_y's unnormalised (w, x, z) and whether d is -Y. */
static inline int qik_simple_from_y(const double d[3], double *real, double *x, double *z)
{
    double across_squared = d[0] * d[0] + d[2] * d[2];
    double below = 1.0 - d[1] > 1e-300 ? 1.0 - d[1] : 1e-300;
    *real = d[1] >= 0.0 ? 1.0 + d[1] : across_squared / below;
    *x = d[2];
    *z = -d[0];
    return d[1] < 0.0 && across_squared <= QIK_ANTIPARALLEL_EPSILON * QIK_ANTIPARALLEL_EPSILON;
}

/* quaternion.rotation_from_y: Blow's S taking +Y onto the unit d (180° about +Z for -Y). */
static inline void qik_rotation_from_y(const double d[3], double out[4])
{
    double real, x, z;
    if (qik_simple_from_y(d, &real, &x, &z)) {
        out[0] = out[1] = out[2] = 0.0;
        out[3] = 1.0;
        return;
    }
    out[0] = real;
    out[1] = x;
    out[2] = 0.0;
    out[3] = z;
    qik_normalize(out);
}

/* quaternion.from_swing_twist_y: S(d)·T_y(twist). */
static inline void qik_from_swing_twist_y(const double d[3], double twist, double out[4])
{
    double half = 0.5 * twist, c = cos(half), s = sin(half);
    double real, x, z;
    if (qik_simple_from_y(d, &real, &x, &z)) {
        real = 0.0;
        x = 0.0;
        z = 1.0;
    }
    double scale = 1.0 / sqrt(real * real + x * x + z * z);
    real *= scale;
    x *= scale;
    z *= scale;
    out[0] = real * c;
    out[1] = x * c - z * s;
    out[2] = real * s;
    out[3] = x * s + z * c;
}

/* quaternion.swing_twist_y: the bone direction q·ŷ and the twist about it, in (-pi, pi]. */
static inline double qik_swing_twist_y(const double q[4], double direction[3])
{
    qik_rotate_y_axis(q, direction);
    double twist = 2.0 * atan2(q[2], q[0]);
    if (q[0] * q[0] + q[2] * q[2] < 1e-20) {
        double swing[4], twist_q[4];
        qik_rotation_from_y(direction, swing);
        qik_conj(swing, swing);
        qik_mul(swing, q, twist_q);
        twist = 2.0 * atan2(twist_q[2], twist_q[0]);
    }
    return qik_wrap_angle(twist);
}

/* quaternion.twist_about: the angle of the rotation about the unit axis nearest q. */
static inline double qik_twist_about(const double q[4], const double axis[3])
{
    return qik_wrap_angle(2.0 * atan2(qik_dot3(q + 1, axis), q[0]));
}

/* quaternion.angle_between: the angle of p⁻¹·q, in [0, pi]. */
static inline double qik_angle_between(const double p[4], const double q[4])
{
    double conj[4], relative[4];
    qik_conj(p, conj);
    qik_mul(conj, q, relative);
    return 2.0 * atan2(qik_length3(relative + 1), fabs(relative[0]));
}

/* solve.pose_distance: the largest joint angle between two poses of n joints (NaN as numpy's max). */
static inline double qik_pose_distance(const double *a, const double *b, int32_t n)
{
    double largest = 0.0;
    for (int32_t i = 0; i < n; i++) {
        double angle = qik_angle_between(a + 4 * i, b + 4 * i);
        if (angle > largest || isnan(angle))
            largest = angle;
    }
    return largest;
}

/* quaternion.direction_angle: the angle between two directions, in [0, pi]. */
static inline double qik_direction_angle(const double a[3], const double b[3])
{
    double across[3];
    qik_cross(a, b, across);
    return atan2(qik_length3(across), qik_dot3(a, b));
}

/* quaternion.rotation_vector: axis × angle of a unit quaternion, the shorter way round. */
static inline void qik_rotation_vector(const double q_in[4], double out[3])
{
    double q[4];
    qik_copy4(q, q_in);
    qik_canonical(q);
    double half = atan2(qik_length3(q + 1), q[0]);
    double sin_half = sin(half);
    double scale = sin_half > 1e-12 ? 2.0 * half / sin_half : 2.0;
    out[0] = q[1] * scale;
    out[1] = q[2] * scale;
    out[2] = q[3] * scale;
}

/* quaternion.from_rotation_vector: the exp map. */
static inline void qik_from_rotation_vector(const double v[3], double out[4])
{
    double angle = qik_length3(v);
    double scale = angle > 1e-8 ? sin(0.5 * angle) / angle : 0.5;
    out[0] = cos(0.5 * angle);
    out[1] = v[0] * scale;
    out[2] = v[1] * scale;
    out[3] = v[2] * scale;
}

/* quaternion.slerp_from_identity: q^fraction, the shortest way round, normalised. */
static inline void qik_slerp_from_identity(const double q_in[4], double fraction, double out[4])
{
    double q[4];
    qik_copy4(q, q_in);
    qik_canonical(q);
    double half = atan2(qik_length3(q + 1), q[0]);
    double sin_half = sin(half);
    double scale = sin_half > 1e-12 ? sin(fraction * half) / sin_half : fraction;
    out[0] = cos(fraction * half);
    out[1] = q[1] * scale;
    out[2] = q[2] * scale;
    out[3] = q[3] * scale;
    qik_normalize(out);
}

#endif
