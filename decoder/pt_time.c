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

static int commit(struct pt_timing *t)
{
	if (!t->have_pend)
		return 0;
	t->have_pend = 0;
	return bt_anchors_push(&t->an, t->pend.pos, t->pend.ns);
}

/* A new time at @pos; held back, as a PSB+ may yet place it later. */
static int anchor(struct pt_timing *t, uint64_t pos, uint64_t tsc)
{
	if (t->have && tsc == t->last_tsc)
		return 0;
	if (commit(t) < 0)
		return -1;
	t->have = 1;
	t->last_tsc = tsc;
	t->pend = (struct bt_anchor){ pos, bt_tsc_conv_ns(t->conv, tsc) };
	t->have_pend = 1;
	return 0;
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
	/*
	 * libipt reads a PSB+ ahead, its TSC included, once the TNT before
	 * it is used up: a block before the PSB may show its time.  The
	 * PSB+'s own events come where the flow reached it: the time's place.
	 */
	if (ev->status_update && t->have_pend && ev->tsc == t->last_tsc) {
		t->pend.pos = t->pos;
		return 0;
	}
	return anchor(t, t->pos, ev->tsc);
}

int pt_timing_apply(struct pt_timing *t, struct bt_branch *br, size_t n,
		    uint64_t *end_ns)
{
	int err = commit(t);

	bt_anchors_apply(&t->an, br, n);
	*end_ns = t->an.n ? t->an.a[t->an.n - 1].ns : 0;
	return err;
}

uint64_t pt_timing_stretch_end(const struct bt_capture *cap, uint64_t end)
{
	struct pt_packet_decoder *dec;
	struct pt_packet pkt;
	struct pt_config cfg;
	uint64_t off = end;

	if (!cap->pt_time.time_mult || end >= cap->size)
		return end;
	pt_config_init(&cfg);
	cfg.begin = cap->data;
	cfg.end = cap->data + cap->size;
	dec = pt_pkt_alloc_decoder(&cfg);
	if (!dec || pt_pkt_sync_set(dec, end) < 0)
		goto out;
	while (pt_pkt_next(dec, &pkt, sizeof(pkt)) >= 0) {
		if (pkt.type == ppt_psbend) {
			pt_pkt_get_offset(dec, &off);
			break;
		}
	}
out:
	pt_pkt_free_decoder(dec);
	return off;
}
