/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_TIMELINE_SPAN_H
#define BTRACE_CMD_TIMELINE_SPAN_H

/*
 * What timeline.c (spans, JSON) and timeline_svg.c (the picture) share:
 * the threads' call spans on one clock.
 */

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "btrace/btrace.h"

enum tl_clock {
	TL_CLOCK_INSN,		/* instructions, 1 drawn as 1 us */
	TL_CLOCK_BRANCH,	/* branches (BTS: instructions unknown) */
	TL_CLOCK_TIME,		/* the trace's timestamps, in us */
};

/* One call of a function, or a gap; times on the file's clock. */
struct tl_span {
	uint64_t start, end;
	uint64_t addr;		/* where its first segment starts */
	int depth;		/* call depth, 0 the shallowest */
	int gap;		/* a gap in the trace: @reason says why */
	int reason;
	int open;		/* not returned by the stop */
};

/* One thread: its spans, oldest start first, a caller before its callee. */
struct tl_lane {
	pid_t tid;
	int err;		/* no trace: why (a bt_error) */
	struct tl_span *span;
	size_t n;
	uint64_t len;		/* its history's length on the clock */
	uint64_t offset;	/* added to its times: every lane ends at the
				   stop */
	uint64_t recent;	/* where its last N segments start (SVG) */
};

struct tl {
	const struct bt_trace *tr;
	struct bt_symtab *symtab;
	int clock;		/* enum tl_clock */
	struct tl_lane *lane;
	size_t nlanes;
	uint64_t end;		/* the stop, on the clock */
	uint64_t t0;		/* TL_CLOCK_TIME: the earliest time (ns),
				   the clock's 0 */
};

/* The clock's name, as the files say it: "instructions", "branches",
 * "us" (time). */
const char *tl_clock_name(int clock);

/* The name of @addr's function, or its address in @buf. */
const char *tl_func(const struct tl *tl, uint64_t addr, char *buf,
		    size_t size);

/* "file.c:12" of @addr's function's entry into @buf, or "". */
const char *tl_src(const struct tl *tl, uint64_t addr, char *buf,
		   size_t size);

/* "SIGSEGV", "exit 3", "interrupt": the stop, for labels. */
const char *tl_stop_label(const struct bt_stop *stop, char *buf,
			  size_t size);

/* The flame chart of @tl (ferror(@out) tells whether writing failed). */
void tl_write_svg(FILE *out, const struct tl *tl);

#endif /* BTRACE_CMD_TIMELINE_SPAN_H */
