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
#include "internal.h"
#include "rec/rec_drain.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

#define WALK_MAX	100000		/* blocks walked without a record */

size_t rec_len(uint8_t tag)
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
	case REC_TIME_SYS_NS:
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

	if ((f->tag == REC_TIME_SYS || f->tag == REC_TIME_SYS_NS) && w->pc)
		b = w_advance_sys(w, 0, 1);
	if (b && b->term == RB_SYSCALL) {
		w_insns(w, b->ninsn - 1);
		if (w->ops->time)
			w->ops->time(w->ctx, f->addr,
				     f->tag == REC_TIME_SYS_NS);
		w_insns(w, 1);
		w->pc = b->next;
		return;
	}
	if (w->ops->time)
		w->ops->time(w->ctx, f->addr, f->tag == REC_TIME_NS ||
					      f->tag == REC_TIME_SYS_NS);
}

/*
 * Apply @outcomes (REC_TNT's coding): conditionals', and those of
 * indirect branches compared with their block's icbit (rec_xlate.h).
 * 0; 1 if the last is such a branch's not taken, which only a target
 * record's tag (@ind) holds: its target is that record's, and the walk
 * stands at its block; -1 if they do not fit the code (a gap).
 */
static int w_outcomes(struct rec_walker *w, unsigned outcomes, int ind)
{
	int i;

	for (i = (int)rx_pend_count(outcomes) - 1; i >= 0; i--) {
		const struct rb *b = w_advance(w, 0);
		int taken = outcomes >> i & 1;

		if (!b)
			return -1;
		if ((b->term == RB_IJUMP || b->term == RB_ICALL) && b->icbit) {
			if (!taken)
				return i == 0 && ind ? 1 : -1;
			w_insns(w, b->ninsn);
			w_branch(w, b, b->icbit, term_kind(b->term));
			w->pc = b->icbit;
			continue;
		}
		if (b->term != RB_COND)
			return -1;
		w_insns(w, b->ninsn);
		if (taken) {
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
	int missed;

	if (f->tag == REC_TIME_SYS || f->tag == REC_TIME ||
	    f->tag == REC_TIME_NS || f->tag == REC_TIME_SYS_NS) {
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
	missed = w_outcomes(w, f->outcomes, f->tag == REC_IND);
	if (missed < 0)
		return -1;
	if (f->tag != REC_IND)
		return 0;	/* a REC_TNT: outcomes only */
	b = w_advance(w, 0);
	if (!b || (b->term != RB_RET && b->term != RB_IJUMP &&
		   b->term != RB_ICALL) || !b->icbit != !missed)
		return -1;
	w_insns(w, b->ninsn);
	w_branch(w, b, f->addr, term_kind(b->term));
	w->pc = f->addr;
	return 0;
}

/*
 * What record tag @tag stands for: REC_IND or REC_IND32 for their
 * variants with outcomes, else itself; *@outcomes the conditionals'
 * outcomes it holds (REC_TNT's coding), RX_PEND_NONE if none.
 */
static uint8_t tag_split(uint8_t tag, uint8_t *outcomes)
{
	*outcomes = RX_PEND_NONE;
	if (tag >= REC_TNT) {
		*outcomes = tag & 0x7f;
	} else if ((tag & 0xe0) == REC_IND_O || (tag & 0xe0) == REC_IND32_O) {
		*outcomes = tag & 0x1f;
		return (tag & 0xe0) == REC_IND_O ? REC_IND : REC_IND32;
	}
	return tag;
}

/* The record of @len bytes at @p (its tag first) into @f. */
static void found_set(struct rec_found *f, const uint8_t *p, size_t len)
{
	f->tag = tag_split(p[0], &f->outcomes);
	f->addr = 0;
	if (len > 1)
		memcpy(&f->addr, p + 1, len - 1);
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

/* Branches the record tagged @tag makes at least: its target, and its
 * conditionals' outcomes taken. */
static unsigned tag_branches(uint8_t tag)
{
	uint8_t out, kind = tag_split(tag, &out);
	unsigned n = kind == REC_IND || kind == REC_IND32, i;

	for (i = 0; i < rx_pend_count(out); i++)
		n += out >> i & 1;
	return n;
}

/*
 * The records of one pass, from @a up to @limit, newest first (@start
 * bytes were written before the pass; @src holds the bytes from @a up),
 * moved to @t's end as they lie and counted.  Stops at the first byte
 * already drained, a 0 tag (never written) or a record cut by @limit.
 */
static void take_pass(const struct rec_ring_view *v, uint64_t drained,
		      struct rec_take *t, uint64_t start, uint64_t a,
		      uint64_t limit, const uint8_t *src)
{
	uint64_t from = a;

	while (a < limit) {
		const uint8_t *p = src + (a - from);
		size_t len;

		if (start + (v->top - a) <= drained) {
			t->total = drained;	/* reached: not read */
			break;
		}
		len = rec_len(p[0]);
		if (!len || a + len > limit)
			break;
		t->branches += tag_branches(p[0]);
		t->times += REC_IS_TIME(p[0]);
		t->total = start + (v->top - a) - len;
		a += len;
	}
	if (t->out + t->len != src)
		memmove(t->out + t->len, src, a - from);
	t->len += a - from;
}

/* rec_drain_take(), the bytes of the pass's own part (from head up) at
 * @own, those of the pass before (from prev_low up) at @prev. */
static int take(const struct rec_ring_view *v, uint64_t *drained,
		struct rec_take *t, const uint8_t *own, const uint8_t *prev)
{
	int lost;

	t->len = 0;
	t->branches = 0;
	t->times = 0;
	if (v->head < v->base || v->head > v->top)
		return -bte_corrupt;
	t->total = v->pass_start + (v->top - v->head);
	if (t->total > *drained)
		take_pass(v, *drained, t, v->pass_start, v->head, v->top, own);
	if (t->total > *drained && v->prev_low)
		take_pass(v, *drained, t, v->prev_start, v->prev_low, v->head,
			  prev);
	lost = t->total > *drained;
	*drained = v->pass_start + (v->top - v->head);
	return lost;
}

int rec_drain_take(const struct rec_ring_view *v, uint64_t *drained,
		   struct rec_take *t)
{
	return take(v, drained, t, v->bytes + (v->head - v->base),
		    v->prev_low ? v->bytes + (v->prev_low - v->base) : NULL);
}

int rec_drain_take_read(const struct rec_ring_view *v, uint64_t *drained,
			struct rec_take *t)
{
	uint64_t lo[2], hi[2];
	size_t own = 0;

	if (rec_drain_spans(v, *drained, lo, hi) > 0 && lo[0] == v->head)
		own = hi[0] - lo[0];
	return take(v, drained, t, t->out, t->out + own);
}

/*
 * The records lie newest first and are walked oldest first, but a
 * record's length is known only from its tag, so they are read from the
 * newest on: a first pass notes where every FOUND_CHUNK-th record starts,
 * then the chunks are taken from the oldest, each read into w->found and
 * walked backwards.  So what a walk holds is FOUND_CHUNK records (64 KiB,
 * kept from one walk to the next), not 16 bytes for each of the 2.5 that
 * a record takes in the ring: a thread's whole held history (four rings'
 * worth) was a found array of tens of MiB, whose first touch was 4% of
 * python3's loop under the recorder (docs/recorder.md).
 */
#define FOUND_CHUNK	4096

long rec_drain_walk_raw(struct rec_walker *w, const uint8_t *raw, size_t len,
			int lost, uint64_t stop)
{
	size_t small[16], *mark = small, nmark = 0, cap = 16, off = 0, end;
	size_t rlen;
	long n = 0;

	if (!w->found) {
		w->found = malloc(FOUND_CHUNK * sizeof(*w->found));
		if (!w->found)
			return -bte_nomem;
	}
	while (off < len) {	/* where each chunk starts, newest first */
		rlen = rec_len(raw[off]);
		if (!rlen || off + rlen > len)
			break;
		if (n % FOUND_CHUNK == 0) {
			if (nmark == cap) {
				size_t *m = malloc(2 * cap * sizeof(*m));

				if (!m) {
					if (mark != small)
						free(mark);
					return -bte_nomem;
				}
				memcpy(m, mark, cap * sizeof(*m));
				if (mark != small)
					free(mark);
				mark = m;
				cap *= 2;
			}
			mark[nmark++] = off;
		}
		off += rlen;
		n++;
	}
	end = off;
	if (lost) {
		w->pc = 0;
		w->hi = ~0ull;
		w->ops->gap(w->ctx, BT_GAP_OVERFLOW);
	}
	while (nmark--) {	/* the oldest chunk first, backwards */
		size_t k = 0;

		for (off = mark[nmark]; off < end; off += rlen) {
			rlen = rec_len(raw[off]);
			found_set(&w->found[k++], raw + off, rlen);
		}
		while (k--) {
			if (w_record(w, &w->found[k]) < 0) {
				w->ops->gap(w->ctx, BT_GAP_DECODE);
				w->pc = 0;
			}
		}
		end = mark[nmark];
	}
	if (mark != small)
		free(mark);
	if (stop && w->pc)
		w_advance(w, stop);
	return n;
}

int rec_drain(const struct rec_ring_view *v, uint64_t *drained,
	      struct rec_walker *w, uint64_t stop)
{
	struct rec_take t = { NULL, 0, 0, 0, 0 };
	uint64_t lo[2], hi[2];
	size_t room = 0;
	int i, lost;

	for (i = 0; i < rec_drain_spans(v, *drained, lo, hi); i++)
		room += hi[i] - lo[i];
	t.out = malloc(room ? room : 1);
	if (!t.out)
		return -bte_nomem;
	lost = rec_drain_take(v, drained, &t);
	if (lost >= 0 && rec_drain_walk_raw(w, t.out, t.len, lost, stop) < 0)
		lost = -bte_nomem;
	free(t.out);
	return lost;
}

void rec_walker_release(struct rec_walker *w)
{
	free(w->found);
	w->found = NULL;
}
