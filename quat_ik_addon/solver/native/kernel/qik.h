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

#define QIK_INTERFACE_VERSION 4

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

/* Which rows a restart round hands a candidate (solve._restart): one that meets the goal always; else,
 * without a reference pose, a closer miss; with one, a miss closer by ``switch_gain``, or never. */
enum { QIK_TAKE_CLOSER = 0, QIK_TAKE_GAIN = 1, QIK_TAKE_MET = 2 };

/* solve._restart's round: the ``unmet`` rows of a batch of ``rows`` each get ``candidates`` starts. */
typedef struct {
    int64_t rows;
    double *rotations;          /* (rows, n, 4) in/out: a row that takes a candidate gets its answer */
    double *position_error;     /* (rows) in/out: the errors of ``rotations`` */
    double *orientation_error;  /* (rows) in/out */
    int64_t *iterations;        /* (rows) in/out: every candidate's iterations added to its row */
    const double *reference;    /* (rows, n, 4) or NULL: a met candidate nearest it wins */
    const double *preferred;    /* (rows, n, 4) or NULL */
    int64_t unmet;
    const int64_t *unmet_rows;  /* (unmet) in [0, rows) */
    int64_t candidates;
    double *starts;             /* (unmet * candidates, n, 4), a row's together: in the starts (inside the
                                 * limits), out each candidate's answer */
    int32_t take_rule;          /* QIK_TAKE_* */
    int32_t reserved;
    double switch_gain;         /* QIK_TAKE_GAIN's margin */
    double tie;                 /* values this close are ties, and the first candidate wins */
    uint8_t *taken;             /* (unmet) out: whether the row took a candidate */
} qik_restart_request;

/* Every candidate solved with ``settings`` (the round's budget), ranked per row as solve._restart
 * ranks them (met first, then nearest the reference, else the smallest combined error) and taken by
 * the rule. Where a candidate's answer is not finite, nothing is written (QIK_NOT_FINITE). */
QIK_EXPORT int32_t qik_restart_round(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                     const qik_restart_request *round);

/* measurements.goal_errors: each row's pose (rotations (rows, n, 4)) measured against its goal by
 * forward kinematics: position error, orientation error (radians) and effector (rows, 3). */
QIK_EXPORT int32_t qik_measure(const qik_chain *chain, const qik_goals *goals, int64_t rows, const double *rotations,
                               double *position_error, double *orientation_error, double *effector);

/* solve.pose_distance: per row, the largest joint angle (radians) between poses a and b (rows, n, 4);
 * NaN where an angle is NaN, as numpy's max. */
QIK_EXPORT int32_t qik_pose_distance_rows(int32_t n_bones, int64_t rows, const double *a, const double *b,
                                          double *distance);

/* free_twist.carry_tip_twist then within_tip_twist_range: each row's tip (rotations (rows, n, 4),
 * in place) turned from its start (starts (rows, n, 4)) along the shortest arc to where it
 * points now (Blow 2002's simple rotation), w >= 0, then its twist brought into a ball joint's
 * twist range, the direction kept. */
QIK_EXPORT int32_t qik_carry_tip_twist(const qik_chain *chain, int64_t rows, double *rotations, const double *starts);

/* qik_solve's arguments in one struct: a single solve (a Live update's) is a few microseconds
 * of work, and passing twelve arguments through ctypes cost as much; the Python side keeps one
 * such struct per chain and thread, pointing into buffers that live as long as it does. */
typedef struct {
    const qik_chain *chain;
    const qik_goals *goals;
    const qik_settings *settings;
    int64_t rows;
    double *starts;            /* (rows, n, 4), brought inside the limits in place */
    double *rotations;         /* (rows, n, 4) out */
    const double *preferred;   /* (rows, n, 4) or NULL */
    int32_t carry_tip_twist;   /* 0 or 1 */
    int32_t reserved;
    int64_t *iterations;       /* (rows) out */
    double *position_error;    /* (rows) out */
    double *orientation_error; /* (rows) out */
    double *effector;          /* (rows, 3) out */
    uint8_t *met;              /* (rows) out: 1 where the answer meets its goal (settings' tolerances) */
} qik_solve_call;

/* solve.solve's common case in one call: each row's start brought inside the limits, the method
 * run from it into ``rotations``, the answer made unit with w >= 0 (solve._restarted_result's
 * finish, measured again where normalising moved it), and with ``carry_tip_twist`` the tip's
 * unseen twist carried from its start (qik_carry_tip_twist). Restarts stay with the caller.
 * Outputs as qik_run_method's, and whether each answer meets its goal. */
QIK_EXPORT int32_t qik_solve(const qik_solve_call *call);

/* A shot being solved (sequence._Frames): per frame of the shot (``frames`` rows, in the goals'
 * row order) its pose and whether it met its goal, and the record of every solve: iterations
 * added up, and the latest answer with its goal errors. The shot's entry points below write it
 * in place: QIK_BAD_INPUT comes before any write (the shot is as it was), and a step whose solve
 * is not finite is a miss that writes nothing (QIK_NOT_FINITE at the end, the shot still finite). */
typedef struct {
    int64_t frames;
    double *rotations;                /* (frames, n, 4) */
    uint8_t *met;                     /* (frames) 0 or 1 */
    uint8_t *solved;                  /* (frames) 0 or 1: has a pose */
    int64_t *iterations;              /* (frames) */
    double *answers;                  /* (frames, n, 4) */
    double *answer_position_error;    /* (frames) */
    double *answer_orientation_error; /* (frames) */
    double *answer_effector;          /* (frames, 3) */
} qik_shot;

/* sequence._walk_out: walkers step from their seeds (positions in ``order``) one frame at a
 * time in their direction, into frames that missed their goals, no further than ``until``;
 * each step solved warm from the walker's last pose (with met_settings where that met its
 * goal, else tracking_settings), kept where it meets the goal or misses by ``margin`` less
 * than the frame's pose (and, of walkers on one frame, the one that met, else missed by less),
 * and only kept steps walk on. All side by side, a step at a time, as the numpy loop. */
typedef struct {
    int64_t order_count;
    const int64_t *order;      /* (order_count) frames, in [0, shot frames) */
    int64_t walkers;
    const int64_t *seeds;      /* (walkers) positions */
    const int64_t *directions; /* (walkers) -1 or +1 */
    const int64_t *until;      /* (walkers) the last position each may step onto */
    double margin;
} qik_walk_request;

QIK_EXPORT int32_t qik_walk_out(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                                const qik_settings *tracking_settings, const qik_shot *shot,
                                const qik_walk_request *walk);

/* sequence._follow: pieces side by side, a followed frame a step: piece k follows the followed
 * frames from index begins[k] to ends[k] (either way), each step solved warm from the one before
 * (met_settings where that met its goal, else tracking_settings), starting from pose[k]. The
 * poses strictly between go to ``poses`` and ``poses_met`` by followed index; pose[k] and met[k]
 * end as the piece's arrival. The shot records every solve. */
typedef struct {
    int64_t followed_count;
    const int64_t *followed; /* (followed_count) frames, in [0, shot frames) */
    int64_t pieces;
    const int64_t *begins;   /* (pieces) followed indices */
    const int64_t *ends;
    double *pose;            /* (pieces, n, 4) in: starts; out: arrivals */
    uint8_t *met;            /* (pieces) in: the starts met theirs; out: the arrivals */
    double *poses;           /* (followed_count, n, 4) out, between begins and ends */
    uint8_t *poses_met;      /* (followed_count) out, alike */
} qik_follow_request;

QIK_EXPORT int32_t qik_follow(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                              const qik_settings *tracking_settings, const qik_shot *shot,
                              const qik_follow_request *follow);

/* sequence._repair_jumps along ``order``: jumps between frames that both met their goals carried
 * and blended away (sequence._carry, _blend_jumps), then the visible ones left carried through. */
typedef struct {
    int64_t order_count;
    const int64_t *order; /* (order_count) frames: increasing, in [0, shot frames) */
    int64_t carry_frames; /* sequence.CARRY_FRAMES */
    int64_t blend_rounds; /* sequence.BLEND_ROUNDS */
    double jump_slack;    /* pose_jumps.JUMP_SLACK */
    double visible_jump;  /* pose_jumps.VISIBLE_JUMP (radians) */
} qik_repair_request;

/* The numpy loop's steps and keeps in its order, each carry and blend solved with ``settings`` (no
 * restarts). QIK_BAD_INPUT before any write; memory running out part way ends the repair where it
 * is, the shot consistent (QIK_NOT_FINITE, as for a step that came out non-finite). */
QIK_EXPORT int32_t qik_repair_jumps(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                                    const qik_shot *shot, const qik_repair_request *repair);

/* sequence._fill_between: the frames between followed ones, each solved from its guess (as solve.solve
 * does: the guess clamped, the tip's unseen twist carried with ``carry_tip_twist``) with met_settings
 * where both followed neighbours met their goals, else tracking_settings; a row that misses though
 * both met is solved again from the nearer neighbour's pose (met_settings), kept where it meets; a
 * tracked row missing by more than ``margin`` beyond both neighbours' misses is solved again from
 * the nearer one (tracking_settings), kept where it meets or misses by less. Every solve recorded,
 * then each row's pose and verdict written. */
typedef struct {
    int64_t followed_count;
    const int64_t *followed; /* (followed_count) frames, increasing, in [0, shot frames) */
    int64_t between_count;
    const int64_t *between;  /* (between_count) frames, increasing, each strictly between two followed ones */
    const double *guesses;   /* (between_count, n, 4) where each starts (pose_curves.between_poses) */
    int32_t carry_tip_twist;
    int32_t reserved;
    double margin;           /* sequence.SWITCH_GAIN times the reach */
} qik_fill_request;

QIK_EXPORT int32_t qik_fill_between(const qik_chain *chain, const qik_goals *goals, const qik_settings *met_settings,
                                    const qik_settings *tracking_settings, const qik_shot *shot,
                                    const qik_fill_request *fill);

/* free_twist.carry_tip_twist_along then within_tip_twist_range: a shot's poses (rotations (frames,
 * n, 4), in place) whose tip turns from ``start``'s (n, 4) to each frame's direction along the
 * shortest arc from the frame before, its twist then brought into a ball joint's twist range. */
QIK_EXPORT int32_t qik_carry_tip_twist_along(const qik_chain *chain, int64_t frames, double *rotations,
                                             const double *start);

/* ---------------------------------------------------------------- whole bodies (kernel/body.c) */

/* What a body task asks (solver/body/goals.py Tasks): a position, and an orientation or a direction. */
enum { QIK_TASK_POSITION = 1, QIK_TASK_ORIENTATION = 2, QIK_TASK_DIRECTION = 4 };

/* A body (solver/body/skeleton.py): bones listed parents first, their rest frames, shares and
 * stretch ranges as the numpy Body gives them, and its joints' limits as a chain's limit table. */
typedef struct {
    int32_t n_bones;
    int32_t n_stretchy;           /* body.stretchy_bones */
    const int32_t *parents;       /* (n) -1, or a bone listed before */
    const int32_t *stretchy;      /* (n_stretchy) bone indices */
    const double *rest_rotations; /* (n, 4) unit */
    const double *rest_offsets;   /* (n, 3) */
    const double *lengths;        /* (n) */
    const double *turn_shares;    /* (n) body.turn_shares: 1 - stiffness, 0 for a fixed joint */
    const double *hinge_axes;     /* (n, 3) a one-degree joint's axis (rest frame); zero elsewhere */
    const double *stretch_low;    /* (n) body.stretch_bounds */
    const double *stretch_high;   /* (n) */
    const double *stretch_shares; /* (n) 1 - stretch stiffness, 0 where a bone keeps its length */
    const qik_chain *limits;      /* the joints' limits (only joints, windows, corners are read) */
    double size;                  /* body.size */
} qik_body;

/* A body's goals and pins for ``rows`` goal sets (goals.Tasks): pins first, then goals. */
typedef struct {
    int32_t n_tasks;
    int32_t n_levels;                  /* len(tasks.levels), the pins' level first if any */
    const int32_t *bones;              /* (T) */
    const int32_t *flags;              /* (T) QIK_TASK_* */
    const int32_t *level_of;           /* (T) in [0, n_levels) */
    const double *points;              /* (T, 3) in the bone's frame from its head, unstretched */
    const double *aim_axes;            /* (T, 3) unit */
    const double *position_weights;    /* (T) */
    const double *orientation_weights; /* (T) */
    const double *positions;           /* (rows, T, 3), read where QIK_TASK_POSITION */
    const double *orientations;        /* (rows, T, 4) unit, read where QIK_TASK_ORIENTATION */
    const double *directions;          /* (rows, T, 3) unit, read where QIK_TASK_DIRECTION */
} qik_body_tasks;

/* One stage of body/solve.py's ``_stage``: its iterations, then the polish. */
typedef struct {
    int32_t max_iterations;
    int32_t polish_iterations;
    int32_t stall_iterations;
    int32_t lean;              /* every step pulls only the levels down to the first unmet */
    int32_t use_stretch;       /* the stretchy bones stretch, with a last level back to rest */
    int32_t reserved;
    double damping;            /* lambda's start, absolute (settings.damping * size) */
    double stall_ratio;
    double noticeable;         /* distance tolerance^2: a gain this small is rounding */
    double creep;              /* step_accepted's creep for levels that have not settled */
    double working_tolerance;  /* settings.working_tolerances(size) */
    double working_angle_tolerance;
    double tolerance;          /* settings.tolerances(size) */
    double angle_tolerance;
} qik_body_settings;

/* body/solve.py's _stage for each row: rotations (rows, n, 4) (inside the limits) and stretch
 * (rows, n) in place, iterations (rows) out, and excess (rows, n_levels + 1) out: each level's
 * excess over the strict tolerances at the returned pose, then the stretch level's (0 without
 * stretch). A row whose answer is not finite is left as it came (QIK_NOT_FINITE). */
QIK_EXPORT int32_t qik_body_stage(const qik_body *body, const qik_body_tasks *tasks, const qik_body_settings *settings,
                                  int64_t rows, double *rotations, double *stretch, int64_t *iterations,
                                  double *excess);

/* goals.task_errors: each task's position error and orientation error (radians) at the poses
 * rotations (rows, n, 4) and stretch (rows, n), into (rows, n_tasks) each; 0 for what a task does
 * not ask. A row whose pose or targets are not finite gets NaN, and QIK_NOT_FINITE says that a row's
 * errors are not finite. */
QIK_EXPORT int32_t qik_body_task_errors(const qik_body *body, const qik_body_tasks *tasks, int64_t rows,
                                        const double *rotations, const double *stretch, double *position_error,
                                        double *orientation_error);

#endif
