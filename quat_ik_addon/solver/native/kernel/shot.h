/* The carry and blend loops of a shot's jump repair (shot.c), which repair.c runs on requests it
 * makes itself, valid by construction: nothing here is checked again or exported. */
#ifndef QIK_SHOT_H
#define QIK_SHOT_H

#include "qik.h"

/* sequence._carry's arguments and answers: carries along ``order`` (positions to frames). */
typedef struct {
    int64_t order_count;
    const int64_t *order;      /* (order_count) frame of each position: increasing, in [0, frames) */
    int64_t carries;
    const int64_t *origins;    /* (carries) positions carried from */
    const int64_t *directions; /* (carries) -1 or +1 */
    const int64_t *bounds;     /* (carries) a position each may not pass, or NULL: carry_frames frames */
    const int64_t *rivals;     /* (carries) a carry (or -1) that stops once this one is kept, or NULL */
    int64_t carry_frames;
    double jump_slack;         /* pose_jumps.JUMP_SLACK */
    int64_t slots;             /* poses ``carried`` holds */
    const int64_t *slot_first; /* (carries) each carry's first slot ... */
    const int64_t *slot_count; /* ... and how many: the positions it may pass (to its bound, or
                                * carry_frames on; not past the shot's end) */
    double *carried;           /* (slots, n, 4) out: each carry's poses, nearest first */
    int64_t *carried_count;    /* (carries) out */
    uint8_t *kept;             /* (carries) out */
    int64_t *ran_out_rank;     /* (carries) out: -1, or the order in which carries ran out */
    int64_t *beyond;           /* (carries) out: where one ran out, the frame past its far end */
} qik_carry_request;

/* sequence._carry: each carry steps frame by frame from its origin, solving each frame warm
 * from the step before (``settings``; no restarts), until it misses a goal or turns too fast
 * (the carry fails), meets the pose already there or reaches the shot's end (its frames are
 * kept: rotations, met and solved written), or passes its bound (it ran out). All side by side,
 * a step at a time, as the numpy loop does, so that keeps land in the same order. QIK_BAD_INPUT
 * (nothing written) only where memory ran out. */
int32_t qik_run_carries(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                        const qik_shot *shot, const qik_carry_request *carry);

/* sequence._blend_jumps' walkers: each walks its frames (frames[offsets[w] .. + lengths[w]),
 * the carried poses there alike) from the last to the first, starting from walker_poses[w]:
 * each step starts from the walker turned a share 1 / (frames left + 1) of the way to the
 * carried pose (clamped), and is solved there warm (``settings``, no restarts). The answers go
 * to ``walked`` and ``walked_met`` by row, the walkers' last poses stay in walker_poses, and
 * the shot records every solve (its rotations, met and solved are not read or written). */
typedef struct {
    int64_t walkers;
    int64_t rows;              /* sum of lengths */
    const int64_t *lengths;    /* (walkers) */
    const int64_t *offsets;    /* (walkers) first row of each */
    const int64_t *frames;     /* (rows) frame of each row, in [0, shot frames) */
    const double *carried;     /* (rows, n, 4) */
    double *walker_poses;      /* (walkers, n, 4) in/out */
    double *walked;            /* (rows, n, 4) out */
    uint8_t *walked_met;       /* (rows) out */
} qik_blend_request;

/* The walkers, alike: QIK_BAD_INPUT (nothing written) only where memory ran out. */
int32_t qik_run_blend(const qik_chain *chain, const qik_goals *goals, const qik_settings *settings,
                      const qik_shot *shot, const qik_blend_request *blend);

#endif
