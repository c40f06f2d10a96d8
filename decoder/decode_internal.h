/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_DECODE_INTERNAL_H
#define BTRACE_DECODE_INTERNAL_H

/*
 * The per-format decoders behind bt_decode().  Each fills @hist (zeroed by
 * the caller; branch array malloc'ed by the decoder, freed with the history
 * by bt_history_free()) with the last @opts->last branches (all if 0),
 * oldest first, and returns 0 or a negative bt_error as bt_decode().
 */

#include "btrace/decode.h"

int bt_decode_soft(const struct bt_capture *cap,
		   const struct bt_decode_opts *opts, struct bt_history *hist);
int bt_decode_pt(const struct bt_capture *cap,
		 const struct bt_decode_opts *opts, struct bt_history *hist);
/* BT_FMT_BTS and BT_FMT_PERF_BTS. */
int bt_decode_bts(const struct bt_capture *cap,
		  const struct bt_decode_opts *opts, struct bt_history *hist);

/*
 * PT decoded front to back, whole, keeping the last opts->last entries:
 * what a decoder without PSB stepping does (for comparison and checks).
 */
int bt_decode_pt_full(const struct bt_capture *cap,
		      const struct bt_decode_opts *opts,
		      struct bt_history *hist);

/* Every instruction, through libipt's instruction decoder. */
int bt_decode_pt_insns(const struct bt_capture *cap,
		       const struct bt_decode_opts *opts, bt_insn_fn fn,
		       void *ctx);
/* Every instruction between BTS branches, walked through the image. */
int bt_decode_bts_insns(const struct bt_capture *cap,
			const struct bt_decode_opts *opts, bt_insn_fn fn,
			void *ctx);

#endif /* BTRACE_DECODE_INTERNAL_H */
