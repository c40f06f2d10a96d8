// SPDX-License-Identifier: MIT
/*
 * A thread's slot (recorder_int.h): its ring and control block in the
 * process, the records the tracer writes itself, and the drain that
 * decodes what the thread wrote (rec_drain.h) into its history.
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

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

struct drain_ctx {
	struct bt_recorder *r;
	struct bt_thread *th;
};

static const struct rb *drain_block(void *ctx, uint64_t pc)
{
	struct drain_ctx *c = ctx;

	return rc_block_get(c->r, pc);
}

static void drain_insns(void *ctx, uint32_t n)
{
	struct drain_ctx *c = ctx;

	c->r->host.insns(c->r->t, c->th, n);
}

static void drain_branch(void *ctx, uint64_t from, uint64_t to, int kind)
{
	struct drain_ctx *c = ctx;

	c->r->host.branch(c->r->t, c->th, from, to, kind);
}

static void drain_gap(void *ctx, int reason)
{
	struct drain_ctx *c = ctx;

	c->r->host.gap(c->r->t, c->th, 0, reason);
}

static void drain_time(void *ctx, uint64_t t, int ns)
{
	struct drain_ctx *c = ctx;

	if (c->r->host.time)
		c->r->host.time(c->r->t, c->th,
				ns ? t : rc_clock_ns(&c->r->clock, t));
}

static const struct rec_drain_ops drain_ops = {
	.block = drain_block,
	.insns = drain_insns,
	.branch = drain_branch,
	.gap = drain_gap,
	.time = drain_time,
};

/*
 * Decode what @rt's ring holds since the last drain into the thread's
 * history (rec_drain.h), then walk on to @stop (the thread's original pc;
 * 0: unknown).
 */
void rc_drain(struct bt_recorder *r, struct rthread *rt, uint64_t stop)
{
	struct drain_ctx c = {r, rt->th};
	struct rec_walker w = { &drain_ops, &c, rt->wpc, rt->whi,
				r->drain_w.found, r->drain_w.found_cap };
	struct rec_ring_view v = {
		.bytes = r->ringbuf, .base = rt->base, .top = rt->top,
		.pass_start = rt->pass_start, .prev_start = rt->prev_start,
		.prev_low = rt->prev_low,
	};
	uint64_t lo[2], hi[2], drained = rt->drained;
	int i, n, lost;

	if (rc_head_read(r, rt, &v.head) < 0)
		return;
	if (v.head < rt->base || v.head > rt->top)
		return;		/* corrupt */
	n = rec_drain_spans(&v, drained, lo, hi);
	for (i = 0; i < n; i++) {	/* what was written since, only */
		if (rc_mem_read(r, lo[i], r->ringbuf + (lo[i] - rt->base),
				hi[i] - lo[i]) < 0)
			return;
		r->t->stats.ring_read += hi[i] - lo[i];
	}
	lost = rec_drain(&v, &drained, &w, stop);
	r->drain_w.found = w.found;
	r->drain_w.found_cap = w.found_cap;
	if (lost < 0)
		return;
	rt->wpc = w.pc;
	rt->whi = w.hi;
	if (!lost)
		r->t->stats.ring_bytes += drained - rt->drained;
	rt->drained = drained;
}
