// SPDX-License-Identifier: MIT
/*
 * A thread's slot (recorder_int.h): its ring and control block in the
 * process, the records the tracer writes itself, and the drain that
 * decodes what the thread wrote (rec_drain.h) into its history.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_drain.h"
#include "rec/rec_ring.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

/* Give @rt a slot: its ring and control block, readable and writable. */
int rc_slot_take(struct bt_recorder *r, struct bt_thread *th,
		 struct rthread *rt)
{
	uint64_t tcb[TCB_HI / 8 + 1];
	uint64_t start;
	size_t len = r->t->opts.buffer_size + TCB_SIZE;
	int i, ret;

	bt_thread_settle(r->t, th);	/* walked from the old slot's state */
	for (i = 0; i < SLOT_MAX && r->slot_used[i]; i++)
		;
	if (i == SLOT_MAX)
		return -bte_nomem;
	start = r->slots + (uint64_t)i * r->slot_size + 4096;
	ret = (int)rc_syscall(r, th, SYS_mprotect, start, len,
			    PROT_READ | PROT_WRITE, 0, 0);
	if (ret == 0 && r->slot_dirty[i])
		ret = (int)rc_syscall(r, th, SYS_madvise, start, len,
				    MADV_DONTNEED, 0, 0);
	if (ret < 0)
		return ret < -4095 ? ret : -bte_nomem;
	r->slot_used[i] = 1;
	r->slot_dirty[i] = 1;
	rt->slot = i;
	rt->base = start;
	rt->top = rt->tcb = start + r->t->opts.buffer_size;
	rt->pass_start = rt->prev_start = rt->prev_low = rt->drained = 0;
	rt->whi = ~0ull;
	memset(tcb, 0, sizeof(tcb));
	tcb[TCB_HEAD / 8] = rt->top;
	tcb[TCB_TABLE1 / 8] = r->tables;
	tcb[TCB_TABLE2 / 8] = r->tables + RX_TABLE_BYTES;
	tcb[TCB_HI / 8] = REC_HI_NONE;
	return rc_mem_write(r, rt->tcb, tcb, sizeof(tcb));
}

/* ---- the ring ----------------------------------------------------------- */

/* The head, checked: the program may have written it (rec_guard.c). */
int rc_head_read(struct bt_recorder *r, struct rthread *rt, uint64_t *head)
{
	int ret = rc_mem_read(r, rt->tcb + TCB_HEAD, head, 8);

	if (ret == 0 && (*head < rt->base || *head > rt->top))
		return -bte_corrupt;
	return ret;
}

/* The ring's bottom is reached by a record of @len at @head: start over. */
void rc_ring_wrap(struct rthread *rt, uint64_t head)
{
	rt->prev_start = rt->pass_start;
	rt->prev_low = head;
	rt->pass_start += rt->top - head;
}

/* The tracer writes a record: @len bytes of @rec. */
int rc_ring_put(struct bt_recorder *r, struct rthread *rt, const void *rec,
		size_t len)
{
	uint64_t head;
	int ret = rc_head_read(r, rt, &head);

	if (ret < 0)
		return ret;
	if (head - len < rt->base) {
		rc_ring_wrap(rt, head);
		head = rt->top;
	}
	head -= len;
	ret = rc_mem_write(r, head, rec, len);
	return ret < 0 ? ret : rc_mem_write(r, rt->tcb + TCB_HEAD, &head, 8);
}

/* The next target @rt records is whole (a place to decode from). */
int rc_hi_reset(struct bt_recorder *r, struct rthread *rt)
{
	uint32_t none = REC_HI_NONE;

	return rc_mem_write(r, rt->tcb + TCB_HI, &none, sizeof(none));
}

int rc_ring_sync(struct bt_recorder *r, struct rthread *rt, uint64_t pc)
{
	uint8_t rec[REC_ADDR_LEN];

	if (rc_hi_reset(r, rt) < 0)
		return -bte_io;
	rec[0] = REC_SYNC;
	memcpy(rec + 1, &pc, 8);
	return rc_ring_put(r, rt, rec, sizeof(rec));
}

/* ---- draining ----------------------------------------------------------- */

/*
 * A drain is held in the thread's history (bt_thread_hold) and walked
 * when the history is read (bt_recorder_replay): a stop costs the copy of
 * what the thread wrote since the last one, whatever the ring keeps.
 * Behind it: how to walk the records that follow it.
 */
struct rc_held {
	uint64_t stop;		/* walk on to here after them (0: no) */
	uint32_t acc;		/* instructions the host counted before them */
	uint32_t n;		/* records */
	uint8_t lost;		/* records were overwritten before them */
	uint8_t reset;		/* where the walk stands is unknown after */
	uint8_t pad[6];
};

struct replay_ctx {
	struct bt_recorder *r;
	struct bt_thread *th;
	uint32_t acc;
};

static const struct rb *replay_block(void *ctx, uint64_t pc)
{
	struct replay_ctx *c = ctx;

	return rc_block_get(c->r, pc);
}

static void replay_insns(void *ctx, uint32_t n)
{
	struct replay_ctx *c = ctx;

	c->acc += n;
	c->r->t->stats.instructions += n;
}

static void replay_branch(void *ctx, uint64_t from, uint64_t to, int kind)
{
	struct replay_ctx *c = ctx;

	bt_thread_record(c->r->t, c->th, from, to, c->acc, kind, 0);
	c->acc = 0;
}

static void replay_gap(void *ctx, int reason)
{
	struct replay_ctx *c = ctx;

	bt_thread_gap(c->th, 0, 0, reason);
	c->acc = 0;
}

static void replay_time(void *ctx, uint64_t t, int ns)
{
	struct replay_ctx *c = ctx;

	bt_thread_time_put(c->th, ns ? t : rc_clock_ns(&c->r->clock, t),
			   c->acc, BT_TIMEF_SYSCALL);
}

static const struct rec_drain_ops replay_ops = {
	.block = replay_block,
	.insns = replay_insns,
	.branch = replay_branch,
	.gap = replay_gap,
	.time = replay_time,
};

/* Walk @n records at @f held as @h into @th's ring, @acc instructions
 * owed to its first branch; returns those after its last. */
static uint32_t replay_part(struct bt_recorder *r, struct bt_thread *th,
			    const struct rc_held *h, struct rec_found *f,
			    size_t n, uint32_t acc, int cut)
{
	struct replay_ctx c = { r, th, acc + h->acc };
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct rec_walker w = { &replay_ops, &c, 0, ~0ull, NULL, 0 };

	if (!rt) {	/* its recorder went first: cannot be */
		if (n)
			bt_thread_gap(th, 0, 0, BT_GAP_DECODE);
		return n ? 0 : c.acc;
	}
	w.pc = cut ? 0 : rt->wpc;
	w.hi = cut ? ~0ull : rt->whi;
	rec_drain_walk(&w, f, n, h->lost, h->stop);
	rt->wpc = h->reset ? 0 : w.pc;
	rt->whi = h->reset > 1 ? ~0ull : w.hi;
	return c.acc;
}

/*
 * A held part's records, as compact as the ring's: the tag, its outcomes
 * (a time: whether it is in ns), then the address: 8 bytes for REC_IND,
 * REC_SYNC and the times, 4 for REC_IND32, none for REC_TNT.
 */
static size_t held_addr_len(uint8_t tag)
{
	return tag == REC_IND32 ? 4 : tag >= REC_TNT ? 0 : 8;
}

/* Branches @f's record makes at least: its target's, its outcomes taken. */
static unsigned held_branches(const struct rec_found *f)
{
	unsigned n = f->tag == REC_IND || f->tag == REC_IND32, i;

	if (f->tag != REC_IND && f->tag != REC_IND32 && f->tag < REC_TNT)
		return 0;
	for (i = 0; i < rx_pend_count(f->outcomes); i++)
		n += f->outcomes >> i & 1;
	return n;
}

/* Pack @n records of @f at @out; *@min: the bytes of ring records they
 * make at least. */
static size_t held_pack(const struct rec_found *f, size_t n, uint8_t *out,
			uint64_t *min)
{
	uint8_t *p = out;
	size_t i, len;
	uint64_t branches = 0;

	for (i = 0; i < n; i++) {
		branches += held_branches(&f[i]);
		*p++ = f[i].tag;
		*p++ = f[i].ns ? 1 : f[i].outcomes;
		len = held_addr_len(f[i].tag);
		memcpy(p, &f[i].addr, len);
		p += len;
	}
	*min = branches * sizeof(struct bt_rec_branch);
	return (size_t)(p - out);
}

static size_t held_unpack(const uint8_t *p, size_t len, struct rec_found *f,
			  size_t max)
{
	const uint8_t *end = p + len;
	size_t n = 0, alen;

	while (n < max && end - p >= 2) {
		struct rec_found *g = &f[n];

		g->tag = p[0];
		g->ns = 0;
		g->outcomes = p[1];
		if (g->tag == REC_TIME || g->tag == REC_TIME_SYS ||
		    g->tag == REC_TIME_NS) {
			g->ns = p[1];
			g->outcomes = RX_PEND_NONE;
		}
		alen = held_addr_len(g->tag);
		if ((size_t)(end - p) < 2 + alen)
			break;
		g->addr = 0;
		memcpy(&g->addr, p + 2, alen);
		p += 2 + alen;
		n++;
	}
	return n;
}

uint32_t bt_recorder_replay(struct bt_recorder *r, struct bt_thread *th,
			    void *data, size_t len, uint32_t acc, int cut)
{
	struct rec_walker *s = r ? &r->replay_w : NULL;
	struct rc_held h;
	size_t n = 0;

	if (len < sizeof(h))
		return acc;
	memcpy(&h, data, sizeof(h));
	len -= sizeof(h);
	if (s && h.n > s->found_cap) {
		struct rec_found *g = realloc(s->found, h.n * sizeof(*g));

		if (!g) {
			bt_thread_gap(th, 0, 0, BT_GAP_DECODE);
			return 0;
		}
		s->found = g;
		s->found_cap = h.n;
	}
	if (s && h.n)
		n = held_unpack((uint8_t *)data + sizeof(h), len, s->found,
				h.n);
	return replay_part(r, th, &h, s ? s->found : NULL, n, acc, cut);
}

/* Hold @n records at @f behind what @rt's history holds. */
static void hold(struct bt_recorder *r, struct rthread *rt,
		 const struct rc_held *h, struct rec_found *f, size_t n)
{
	struct bt_target *t = r->t;
	uint8_t *p = bt_thread_hold_room(rt->th, sizeof(*h) + 10 * n);
	uint64_t min;
	uint32_t acc;
	size_t len;

	if (p) {
		memcpy(p, h, sizeof(*h));
		((struct rc_held *)p)->n = (uint32_t)n;
		len = held_pack(f, n, p + sizeof(*h), &min);
		bt_thread_hold(rt->th, sizeof(*h) + len, min);
		/* records that make no branch (conditionals not taken) are
		 * never dropped: past what a ring's worth would be, now */
		if (bt_thread_held(rt->th) > 4 * t->opts.buffer_size + (1u << 20))
			bt_thread_settle(t, rt->th);
		return;
	}
	/* no memory to hold it: walked now, after what is held */
	bt_thread_settle(t, rt->th);
	acc = replay_part(r, rt->th, h, f, n, 0, 0);
	if (acc && r->host.acc_give)
		r->host.acc_give(t, rt->th, acc);
}

/*
 * Take what @rt's ring holds since the last drain into the thread's
 * history (rec_drain.h), to be walked on to @stop (the thread's original
 * pc; 0: unknown) when the history is read; with @reset, where the walk
 * stands is unknown after it (the thread leaves the translation).
 */
void rc_drain_as(struct bt_recorder *r, struct rthread *rt, uint64_t stop,
		 int reset)
{
	struct rec_walker w = { NULL, NULL, 0, 0, r->drain_w.found,
				r->drain_w.found_cap };
	struct rec_ring_view v = {
		.bytes = r->ringbuf, .base = rt->base, .top = rt->top,
		.pass_start = rt->pass_start, .prev_start = rt->prev_start,
		.prev_low = rt->prev_low,
	};
	struct rc_held h = { .stop = stop, .reset = (uint8_t)reset };
	uint64_t lo[2], hi[2], drained = rt->drained, newest = 0;
	size_t i, n = 0;
	int k, nspan, lost = -1;

	if (rc_head_read(r, rt, &v.head) == 0 && v.head >= rt->base &&
	    v.head <= rt->top) {
		nspan = rec_drain_spans(&v, drained, lo, hi);
		for (k = 0; k < nspan; k++) {	/* what was written since */
			if (rc_mem_read(r, lo[k], r->ringbuf + (lo[k] - rt->base),
					hi[k] - lo[k]) < 0)
				break;
			r->t->stats.ring_read += hi[k] - lo[k];
		}
		if (k == nspan)
			lost = rec_drain_collect(&v, &drained, &w, &n);
		r->drain_w.found = w.found;
		r->drain_w.found_cap = w.found_cap;
	}
	if (lost < 0) {		/* nothing taken: the walk as it stands */
		if (reset)
			rc_walk_reset(r, rt, reset);
		return;
	}
	if (!lost)
		r->t->stats.ring_bytes += drained - rt->drained;
	rt->drained = drained;
	h.lost = (uint8_t)lost;
	for (i = 0; i < n; i++) {	/* times by the clock of now */
		struct rec_found *f = &w.found[i];

		if (f->tag == REC_TIME || f->tag == REC_TIME_SYS) {
			f->addr = rc_clock_ns(&r->clock, f->addr);
			f->ns = 1;
		}
		if (f->tag == REC_TIME || f->tag == REC_TIME_SYS ||
		    f->tag == REC_TIME_NS)
			newest = f->addr;
	}
	if (r->host.acc_take)
		h.acc = r->host.acc_take(r->t, rt->th);
	hold(r, rt, &h, w.found, n);
	if (newest && r->host.time)
		bt_thread_time_seen(rt->th, newest);
}

void rc_drain(struct bt_recorder *r, struct rthread *rt, uint64_t stop)
{
	rc_drain_as(r, rt, stop, 0);
}

/* Where the walk of @rt's ring stands is unknown from here on: its pc
 * (@how 1), or also the high half of its targets (2). */
void rc_walk_reset(struct bt_recorder *r, struct rthread *rt, int how)
{
	struct rc_held h = { .reset = (uint8_t)how };

	if (bt_thread_held(rt->th))
		hold(r, rt, &h, NULL, 0);
	else {
		rt->wpc = 0;
		if (how > 1)
			rt->whi = ~0ull;
	}
}

/* Every thread's history as it would be with nothing held (the code its
 * held records ran is about to go). */
void rc_settle_all(struct bt_recorder *r)
{
	size_t i;

	if (!r || r->settling)
		return;
	r->settling = 1;
	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].th)
			bt_thread_settle(r->t, r->rt[i].th);
	r->settling = 0;
}
