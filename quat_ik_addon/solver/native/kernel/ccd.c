/* Quaternion Cyclic Coordinate Descent for one row (solver/ccd.py, alignment.py; Blow 2002). */
#include "limits.h"
#include "qik_math.h"
#include "solve.h"

#define MAX_PAIRS 3 /* the effector pair and at most two tip axes (goals.tip_axis_pairs) */

/* The eigenvector of the largest eigenvalue of a symmetric 4×4 matrix, by cyclic Jacobi
 * rotations (Golub & Van Loan, "Matrix Computations", §8.5). */
static void largest_eigenvector(double k[4][4], double out[4])
{
    double v[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = 0.0, scale = 0.0;
        for (int p = 0; p < 4; p++)
            for (int r = 0; r < 4; r++) {
                if (p == r)
                    scale += k[p][r] * k[p][r];
                else
                    off += k[p][r] * k[p][r];
            }
        if (off <= 1e-30 * scale || off == 0.0)
            break;
        for (int p = 0; p < 3; p++)
            for (int r = p + 1; r < 4; r++) {
                if (k[p][r] == 0.0)
                    continue;
                double theta = (k[r][r] - k[p][p]) / (2.0 * k[p][r]);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int j = 0; j < 4; j++) { /* K ← Jᵀ K J, columns then rows */
                    double kp = k[j][p], kr = k[j][r];
                    k[j][p] = c * kp - s * kr;
                    k[j][r] = s * kp + c * kr;
                }
                for (int j = 0; j < 4; j++) {
                    double kp = k[p][j], kr = k[r][j];
                    k[p][j] = c * kp - s * kr;
                    k[r][j] = s * kp + c * kr;
                }
                for (int j = 0; j < 4; j++) {
                    double vp = v[j][p], vr = v[j][r];
                    v[j][p] = c * vp - s * vr;
                    v[j][r] = s * vp + c * vr;
                }
            }
    }
    int best = 0;
    for (int j = 1; j < 4; j++)
        if (k[j][j] > k[best][best])
            best = j;
    for (int j = 0; j < 4; j++)
        out[j] = v[j][best];
}

/* alignment.best_turn: the rotation maximising Σ w b·(R a) (Davenport's q-method; one pair:
 * the shortest arc, Blow 2002 Listing 1). */
static void best_turn(int pairs, const double now[][3], const double wanted[][3], const double *weights, double out[4])
{
    if (pairs == 1) {
        qik_rotation_between(now[0], wanted[0], out);
        return;
    }
    double k[4][4] = {{0}};
    for (int p = 0; p < pairs; p++) {
        /* b·(R a) = (w² − |v|²)(a·b) + 2(v·a)(v·b) + 2w v·(a×b) as a quadratic form in (w, v). */
        const double *a = now[p], *b = wanted[p];
        double w = weights[p], dot = qik_dot3(a, b), across[3];
        qik_cross(a, b, across);
        k[0][0] += w * dot;
        for (int i = 0; i < 3; i++) {
            k[0][i + 1] += w * across[i];
            k[i + 1][0] += w * across[i];
            for (int j = 0; j < 3; j++)
                k[i + 1][j + 1] += w * (a[i] * b[j] + a[j] * b[i] - (i == j ? dot : 0.0));
        }
    }
    largest_eigenvector(k, out);
    qik_normalize(out);
    qik_canonical(out);
}

/* alignment.best_hinge_turn: the angle about the unit axis maximising Σ w b·(R a), atan2(B, A). */
static double best_hinge_turn(const double axis[3], int pairs, const double now[][3], const double wanted[][3],
                              const double *weights)
{
    double cosine = 0.0, sine = 0.0;
    for (int p = 0; p < pairs; p++) {
        double a[3], b[3], across[3], an = qik_dot3(now[p], axis), bn = qik_dot3(wanted[p], axis);
        for (int i = 0; i < 3; i++) {
            a[i] = now[p][i] - an * axis[i];
            b[i] = wanted[p][i] - bn * axis[i];
        }
        qik_cross(a, b, across);
        cosine += weights[p] * qik_dot3(a, b);
        sine += weights[p] * qik_dot3(across, axis);
    }
    return atan2(sine, cosine);
}

/* limit.step_towards: one joint's CCD step, then its limit (limits.py). */
static void step_towards(const qik_chain *chain, int32_t bone, const double q[4], int pairs, const double now[][3],
                         const double wanted[][3], const double *weights, double out[4])
{
    const qik_joint *joint = chain->joints + bone;
    if (joint->kind == QIK_FIXED) {
        qik_copy4(out, q);
        qik_clamp_joint(chain, bone, out);
        return;
    }
    if (joint->kind == QIK_HINGE) {
        /* The exact coordinate-descent step for one revolute DoF (van den Bergen 2014). */
        double turn = best_hinge_turn(joint->axis, pairs, now, wanted, weights);
        double angle = qik_twist_about(q, joint->axis) + (1.0 - joint->stiffness) * turn;
        qik_from_axis_angle(joint->axis, angle, out);
        qik_clamp_joint(chain, bone, out); /* measures the angle again: the range, or a wrap */
        return;
    }
    /* Free and ball joints: the best turn, scaled by 1 − stiffness (Zhong 2000), before q. */
    double turn[4];
    best_turn(pairs, now, wanted, weights, turn);
    if (joint->stiffness > 0.0)
        qik_slerp_from_identity(turn, 1.0 - joint->stiffness, turn);
    qik_mul(turn, q, out);
    qik_clamp_joint(chain, bone, out);
}

typedef struct {
    const qik_chain *chain;
    const qik_row_goal *goal;
    const double *preferred; /* (n, 4) or NULL */
    double pull;             /* the fading pull towards ``preferred`` (0: none) */
    double weights[MAX_PAIRS];
} sweep_inputs;

/* ccd._Sweep.joint_step: turn joint ``bone``; moves ``effector`` and ``tip`` with it. */
static void joint_step(const sweep_inputs *sweep, int32_t bone, double *q, const double pre[4], const double head[3],
                       double effector[3], double tip[4])
{
    const qik_row_goal *goal = sweep->goal;
    double to_local[4], now[MAX_PAIRS][3], wanted[MAX_PAIRS][3];
    qik_conj(pre, to_local);
    int pairs = 1;
    for (int i = 0; i < 3; i++) {
        now[0][i] = effector[i] - head[i];
        wanted[0][i] = goal->position[i] - head[i];
    }
    if (goal->kind == QIK_ORIENTATION) { /* two axes fix a frame; the third adds nothing */
        static const double axes[2][3] = {{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}};
        for (int a = 0; a < 2; a++) {
            qik_rotate(tip, axes[a], now[1 + a]);
            qik_rotate(goal->orientation, axes[a], wanted[1 + a]);
        }
        pairs = 3;
    } else if (goal->kind == QIK_DIRECTION) {
        qik_rotate(tip, goal->aim_axis, now[1]);
        qik_copy3(wanted[1], goal->direction);
        pairs = 2;
    }
    for (int p = 0; p < pairs; p++) { /* every pair seen from the joint, in its pre-rotation frame */
        qik_rotate(to_local, now[p], now[p]);
        qik_rotate(to_local, wanted[p], wanted[p]);
    }
    double effector_local[3], old[4], new_q[4];
    qik_copy3(effector_local, now[0]);
    qik_copy4(old, q + 4 * bone);
    step_towards(sweep->chain, bone, old, pairs, (const double(*)[3])now, (const double(*)[3])wanted, sweep->weights,
                 new_q);
    if (sweep->preferred != NULL && sweep->pull > 0.0) {
        /* Zhong 2000's springiness toward a natural pose, fading as the goal is reached. */
        double back[4], part[4];
        qik_conj(new_q, back);
        qik_mul(back, sweep->preferred + 4 * bone, back);
        qik_slerp_from_identity(back, sweep->pull, part);
        qik_mul(new_q, part, new_q);
        qik_clamp_joint(sweep->chain, bone, new_q);
    }
    /* Effector and tip are rigid in bone i's frame: carry them from the old pose to the new. */
    double carry[4], undo[4], moved[3];
    qik_conj(old, undo);
    qik_mul(new_q, undo, carry);
    qik_mul(pre, carry, carry);
    qik_rotate(carry, effector_local, moved);
    for (int i = 0; i < 3; i++)
        effector[i] = head[i] + moved[i];
    double local_tip[4];
    qik_mul(to_local, tip, local_tip);
    qik_mul(carry, local_tip, tip);
    qik_copy4(q + 4 * bone, new_q);
}

/* Joints below i do not move while joint i turns, so one forward pass serves the sweep. */
static void sweep_tip_to_base(const sweep_inputs *sweep, double *q, double *scratch, double effector[3], double tip[4])
{
    int32_t n = sweep->chain->n_bones;
    qik_pose pose = {scratch, scratch + 3 * n, scratch + 7 * n, {0.0, 0.0, 0.0}};
    qik_forward_kinematics(sweep->chain, q, &pose);
    qik_copy3(effector, pose.effector);
    qik_copy4(tip, pose.rotations + 4 * (n - 1));
    for (int32_t i = n - 1; i >= 0; i--)
        joint_step(sweep, i, q, pose.pre_rotations + 4 * i, pose.heads + 3 * i, effector, tip);
}

/* Bones above i keep their shape until visited, so effector and tip are fixed in each bone's
 * frame as of the sweep's start; only the prefix of frames is rebuilt as joints turn. */
static void sweep_base_to_tip(const sweep_inputs *sweep, double *q, double *scratch, double effector[3], double tip[4])
{
    const qik_chain *chain = sweep->chain;
    int32_t n = chain->n_bones;
    qik_pose pose = {scratch, scratch + 3 * n, scratch + 7 * n, {0.0, 0.0, 0.0}};
    double *effector_in_bone = scratch + 11 * n, *tip_in_bone = scratch + 14 * n;
    qik_forward_kinematics(chain, q, &pose);
    const double *last = pose.rotations + 4 * (n - 1);
    for (int32_t i = 0; i < n; i++) {
        double to_bone[4], lever[3];
        qik_conj(pose.rotations + 4 * i, to_bone);
        for (int j = 0; j < 3; j++)
            lever[j] = pose.effector[j] - pose.heads[3 * i + j];
        qik_rotate(to_bone, lever, effector_in_bone + 3 * i);
        qik_mul(to_bone, last, tip_in_bone + 4 * i);
    }
    double frame[4] = {1.0, 0.0, 0.0, 0.0}, head[3] = {0.0, 0.0, 0.0};
    for (int32_t i = 0; i < n; i++) {
        double offset[3], pre[4], posed[4], moved[3];
        qik_rotate(frame, chain->rest_offsets + 3 * i, offset);
        for (int j = 0; j < 3; j++)
            head[j] += offset[j];
        qik_mul(frame, chain->rest_rotations + 4 * i, pre);
        qik_mul(pre, q + 4 * i, posed);
        qik_rotate(posed, effector_in_bone + 3 * i, moved);
        for (int j = 0; j < 3; j++)
            effector[j] = head[j] + moved[j];
        qik_mul(posed, tip_in_bone + 4 * i, tip);
        joint_step(sweep, i, q, pre, head, effector, tip);
        qik_mul(pre, q + 4 * i, frame);
    }
}

int64_t qik_run_ccd(const qik_chain *chain, const qik_row_goal *goal, const qik_settings *settings,
                    const qik_budget *budget, double *q, const double *preferred, double *scratch)
{
    int32_t n = chain->n_bones;
    double *best = scratch, *sweep_scratch = scratch + 4 * n;
    double position_error, orientation_error, effector[3], tip[4];
    qik_goal_errors(chain, goal, q, sweep_scratch, &position_error, &orientation_error, effector);
    double error = qik_combined_error(chain, position_error, orientation_error), best_error = error;
    memcpy(best, q, 4 * (size_t)n * sizeof(double));
    sweep_inputs sweep = {chain, goal, preferred, 0.0, {goal->position_weight, 0.0, 0.0}};
    double orientation_weight = goal->orientation_weight * chain->reach * chain->reach;
    sweep.weights[1] = sweep.weights[2] = orientation_weight;
    int use_pull = preferred != NULL && settings->rest_pull > 0.0;
    int64_t iterations = 0, stalled_sweeps = 0;
    int active = !qik_reached(settings, position_error, orientation_error);
    for (int32_t k = 0; k < budget->max_iterations && active; k++) {
        if (use_pull) {
            double fade = error / chain->reach;
            sweep.pull = settings->rest_pull * (fade < 1.0 ? fade : 1.0);
        }
        if (settings->order == QIK_TIP_TO_BASE)
            sweep_tip_to_base(&sweep, q, sweep_scratch, effector, tip);
        else
            sweep_base_to_tip(&sweep, q, sweep_scratch, effector, tip);
        iterations++;
        position_error = qik_position_error(goal, effector);
        orientation_error = qik_orientation_error(goal, tip);
        double new_error = qik_combined_error(chain, position_error, orientation_error);
        if (new_error < best_error) {
            memcpy(best, q, 4 * (size_t)n * sizeof(double));
            best_error = new_error;
        }
        int slow = error - new_error < budget->stall_ratio * error;
        stalled_sweeps = slow ? stalled_sweeps + 1 : 0;
        error = new_error;
        active = !qik_reached(settings, position_error, orientation_error) && stalled_sweeps < budget->stall_iterations;
    }
    memcpy(q, best, 4 * (size_t)n * sizeof(double));
    return iterations;
}
