// SPDX-License-Identifier: MIT
/*
 * Code that changes at run time (recorder_int.h): the consistency of the
 * code cache with code the program writes, as DynamoRIO keeps it.
 *
 * Every page whose code has translations has an entry here: the program's
 * own protection of it (what its mappings said, or what it asked with
 * mprotect) and where the translations made of its code lie in the
 * zones.  A page the program may write is write-protected (mprotect
 * through the stopped thread) before its code is read for a
 * translation, so that a write to it faults: the fault is the recorder's
 * (SEGV_ACCERR on a page the program may write), never the program's.
 * Then the page's translations are dropped (their incoming links undone,
 * lookup entries cleared, and their outgoing links undone too, so that a
 * thread inside one leaves at its end), write access is given back, the
 * writer executes its write as one step, and the program goes on; the
 * page is protected again the next time its code is translated.  A page
 * the program cannot write (a W^X JIT's code while executable) needs no
 * protection: the program must mprotect it to write it, and mmap,
 * munmap, mprotect and mremap drop the translations of their range
 * (protections given back first, entries forgotten).
 *
 * Consistency between threads is that of synchronization points: a
 * write is seen by every thread that then runs the code it wrote
 * through a lookup or a link, since those are gone before the write is
 * let happen; a thread running a translation of the page while another
 * writes it finishes the block it is in (and at most one more that a
 * lookup found before the entry was cleared).  Threads that are in their
 * translations have their rings decoded before the old code's blocks go,
 * unless a ring wrapped since it was last decoded.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "btrace/error.h"
#include "btrace/maps.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

/* Where translations of a page's code lie: zone points [first, end). */
struct wp_xl {
	uint32_t zi, first, end;
};

struct wp_page {
	uint64_t page;
	struct wp_page *next;
	int prog;		/* PROT_* the program gave it */
	int on;			/* write-protected by the recorder now */
	struct wp_xl *xl;
	size_t nxl, capxl;
};

struct wp {
	struct wp_page **bucket;
	size_t nbucket, n;
};

/* ---- the table of pages ---------------------------------------------- */

static size_t wp_hash(uint64_t page, size_t n)
{
	return (size_t)(((page >> 12) * 0x9e3779b97f4a7c15ull) >> 24) & (n - 1);
}

static struct wp *wp_of(struct bt_recorder *r)
{
	if (!r->wp) {
		r->wp = calloc(1, sizeof(*r->wp));
		if (r->wp) {
			r->wp->nbucket = 1024;
			r->wp->bucket = calloc(1024, sizeof(*r->wp->bucket));
			if (!r->wp->bucket) {
				free(r->wp);
				r->wp = NULL;
			}
		}
	}
	return r->wp;
}

static struct wp_page *wp_find(const struct wp *w, uint64_t page)
{
	struct wp_page *e;

	if (!w)
		return NULL;
	for (e = w->bucket[wp_hash(page, w->nbucket)]; e; e = e->next)
		if (e->page == page)
			return e;
	return NULL;
}

static void wp_grow(struct wp *w)
{
	size_t n = w->nbucket * 2, i;
	struct wp_page **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (i = 0; i < w->nbucket; i++) {
		struct wp_page *e = w->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = nb[wp_hash(e->page, n)];
			nb[wp_hash(e->page, n)] = e;
		}
	}
	free(w->bucket);
	w->bucket = nb;
	w->nbucket = n;
}

static struct wp_page *wp_add(struct wp *w, uint64_t page, int prog)
{
	struct wp_page *e = calloc(1, sizeof(*e));
	size_t h;

	if (!e)
		return NULL;
	if (w->n >= w->nbucket)
		wp_grow(w);
	e->page = page;
	e->prog = prog;
	h = wp_hash(page, w->nbucket);
	e->next = w->bucket[h];
	w->bucket[h] = e;
	w->n++;
	return e;
}

static void wp_del(struct wp *w, struct wp_page *e)
{
	struct wp_page **pp = &w->bucket[wp_hash(e->page, w->nbucket)];

	while (*pp && *pp != e)
		pp = &(*pp)->next;
	if (*pp)
		*pp = e->next;
	free(e->xl);
	free(e);
	w->n--;
}

static int prot_of_map(int bt_prot)
{
	return ((bt_prot & BT_MAP_R) ? PROT_READ : 0) |
	       ((bt_prot & BT_MAP_W) ? PROT_WRITE : 0) |
	       ((bt_prot & BT_MAP_X) ? PROT_EXEC : 0);
}

/* ---- translations of a page ------------------------------------------ */

/* The translations of @e's code lead nowhere any more: their outgoing
 * links go back to their exits (a thread inside one leaves at its end). */
static void xl_unlink(struct bt_recorder *r, struct wp_page *e)
{
	size_t k, i;

	for (k = 0; k < e->nxl; k++) {
		const struct wp_xl *x = &e->xl[k];
		struct zone *z = &r->zone[x->zi];

		for (i = x->first; i < x->end && i < z->npts; i++) {
			struct rx_point p;

			zpt_get(z, i, &p);
			if (p.kind == RX_POINT_EXIT_DIRECT)
				rc_link_undo(r, z, i);
		}
	}
	e->nxl = 0;
}

void rc_wp_translated(struct bt_recorder *r, const struct rb *b,
		      const struct zone *z, size_t first)
{
	uint64_t pg;

	for (pg = b->start & ~4095ull; pg <= (b->next & ~4095ull); pg += 4096) {
		struct wp_page *e = wp_find(r->wp, pg);

		if (!e)
			continue;
		if (e->nxl == e->capxl) {
			size_t cap = e->capxl ? 2 * e->capxl : 8;
			struct wp_xl *g = realloc(e->xl, cap * sizeof(*g));

			if (!g)
				continue;
			e->xl = g;
			e->capxl = cap;
		}
		e->xl[e->nxl++] = (struct wp_xl){
			(uint32_t)(z - r->zone), (uint32_t)first,
			(uint32_t)z->npts };
	}
}

void rc_wp_flush(struct bt_recorder *r)
{
	size_t i;

	if (!r->wp)
		return;
	for (i = 0; i < r->wp->nbucket; i++) {
		struct wp_page *e;

		for (e = r->wp->bucket[i]; e; e = e->next)
			e->nxl = 0;
	}
}

/*
 * Other threads that are in: what their rings hold is decoded now, while
 * the blocks of the code they ran are there (unless a ring's pass before
 * this one is still to decode: the thread runs and may overwrite it).
 */
static void drain_others(struct bt_recorder *r, const struct bt_thread *th)
{
	size_t i;

	for (i = 0; i < r->nrt; i++) {
		struct rthread *rt = &r->rt[i];

		if (rt->th != th && rt->in && rt->slot >= 0 &&
		    rt->drained >= rt->pass_start)
			rc_drain(r, rt, 0);
	}
}

/* The code of page @e is no longer what was translated: drop it all. */
static void page_drop(struct bt_recorder *r, const struct bt_thread *th,
		      struct wp_page *e)
{
	if (e->nxl)
		drain_others(r, th);
	xl_unlink(r, e);
	rc_code_drop(r, e->page, e->page + 4096);
}

/* ---- protecting ------------------------------------------------------ */

static int page_protect(struct bt_recorder *r, struct bt_thread *th,
			struct wp_page *e, int on)
{
	int64_t ret = rc_syscall(r, th, SYS_mprotect, e->page, 4096,
				 (uint64_t)(on ? e->prog & ~PROT_WRITE :
						 e->prog), 0, 0);

	if (ret < 0)
		return ret < -4095 ? (int)ret : -bte_perm;
	e->on = on;
	return 0;
}

/*
 * Before code at @addr is read for a translation: its page's entry, the
 * page write-protected if the program may write it.  1 if it just was
 * (blocks decoded from it before may be stale: dropped), 0 if nothing
 * changed, < 0 if it could not be protected (do not translate it).
 */
static int page_guard(struct bt_recorder *r, struct bt_thread *th,
		      uint64_t addr)
{
	uint64_t page = addr & ~4095ull;
	struct wp *w = wp_of(r);
	struct wp_page *e;
	int prot, ret;

	if (!w)
		return -bte_nomem;
	e = wp_find(w, page);
	if (!e) {
		prot = r->host.translatable(r->t, addr);
		e = wp_add(w, page, prot_of_map(prot));
		if (!e)
			return -bte_nomem;
	}
	if (e->on || !(e->prog & PROT_WRITE))
		return 0;
	ret = page_protect(r, th, e, 1);
	if (ret < 0)
		return ret;
	rc_code_drop(r, page, page + 4096);
	return 1;
}

struct rb *rc_wp_block_get(struct bt_recorder *r, struct bt_thread *th,
			   uint64_t a)
{
	struct rb *b;
	int i;

	if (page_guard(r, th, a) < 0)
		return NULL;
	for (i = 0; i < 2; i++) {
		int g;

		b = rc_block_get(r, a);
		if (!b || (b->next & ~4095ull) == (a & ~4095ull))
			return b;
		g = page_guard(r, th, b->next);
		if (g < 0)
			return NULL;
		if (g == 0)
			return b;
		/* decoded before its second page was protected: again */
	}
	return rc_block_get(r, a);
}

/* ---- the program's writes --------------------------------------------- */

static int at_safe_point(struct bt_recorder *r, struct bt_thread *th)
{
	struct user_regs_struct regs;

	return bt_thread_regs(th, &regs) == 0 &&
	       rc_point_kind(r, regs.rip, RX_POINT_SAFE) != NULL;
}

/*
 * @th faulted on @e, which the recorder protected: the writer's ring is
 * decoded (it leaves), the page's translations dropped, write access
 * given back; @th is left at the write, to step it.
 */
static void write_caught(struct bt_recorder *r, struct rthread *rt,
			 struct wp_page *e)
{
	int in = rt->in, safe = in && at_safe_point(r, rt->th);

	if (safe)
		bt_recorder_leave(r, rt->th);
	page_drop(r, rt->th, e);
	if (page_protect(r, rt->th, e, 0) < 0)
		return;
	if (in && !safe)	/* in generated code: it goes on to a point */
		bt_recorder_leave(r, rt->th);
	rt->left_step = !in || safe;
}

int rc_wp_fault(struct bt_recorder *r, struct bt_thread *th,
		const siginfo_t *si)
{
	uint64_t page = (uint64_t)si->si_addr & ~4095ull;
	struct wp_page *e = wp_find(r->wp, page);
	struct rthread *rt;

	if (si->si_signo != SIGSEGV || si->si_code != SEGV_ACCERR || !e ||
	    !(e->prog & PROT_WRITE))
		return 0;	/* the program's own */
	rt = rc_rt_get(r, th);
	if (!rt)
		return 0;
	r->trapping = 1;	/* a fault: no system call under way */
	if (rt->in)
		rc_sigs_consumed(r, rt);
	if (e->on) {
		write_caught(r, rt, e);
	} else {	/* it faulted before another write gave it back */
		int safe = !rt->in || at_safe_point(r, th);

		bt_recorder_leave(r, th);
		rt->left_step = safe;
	}
	r->trapping = 0;
	return 1;
}

/* ---- the program's system calls on its mappings ----------------------- */

/* [@lo, @hi) changes: its pages given back what the program gave them
 * (@restore), their translations dropped, their entries forgotten. */
static void range_gone(struct bt_recorder *r, struct bt_thread *th,
		       uint64_t lo, uint64_t hi, int restore)
{
	struct wp *w = r->wp;
	size_t i;

	if (!w || !w->n || hi <= lo)
		return;
	if ((hi - lo) >> 12 <= w->n) {
		uint64_t pg;

		for (pg = lo; pg < hi && pg >= lo; pg += 4096) {
			struct wp_page *e = wp_find(w, pg);

			if (!e)
				continue;
			if (e->on && restore)
				page_protect(r, th, e, 0);
			page_drop(r, th, e);
			wp_del(w, e);
		}
		return;
	}
	for (i = 0; i < w->nbucket; i++) {
		struct wp_page *e = w->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			if (e->page < lo || e->page >= hi)
				continue;
			if (e->on && restore)
				page_protect(r, th, e, 0);
			page_drop(r, th, e);
			wp_del(w, e);
		}
	}
}

void rc_wp_syscall(struct bt_recorder *r, struct bt_thread *th,
		   const struct user_regs_struct *regs)
{
	uint64_t lo = regs->rdi & ~4095ull, end = regs->rdi + regs->rsi;
	int restore = 1;

	switch (regs->rax) {
	case SYS_mmap:
		restore = 0;
		if (!(regs->r10 & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
			return;	/* lands where nothing is */
		break;
	case SYS_munmap:
		restore = 0;
		break;
	case SYS_mprotect:	/* given back first: it may fail, or part */
	case SYS_mremap:	/* the pages move with their protection */
		break;
	default:
		return;
	}
	end = end < regs->rdi || end + 4095 < end ? ~4095ull :
	      (end + 4095) & ~4095ull;
	range_gone(r, th, lo, end, restore);
	r->host.maps_changed(r->t);
}

/* ---- detach, exec, the end ------------------------------------------- */

void bt_recorder_unprotect(struct bt_recorder *r, struct bt_thread *th)
{
	size_t i;

	if (!r || !r->wp)
		return;
	r->trapping = 1;	/* every thread stopped */
	for (i = 0; i < r->wp->nbucket; i++) {
		struct wp_page *e;

		for (e = r->wp->bucket[i]; e; e = e->next)
			if (e->on)
				page_protect(r, th, e, 0);
	}
	r->trapping = 0;
}

void rc_wp_free(struct bt_recorder *r)
{
	size_t i;

	if (!r->wp)
		return;
	for (i = 0; i < r->wp->nbucket; i++)
		while (r->wp->bucket[i])
			wp_del(r->wp, r->wp->bucket[i]);
	free(r->wp->bucket);
	free(r->wp);
	r->wp = NULL;
}

/*
 * A fork child's copy (rec_fork.c): its memory has the parent's pages
 * with their protections, and its zones the same translations, so the
 * entries are the parent's.  0 or -bte_nomem.
 */
int rc_wp_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	struct wp *w;
	size_t i;

	if (!p->wp || !p->wp->n)
		return 0;
	w = wp_of(c);
	if (!w)
		return -bte_nomem;
	for (i = 0; i < p->wp->nbucket; i++) {
		const struct wp_page *e;

		for (e = p->wp->bucket[i]; e; e = e->next) {
			struct wp_page *n = wp_add(w, e->page, e->prog);

			if (!n)
				return -bte_nomem;
			n->on = e->on;
			if (!e->nxl)
				continue;
			n->xl = malloc(e->nxl * sizeof(*n->xl));
			if (!n->xl)
				return -bte_nomem;
			memcpy(n->xl, e->xl, e->nxl * sizeof(*n->xl));
			n->nxl = n->capxl = e->nxl;
		}
	}
	return 0;
}
