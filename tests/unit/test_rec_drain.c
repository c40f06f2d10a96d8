// SPDX-License-Identifier: MIT
/*
 * The recorder's ring drain, without a process: ring bytes written here
 * as the translated code and the tracer write them (rec_ring.h: records
 * stored downwards, head moved once a record is whole, a new pass at the
 * top when a record would cross the bottom), decoded against a few
 * blocks of code, and the history checked event by event.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "rec/rec_drain.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

#define BASE 0x400000ull	/* where the code claims to be */
#define RING 0x10000ull		/* where the ring claims to be */

/*
 * BASE+0  cmp %rcx,%rax     block A: [0, 5), a conditional to +8
 * BASE+3  jl +3
 * BASE+5  nop               block B: [5, 8), a jump to +10
 * BASE+6  jmp +2
 * BASE+8  nop               block C: [8, 11), a return
 * BASE+9  nop
 * BASE+10 ret               block D: [10, 11), the same return
 * BASE+11 nop               block E: [11, 14), a system call
 * BASE+12 syscall
 * BASE+14 ret               block F: [14, 15), a return
 * BASE+15 jmp *0(%rip)      block G: [15, 21), an indirect jump through
 *                           a word of memory (a PLT's)
 */
static const uint8_t code[] = {
	0x48, 0x39, 0xc8, 0x7c, 0x03, 0x90, 0xeb, 0x02, 0x90, 0x90, 0xc3,
	0x90, 0x0f, 0x05, 0xc3, 0xff, 0x25, 0x00, 0x00, 0x00, 0x00,
};

static int read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	uint8_t page[4096] = { 0 };

	if (addr < BASE || addr + len > BASE + sizeof(page))
		return -1;
	memcpy(page, code, sizeof(code));
	memcpy(buf, page + (addr - BASE), len);
	return 0;
}

enum { EV_INSNS = 1, EV_BRANCH, EV_GAP, EV_TIME };

struct ev {
	int what;
	uint64_t a, b;		/* insns: n; branch: from, to; gap: reason;
				   time: t, ns */
	int kind;
};

/* The blocks (decoded on first use) and the events the drain gave. */
struct fixture {
	struct rx *x;
	struct rb blocks[8];
	size_t nblocks;
	struct ev ev[64];
	size_t nev;
	/* the ring, as the thread and the tracer keep it */
	uint8_t bytes[64];
	uint8_t copy[64];	/* what the tracer read of it: the spans */
	uint64_t read;		/* bytes it read, over all drains */
	size_t size;
	struct rec_ring_view v;
	uint64_t drained;
	struct rec_walker w;
};

static const struct rb *fx_block(void *ctx, uint64_t pc)
{
	struct fixture *f = ctx;
	size_t i;

	for (i = 0; i < f->nblocks; i++)
		if (f->blocks[i].start == pc)
			return &f->blocks[i];
	if (f->nblocks == 8 ||
	    rx_block_decode(f->x, pc, read_code, NULL, NULL,
			    &f->blocks[f->nblocks]) < 0)
		return NULL;
	return &f->blocks[f->nblocks++];
}

static void fx_push(struct fixture *f, struct ev e)
{
	assert_true(f->nev < 64);
	f->ev[f->nev++] = e;
}

static void fx_insns(void *ctx, uint32_t n)
{
	fx_push(ctx, (struct ev){ EV_INSNS, n, 0, 0 });
}

static void fx_branch(void *ctx, uint64_t from, uint64_t to, int kind)
{
	fx_push(ctx, (struct ev){ EV_BRANCH, from, to, kind });
}

static void fx_gap(void *ctx, int reason)
{
	fx_push(ctx, (struct ev){ EV_GAP, (uint64_t)reason, 0, 0 });
}

static void fx_time(void *ctx, uint64_t t, int ns)
{
	fx_push(ctx, (struct ev){ EV_TIME, t, (uint64_t)ns, 0 });
}

static const struct rec_drain_ops fx_ops = {
	.block = fx_block,
	.insns = fx_insns,
	.branch = fx_branch,
	.gap = fx_gap,
	.time = fx_time,
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(rx_alloc(&f->x), 0);
	f->size = sizeof(f->bytes);
	f->v.bytes = f->bytes;
	f->v.base = RING;
	f->v.top = f->v.head = RING + f->size;
	f->w = (struct rec_walker){ &fx_ops, f, 0, ~0ull, NULL };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	size_t i;

	for (i = 0; i < f->nblocks; i++)
		rb_release(&f->blocks[i]);
	rec_walker_release(&f->w);
	rx_free(f->x);
	free(f);
	return 0;
}

/* A ring of @size bytes (at most sizeof(bytes)). */
static void ring_size(struct fixture *f, size_t size)
{
	f->size = size;
	f->v.top = f->v.head = RING + size;
}

/* Store a record as the writer does: a new pass where it would not fit. */
static void put(struct fixture *f, const uint8_t *rec, size_t len)
{
	struct rec_ring_view *v = &f->v;

	if (v->head - len < v->base) {
		v->prev_start = v->pass_start;
		v->prev_low = v->head;
		v->pass_start += v->top - v->head;
		v->head = v->top;
	}
	v->head -= len;
	memcpy(f->bytes + (v->head - v->base), rec, len);
}

static void put_addr(struct fixture *f, uint8_t tag, uint64_t addr)
{
	uint8_t rec[REC_ADDR_LEN] = { tag };

	memcpy(rec + 1, &addr, 8);
	put(f, rec, sizeof(rec));
}

static void put_tnt(struct fixture *f, uint8_t tnt)
{
	put(f, &tnt, 1);
}

/*
 * The spans read back to back (as the recorder reads them into the held
 * part) give what the ring's copy @v gives: the same bytes, counts and
 * positions (rec_drain_take_read() against rec_drain_take()).
 */
static void take_read_same(struct fixture *f, const struct rec_ring_view *v)
{
	uint8_t raw[64], out[64];
	struct rec_take a = { out, 0, 0, 0, 0 }, b = { raw, 0, 0, 0, 0 };
	uint64_t lo[2], hi[2], da = f->drained, db = f->drained;
	size_t len = 0;
	int i, n = rec_drain_spans(v, f->drained, lo, hi);

	for (i = 0; i < n; i++) {
		memcpy(raw + len, v->bytes + (lo[i] - v->base), hi[i] - lo[i]);
		len += hi[i] - lo[i];
	}
	memset(raw + len, REC_IND, sizeof(raw) - len);
	assert_int_equal(rec_drain_take(v, &da, &a),
			 rec_drain_take_read(v, &db, &b));
	assert_int_equal(a.len, b.len);
	assert_memory_equal(out, raw, a.len);
	assert_int_equal(a.branches, b.branches);
	assert_int_equal(a.times, b.times);
	assert_int_equal(a.total, b.total);
	assert_int_equal(da, db);
}

/*
 * Drain as the tracer does: only the spans rec_drain_spans() names are
 * read from the ring, into a copy whose other bytes are REC_IND tags (a
 * byte read outside them decodes as a target nowhere in the code).
 */
static int drain(struct fixture *f, uint64_t stop)
{
	struct rec_ring_view v = f->v;
	uint64_t lo[2], hi[2];
	int i, n;

	f->nev = 0;
	memset(f->copy, REC_IND, sizeof(f->copy));
	n = rec_drain_spans(&f->v, f->drained, lo, hi);
	assert_true(n >= 0 && n <= 2);
	for (i = 0; i < n; i++) {
		assert_true(lo[i] >= v.base && hi[i] <= v.top && lo[i] < hi[i]);
		memcpy(f->copy + (lo[i] - v.base), f->bytes + (lo[i] - v.base),
		       hi[i] - lo[i]);
		f->read += hi[i] - lo[i];
	}
	v.bytes = f->copy;
	take_read_same(f, &v);
	return rec_drain(&v, &f->drained, &f->w, stop);
}

static void ev_insns(const struct fixture *f, size_t i, uint32_t n)
{
	assert_true(i < f->nev);
	assert_int_equal(f->ev[i].what, EV_INSNS);
	assert_int_equal(f->ev[i].a, n);
}

static void ev_branch(const struct fixture *f, size_t i, uint64_t from,
		      uint64_t to, int kind)
{
	assert_true(i < f->nev);
	assert_int_equal(f->ev[i].what, EV_BRANCH);
	assert_int_equal(f->ev[i].a, from);
	assert_int_equal(f->ev[i].b, to);
	assert_int_equal(f->ev[i].kind, kind);
}

static void ev_gap(const struct fixture *f, size_t i, int reason)
{
	assert_true(i < f->nev);
	assert_int_equal(f->ev[i].what, EV_GAP);
	assert_int_equal(f->ev[i].a, (uint64_t)reason);
}

static void ev_time(const struct fixture *f, size_t i, uint64_t t, int ns)
{
	assert_true(i < f->nev);
	assert_int_equal(f->ev[i].what, EV_TIME);
	assert_int_equal(f->ev[i].a, t);
	assert_int_equal(f->ev[i].b, (uint64_t)ns);
}

/*
 * Time records: the TSC before a system call goes after the instructions
 * before it (the walk goes to the syscall's block), the one after it
 * after the syscall, the tracer's ns where the walk stands.
 */
static void drain_time(void **state)
{
	struct fixture *f = *state;

	put_addr(f, REC_SYNC, BASE + 11);
	put_addr(f, REC_TIME_SYS, 100);
	put_addr(f, REC_TIME, 200);
	put_addr(f, REC_TIME_NS, 300);
	put_addr(f, REC_IND, BASE);	/* the ret's target */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 7);
	ev_insns(f, 0, 1);		/* the nop */
	ev_time(f, 1, 100, 0);
	ev_insns(f, 2, 1);		/* the syscall */
	ev_time(f, 3, 200, 0);
	ev_time(f, 4, 300, 1);
	ev_insns(f, 5, 1);		/* the ret */
	ev_branch(f, 6, BASE + 14, BASE, BT_BR_RET);
	assert_int_equal(f->drained, 5 * REC_ADDR_LEN);
}

/* A start, a conditional taken, a return: oldest first, with counts. */
static void drain_basic(void **state)
{
	struct fixture *f = *state;

	put_addr(f, REC_SYNC, BASE);
	put_tnt(f, REC_TNT | 3);	/* one outcome, taken */
	put_addr(f, REC_IND, BASE);	/* the ret's target */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 4);
	ev_insns(f, 0, 2);
	ev_branch(f, 1, BASE + 3, BASE + 8, BT_BR_COND);
	ev_insns(f, 2, 3);
	ev_branch(f, 3, BASE + 10, BASE, BT_BR_RET);
	assert_int_equal(f->drained, 19);
	assert_int_equal(f->read, 19);
	assert_int_equal(f->w.pc, BASE);
}

/*
 * A second drain gives only what was written since, from where the
 * first one stood, and walks on to the thread's pc.
 */
static void drain_incremental(void **state)
{
	struct fixture *f = *state;

	put_addr(f, REC_SYNC, BASE);
	put_tnt(f, REC_TNT | 2);	/* not taken */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 1);
	ev_insns(f, 0, 2);
	assert_int_equal(f->w.pc, BASE + 5);

	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 0);	/* nothing new */
	assert_int_equal(f->read, 10);	/* and nothing read */

	put_addr(f, REC_IND, BASE);
	assert_int_equal(drain(f, BASE + 3), 0);
	assert_int_equal(f->nev, 5);
	ev_insns(f, 0, 2);		/* nop, jmp */
	ev_branch(f, 1, BASE + 6, BASE + 10, BT_BR_JUMP);
	ev_insns(f, 2, 1);
	ev_branch(f, 3, BASE + 10, BASE, BT_BR_RET);
	ev_insns(f, 4, 1);		/* the cmp before the stop */
	assert_int_equal(f->w.pc, BASE + 3);
	assert_int_equal(f->read, 19);	/* each byte once */
}

/*
 * Drains between wraps: each reads only what was written since the last,
 * across the top of the ring too, and nothing is lost or read twice.
 */
static void drain_wrap_incremental(void **state)
{
	struct fixture *f = *state;
	int round;

	ring_size(f, 32);
	put_addr(f, REC_SYNC, BASE);
	for (round = 0; round < 6; round++) {
		put_tnt(f, REC_TNT | 2);	/* not taken: block B */
		put_addr(f, REC_IND, BASE);	/* its return */
		assert_int_equal(drain(f, 0), 0);
		assert_int_equal(f->nev, 5);
		ev_insns(f, 0, 2);
		ev_branch(f, 2, BASE + 6, BASE + 10, BT_BR_JUMP);
		ev_branch(f, 4, BASE + 10, BASE, BT_BR_RET);
		assert_int_equal(f->read, f->drained);
	}
	assert_true(f->v.pass_start > 0);	/* it wrapped */
	assert_int_equal(f->drained, 9 + 6 * 10);
}

/* A target record whose high half is that of the last REC_IND. */
static void drain_ind32(void **state)
{
	struct fixture *f = *state;
	uint8_t rec[REC_IND32_LEN] = { REC_IND32 };
	uint32_t lo = (uint32_t)BASE;

	put_addr(f, REC_SYNC, BASE + 8);
	put_addr(f, REC_IND, BASE);
	put_tnt(f, REC_TNT | 3);
	memcpy(rec + 1, &lo, 4);
	put(f, rec, sizeof(rec));
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 6);
	ev_branch(f, 1, BASE + 10, BASE, BT_BR_RET);
	ev_branch(f, 3, BASE + 3, BASE + 8, BT_BR_COND);
	ev_branch(f, 5, BASE + 10, BASE, BT_BR_RET);
}

/* Block G, decoded, holding @icbit as its translation would (rb.icbit). */
static void g_icbit(struct fixture *f, uint64_t icbit)
{
	struct rb *g = (struct rb *)fx_block(f, BASE + 15);

	assert_non_null(g);
	assert_int_equal(g->term, RB_IJUMP);
	g->ic_fixed = 1;
	g->icbit = icbit;
}

/*
 * An indirect jump compared with its block's icbit: a hit is a taken
 * outcome carried as a conditional's is (here in one REC_TNT with the
 * conditional after it), a miss an outcome not taken in the tag of the
 * record of its target.
 */
static void drain_icbit(void **state)
{
	struct fixture *f = *state;

	g_icbit(f, BASE);
	put_addr(f, REC_SYNC, BASE + 15);
	put_tnt(f, REC_TNT | 7);	/* G hits: to A; A's taken */
	put_addr(f, REC_IND, BASE + 15);	/* C's ret, to G */
	put_addr(f, REC_IND_O | 2, BASE + 11);	/* G misses: to E */
	assert_int_equal(drain(f, BASE + 12), 0);
	assert_int_equal(f->nev, 9);
	ev_insns(f, 0, 1);
	ev_branch(f, 1, BASE + 15, BASE, BT_BR_IJUMP);
	ev_insns(f, 2, 2);
	ev_branch(f, 3, BASE + 3, BASE + 8, BT_BR_COND);
	ev_insns(f, 4, 3);
	ev_branch(f, 5, BASE + 10, BASE + 15, BT_BR_RET);
	ev_insns(f, 6, 1);
	ev_branch(f, 7, BASE + 15, BASE + 11, BT_BR_IJUMP);
	ev_insns(f, 8, 1);		/* E's nop, up to the stop */
}

/*
 * What the translation never writes does not fit: a miss's outcome
 * anywhere but last in a target's tag, and a target of G's without it.
 */
static void drain_icbit_misfit(void **state)
{
	struct fixture *f = *state;

	g_icbit(f, BASE);
	put_addr(f, REC_SYNC, BASE + 15);
	put_tnt(f, REC_TNT | 2);	/* a miss in a REC_TNT */
	put_addr(f, REC_SYNC, BASE + 15);
	put_addr(f, REC_IND, BASE + 11);	/* a target with no miss */
	put_addr(f, REC_SYNC, BASE + 15);
	put_addr(f, REC_IND_O | 5, BASE + 11);	/* a miss, then a hit */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 3);
	ev_gap(f, 0, BT_GAP_DECODE);
	ev_gap(f, 1, BT_GAP_DECODE);
	ev_gap(f, 2, BT_GAP_DECODE);
}

/*
 * The ring wraps: the oldest record is overwritten (a gap), decoding
 * restarts at the first target or sync of what is left, and goes on
 * across the wrap into the new pass.
 */
static void drain_wrap(void **state)
{
	struct fixture *f = *state;

	ring_size(f, 32);
	put_addr(f, REC_SYNC, BASE);	/* overwritten below */
	put_tnt(f, REC_TNT | 3);	/* lost: nothing to start from */
	put_addr(f, REC_IND, BASE);	/* decoding starts here */
	put_addr(f, REC_SYNC, BASE);
	put_tnt(f, REC_TNT | 2);
	put_addr(f, REC_IND, BASE);	/* a new pass at the top */
	assert_int_equal(f->v.prev_low, RING + 3);
	assert_int_equal(f->v.pass_start, 29);

	assert_int_equal(drain(f, 0), 1);
	assert_int_equal(f->nev, 6);
	ev_gap(f, 0, BT_GAP_OVERFLOW);
	ev_insns(f, 1, 2);		/* the conditional not taken */
	ev_insns(f, 2, 2);
	ev_branch(f, 3, BASE + 6, BASE + 10, BT_BR_JUMP);
	ev_insns(f, 4, 1);
	ev_branch(f, 5, BASE + 10, BASE, BT_BR_RET);
	assert_int_equal(f->drained, 29 + 9);
}

/*
 * The thread stopped in the middle of a record: its bytes lie below head,
 * which has not moved, and the drain never reads them.
 */
static void drain_torn(void **state)
{
	struct fixture *f = *state;
	uint64_t head;

	put_addr(f, REC_SYNC, BASE);
	put_tnt(f, REC_TNT | 3);
	head = f->v.head;
	put_addr(f, REC_IND, 0x1234567890ull);	/* being written ... */
	f->v.head = head;			/* ... not committed */
	assert_int_equal(drain(f, 0), 0);
	assert_int_equal(f->nev, 2);
	ev_insns(f, 0, 2);
	ev_branch(f, 1, BASE + 3, BASE + 8, BT_BR_COND);
	assert_int_equal(f->drained, 10);
}

/* A record that does not fit the code: a gap, and decoding starts again. */
static void drain_misfit(void **state)
{
	struct fixture *f = *state;

	put_addr(f, REC_SYNC, BASE + 5);
	put_tnt(f, REC_TNT | 3);	/* block B ends in a jump, not a jcc */
	put_addr(f, REC_IND, BASE);
	put_tnt(f, REC_TNT | 2);
	assert_int_equal(drain(f, 0), 0);
	ev_gap(f, f->nev - 2, BT_GAP_DECODE);
	ev_insns(f, f->nev - 1, 2);
}

/* A head outside the ring is refused, and nothing is decoded. */
static void drain_corrupt(void **state)
{
	struct fixture *f = *state;

	f->v.head = f->v.top + 1;
	assert_int_equal(drain(f, 0), -bte_corrupt);
	assert_int_equal(f->nev, 0);
	f->v.head = f->v.base - 1;
	assert_int_equal(drain(f, 0), -bte_corrupt);
	assert_int_equal(f->drained, 0);
}

/*
 * A long history walked straight from its bytes (rec_drain_walk_raw(), as
 * a held part is replayed): 40,000 rounds of block A's conditional, taken
 * in the rounds whose number has bit 0 and bit 2 differ, then the return
 * to A, read in chunks from the oldest (20 of 4,096 records: more than the
 * walk notes on its stack).  Each round's branches come in its order, the
 * chunks in theirs; a record cut by the length ends it.
 */
#define ROUNDS 40000

struct long_walk {
	struct fixture *f;
	size_t branches, bad;
};

static const struct rb *lw_block(void *ctx, uint64_t pc)
{
	return fx_block(((struct long_walk *)ctx)->f, pc);
}

static void lw_insns(void *ctx, uint32_t n)
{
	(void)ctx;
	(void)n;
}

static int lw_taken(size_t round)
{
	return (round & 1) != ((round >> 2) & 1);
}

static void lw_branch(void *ctx, uint64_t from, uint64_t to, int kind)
{
	struct long_walk *l = ctx;
	size_t round = l->branches / 2;
	int first = l->branches % 2 == 0;

	if (first && lw_taken(round))
		l->bad += !(from == BASE + 3 && to == BASE + 8 &&
			    kind == BT_BR_COND);
	else if (first)
		l->bad += !(from == BASE + 6 && to == BASE + 10 &&
			    kind == BT_BR_JUMP);
	else
		l->bad += !(from == BASE + 10 && to == BASE &&
			    kind == BT_BR_RET);
	l->branches++;
}

static void lw_gap(void *ctx, int reason)
{
	(void)reason;
	((struct long_walk *)ctx)->bad++;
}

static const struct rec_drain_ops lw_ops = {
	.block = lw_block,
	.insns = lw_insns,
	.branch = lw_branch,
	.gap = lw_gap,
};

static void drain_long(void **state)
{
	struct fixture *f = *state;
	size_t cap = REC_ADDR_LEN * (2 * ROUNDS + 1), at = cap, i;
	uint8_t *raw = malloc(cap);
	struct long_walk l = { f, 0, 0 };
	struct rec_walker w = { &lw_ops, &l, 0, ~0ull, NULL };
	uint64_t a = BASE;

	assert_non_null(raw);
	/* newest first: written from the end, oldest record first */
	at -= REC_ADDR_LEN;
	raw[at] = REC_SYNC;
	memcpy(raw + at + 1, &a, 8);
	for (i = 0; i < ROUNDS; i++) {
		raw[--at] = lw_taken(i) ? REC_TNT | 3 : REC_TNT | 2;
		at -= REC_ADDR_LEN;
		raw[at] = REC_IND;
		memcpy(raw + at + 1, &a, 8);
	}
	assert_int_equal(rec_drain_walk_raw(&w, raw + at, cap - at, 0, 0),
			 2 * ROUNDS + 1);
	assert_int_equal(l.branches, 2 * ROUNDS);
	assert_int_equal(l.bad, 0);
	assert_int_equal(w.pc, BASE);

	/* bytes that start no record: nothing walked */
	l.branches = 0;
	assert_int_equal(rec_drain_walk_raw(&w, raw + at + 1, cap - at - 1, 0,
					    0), 0);
	assert_int_equal(l.branches, 0);

	/* the oldest record (the start) cut by the length: the walk starts
	 * at the first return's target, a round late */
	w.pc = 0;
	w.hi = ~0ull;
	l.branches = 2;		/* round 0's, not seen */
	assert_int_equal(rec_drain_walk_raw(&w, raw + at, cap - at - 1, 0, 0),
			 2 * ROUNDS);
	assert_int_equal(l.branches, 2 * ROUNDS);
	assert_int_equal(l.bad, 0);
	rec_walker_release(&w);
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(drain_basic, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_time, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_incremental, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drain_wrap_incremental, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drain_ind32, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_misfit, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_icbit, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_icbit_misfit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(drain_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(drain_long, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
