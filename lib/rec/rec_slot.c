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
#include <sys/uio.h>

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
	int ret = 0;

	if (rt->head_known)
		*head = rt->head;
	else
		ret = rc_mem_read(r, rt->tcb + TCB_HEAD, head, 8);

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

/*
 * The record @rec (@len bytes) at @head, then @head into the control
 * block: one process_vm_writev(2) for both (the ring and the control
 * block are the process's writable memory), else two writes.
 */
static int head_write(struct bt_recorder *r, struct rthread *rt,
		      uint64_t head, const void *rec, size_t len)
{
	struct iovec local[2] = {
		{ (void *)rec, len }, { &head, 8 },
	};
	struct iovec remote[2] = {
		{ (void *)(uintptr_t)head, len },
		{ (void *)(uintptr_t)(rt->tcb + TCB_HEAD), 8 },
	};
	int ret;

	if (process_vm_writev(r->pid, local, 2, remote, 2, 0) ==
	    (ssize_t)(len + 8))
		return 0;
	ret = rc_mem_write(r, head, rec, len);
	return ret < 0 ? ret : rc_mem_write(r, rt->tcb + TCB_HEAD, &head, 8);
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
	ret = head_write(r, rt, head, rec, len);
	if (ret == 0)
		rt->head = head;
	return ret;
}

/* The next target @rt records is whole (a place to decode from). */
int rc_hi_reset(struct bt_recorder *r, struct rthread *rt)
{
	uint64_t none = REC_HI_NONE;

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
	uint32_t gen;		/* the code's generation they ran (rec_grave.c) */
	uint8_t lost;		/* records were overwritten before them */
	uint8_t reset;		/* where the walk stands is unknown after */
	uint8_t pad[6];
};

struct replay_ctx {
	struct bt_recorder *r;
	struct bt_thread *th;
	uint32_t acc;
	uint32_t gen;
};

static const struct rb *replay_block(void *ctx, uint64_t pc)
{
	struct replay_ctx *c = ctx;
	struct rb *b = rc_grave_get(c->r, pc, c->gen);

	if (b && !b->dead && !(b->prof & RB_PROF_RAN))
		rc_profile_ran(c->r, b, RB_PROF_RAN);
	return b;
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

/* Walk the @len bytes of records at @raw held as @h into @th's ring,
 * @acc instructions owed to its first branch; returns those after its
 * last. */
uint32_t bt_recorder_replay(struct bt_recorder *r, struct bt_thread *th,
			    void *data, size_t len, uint32_t acc, int cut)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct replay_ctx c = { r, th, acc, 0 };
	struct rec_walker *w = r ? &r->replay_w : NULL;
	struct rc_held h;
	uint8_t *raw = (uint8_t *)data + sizeof(h);

	if (len < sizeof(h))
		return acc;
	memcpy(&h, data, sizeof(h));
	len -= sizeof(h);
	if (!rt) {	/* its recorder went first: cannot be */
		if (len)
			bt_thread_gap(th, 0, 0, BT_GAP_DECODE);
		return len ? 0 : acc + h.acc;
	}
	c.acc += h.acc;
	c.gen = h.gen;
	w->ops = &replay_ops;
	w->ctx = &c;
	w->pc = cut ? 0 : rt->wpc;
	w->hi = cut ? ~0ull : rt->whi;
	if (rec_drain_walk_raw(w, raw, len, h.lost, h.stop) < 0) {
		bt_thread_gap(th, 0, 0, BT_GAP_DECODE);
		return 0;
	}
	rt->wpc = h.reset ? 0 : w->pc;
	rt->whi = h.reset > 1 ? ~0ull : w->hi;
	return c.acc;
}

/*
 * The time records among the @len bytes of records at @raw (newest
 * first) in ns of the clock as it is now (it is refined as the run goes
 * on); the newest's value into *@newest.
 */
static void held_times(struct bt_recorder *r, uint8_t *raw, size_t len,
		       uint64_t *newest)
{
	size_t off = 0;
	uint64_t v;

	while (off < len) {
		uint8_t tag = raw[off];
		size_t rlen = rec_len(tag);

		if (!rlen || off + rlen > len)
			break;
		if (REC_IS_TIME(tag)) {
			memcpy(&v, raw + off + 1, 8);
			if (tag != REC_TIME_NS) {
				v = rc_clock_ns(&r->clock, v);
				memcpy(raw + off + 1, &v, 8);
				raw[off] = tag == REC_TIME ? REC_TIME_NS :
							     REC_TIME_SYS_NS;
			}
			if (!*newest)
				*newest = v;
		}
		off += rlen;
	}
}

/* The held part @h (at @p, its records after it) put behind what @rt's
 * history holds; settled past four rings' worth held. */
static void hold_put(struct bt_recorder *r, struct rthread *rt,
		     struct rc_held *h, uint8_t *p, size_t len,
		     uint64_t branches)
{
	struct bt_target *t = r->t;

	h->gen = r->gen;
	if (!rt->hvalid || !bt_thread_held(rt->th)) {
		rt->hgen = r->gen;	/* its oldest part */
		rt->hvalid = 1;
	}
	memcpy(p, h, sizeof(*h));
	bt_thread_hold(rt->th, sizeof(*h) + len,
		       branches * sizeof(struct bt_rec_branch));
	/* records that make no branch (conditionals not taken) are never
	 * dropped: past what a ring's worth would be, now */
	if (bt_thread_held(rt->th) > 4 * t->opts.buffer_size + (1u << 20))
		bt_thread_settle(t, rt->th);
}

/* An empty part @h: a reset of the walk where it stands. */
static void hold(struct bt_recorder *r, struct rthread *rt,
		 struct rc_held *h)
{
	uint8_t *p = bt_thread_hold_room(rt->th, sizeof(*h));

	if (p) {
		hold_put(r, rt, h, p, 0, 0);
		return;
	}
	bt_thread_settle(r->t, rt->th);	/* no memory: as it stands */
	rt->wpc = 0;
	if (h->reset > 1)
		rt->whi = ~0ull;
}

/*
 * Take what @rt's ring holds since the last drain into the thread's
 * history as it lies there (rec_drain_take()), to be walked on to @stop
 * (the thread's original pc; 0: unknown) when the history is read; with
 * @reset, where the walk stands is unknown after it (the thread leaves
 * the translation).
 */
void rc_drain_as(struct bt_recorder *r, struct rthread *rt, uint64_t stop,
		 int reset)
{
	struct rec_ring_view v = {
		.base = rt->base, .top = rt->top,
		.pass_start = rt->pass_start, .prev_start = rt->prev_start,
		.prev_low = rt->prev_low,
	};
	struct rc_held h = { .stop = stop, .reset = (uint8_t)reset };
	struct rec_take take = { NULL, 0, 0, 0, 0 };
	uint64_t lo[2], hi[2], drained = rt->drained, newest = 0;
	size_t room = 0, off = 0;
	int k, nspan = 0, lost = -1;

	if (rc_head_read(r, rt, &v.head) == 0 && v.head >= rt->base &&
	    v.head <= rt->top) {
		nspan = rec_drain_spans(&v, drained, lo, hi);
		for (k = 0; k < nspan; k++)	/* what was written since */
			room += hi[k] - lo[k];
		take.out = bt_thread_hold_room(rt->th, sizeof(h) + room);
		if (take.out) {		/* else taken next time */
			take.out += sizeof(h);
			for (k = 0; k < nspan; k++) {	/* read into place */
				if (rc_mem_read(r, lo[k], take.out + off,
						hi[k] - lo[k]) < 0)
					break;
				off += hi[k] - lo[k];
			}
			r->t->stats.ring_read += off;
			if (k == nspan)
				lost = rec_drain_take_read(&v, &drained, &take);
		}
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
	if (take.times)
		held_times(r, take.out, take.len, &newest);
	if (r->host.acc_take)
		h.acc = r->host.acc_take(r->t, rt->th);
	hold_put(r, rt, &h, take.out - sizeof(h), take.len, take.branches);
	if (newest)
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
		hold(r, rt, &h);
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
		if (r->rt[i].th && !r->rt[i].ended)
			bt_thread_settle(r->t, r->rt[i].th);
	r->settling = 0;
}
