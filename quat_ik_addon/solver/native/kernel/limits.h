/* Joint limits one joint at a time: solver/limits.py, reach_windows.py and limit_contacts.py. */
#ifndef QIK_LIMITS_H
#define QIK_LIMITS_H

#include "qik.h"

/* limit.clamp for bone ``bone``'s joint: q (any length) becomes a unit rotation inside the
 * limit, as the numpy joint's clamp answers (a free joint only normalises). */
void qik_clamp_joint(const qik_chain *chain, int32_t bone, double q[4]);

/* BallJoint.twist_clamped for a ball joint with a twist range: q's twist brought into the range,
 * its direction kept exactly; any other joint's q is left as it is. */
void qik_twist_clamp_joint(const qik_chain *chain, int32_t bone, double q[4]);

/* limit.violation: radians outside the joint's limit. */
double qik_joint_violation(const qik_chain *chain, int32_t bone, const double q[4]);

/* LimitContacts.axes for one joint the clamp moved: the unit axes (joint frame) about which it
 * turned each part back from ``turned`` to ``clamped`` (slot 0: a ball's swing arc, or the
 * whole turn for other kinds; slot 1: a ball's twist), zero for a part it left. */
void qik_contact_axes(const qik_chain *chain, int32_t bone, const double turned[4], const double clamped[4],
                      double axes[2][3]);

#endif
