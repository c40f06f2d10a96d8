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
 * event) at its start; the events of a PSB+ where they come, for libipt
 * reads a PSB+ (its TSC) ahead of the blocks before it.  A capture without conversion, or a stream without
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
	uint64_t last_tsc;	/* the last time seen, in ticks */
	int have;		/* last_tsc is set */
	struct bt_anchor pend;	/* its anchor, until the next time */
	int have_pend;
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
 * without.  Returns 0 or -bte_nomem (then some branches may lack time).
 */
int pt_timing_apply(struct pt_timing *t, struct bt_branch *br, size_t n,
		    uint64_t *end_ns);

/*
 * Where a stretch of @cap's trace that ends at the PSB at @end should end
 * for its time: past that PSB's header, whose TSC is the time where the
 * stretch ends (else its last branches would take the last time before).
 * @end itself where the capture has no time or no header follows.
 */
uint64_t pt_timing_stretch_end(const struct bt_capture *cap, uint64_t end);

#endif /* BTRACE_PT_TIME_H */
