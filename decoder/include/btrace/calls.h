/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_CALLS_H
#define BTRACE_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "btrace/decode.h"
#include "btrace/symbols.h"

/*
 * The function-call history of a branch history, as GDB's record
 * function-call-history: the branches cut into segments, one per stretch
 * of code in one function.  A call or an interrupt (a signal handler's
 * entry) starts a segment one level deeper, a return or a sigreturn one
 * level shallower, and a jump into another function (a tail call, a PLT
 * stub) one at the same depth.  A gap is a segment of its own.  The last
 * segment is where the thread is now, even with no branch since.
 */

struct bt_call {
	int depth;		/* call depth, 0 for the shallowest segment */
	int gap;		/* 1: a gap entry, not a function */
	int reason;		/* a gap's enum bt_gap_reason */
	uint64_t start;		/* first address of the segment (0: a gap) */
	size_t first, last;	/* indices of the branches it covers */
	size_t nbranches;	/* branches that end in it */
	uint64_t ninsn;		/* instructions, 0 if unknown */
	uint64_t ts;		/* when it started (ns, the branches' clock),
				   0 if the history has no time */
	uint64_t duration;	/* ns from then to its end: the branch that
				   leaves it, or the history's end */
};

struct bt_calls {
	struct bt_call *call;	/* oldest first */
	size_t count;
};

/*
 * Cut @hist into segments in a new *@out (free with bt_calls_free()).
 * Functions are told apart by @symtab's names; with @symtab NULL, only
 * calls, returns and gaps start segments.  @hist must outlive nothing:
 * the result holds indices into it, not pointers.
 * Returns 0, -bte_invalid, or -bte_nomem.
 */
int bt_calls_build(const struct bt_history *hist, struct bt_symtab *symtab,
		   struct bt_calls **out);

void bt_calls_free(struct bt_calls *calls);

#endif /* BTRACE_CALLS_H */
