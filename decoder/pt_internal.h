/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PT_INTERNAL_H
#define BTRACE_PT_INTERNAL_H

/* What pt.c (branches) lends pt_insn.c (instructions). */

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

#include "brvec.h"
#include "btrace/capture.h"
#include "btrace/image.h"

/* What a branch instruction's bytes say (pt_scan.c). */
struct pt_scan {
	int kind;	/* enum bt_branch_kind, BT_BR_NONE if not a branch */
	int len;	/* conditional branches only; 0 if unknown */
	int64_t rel;	/* direct jumps and calls: target - next insn */
	int direct;	/* rel is valid; len too */
};

/* Classify the instruction in @p[0..@n) on its own. */
void bt_pt_scan_insn(const uint8_t *p, size_t n, struct pt_scan *s);

/* libipt's config for @cap's bytes up to @end: CPU, errata, timing. */
void bt_pt_setup(struct pt_config *cfg, const struct bt_capture *cap,
		 uint8_t *end);

/*
 * The last @last entries of @cap into @out, stretch by stretch from the
 * last PSB back; *@start: the offset of the PSB decoding started at,
 * *@end_ts: the newest stretch's last time (0 without).
 * Returns 0 or a negative bt_error.
 */
int bt_pt_decode_last(const struct bt_capture *cap, struct bt_image *image,
		      size_t last, struct bt_brvec *out, uint64_t *start,
		      uint64_t *end_ts);

#endif /* BTRACE_PT_INTERNAL_H */
