// SPDX-License-Identifier: MIT
/* Branch times of a PT pass from libipt's time tracking (pt_time.h). */
#include <string.h>

#include "pt_time.h"

void pt_timing_init(struct pt_timing *t, const struct bt_capture *cap)
{
	memset(t, 0, sizeof(*t));
	if (cap->pt_time.time_mult)
		t->conv = &cap->pt_time;
}

void pt_timing_release(struct pt_timing *t)
{
	bt_anchors_release(&t->an);
}

static int anchor(struct pt_timing *t, uint64_t pos, uint64_t tsc)
{
	if (t->have && tsc == t->last_tsc)
		return 0;
	t->have = 1;
	t->last_tsc = tsc;
	return bt_anchors_push(&t->an, pos, bt_tsc_conv_ns(t->conv, tsc));
}

int pt_timing_block(struct pt_timing *t, uint32_t ninsn, int decided,
		    int status, uint64_t tsc)
{
	uint64_t start = t->pos;

	t->pos += ninsn;
	/* -pte_no_time: no TSC yet, only a time relative to the sync. */
	if (!t->conv || status < 0)
		return 0;
	return anchor(t, decided ? t->pos : start, tsc);
}

int pt_timing_event(struct pt_timing *t, const struct pt_event *ev)
{
	if (!t->conv || !ev->has_tsc)
		return 0;
	return anchor(t, t->pos, ev->tsc);
}

void pt_timing_apply(const struct pt_timing *t, struct bt_branch *br,
		     size_t n, uint64_t *end_ns)
{
	bt_anchors_apply(&t->an, br, n);
	*end_ns = t->an.n ? t->an.a[t->an.n - 1].ns : 0;
}
