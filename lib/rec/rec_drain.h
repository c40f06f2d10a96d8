/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_REC_DRAIN_H
#define BTRACE_REC_DRAIN_H

/*
 * The ring drain: the records a thread's translated code wrote into its
 * ring (rec_ring.h) decoded against the program's code into instructions,
 * branches and gaps, oldest first.  Pure: the ring comes in as a copy of
 * its bytes with the positions the tracer keeps, the code as decoded
 * blocks (rec_xlate.h) through a lookup, and the history goes out through
 * callbacks.  No process, no ptrace: tests/unit/test_rec_drain.c.
 *
 * Positions count the bytes a thread wrote into its ring since it got it:
 * the ring is written downwards from top, and each time a record would
 * cross the bottom the writer starts a new pass at the top (rec_slot.c's
 * ring_wrap, or rec_dispatch.c's wrap_fault for the thread's own records).
 * What the pass before left lies between its end (prev_low) and top.
 */

#include <stddef.h>
#include <stdint.h>

struct rb;

/* A thread's ring as the drain sees it. */
struct rec_ring_view {
	/* bytes[a - base] is the byte at a, for a in rec_drain_spans() */
	const uint8_t *bytes;
	uint64_t base, top;	/* the ring [base, top) */
	uint64_t head;		/* TCB_HEAD: the newest whole record */
	uint64_t pass_start;	/* bytes written before this pass */
	uint64_t prev_start;	/* the same for the pass before */
	uint64_t prev_low;	/* where that pass ended, 0: none */
};

/* Where the history goes, and where the code comes from. */
struct rec_drain_ops {
	/* The block at @pc (never freed while draining); NULL: none. */
	const struct rb *(*block)(void *ctx, uint64_t pc);
	/* @n more instructions ran ... */
	void (*insns)(void *ctx, uint32_t n);
	/* ... a branch @from -> @to of BT_BR_* @kind was taken ... */
	void (*branch)(void *ctx, uint64_t from, uint64_t to, int kind);
	/* ... or the history is not continuous (BT_GAP_* @reason) ... */
	void (*gap)(void *ctx, int reason);
	/* ... or, here, the thread's TSC was @t, or with @ns, CLOCK_MONOTONIC
	   was @t ns (NULL: not wanted). */
	void (*time)(void *ctx, uint64_t t, int ns);
};

/* The bytes of the record tagged @tag (rec_ring.h); 0: no record. */
size_t rec_len(uint8_t tag);

/* A record found in the ring, oldest first once collected. */
struct rec_found {
	uint64_t addr;		/* REC_IND, REC_SYNC, a time */
	uint8_t tag;
	uint8_t outcomes;	/* of conditionals before it, REC_TNT's coding */
};

/* Where decoding stands; kept from one drain to the next. */
struct rec_walker {
	const struct rec_drain_ops *ops;
	void *ctx;
	uint64_t pc;		/* 0: unknown (REC_IND, REC_SYNC set it) */
	uint64_t hi;		/* the last REC_IND's high half, ~0: none */
	/* a chunk of records read (rec_drain_walk_raw), kept from one walk
	 * to the next; the owner frees it (rec_walker_release) */
	struct rec_found *found;
};

void rec_walker_release(struct rec_walker *w);

/*
 * What rec_drain() reads of @v after @drained bytes were decoded: the
 * records written since, in at most two spans [lo[i], hi[i]) of the ring
 * (this pass's new records from head up, and the rest of the pass before
 * where the ring wrapped).  Copy them into bytes.  Returns the number of
 * spans, 0 when nothing was written since.
 */
int rec_drain_spans(const struct rec_ring_view *v, uint64_t drained,
		    uint64_t lo[2], uint64_t hi[2]);

/*
 * Decode the records of @v written after the first *@drained bytes, then
 * walk on to @stop (the thread's original pc; 0: unknown), moving @w.
 * *@drained becomes the bytes written so far.  Records overwritten before
 * they were drained make a BT_GAP_OVERFLOW gap first; a record that does
 * not fit the code a BT_GAP_DECODE gap.  A record beyond head (one the
 * thread was writing when it stopped) is never read.
 * Returns 1 if records were lost, 0 if not; -bte_corrupt if head lies
 * outside the ring, -bte_nomem (then nothing was decoded).
 */
int rec_drain(const struct rec_ring_view *v, uint64_t *drained,
	      struct rec_walker *w, uint64_t stop);

/*
 * rec_drain() in parts, for a drain whose walk comes later (the recorder
 * holds the records in the thread's history until it is read): take the
 * records of @v written after *@drained as they lie in the ring (newest
 * first, their bytes copied to t->out, which has room for the spans of
 * rec_drain_spans()): t->len bytes of records, making t->branches
 * branches at least (targets, outcomes taken); *@drained moves on.
 * Returns 1 if records were lost, 0, or -bte_corrupt.  Then
 * rec_drain_walk_raw() walks them.
 */
struct rec_take {
	uint8_t *out;
	size_t len;
	uint64_t branches;
	uint64_t times;		/* time records among them */
	uint64_t total;		/* bytes written up to the oldest taken */
};

int rec_drain_take(const struct rec_ring_view *v, uint64_t *drained,
		   struct rec_take *t);
/* The same where t->out holds the spans of rec_drain_spans(@v, *@drained)
 * already, read back to back (v->bytes is not read): the records are
 * moved into place. */
int rec_drain_take_read(const struct rec_ring_view *v, uint64_t *drained,
			struct rec_take *t);
/* Walk the @len bytes of records at @raw (newest first, as they lie in
 * the ring) oldest first, from where @w stands (an overflow gap first if
 * @lost), on to @stop (0: not): rec_drain()'s walk.  Records end at the
 * first byte that starts none, or one cut by @len.  Returns the number of
 * records walked, or -bte_nomem (then nothing was walked). */
long rec_drain_walk_raw(struct rec_walker *w, const uint8_t *raw, size_t len,
			int lost, uint64_t stop);

#endif /* BTRACE_REC_DRAIN_H */
