// SPDX-License-Identifier: MIT
/*
 * The fast mode's int3s (soft_fast.h): one table of what it knows of each
 * (shared by all threads), the int3s themselves kept by the target's
 * address space (tracer/aspace.h, kind BT_BP_BACKEND), which owns the
 * memory and the original bytes; the addresses of those taken out (a late
 * trap there is still ours); reading code as the program sees it; and
 * taking them out of memory that a fork child keeps or shares.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "btrace/error.h"
#include "btrace/insn.h"
#include "internal.h"
#include "backend/soft/fast_int.h"
#include "tracer/tracer.h"

/* ---- breakpoints ------------------------------------------------------- */

static size_t bp_hash(uint64_t addr, size_t n)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 24) & (n - 1);
}

struct fast_bp *fast_bp_find(const struct fast *f, uint64_t addr)
{
	struct fast_bp *b;

	if (!f->nbp)
		return NULL;
	for (b = f->bp[bp_hash(addr, f->nbp_bucket)]; b; b = b->next)
		if (b->addr == addr)
			return b;
	return NULL;
}

/* Read code as the program sees it: every int3 of btrace hidden. */
int fast_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (bt_target_mem(ctx, addr, buf, len) != (ssize_t)len)
		return -bte_io;
	return 0;
}

/*
 * The original code at @addr (btrace's int3s hidden) into @code, zeros
 * where a mapping ends first.  0, or -bte_io if not even its first byte
 * can be read.
 */
int fast_code_read(struct bt_target *t, uint64_t addr,
		   uint8_t code[BT_INSN_MAX_LEN])
{
	memset(code, 0, BT_INSN_MAX_LEN);
	if (fast_read(t, addr, code, 1) < 0)
		return -bte_io;
	fast_read(t, addr + 1, code + 1, BT_INSN_MAX_LEN - 1);
	return 0;
}

static void bp_grow(struct fast *f)
{
	size_t n = f->nbp_bucket ? f->nbp_bucket * 2 : 1024, i;
	struct fast_bp **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b = f->bp[i], *next;

		for (; b; b = next) {
			size_t h = bp_hash(b->addr, n);

			next = b->next;
			b->next = nb[h];
			nb[h] = b;
		}
	}
	free(f->bp);
	f->bp = nb;
	f->nbp_bucket = n;
}

int fast_bp_insert(struct bt_target *t, uint64_t addr, int kind,
		   struct fast_bp **out)
{
	struct fast *f = fast_of(t);
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn in;
	struct fast_bp *b;
	size_t h;
	int ret;

	b = fast_bp_find(f, addr);
	if (b) {
		if (kind == BP_STEP || b->kind == BP_STEP)
			b->kind = BP_STEP;
		*out = b;
		return 0;
	}
	if (fast_code_read(t, addr, code) < 0)
		return -bte_io;
	b = calloc(1, sizeof(*b));
	if (!b)
		return bt_fail(bte_nomem, ENOMEM, "breakpoint");
	b->addr = addr;
	b->kind = (uint8_t)kind;
	if (bt_insn_decode(f->dis, code, sizeof(code), addr, &in) == 0)
		b->iclass = in.iclass;
	b->emu_ok = bt_emu_decode(f->emu, code, sizeof(code), addr,
				  &b->emu) == 0;
	b->can_displace = b->iclass == BT_INSN_OTHER &&
			  bt_displace_can(f->dsp, code, sizeof(code), addr);
	if (kind == BP_TARGET && b->iclass != BT_INSN_OTHER)
		b->kind = b->emu_ok ? BP_DECIDE : BP_STEP;
	ret = bt_aspace_insert(fast_as(t), addr, BT_BP_BACKEND);
	if (ret < 0) {
		free(b);
		return ret;
	}
	if (f->nbp >= f->nbp_bucket)
		bp_grow(f);
	h = bp_hash(addr, f->nbp_bucket);
	b->next = f->bp[h];
	f->bp[h] = b;
	f->nbp++;
	*out = b;
	return 0;
}

int fast_gone_has(const struct fast *f, uint64_t addr)
{
	size_t i;

	if (!f->gone_cap)
		return 0;
	for (i = bp_hash(addr, f->gone_cap); f->gone[i];
	     i = (i + 1) & (f->gone_cap - 1))
		if (f->gone[i] == addr)
			return 1;
	return 0;
}

/*
 * Remember that our int3 at @addr was taken out: a thread that hit it just
 * before may report its trap only now (gone_trap).  Never forgotten until
 * exec; on no memory, forgotten (the trap then goes to the program).
 */
static void gone_add(struct fast *f, uint64_t addr)
{
	size_t i;

	if (fast_gone_has(f, addr))
		return;
	if (2 * (f->ngone + 1) > f->gone_cap) {
		size_t cap = f->gone_cap ? 2 * f->gone_cap : 256, n = f->gone_cap;
		uint64_t *old = f->gone, *nw = calloc(cap, sizeof(*nw));

		if (!nw)
			return;
		f->gone = nw;
		f->gone_cap = cap;
		f->ngone = 0;
		for (i = 0; i < n; i++)
			if (old[i])
				gone_add(f, old[i]);
		free(old);
	}
	for (i = bp_hash(addr, f->gone_cap); f->gone[i];
	     i = (i + 1) & (f->gone_cap - 1))
		;
	f->gone[i] = addr;
	f->ngone++;
}

/* Take the int3 at @addr out (the original byte back). */
void fast_bp_remove(struct bt_target *t, uint64_t addr)
{
	struct fast *f = fast_of(t);
	struct fast_bp **pp, *b;

	if (!f->nbp)
		return;
	for (pp = &f->bp[bp_hash(addr, f->nbp_bucket)]; (b = *pp);
	     pp = &b->next)
		if (b->addr == addr) {
			bt_aspace_remove(fast_as(t), addr, BT_BP_BACKEND);
			gone_add(f, addr);
			*pp = b->next;
			free(b);
			f->nbp--;
			return;
		}
}

/* Forget every int3 (the memory they were in is gone: exec). */
void fast_bp_forget_all(struct fast *f)
{
	size_t i;

	for (i = 0; i < f->nbp_bucket; i++) {
		struct fast_bp *b = f->bp[i], *next;

		for (; b; b = next) {
			next = b->next;
			free(b);
		}
		f->bp[i] = NULL;
	}
	f->nbp = 0;
}

/*
 * Tracing ends: every int3 of ours out of memory (the program's own code
 * stays where it wrote over one since) and forgotten.
 */
void fast_bp_release(struct bt_target *t)
{
	struct bt_aspace *as = fast_as(t);

	if (as)
		bt_aspace_remove_kind(as, BT_BP_BACKEND);
	fast_bp_forget_all(fast_of(t));
}

/*
 * @th steps over our int3 at @addr: lift it (the original byte in) until
 * fast_bp_unlift(); lifts are counted, so that one thread's step over it
 * does not put it back under another's.
 */
int fast_bp_lift(struct bt_target *t, struct bt_thread *th, uint64_t addr)
{
	struct fast_thread *ft = th->bk;
	int ret = bt_aspace_lift(fast_as(t), addr);

	if (ret == 0)
		ft->lifted = addr;
	return ret;
}

/* @th is done stepping over the int3 it lifted: put it back. */
void fast_bp_unlift(struct bt_target *t, struct bt_thread *th)
{
	struct fast_thread *ft = th->bk;
	uint64_t addr = ft->lifted;

	ft->lifted = 0;
	if (addr)	/* -bte_noent: the int3 went meanwhile */
		bt_aspace_unlift(fast_as(t), addr);
}

/* ---- fork children ----------------------------------------------------- */

/*
 * A fork child: one not followed was cleaned of every int3 by the tracer
 * already (bt_aspace_fork_clean); a vfork child runs in our memory until
 * it execs or exits (the parent's VFORK_DONE), with every int3 out.
 */
void fast_fork(struct bt_target *t, pid_t child, int shared)
{
	struct fast *f = fast_of(t);

	if (f && f->nbp && shared)
		bt_aspace_lift_all(fast_as(t));
}

/*
 * A followed fork child is single-stepped: its copy of the memory keeps
 * none of our int3s (nor does its address space: the tracer copies only
 * the debugger's into it).
 */
void fast_fork_followed(struct bt_target *t, pid_t child)
{
	struct fast *f = fast_of(t);

	if (f && f->nbp)
		bt_aspace_fork_clean(fast_as(t), child,
				     BT_BP_MASK(BT_BP_BACKEND));
}
