// SPDX-License-Identifier: MIT
/*
 * Untraced code, run natively (recorder.h): where a lookup's target is in
 * an untraced module (--only, --exclude), the lookup finds a native exit
 * of its own, an entry that takes the borrowed registers back and jumps
 * to the original target, so the thread leaves its translation without a
 * stop.  It comes back at an int3 of the recorder's (BT_BP_RECORDER) on a
 * traced function's entry (a callback) or on a translated call's return
 * site (the call pushed the original return address), which translations
 * never see (they read the original bytes): that stop records the gap
 * and enters the translation there.
 *
 * The tracer learns that a thread went native at its next stop: it is
 * "in", but its pc is in no zone.  Its ring then ends with the target it
 * left to; the thread is handed to the host as a native one.  Meanwhile
 * its gs base is still its control block's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

/* An open-addressed set of addresses, each with a value. */
struct aset {
	uint64_t *key, *val;
	size_t cap, n;		/* cap: 0 or a power of two */
};

struct rnative {
	int on;			/* return sites get their int3s */
	struct aset exits;	/* untraced target -> its native exit's entry */
	struct aset reentry;	/* int3s of ours in the process */
};

static size_t aset_slot(const struct aset *s, uint64_t k)
{
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (s->cap - 1);

	while (s->key[i] && s->key[i] != k)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static int aset_get(const struct aset *s, uint64_t k, uint64_t *v)
{
	size_t i;

	if (!s->cap)
		return 0;
	i = aset_slot(s, k);
	if (!s->key[i])
		return 0;
	if (v)
		*v = s->val[i];
	return 1;
}

static int aset_put(struct aset *s, uint64_t k, uint64_t v)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct aset g = { 0 };

		g.cap = s->cap ? 2 * s->cap : 256;
		g.key = calloc(g.cap, sizeof(*g.key));
		g.val = calloc(g.cap, sizeof(*g.val));
		if (!g.key || !g.val) {
			free(g.key);
			free(g.val);
			return bt_fail(bte_nomem, ENOMEM, "native exits");
		}
		for (i = 0; i < s->cap; i++)
			if (s->key[i]) {
				size_t j = aset_slot(&g, s->key[i]);

				g.key[j] = s->key[i];
				g.val[j] = s->val[i];
			}
		g.n = s->n;
		free(s->key);
		free(s->val);
		*s = g;
	}
	i = aset_slot(s, k);
	if (!s->key[i])
		s->n++;
	s->key[i] = k;
	s->val[i] = v;
	return 0;
}

static void aset_clear(struct aset *s)
{
	free(s->key);
	free(s->val);
	memset(s, 0, sizeof(*s));
}

static struct rnative *nat(struct bt_recorder *r)
{
	if (!r->nat)
		r->nat = calloc(1, sizeof(*r->nat));
	return r->nat;
}

/* ---- native exits ------------------------------------------------------- */

/*
 * The native exit to untraced @target, made the first time (in a zone
 * near @near): a lookup's entry for @target, a safe point for it, and a
 * far jump there.  *@trans: past its entry, as rc_translate() gives it.
 * 0, or < 0 where @target is not untraced code (or no room).
 */
int rc_native_exit(struct bt_recorder *r, struct bt_thread *th, uint64_t near,
		   uint64_t target, uint64_t *trans)
{
	struct rnative *n = nat(r);
	struct rx_point *p;
	struct rx_emit e;
	struct zone *z;
	int ret;

	if (!n || !r->host.untraced || !r->host.untraced(r->t, target))
		return -bte_noent;
	if (!n->on && r->host.native_on)
		r->host.native_on(r->t);
	bt_pin_release(r->t, 0);	/* native code's calls go unseen */
	if (aset_get(&n->exits, target, trans) && *trans) {
		*trans += RX_ENTRY_LEN;
		return 0;
	}
	z = rc_zone_for(r, th, near);
	if (!z)
		return -bte_nomem;
	rc_emit_init(r, &e, z);
	e.pend = RX_PEND_NONE;
	e.entry_orig = target;
	ret = rx_emit_entry(&e);
	if (ret == 0 && e.npts == e.ptcap) {
		p = realloc(e.pts, (e.ptcap + 1) * sizeof(*p));
		ret = p ? 0 : -bte_nomem;
		if (p) {
			e.pts = p;
			e.ptcap++;
		}
	}
	if (ret == 0) {		/* the far jump stands for @target */
		e.pts[e.npts++] = (struct rx_point){
			.trans = e.base + e.len, .orig = target,
			.kind = RX_POINT_SAFE, .pend = RX_PEND_NONE };
		ret = rx_emit_far_jump(&e, target);
	}
	if (ret == 0)
		ret = rc_zone_commit(r, z, &e);
	rc_emit_done(r, &e);
	if (ret == 0)
		ret = aset_put(&n->exits, target, e.base);
	if (ret == 0)
		ret = rc_zones_flush(r);
	if (ret < 0)
		return ret;
	*trans = e.base + RX_ENTRY_LEN;
	return 0;
}

/* The zones were emptied: every native exit with them. */
void rc_native_flush(struct bt_recorder *r)
{
	if (r->nat)
		aset_clear(&r->nat->exits);
}

/* A new address space: nothing of ours is in it. */
void rc_native_reset(struct bt_recorder *r)
{
	if (!r->nat)
		return;
	aset_clear(&r->nat->exits);
	aset_clear(&r->nat->reentry);
	r->nat->on = 0;
}

void rc_native_free(struct bt_recorder *r)
{
	rc_native_reset(r);
	free(r->nat);
	r->nat = NULL;
}

/*
 * Code in [@lo, @hi) went away: native exits to it leave the tables (a
 * traced module may be mapped there next), our int3s there are forgotten.
 */
void rc_native_gone(struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	struct rnative *n = r->nat;
	struct bt_aspace *as = bt_target_aspace(r->t, r->pid);
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->exits.cap; i++) {
		uint64_t k = n->exits.key[i];

		if (!k || k < lo || k >= hi)
			continue;
		rc_table_clear(r, k);
		n->exits.val[i] = 0;	/* stays as a tombstone: never found */
	}
	for (i = 0; i < n->reentry.cap; i++) {
		uint64_t k = n->reentry.key[i];

		if (k && k >= lo && k < hi && n->reentry.val[i]) {
			bt_aspace_remove(as, k, BT_BP_RECORDER);
			n->reentry.val[i] = 0;
		}
	}
}

static int aset_copy(struct aset *c, const struct aset *p)
{
	memset(c, 0, sizeof(*c));
	if (!p->cap)
		return 0;
	c->key = malloc(p->cap * sizeof(*c->key));
	c->val = malloc(p->cap * sizeof(*c->val));
	if (!c->key || !c->val) {
		aset_clear(c);
		return -bte_nomem;
	}
	memcpy(c->key, p->key, p->cap * sizeof(*c->key));
	memcpy(c->val, p->val, p->cap * sizeof(*c->val));
	c->cap = p->cap;
	c->n = p->n;
	return 0;
}

/*
 * Fork child @c of @p: its memory holds @p's native exits (zones and
 * tables are copies) and held its re-entry int3s, which the child's first
 * stop took out (backend.c): they go back in, into its address space.
 */
int rc_native_fork(struct bt_recorder *c, const struct bt_recorder *p)
{
	struct rnative *n;
	size_t i;
	int ret;

	if (!p->nat)
		return 0;
	n = nat(c);
	if (!n)
		return -bte_nomem;
	n->on = p->nat->on;
	ret = aset_copy(&n->exits, &p->nat->exits);
	if (ret == 0)
		ret = aset_copy(&n->reentry, &p->nat->reentry);
	for (i = 0; ret == 0 && i < n->reentry.cap; i++)
		if (n->reentry.key[i] && n->reentry.val[i])
			ret = bt_aspace_insert(bt_target_aspace(c->t, c->pid),
					       n->reentry.key[i],
					       BT_BP_RECORDER);
	return ret;
}

/* ---- coming back ---------------------------------------------------------- */

int bt_recorder_reentry_add(struct bt_recorder *r, uint64_t addr)
{
	struct rnative *n = nat(r);
	uint64_t live = 0;
	int ret;

	if (!n)
		return -bte_nomem;
	if (aset_get(&n->reentry, addr, &live) && live)
		return 0;
	ret = bt_aspace_insert(bt_target_aspace(r->t, r->pid), addr,
			       BT_BP_RECORDER);
	if (ret < 0)
		return ret;
	return aset_put(&n->reentry, addr, 1);
}

/* A call's return site @site was translated: native code may return there. */
void rc_native_ret(struct bt_recorder *r, uint64_t site)
{
	if (r->nat && r->nat->on)
		bt_recorder_reentry_add(r, site);
}

int bt_recorder_native(const struct bt_recorder *r)
{
	return r && r->nat && (r->nat->on || r->nat->exits.n);
}

void bt_recorder_native_off(struct bt_recorder *r)
{
	if (r->nat)
		r->nat->on = 0;
}

int bt_recorder_native_on(struct bt_recorder *r)
{
	struct rnative *n = nat(r);
	size_t i;

	if (!n || n->on)
		return 0;
	n->on = 1;
	for (i = 0; i < r->nbucket; i++) {
		const struct rb *b;

		for (b = r->bucket[i]; b; b = b->hnext)
			if ((b->term == RB_CALL || b->term == RB_ICALL) &&
			    r->host.translatable(r->t, b->next))
				bt_recorder_reentry_add(r, b->next);
	}
	return 1;
}

/*
 * @rt is in, but stopped at @regs outside every zone: it left through a
 * native exit.  Its ring is decoded (its last branch went to where it
 * left to), its gs base is the program's again, and the host runs it
 * natively from now on.  Returns 1, or 0 if it is in a zone.
 */
int rc_native_out(struct bt_recorder *r, struct rthread *rt,
		  struct user_regs_struct *regs, uint64_t pc)
{
	uint64_t left_to;

	if (!r->nat || !r->nat->exits.n || rc_zone_of(r, pc))
		return 0;	/* no native exit was ever made */
	rc_drain(r, rt, 0);
	bt_thread_settle(r->t, rt->th);	/* where its walk ends: now */
	left_to = rt->wpc ? rt->wpc : pc;
	rt->wpc = 0;
	regs->gs_base = rt->prog_gs;
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	rt->in = 0;
	if (r->host.native)
		r->host.native(r->t, rt->th, left_to);
	return 1;
}

/* ---- steps over our int3s --------------------------------------------------- */

void bt_recorder_step_lift(struct bt_recorder *r, struct bt_thread *th,
			   uint64_t pc)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;
	struct bt_aspace *as;

	if (!rt || !r->nat || rt->lifted)
		return;
	as = bt_target_aspace(r->t, r->pid);
	if ((bt_aspace_kinds(as, pc) & BT_BP_MASK(BT_BP_RECORDER)) &&
	    bt_aspace_lift(as, pc) == 0)
		rt->lifted = pc;
}

void bt_recorder_step_unlift(struct bt_recorder *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rc_rt_find(r, th) : NULL;

	if (!rt || !rt->lifted)
		return;
	bt_aspace_unlift(bt_target_aspace(r->t, r->pid), rt->lifted);
	rt->lifted = 0;
}

/*
 * A thread whose gs base is another thread's control block (a clone made
 * by native code, which runs with it) gets that thread's program value.
 */
void bt_recorder_gs_own(struct bt_recorder *r, struct bt_thread *th,
			struct user_regs_struct *regs)
{
	size_t i;

	if (!r || !regs->gs_base)
		return;
	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].th != th && r->rt[i].slot >= 0 &&
		    r->rt[i].tcb == regs->gs_base) {
			regs->gs_base = r->rt[i].prog_gs;
			ptrace(PTRACE_SETREGS, th->tid, 0, regs);
			return;
		}
}
