/* The consistency check every entry point runs on a chain (solve.h). */
#include <stddef.h>

#include "solve.h"

static int window_is_valid(const qik_chain *chain, const qik_window *window)
{
    if (window->kind == QIK_CONE || window->kind == QIK_ELLIPSE)
        return 1;
    return window->kind == QIK_POLYGON && window->corner_count >= 3 && window->corner_first >= 0 &&
           window->corner_first <= chain->n_corners - window->corner_count && chain->corner_directions != NULL &&
           chain->edge_normals != NULL;
}

int qik_chain_is_valid(const qik_chain *chain)
{
    if (chain == NULL || chain->n_bones < 1 || chain->n_windows < 0 || chain->n_corners < 0 ||
        chain->rest_rotations == NULL || chain->rest_offsets == NULL || chain->step_vectors == NULL ||
        chain->joints == NULL || (chain->n_windows > 0 && chain->windows == NULL))
        return 0;
    for (int32_t w = 0; w < chain->n_windows; w++)
        if (!window_is_valid(chain, chain->windows + w))
            return 0;
    for (int32_t i = 0; i < chain->n_bones; i++) {
        const qik_joint *joint = chain->joints + i;
        if (joint->kind < QIK_FREE || joint->kind > QIK_BALL)
            return 0;
        if (joint->kind == QIK_BALL && (joint->window_count < 0 || joint->window_first < 0 ||
                                        joint->window_first > chain->n_windows - joint->window_count))
            return 0;
    }
    return 1;
}
