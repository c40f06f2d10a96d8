// SPDX-License-Identifier: MIT
/*
 * The ring drain (rec_drain.h): records collected from a copy of a
 * thread's ring, newest to oldest as they lie from head, turned around,
 * then walked against the code from where the last drain stopped.
 */
#include <stdlib.h>
#include <string.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "rec/rec_drain.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

#define WALK_MAX	100000		/* blocks walked without a record */

static size_t rec_len(uint8_t tag)
{
	if (tag >= (REC_TNT | 2))
		return 1;
	if ((tag & 0xe0) == REC_IND_O && (tag & 0x1f) >= 2)
		return REC_ADDR_LEN;
	if ((tag & 0xe0) == REC_IND32_O && (tag & 0x1f) >= 2)
		return REC_IND32_LEN;
	switch (tag) {
	case REC_IND:
	case REC_SYNC:
	case REC_TIME_SYS:
	case REC_TIME:
	case REC_TIME_NS:
		return REC_ADDR_LEN;
	case REC_IND32:
		return REC_IND32_LEN;
	default:
		return 0;
	}
}

/* A taken branch of block @b to @to; one to the next instruction is none
 * (the steppers cannot tell it from a fall-through). */
static void w_branch(struct rec_walker *w, const struct rb *b, uint64_t to,
		     int kind)
{
	if (to != b->next)
		w->ops->branch(w->ctx, b->end, to, kind);
}

static void w_insns(struct rec_walker *w, uint32_t n)
{
	if (n)
		w->ops->insns(w->ctx, n);
}

static int term_kind(int term)
{
	switch (term) {
	case RB_COND: return BT_BR_COND;
	case RB_JUMP: return BT_BR_JUMP;
	case RB_CALL: return BT_BR_CALL;
	case RB_RET: return BT_BR_RET;
	case RB_IJUMP: return BT_BR_IJUMP;
	default: return BT_BR_ICALL;
	}
}

/*
 * Walk from w->pc through blocks that need no record, up to the first
 * that does (returned), or to @stop if it comes first (NULL returned,
 * w->pc = @stop).  NULL with w->pc 0: the walk cannot go on.  With @sys,
 * a system call's block is one that needs a record (its time's).
 */
static const struct rb *w_advance_sys(struct rec_walker *w, uint64_t stop,
				      int sys)
{
	size_t n;

	for (n = 0; n < WALK_MAX && w->pc; n++) {
		const struct rb *b = w->ops->block(w->ctx, w->pc);

		if (!b) {
			w->pc = 0;
			return NULL;
		}
		if (stop && stop >= b->start && stop <= b->next &&
		    (stop < b->next || b->term == RB_LEAVE)) {
			w_insns(w, rb_insns_before(b, stop));
			w->pc = stop;
			return NULL;
		}
		if (sys && b->term == RB_SYSCALL)
			return b;
		switch (b->term) {
		case RB_CUT:
		case RB_SYSCALL:
			w_insns(w, b->ninsn);
			w->pc = b->next;
			break;
		case RB_JUMP:
		case RB_CALL:
			w_insns(w, b->ninsn);
			w_branch(w, b, b->target, term_kind(b->term));
			w->pc = b->target;
			break;
		case RB_LEAVE:
			w_insns(w, b->ninsn);
			w->pc = b->end;
			return b;
		default:
			return b;
		}
	}
	if (n == WALK_MAX)
		w->pc = 0;
	return NULL;
}

static const struct rb *w_advance(struct rec_walker *w, uint64_t stop)
{
	return w_advance_sys(w, stop, 0);
}

/*
 * A time record: REC_TIME where the walk stands, REC_TIME_SYS before the
 * system call the walk comes to next (then past it).  Where the walk
 * cannot place it, it goes where the walk stands.
 */
static void w_time(struct rec_walker *w, const struct rec_found *f)
{
	const struct rb *b = NULL;

	if (f->tag == REC_TIME_SYS && w->pc)
		b = w_advance_sys(w, 0, 1);
	if (b && b->term == RB_SYSCALL) {
		w_insns(w, b->ninsn - 1);
		if (w->ops->time)
			w->ops->time(w->ctx, f->addr, 0);
		w_insns(w, 1);
		w->pc = b->next;
		return;
	}
	if (w->ops->time)
		w->ops->time(w->ctx, f->addr, f->tag == REC_TIME_NS || f->ns);
}

/* Apply conditionals' @outcomes (REC_TNT's coding); 0, or -1 (a gap). */
static int w_outcomes(struct rec_walker *w, unsigned outcomes)
{
	int i;

	for (i = (int)rx_pend_count(outcomes) - 1; i >= 0; i--) {
		const struct rb *b = w_advance(w, 0);

		if (!b || b->term != RB_COND)
			return -1;
		w_insns(w, b->ninsn);
		if (outcomes >> i & 1) {
			w_branch(w, b, b->target, BT_BR_COND);
			w->pc = b->target;
		} else {
			w->pc = b->next;
		}
	}
	return 0;
}

/* Apply one record; 0, or -1 if it does not fit the code (a gap). */
static int w_record(struct rec_walker *w, struct rec_found *f)
{
	const struct rb *b;

	if (f->tag == REC_TIME_SYS || f->tag == REC_TIME ||
	    f->tag == REC_TIME_NS) {
		w_time(w, f);
		return 0;
	}
	if (f->tag == REC_IND) {
		w->hi = f->addr >> 32;
	} else if (f->tag == REC_IND32) {
		if (w->hi == ~0ull) {	/* its high half is lost */
			w->pc = 0;
			return 0;
		}
		f->addr |= w->hi << 32;
		f->tag = REC_IND;
	}

	if (f->tag == REC_SYNC) {
		if (w->pc && w->pc != f->addr)
			w_advance(w, f->addr);
		w->pc = f->addr;
		return 0;
	}
	if (!w->pc) {
		if (f->tag == REC_IND)
			w->pc = f->addr;	/* a place to start from */
		return 0;
	}
	if (w_outcomes(w, f->outcomes) < 0)
		return -1;
	if (f->tag != REC_IND)
		return 0;	/* a REC_TNT: outcomes only */
	b = w_advance(w, 0);
	if (!b || (b->term != RB_RET && b->term != RB_IJUMP &&
		   b->term != RB_ICALL))
		return -1;
	w_insns(w, b->ninsn);
	w_branch(w, b, f->addr, term_kind(b->term));
	w->pc = f->addr;
	return 0;
}

/* Append the record of @len bytes at @p (its tag first) to *@f. */
static int found_push(struct rec_found **f, size_t *n, size_t *cap,
		      const uint8_t *p, size_t len)
{
	struct rec_found *g;
	uint8_t tag = p[0];

	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4096;
		g = realloc(*f, *cap * sizeof(*g));
		if (!g)
			return -bte_nomem;
		*f = g;
	}
	g = &(*f)[(*n)++];
	g->tag = tag;
	g->ns = 0;
	g->outcomes = RX_PEND_NONE;
	if (tag >= REC_TNT) {
		g->outcomes = tag & 0x7f;
	} else if ((tag & 0xe0) == REC_IND_O || (tag & 0xe0) == REC_IND32_O) {
		g->outcomes = tag & 0x1f;
		g->tag = (tag & 0xe0) == REC_IND_O ? REC_IND : REC_IND32;
	}
	g->addr = 0;
	if (len > 1)
		memcpy(&g->addr, p + 1, len - 1);
	return 0;
}

/* The records collected so far, and where collecting stands. */
struct collect {
	struct rec_found *f;
	size_t n, cap;
	uint64_t total;		/* bytes written up to the oldest collected */
};

/*
 * Collect the records of one pass, from @a up to @limit, newest first:
 * @start bytes were written before the pass.  Stops at the first byte
 * already drained, a 0 tag (never written) or a record cut by @limit.
 */
static int collect_pass(const struct rec_ring_view *v, uint64_t drained,
			struct collect *c, uint64_t start, uint64_t a,
			uint64_t limit)
{
	while (a < limit) {
		const uint8_t *p = v->bytes + (a - v->base);
		size_t len;

		if (start + (v->top - a) <= drained) {
			c->total = drained;	/* reached: not read */
			break;
		}
		len = rec_len(p[0]);
		if (!len || a + len > limit)
			break;
		if (found_push(&c->f, &c->n, &c->cap, p, len) < 0)
			return -bte_nomem;
		c->total = start + (v->top - a) - len;
		a += len;
	}
	return 0;
}

/* The end of what @start bytes before a pass leave undrained from @a up. */
static uint64_t undrained_end(const struct rec_ring_view *v, uint64_t start,
			      uint64_t drained, uint64_t limit)
{
	uint64_t done = drained > start ? drained - start : 0;

	if (done >= v->top - v->base)
		return v->base;
	return v->top - done < limit ? v->top - done : limit;
}

int rec_drain_spans(const struct rec_ring_view *v, uint64_t drained,
		    uint64_t lo[2], uint64_t hi[2])
{
	int n = 0;

	if (v->head < v->base || v->head > v->top)
		return 0;
	lo[0] = v->head;
	hi[0] = undrained_end(v, v->pass_start, drained, v->top);
	if (hi[0] > lo[0])
		n++;
	if (v->prev_low && v->prev_low < v->head && drained < v->pass_start) {
		lo[n] = v->prev_low;
		hi[n] = undrained_end(v, v->prev_start, drained, v->head);
		if (hi[n] > lo[n])
			n++;
	}
	return n;
}

/*
 * Collect the records written since @drained, oldest first, into c->f
 * (grown as needed, kept by the walker): this pass's from head up, then the pass before's from
 * where it ended.  Returns 1 if the oldest ones were overwritten, 0, or
 * -bte_nomem.
 */
static int collect(const struct rec_ring_view *v, uint64_t drained,
		   struct collect *c)
{
	size_t i;
	int ret;

	c->total = v->pass_start + (v->top - v->head);
	ret = 0;
	if (c->total > drained)
		ret = collect_pass(v, drained, c, v->pass_start, v->head,
				   v->top);
	if (!ret && c->total > drained && v->prev_low)
		ret = collect_pass(v, drained, c, v->prev_start, v->prev_low,
				   v->head);
	if (ret < 0)
		return ret;
	for (i = 0; i < c->n / 2; i++) {	/* newest first: turn around */
		struct rec_found tmp = c->f[i];

		c->f[i] = c->f[c->n - 1 - i];
		c->f[c->n - 1 - i] = tmp;
	}
	return c->total > drained;
}

int rec_drain_collect(const struct rec_ring_view *v, uint64_t *drained,
		      struct rec_walker *w, size_t *n)
{
	struct collect c = { w->found, 0, w->found_cap, 0 };
	int lost;

	*n = 0;
	if (v->head < v->base || v->head > v->top)
		return -bte_corrupt;
	lost = collect(v, *drained, &c);
	w->found = c.f;
	w->found_cap = c.cap;
	if (lost < 0)
		return lost;
	*n = c.n;
	*drained = v->pass_start + (v->top - v->head);
	return lost;
}

void rec_drain_walk(struct rec_walker *w, struct rec_found *f, size_t n,
		    int lost, uint64_t stop)
{
	size_t i;

	if (lost) {
		w->pc = 0;
		w->hi = ~0ull;
		w->ops->gap(w->ctx, BT_GAP_OVERFLOW);
	}
	for (i = 0; i < n; i++) {
		if (w_record(w, &f[i]) < 0) {
			w->ops->gap(w->ctx, BT_GAP_DECODE);
			w->pc = 0;
		}
	}
	if (stop && w->pc)
		w_advance(w, stop);
}

int rec_drain(const struct rec_ring_view *v, uint64_t *drained,
	      struct rec_walker *w, uint64_t stop)
{
	size_t n;
	int lost = rec_drain_collect(v, drained, w, &n);

	if (lost < 0)
		return lost;
	rec_drain_walk(w, w->found, n, lost, stop);
	return lost;
}

void rec_walker_release(struct rec_walker *w)
{
	free(w->found);
	w->found = NULL;
	w->found_cap = 0;
}
