/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CMD_CALLS_H
#define BTRACE_CMD_CALLS_H

/*
 * The function-call history of a branch history, as GDB's `record
 * function-call-history` shows it: one segment per stay in a function,
 * indented by call depth.  Shared by the session's `calls` and
 * `btrace show --calls`.
 */

#include <stddef.h>
#include <stdint.h>

#include "btrace/decode.h"

struct call_seg {
	int depth;		/* 0 for the shallowest in the history */
	uint64_t start;		/* first address in the segment */
	size_t first, last;	/* branch indices covered */
	size_t nbr;		/* branches ending in it (0: none yet) */
	uint64_t ninsn;
	int gap;		/* a gap entry: its reason + 1 */
};

/* The function at @addr (a name that stays valid), or NULL. */
typedef const char *(*calls_func_fn)(void *ctx, uint64_t addr);

/*
 * Cut @h into segments: a call or interrupt starts a deeper one, a return
 * (or sigreturn) a shallower one, a jump into another function (a tail
 * call, a PLT stub) one at the same depth.  *@out is malloc'ed.
 * Returns 0, or -1 when out of memory.
 */
int calls_build(const struct bt_history *h, calls_func_fn func, void *ctx,
		struct call_seg **out, size_t *nout);

#endif /* BTRACE_CMD_CALLS_H */
