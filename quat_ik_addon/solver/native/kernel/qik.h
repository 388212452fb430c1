/* quat-ik's native kernel: the plain C ABI that solver/native/binding.py loads with ctypes.
 *
 * The numpy solver (quat_ik_addon/solver) is the reference: every function here answers what
 * its numpy namesake answers, to rounding. Arrays cross by pointer, C-contiguous float64 unless
 * said otherwise; quaternions are (w, x, y, z) as everywhere in the project. Nothing here keeps
 * state between calls, allocates memory that outlives a call, or exits: a bad input the Python
 * side failed to catch gives a non-zero status, never a crash. Rows of a batch are independent
 * (the numpy solver's active sets never mix rows), so a call loops over rows.
 *
 * Bump QIK_INTERFACE_VERSION whenever a struct or a signature below changes: the binding
 * refuses a library built for another version and falls back to numpy.
 */
#ifndef QIK_H
#define QIK_H

#include <stdint.h>

#define QIK_INTERFACE_VERSION 1

#if defined(_WIN32)
#define QIK_EXPORT __declspec(dllexport)
#else
#define QIK_EXPORT __attribute__((visibility("default")))
#endif

/* Status codes every entry point returns. */
enum {
    QIK_OK = 0,
    QIK_BAD_INPUT = 1, /* a count, kind or pointer the Python side should have refused */
    QIK_NOT_FINITE = 2 /* a NaN or infinity reached an output; the row was left as it came */
};

/* Joint kinds (solver/limits.py). */
enum { QIK_FREE = 0, QIK_FIXED = 1, QIK_HINGE = 2, QIK_BALL = 3 };

/* qik_joint.flags */
enum {
    QIK_HAS_RANGE = 1,         /* hinge: angle_range; ball: twist_range (not a full circle) */
    QIK_BOUNDARY_MODE = 2,     /* ball: clamp_mode "boundary" (else "closest") */
    QIK_FAST_PATHS = 4,        /* ball: use_fast_paths (Blow's early-accept cone first) */
    QIK_TWIST_REFERENCE = 8    /* ball: twist measured on twist_reference·q */
};

/* Window kinds (solver/reach_windows.py). */
enum { QIK_CONE = 0, QIK_ELLIPSE = 1, QIK_POLYGON = 2 };

typedef struct {
    int32_t kind;         /* QIK_FREE ... QIK_BALL */
    int32_t flags;        /* QIK_HAS_RANGE | ... */
    int32_t window_first; /* ball: its windows are windows[window_first .. +window_count) */
    int32_t window_count; /* 0: free swing */
    double stiffness;     /* the limit's own stiffness, as CCD's step_towards reads it */
    double share;         /* chain.step_shares[i] (1 - stiffness clamped to [0, 1]; fixed: 1) */
    double axis[3];       /* hinge: unit axis in the bone's rest frame */
    double range_min;     /* hinge angle range or ball twist range (radians), when QIK_HAS_RANGE */
    double range_max;
    double twist_reference[4]; /* ball with QIK_TWIST_REFERENCE: unit quaternion M */
} qik_joint;

typedef struct {
    int32_t kind;         /* QIK_CONE, QIK_ELLIPSE, QIK_POLYGON */
    int32_t orthonormal;  /* ellipse: plane_x, plane_y, center orthonormal (else: scanned rim) */
    int32_t corner_first; /* polygon: corners[corner_first .. +corner_count) */
    int32_t corner_count;
    double center[3];     /* unit */
    double plane_x[3];    /* ellipse, polygon: unit */
    double plane_y[3];
    double half_angle;    /* cone: radians in (0, pi] */
    double radii[2];      /* ellipse: tan of its half-angles */
    double accept_axis[3];/* Blow's inscribed cone: axis and cosine */
    double accept_cos;
    double reference[3];  /* the window's reference direction (start of the boundary arc) */
} qik_window;

typedef struct {
    int32_t n_bones;
    int32_t n_windows;
    int32_t n_corners;
    int32_t has_shares;        /* chain.step_shares is not None (some joint is stiff or fixed) */
    const double *rest_rotations;    /* (n, 4) L_i's rotation */
    const double *rest_offsets;      /* (n, 3) L_i's offset (head in the parent's rest frame) */
    const double *step_vectors;      /* (n, 3) rest_offsets[1:], then the tip vector */
    const qik_joint *joints;         /* (n) */
    const qik_window *windows;       /* (n_windows) */
    const double *corner_directions; /* (n_corners, 3) polygon corners, unit, inward winding */
    const double *edge_normals;      /* (n_corners, 3) unit, pointing inwards */
    double reach;
} qik_chain;

/* Goal kinds (solver/goals.py). */
enum { QIK_POSITION = 0, QIK_ORIENTATION = 1, QIK_DIRECTION = 2 };

typedef struct {
    int32_t kind;
    int32_t reserved;
    const double *positions;    /* (rows, 3) */
    const double *orientations; /* (rows, 4) unit, or NULL */
    const double *directions;   /* (rows, 3) unit, or NULL */
    double aim_axis[3];         /* unit, tip bone frame */
    double position_weight;
    double orientation_weight;
} qik_goals;

/* Methods (solver/settings.py METHODS) and sweep orders. */
enum { QIK_CCD = 0, QIK_DLS = 1, QIK_CCD_DLS = 2, QIK_DLS_CCD = 3, QIK_TRANSPOSE = 4 };
enum { QIK_TIP_TO_BASE = 0, QIK_BASE_TO_TIP = 1 };

typedef struct {
    int32_t method;
    int32_t order;
    int32_t max_iterations;
    int32_t stall_iterations;
    int32_t ccd_iterations_before_dls;
    int32_t finish_max_iterations;   /* dls_ccd: CCD finishing's budget (solve._finishing) */
    int32_t finish_stall_iterations;
    int32_t reserved;
    double tolerance;          /* absolute position tolerance */
    double angle_tolerance;    /* radians */
    double stall_ratio;
    double finish_stall_ratio;
    double damping;            /* DLS's starting lambda, absolute (settings.damping * reach) */
    double rest_pull;          /* 0: no pull; else needs preferred poses */
} qik_settings;

/* The interface version this library was built with (QIK_INTERFACE_VERSION). */
QIK_EXPORT int32_t qik_interface_version(void);

/* chain.clamp_to_limits: rotations (rows, n, 4) brought inside every joint's limit, in place. */
QIK_EXPORT int32_t qik_clamp(const qik_chain *chain, int64_t rows, double *rotations);

/* chain.limit_violation: radians outside each joint's limit, (rows, n). */
QIK_EXPORT int32_t qik_violation(const qik_chain *chain, int64_t rows, const double *rotations, double *violation);

/* solve.run_method: the configured method on (rows, n, 4) start poses (inside the limits),
 * in place; preferred (rows, n, 4) or NULL. Outputs per row: iterations, and goal_errors of
 * the returned poses (position error, orientation error, effector (rows, 3)). */
QIK_EXPORT int32_t qik_run_method(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                  int64_t rows, double *rotations, const double *preferred, int64_t *iterations,
                                  double *position_error, double *orientation_error, double *effector);

/* free_twist.carry_tip_twist then within_tip_twist_range: each row's tip (rotations (rows, n, 4),
 * in place) turned from its start (starts (rows, n, 4)) along the shortest arc to where it
 * points now (Blow 2002's simple rotation), w >= 0, then its twist brought into a ball joint's
 * twist range, the direction kept. */
QIK_EXPORT int32_t qik_carry_tip_twist(const qik_chain *chain, int64_t rows, double *rotations, const double *starts);

/* solve.solve's common case in one call: each row's start (starts (rows, n, 4), in place) brought
 * inside the limits, the method run from it into ``rotations`` (rows, n, 4), the answer made unit
 * with w >= 0 (solve._restarted_result's finish, measured again where normalising moved it),
 * and with ``carry_tip_twist`` the tip's unseen twist carried from its start (qik_carry_tip_twist).
 * Restarts stay with the caller. Outputs as qik_run_method's. */
QIK_EXPORT int32_t qik_solve(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings, int64_t rows,
                             double *starts, double *rotations, const double *preferred, int32_t carry_tip_twist,
                             int64_t *iterations, double *position_error, double *orientation_error, double *effector);

#endif
