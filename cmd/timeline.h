/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_TIMELINE_H
#define BTRACE_CMD_TIMELINE_H

/*
 * The call history of every thread along time, for tools outside btrace:
 * a Chrome Trace Event JSON file (--timeline FILE: Perfetto's UI,
 * speedscope and chrome://tracing open it as it is) and a flame chart as
 * a self-contained SVG (--svg FILE: any browser).
 *
 * Each thread's call segments (calls.h) become spans: one per call of a
 * function, a callee inside its caller.  A frame the window starts inside
 * (returned to later) starts at the window's start; a call not returned
 * by the stop ends at the stop.  All threads end at the stop, so their
 * ends line up.
 *
 * Time: the trace's timestamps (us of CLOCK_MONOTONIC from the first
 * event) where it has them; else (BTS, or --timeline-clock instructions)
 * the instruction count (1 instruction drawn as 1 us), or the branch
 * count where instructions are unknown (BTS); both files say which
 * ("otherData": {"clock": "us"|"instructions"|"branches"}).
 * span_clock() and span_start() in timeline.c turn a segment into time.
 */

#include <stddef.h>
#include <stdio.h>

#include "btrace/btrace.h"

struct timeline_out {
	const char *json;	/* --timeline FILE, or NULL */
	const char *svg;	/* --svg FILE, or NULL */
	size_t last;		/* the SVG shows each thread's last N segments
				   (0: all) */
	int counts;		/* instructions (branches) stand for time even
				   where the trace has timestamps */
};

/*
 * Write the files @to asks for from trace @tr (a trace file, or a live
 * target's snapshot), its code in @image, functions named by @symtab
 * (NULL: addresses).  Says "btrace: timeline written to FILE" on stderr,
 * or why not.  Returns 0, or a negative bt_error.
 */
int timeline_write_trace(const struct bt_trace *tr, struct bt_image *image,
			 struct bt_symtab *symtab,
			 const struct timeline_out *to);

/*
 * The same for stopped @target at @stop, snapshot with bt_trace_from_target()
 * (every thread, the code); @symtab NULL: the process's own symbols.
 * Returns 0, or a negative bt_error.
 */
int timeline_write_target(struct bt_target *target, const struct bt_stop *stop,
			  struct bt_symtab *symtab,
			  const struct timeline_out *to);

#endif /* BTRACE_CMD_TIMELINE_H */
