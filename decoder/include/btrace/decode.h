/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_DECODE_H
#define BTRACE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "btrace/branch.h"
#include "btrace/capture.h"
#include "btrace/image.h"

/*
 * Captured bytes of one thread (any struct bt_capture format) into its
 * branch history, oldest first.
 *
 * For PT, the last N branches are found without decoding the whole buffer:
 * decoding starts at the last PSB and steps back one PSB at a time until N
 * branches are known; the cost follows N and the PSB period.
 */

struct bt_decode_opts {
	size_t size;		/* sizeof(struct bt_decode_opts) */
	size_t last;		/* the last N branches; 0 for all */
	struct bt_image *image;	/* code image: required for PT, optional for
				   BTS (kinds are "?" without), unused for soft */
};

struct bt_history {
	struct bt_branch *branch;	/* oldest first */
	size_t count;
	uint64_t lost;			/* as the capture says */
	uint64_t ninsn;			/* instructions covered, 0 if unknown */
	/*
	 * The first byte of the capture's data the decoder read: what it
	 * shows depends on no byte before it (PT's last N start at a PSB
	 * near the end).  0: the whole capture.
	 */
	uint64_t data_begin;
	/*
	 * Time (ns of CLOCK_MONOTONIC) at the end of the history: the
	 * capture's last time record, where the thread stopped (PT: its last
	 * timing packet); 0 when the capture carries no time (BTS, files of
	 * btrace before 0.2's trace format 1.2, PT before 1.3 or without
	 * perf's TSC conversion), and then every branch's ts is 0 too.
	 */
	uint64_t end_ts;
};

/*
 * Decode @cap into a new history in *@out (free with bt_history_free()).
 * Errors inside the stream become BT_BR_GAP entries; only failures to
 * decode anything at all are returned.
 * Returns 0, -bte_format for an unknown format, -bte_nomem.
 */
int bt_decode(const struct bt_capture *cap, const struct bt_decode_opts *opts,
	      struct bt_history **out);

void bt_history_free(struct bt_history *hist);

/*
 * The instruction history: every instruction of the last @opts->last
 * branches' blocks (all if 0), oldest first, reconstructed through the
 * image.  @fn gets each instruction address, or a gap (addr 0, @gap set).
 * Returns 0 or a negative bt_error (-bte_nosys where the format cannot
 * tell instructions).
 */
typedef int (*bt_insn_fn)(uint64_t addr, int gap, void *ctx);
int bt_decode_insns(const struct bt_capture *cap,
		    const struct bt_decode_opts *opts, bt_insn_fn fn,
		    void *ctx);

#endif /* BTRACE_DECODE_H */
