/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PT_TIME_H
#define BTRACE_PT_TIME_H

/*
 * Time along one PT decoding pass (pt.c): libipt's time tracking (TSC
 * packets, MTC packets with TMA and CPUID.15H, CYC where the stream has
 * them) read as decoding goes, turned into ns by the capture's perf
 * conversion (struct bt_tsc_conv) and kept as anchors at instruction
 * positions of the pass, so that branches get their times as the soft
 * format's do: interpolated over instructions (timing.h).
 *
 * libipt's time is that of the last timing packet before the last
 * TNT or TIP it consumed (its query decoder keeps it so): the time of the
 * branch that packet decided.  A block that ends with such a branch
 * anchors the time at its end; a new time seen without one (at a PSB, an
 * event) at its start.  A capture without conversion, or a stream without
 * TSC, has no anchors, and its branches stay untimed (ts 0).
 */

#include <intel-pt.h>
#include <stdint.h>

#include "btrace/capture.h"
#include "timing.h"

struct pt_timing {
	const struct bt_tsc_conv *conv;	/* NULL: the capture has no time */
	struct bt_anchors an;
	uint64_t pos;		/* instructions of the pass so far */
	uint64_t last_tsc;	/* the last time anchored, in ticks */
	int have;		/* last_tsc is set */
};

void pt_timing_init(struct pt_timing *t, const struct bt_capture *cap);
void pt_timing_release(struct pt_timing *t);

/*
 * Block of @ninsn instructions decoded; libipt's time after it in @tsc
 * (@status: pt_blk_time's return).  @decided: it ends with a branch whose
 * direction or target the trace gave.  Returns 0 or -bte_nomem.
 */
int pt_timing_block(struct pt_timing *t, uint32_t ninsn, int decided,
		    int status, uint64_t tsc);

/* An event with its time (@ev->has_tsc) anchors it at the current position. */
int pt_timing_event(struct pt_timing *t, const struct pt_event *ev);

/*
 * @n branches of the pass whose ts holds their position (as pass_push
 * left it): ts becomes their time.  *@end_ns: the last anchor's time, 0
 * without.
 */
void pt_timing_apply(const struct pt_timing *t, struct bt_branch *br,
		     size_t n, uint64_t *end_ns);

#endif /* BTRACE_PT_TIME_H */
