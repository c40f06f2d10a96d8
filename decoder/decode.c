// SPDX-License-Identifier: MIT
/*
 * bt_decode(): captured bytes of one thread into a branch history.  The
 * software format is decoded here; PT and BTS live in pt.c and bts.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/decode.h"
#include "btrace/error.h"
#include "btrace/image.h"
#include "btrace/insn.h"
#include "btrace/ring.h"
#include "decode_internal.h"
#include "timing.h"
#include "internal.h"

void bt_history_free(struct bt_history *hist)
{
	if (!hist)
		return;
	free(hist->branch);
	free(hist);
}

int bt_decode(const struct bt_capture *cap, const struct bt_decode_opts *opts,
	      struct bt_history **out)
{
	struct bt_history *hist;
	int ret;

	if (!cap || !opts || !out)
		return bt_fail(bte_invalid, 0, "bt_decode(NULL)");
	*out = NULL;
	hist = calloc(1, sizeof(*hist));
	if (!hist)
		return bt_fail(bte_nomem, ENOMEM, "history");

	switch (cap->format) {
	case BT_FMT_SOFT:
		ret = bt_decode_soft(cap, opts, hist);
		break;
	case BT_FMT_PT:
		ret = bt_decode_pt(cap, opts, hist);
		break;
	case BT_FMT_BTS:
	case BT_FMT_PERF_BTS:
		ret = bt_decode_bts(cap, opts, hist);
		break;
	default:
		ret = bt_fail(bte_format, 0, "capture format %d", cap->format);
		break;
	}
	if (ret < 0) {
		bt_history_free(hist);
		return ret;
	}
	*out = hist;
	return 0;
}

/*
 * The software format: bt_ring records, oldest first.  A first pass counts
 * the entries so that the second one keeps only the last N without
 * buffering more than N.
 */

/* Entries one record yields: 1 for a branch or a lost marker, 0 else. */
static int soft_entry(const struct bt_rec_hdr *rec, struct bt_branch *br)
{
	const struct bt_rec_branch *b = (const void *)rec;

	memset(br, 0, sizeof(*br));
	switch (rec->type) {
	case BT_REC_BRANCH:
		if (rec->size < sizeof(*b))
			return 0;
		br->from = b->from;
		br->to = b->to;
		br->ninsn = b->ninsn;
		br->kind = b->kind < BT_BR_MAX ? b->kind : BT_BR_NONE;
		br->flags = b->flags;
		br->gap = b->kind == BT_BR_GAP ? b->gap : BT_GAP_NONE;
		return 1;
	case BT_REC_LOST:
		br->kind = BT_BR_GAP;
		br->gap = BT_GAP_OVERFLOW;
		return 1;
	}
	return 0;
}

struct soft_walk {
	size_t count;	/* entries in the stream */
	int status;	/* 0, or why the stream ended early */
};

static void soft_count(const struct bt_capture *cap, struct soft_walk *w)
{
	const struct bt_rec_hdr *rec;
	struct bt_branch br;
	size_t off = 0;
	int ret;

	w->count = 0;
	while (!(ret = bt_rec_next(cap->data, cap->size, &off, &rec)))
		w->count += soft_entry(rec, &br);
	w->status = ret == -bte_eos ? cap->status : ret;
}

/* Append a gap entry; the array has room (counted by the caller). */
static void add_gap(struct bt_history *hist, int reason, uint64_t from,
		    uint64_t to)
{
	struct bt_branch *br = &hist->branch[hist->count++];

	memset(br, 0, sizeof(*br));
	br->kind = BT_BR_GAP;
	br->gap = reason;
	br->from = from;
	br->to = to;
}

/*
 * Fill the last @keep of @w->count entries into @hist, with their times
 * from the stream's BT_REC_TIME records (timing.h).
 */
static int soft_fill(const struct bt_capture *cap, const struct soft_walk *w,
		     size_t keep, struct bt_history *hist)
{
	const struct bt_rec_hdr *rec;
	struct bt_anchors an = { 0 };
	struct bt_branch br;
	size_t off = 0, seen = 0, skip = w->count - keep, first = hist->count;
	uint64_t pos = 0;
	int ret = 0;

	while (!bt_rec_next(cap->data, cap->size, &off, &rec)) {
		if (rec->type == BT_REC_TIME &&
		    rec->size >= sizeof(struct bt_rec_time)) {
			const struct bt_rec_time *tr = (const void *)rec;

			ret = bt_anchors_push(&an, pos + tr->ninsn, tr->ns);
			if (ret < 0)
				break;
		}
		if (!soft_entry(rec, &br))
			continue;
		pos += br.ninsn;
		if (seen++ < skip)
			continue;
		br.ts = pos;
		hist->branch[hist->count++] = br;
		hist->ninsn += br.ninsn;
	}
	bt_anchors_apply(&an, hist->branch + first, hist->count - first);
	hist->end_ts = an.n ? an.a[an.n - 1].ns : 0;
	bt_anchors_release(&an);
	return ret;
}

int bt_decode_soft(const struct bt_capture *cap,
		   const struct bt_decode_opts *opts, struct bt_history *hist)
{
	struct soft_walk w;
	size_t keep, room;
	int lead, ret;

	soft_count(cap, &w);
	keep = w.count;
	if (opts->last && opts->last < keep)
		keep = opts->last;
	/*
	 * Records overwritten in the ring come before everything kept only
	 * when nothing was cut by --last: say so with a leading gap.
	 */
	lead = cap->lost && keep == w.count;
	room = keep + lead + (w.status < 0);
	hist->lost = cap->lost;
	if (!room)
		return 0;
	hist->branch = calloc(room, sizeof(*hist->branch));
	if (!hist->branch)
		return bt_fail(bte_nomem, ENOMEM, "%zu branches", room);
	if (lead)
		add_gap(hist, BT_GAP_OVERFLOW, 0, 0);
	ret = soft_fill(cap, &w, keep, hist);
	if (ret < 0)
		return ret;
	if (lead && hist->count > 1) {
		hist->branch[0].to = hist->branch[1].from;
		hist->branch[0].ts = hist->branch[1].ts;
	}
	/* A torn or corrupt tail: the history ends early, and says so. */
	if (w.status < 0) {
		add_gap(hist, BT_GAP_DECODE,
			hist->count ? hist->branch[hist->count - 1].to : 0, 0);
		if (hist->count > 1)
			hist->branch[hist->count - 1].ts =
				hist->branch[hist->count - 2].ts;
	}
	return 0;
}

/*
 * The instruction history of the software format: the blocks between
 * branches, re-walked through the image with instruction lengths.
 */

struct insn_walk {
	struct bt_image *image;
	struct bt_disasm *dis;
	bt_insn_fn fn;
	void *ctx;
};

/* Emit [@start, @br->from]; a gap if the code does not lead there. */
static int walk_block(struct insn_walk *w, uint64_t start,
		      const struct bt_branch *br)
{
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn insn;
	uint64_t addr = start, n, max = br->ninsn ? br->ninsn : 1u << 20;
	ssize_t len;
	int ret;

	for (n = 0; n < max && addr <= br->from; n++) {
		len = bt_image_read(w->image, addr, code, sizeof(code));
		if (len <= 0 || bt_insn_decode(w->dis, code, len, addr,
					       &insn) < 0)
			break;
		ret = w->fn(addr, 0, w->ctx);
		if (ret || addr == br->from)
			return ret;
		addr += insn.len;
	}
	/* No image, or the bytes disagree with the trace: say so. */
	ret = w->fn(0, addr <= br->from ? BT_GAP_NOCODE : BT_GAP_DECODE,
		    w->ctx);
	return ret ? ret : w->fn(br->from, 0, w->ctx);
}

static int walk_history(struct insn_walk *w, const struct bt_history *hist,
			size_t first)
{
	const struct bt_branch *br, *prev;
	size_t i;
	int ret = 0;

	for (i = first; i < hist->count && !ret; i++) {
		br = &hist->branch[i];
		prev = i ? &hist->branch[i - 1] : NULL;
		if (br->kind == BT_BR_GAP)
			ret = w->fn(0, br->gap, w->ctx);
		else if (!prev || prev->kind == BT_BR_GAP)
			/* Where this block began is not in the trace. */
			ret = w->fn(0, BT_GAP_START, w->ctx) ?:
			      w->fn(br->from, 0, w->ctx);
		else
			ret = walk_block(w, prev->to, br);
	}
	return ret;
}

static int decode_soft_insns(const struct bt_capture *cap,
			     const struct bt_decode_opts *opts, bt_insn_fn fn,
			     void *ctx)
{
	struct bt_decode_opts o;
	struct bt_history *hist;
	struct insn_walk w = { .fn = fn, .ctx = ctx };
	int ret;

	if (!opts->image)
		return bt_fail(bte_invalid, 0, "bt_decode_insns without image");
	/* One branch more: the block of the oldest one starts at its to. */
	o = *opts;
	if (o.last)
		o.last++;
	ret = bt_decode(cap, &o, &hist);
	if (ret < 0)
		return ret;
	w.image = opts->image;
	ret = bt_disasm_alloc(&w.dis);
	if (ret == 0)
		ret = walk_history(&w, hist,
				   opts->last && hist->count > opts->last ?
				   hist->count - opts->last : 0);
	bt_disasm_free(w.dis);
	bt_history_free(hist);
	return ret;
}

int bt_decode_insns(const struct bt_capture *cap,
		    const struct bt_decode_opts *opts, bt_insn_fn fn,
		    void *ctx)
{
	if (!cap || !opts || !fn)
		return bt_fail(bte_invalid, 0, "bt_decode_insns(NULL)");
	switch (cap->format) {
	case BT_FMT_PT:
		return bt_decode_pt_insns(cap, opts, fn, ctx);
	case BT_FMT_SOFT:
		return decode_soft_insns(cap, opts, fn, ctx);
	case BT_FMT_BTS:
	case BT_FMT_PERF_BTS:
		return bt_decode_bts_insns(cap, opts, fn, ctx);
	}
	return bt_fail(bte_format, 0, "capture format %d", cap->format);
}
