/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_TIMING_H
#define BTRACE_TIMING_H

/*
 * Time along a history: the capture's time records (the software
 * format's BT_REC_TIME, PT's TSC/MTC) as anchors at instruction
 * positions, and each branch's time interpolated over instruction counts
 * between the two anchors around it (as magic-trace does between PT's
 * timing packets).  A branch before the first anchor takes the first's
 * time, one after the last the last's.
 */

#include <stddef.h>
#include <stdint.h>

#include "btrace/branch.h"

struct bt_anchor {
	uint64_t pos;		/* instructions before it in the stream */
	uint64_t ns;
};

struct bt_anchors {
	struct bt_anchor *a;
	size_t n, cap;
};

/*
 * Add the time @ns at position @pos (both never smaller than the last
 * anchor's: time does not go back).  Returns 0 or -bte_nomem.
 */
int bt_anchors_push(struct bt_anchors *an, uint64_t pos, uint64_t ns);
void bt_anchors_release(struct bt_anchors *an);

/*
 * @n branches whose ts holds their block's end position (instructions
 * before and in it, on the anchors' scale): ts becomes their time; 0 for
 * all if there are no anchors.
 */
void bt_anchors_apply(const struct bt_anchors *an, struct bt_branch *br,
		      size_t n);

#endif /* BTRACE_TIMING_H */
