// SPDX-License-Identifier: MIT
/*
 * The instruction history of Intel PT, through libipt's instruction
 * decoder: every instruction of the last N branches' blocks, the branches
 * counted as pt.c finds them.
 */
#include <errno.h>
#include <intel-pt.h>
#include <stdlib.h>
#include <string.h>

#include "brvec.h"
#include "btrace/error.h"
#include "decode_internal.h"
#include "image_internal.h"
#include "internal.h"
#include "pt_internal.h"

/* The instruction history, through libipt's instruction decoder. */
struct pt_iwalk {
	bt_insn_fn fn;
	void *ctx;
	uint64_t skip;		/* transfers to pass before reporting */
	uint64_t next_ip;	/* where straight-line flow goes */
	int transfer;		/* the last instruction always branches */
	enum pt_insn_class last;	/* its class */
	int ret;
};

static int iwalk_gap(struct pt_iwalk *w)
{
	w->next_ip = 0;
	w->transfer = 0;
	if (w->skip) {
		w->skip--;
		return 0;
	}
	w->ret = w->fn(0, 1, w->ctx);
	return w->ret;
}

static int iwalk_insn(struct pt_iwalk *w, const struct pt_insn *insn)
{
	/* Count the entries passed: transfers and jumps in the flow. */
	if (w->skip && (w->transfer || (w->next_ip && insn->ip != w->next_ip)))
		w->skip--;
	w->next_ip = insn->ip + insn->size;
	w->last = insn->iclass;
	w->transfer = insn->iclass != ptic_other &&
		      insn->iclass != ptic_cond_jump &&
		      insn->iclass != ptic_ptwrite;
	if (w->skip)
		return 0;
	w->ret = w->fn(insn->ip, 0, w->ctx);
	return w->ret;
}

static int iwalk_events(struct pt_iwalk *w, struct pt_insn_decoder *dec,
			int status)
{
	while (status >= 0 && (status & pts_event_pending)) {
		struct pt_event ev;

		status = pt_insn_event(dec, &ev, sizeof(ev));
		if (status < 0 || ev.status_update)
			continue;
		/* Lost trace, or tracing off other than for a syscall. */
		if ((ev.type == ptev_overflow ||
		     (ev.type == ptev_disabled && w->last != ptic_far_call)) &&
		    iwalk_gap(w))
			return status;
	}
	return status;
}

static int iwalk_resync(struct pt_insn_decoder *dec)
{
	uint64_t last = UINT64_MAX, off;
	int status;

	for (;;) {
		status = pt_insn_sync_forward(dec);
		if (status >= 0 || status == -pte_eos || status == -pte_nosync)
			return status;
		if (pt_insn_get_sync_offset(dec, &off) < 0 || off == last)
			return status;
		last = off;
	}
}

/*
 * Past the end of the trace libipt still walks straight-line code and
 * direct branches, up to the next instruction that needs trace: none of
 * that is proven to have run.  Stop where it says pts_eos, as ptxed does
 * (libipt's tests tip-eos, tnt_t-eos, tnt_n-eos, fup-tip-eos).
 */
static void iwalk_run(struct pt_iwalk *w, struct pt_insn_decoder *dec,
		      int status)
{
	while (!w->ret) {
		struct pt_insn insn;

		status = iwalk_events(w, dec, status);
		if (w->ret || (status >= 0 && (status & pts_eos)))
			return;
		if (status >= 0) {
			status = pt_insn_next(dec, &insn, sizeof(insn));
			if (status >= 0)
				iwalk_insn(w, &insn);
			continue;
		}
		if (status == -pte_eos || iwalk_gap(w))
			return;
		status = iwalk_resync(dec);
		if (status < 0)
			return;
	}
}

int bt_decode_pt_insns(const struct bt_capture *cap,
		       const struct bt_decode_opts *opts, bt_insn_fn fn,
		       void *ctx)
{
	struct pt_iwalk w = { .fn = fn, .ctx = ctx };
	struct pt_insn_decoder *dec;
	struct bt_brvec vec = { 0 };
	struct pt_config cfg;
	uint64_t start = 0, end_ts;
	int status, err;

	if (!cap || !opts || !fn || !opts->image)
		return bt_fail(bte_invalid, 0, "pt instructions need an image");
	if (!cap->size)
		return 0;
	if (opts->last) {
		err = bt_pt_decode_last(cap, opts->image, opts->last, &vec,
				     &start, &end_ts);
		w.skip = vec.n > opts->last ? vec.n - opts->last : 0;
		bt_brvec_release(&vec);
		if (err < 0)
			return err;
		if (start >= cap->size)
			return 0;
	}
	bt_pt_setup(&cfg, cap, cap->data + cap->size);
	dec = pt_insn_alloc_decoder(&cfg);
	if (!dec)
		return bt_fail(bte_nomem, ENOMEM, "pt decoder");
	err = pt_insn_set_image(dec, bt_image_pt(opts->image));
	status = opts->last ? pt_insn_sync_set(dec, start)
			    : pt_insn_sync_forward(dec);
	if (err >= 0 && status >= 0)
		iwalk_run(&w, dec, status);
	pt_insn_free_decoder(dec);
	return 0;
}
