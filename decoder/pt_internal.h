/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_PT_INTERNAL_H
#define BTRACE_PT_INTERNAL_H

/* What pt.c (branches) lends pt_insn.c (instructions). */

#include <intel-pt.h>

#include "brvec.h"
#include "btrace/capture.h"
#include "btrace/image.h"

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
