// SPDX-License-Identifier: MIT
/*
 * Translating and linking (recorder_int.h): a block and what is reachable
 * from it translated in one batch, direct exits linked to translations
 * that exist, and the consistency of the cache with code that goes away
 * (unmapped, remapped, made writable, written by a debugger).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define AHEAD_MAX	192		/* blocks translated per miss */
/*
 * A conditional's taken side this far from it is not translated ahead:
 * compilers put the code a function seldom runs apart from it (GCC's
 * .text.unlikely, the "foo.cold" parts), and a batch spent on it is not
 * spent on what runs.  python3 print(1) with an empty code cache: 0.231 s
 * of CPU against 0.248 s (medians of seven, alternating), 2.86 k stops
 * against 2.92 k; at 1 MiB 0.227 s, at 4 KiB the same; node's first run
 * and sqlite3, gzip, perl the same or 1-3% less.
 */
#define AHEAD_FAR	(64u << 10)

/* ---- translating ------------------------------------------------------- */

/* Code in [@lo, @hi) has translations: the spans, merged within 16 MiB. */
static void span_add(struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < r->nspan; i++)
		if (lo < r->span_hi[i] + (16u << 20) &&
		    hi + (16u << 20) > r->span_lo[i]) {
			if (lo < r->span_lo[i])
				r->span_lo[i] = lo;
			if (hi > r->span_hi[i])
				r->span_hi[i] = hi;
			return;
		}
	if (r->nspan == SPAN_MAX) {	/* one span for all, then */
		r->span_lo[0] = 0;
		r->span_hi[0] = ~0ull;
		return;
	}
	r->span_lo[r->nspan] = lo;
	r->span_hi[r->nspan++] = hi;
}

static int span_overlaps(const struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < r->nspan; i++)
		if (lo < r->span_hi[i] && hi > r->span_lo[i])
			return 1;
	return 0;
}

/* Translate the one block @b carrying @pend; 0, or < 0 (then it stays
 * untranslated). */
static int translate_one(struct bt_recorder *r, struct bt_thread *th,
			 struct rb *b, uint8_t pend)
{
	struct zone *z = rc_zone_for(r, th, b->start);
	struct rx_emit e;
	size_t first = z ? z->npts : 0;
	int ret;

	if (!z)
		return -bte_nomem;
	if (!b->ic_fixed) {	/* for good: what a drain knows of it */
		b->ic_fixed = 1;
		b->icbit = r->icbit_off ? 0 : rc_icbit_guess(r, b);
	}
	rc_emit_init(r, &e, z);
	e.guess = rc_ic_guess;
	/* the variants only hot code makes are not in profiles, and one
	 * known to have run needs no mark (rc_profile_marked) */
	e.mark = pend < RX_PENDS_COLD && !rb_ran(b, pend) &&
			 !r->prof_nomark ? rc_profile_mark(r, z, b, pend) : 0;
	rx_set_pend_max(r->x, rb_pend_max(b, pend));
	ret = rx_translate(r->x, b, pend, &e);
	if (ret == 0)	/* direct links go past the lookup's entry */
		ret = rb_set_trans(b, pend, e.base + e.lead +
					    (pend == RX_PEND_NONE ?
						     RX_ENTRY_LEN : 0));
	if (ret == 0) {
		ret = rc_zone_commit(r, z, &e);
		if (ret < 0)
			rb_set_trans(b, pend, 0);
	}
	rc_emit_done(r, &e);
	if (ret == 0) {
		r->translated++;
		if (pend < RX_PENDS_COLD) {
			b->unmarked &= (uint8_t)~(1u << pend);
			b->unmarked |= (uint8_t)(!e.mark << pend);
			b->mark_checks = 0;
		}
		span_add(r, b->start, b->next + 1);
		rc_wp_translated(r, b, z, first);
	}
	return ret;
}

/* The link of @z's point @pi, if it is linked, back to its exit: a direct
 * exit's int3 (after its jmp, or before the entry of a conditional
 * whose jump is the link), the lookup after an inline cache's jump. */
void rc_link_undo(struct bt_recorder *r, struct zone *z, size_t pi)
{
	struct rx_point p;
	int32_t rel = 0;

	zpt_get(z, pi, &p);
	if (p.mask & RX_THREADED)
		return;	/* a nop now: what it falls into goes with it */
	if (p.kind == RX_POINT_EXIT_DIRECT)
		rel = (int32_t)(p.trans - (p.aux + 4));
	if ((p.mask & RX_LINKED) && rc_code_write(r, p.aux, &rel, 4) == 0)
		zpt_set_linked(z, pi, 0);
}

/* Point the link whose rel32 is at @site (in @z) at @dest. */
int rc_link_patch(struct bt_recorder *r, struct zone *z, uint64_t site,
		  uint64_t dest)
{
	int64_t d = (int64_t)(dest - (site + 4));
	int32_t rel;

	if (d <= -NEAR || d >= NEAR) {
		struct rx_emit e;
		int bad;

		rc_emit_init(r, &e, z);
		bad = rx_emit_far_jump(&e, dest) < 0 ||
		      rc_zone_commit(r, z, &e) < 0;
		rc_emit_done(r, &e);
		if (bad)
			return -bte_nomem;
		/* in the process before a thread can jump to it: at once
		 * where the site is there already, else with it (a batch's
		 * links: flushed here, its code's other links would each be
		 * a write into the process) */
		if (site < z->base + z->flushed && rc_zones_flush(r) < 0)
			return -bte_io;
		d = (int64_t)(e.base - (site + 4));
	}
	rel = (int32_t)d;
	return rc_code_write(r, site, &rel, 4);
}

/*
 * Link the direct exit @z->pts[@pi] to @dest, its original's translation,
 * and note it by that original (rc_code_gone unlinks it from there).
 */
void rc_link_exit(struct bt_recorder *r, struct zone *z, size_t pi,
		  uint64_t dest)
{
	struct rx_point p;
	struct inode node;

	zpt_get(z, pi, &p);
	node = (struct inode){ .key = p.orig, .zi = (uint32_t)(z - r->zone),
			       .pi = (uint32_t)pi };
	if (p.mask & RX_LINKED)
		return;
	if (rc_index_add(&r->links, node) < 0 ||
	    rc_link_patch(r, z, p.aux, dest) < 0)
		return;	/* the exit stays: it stops, and links then */
	zpt_set_linked(z, pi, 1);	/* the int3 is dead */
}

/*
 * The side not taken of a conditional, or a block cut where it grew too
 * long, ends its translation in a jmp to its successor's: where the
 * successor's translation of this batch comes right after it, the jmp
 * (and its int3) becomes a nop, and the translation falls through, as
 * the program's code does.  Only where what it falls into goes with it:
 * the successor within one page, not at its start, so that the
 * predecessor's last byte is in that page too and whatever takes the
 * successor's code away (a write to the page, unmapping, mprotect: all by
 * page) takes the predecessor's; and only in code not yet in the process.
 * The point keeps RX_THREADED: no link is made or undone there again.
 * For the direct exit @z->pts[@i] of a batch, once link_batch linked it.
 *
 * A successor that is a conditional whose taken side carries its outcome
 * starts with that side's exit, one int3 (rx_translate's lead), which
 * its jcc leads to until linked: the jmp and int3 before it become the
 * first six bytes of a seven-byte nop whose displacement's last byte is
 * that int3 (nopl 0xcc000000(%rax)), which stays where the jcc finds it.
 */
static int thread_lead(struct zone *z, size_t i, const struct rx_point *p,
		       const struct rb *s)
{
	struct rx_point q;

	if (s->term != RB_COND || p->pend == RX_PEND_NONE || i + 1 >= z->npts)
		return 0;
	zpt_get(z, i + 1, &q);
	return q.trans == p->trans + 1 && q.kind == RX_POINT_EXIT_DIRECT &&
	       q.orig == s->target;
}

static void thread_point(struct bt_recorder *r, struct zone *z, size_t i)
{
	static const uint8_t nop6[] = { 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	static const uint8_t nop7[] = { 0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00 };
	struct rx_point p;
	const struct rb *s;
	uint64_t trans;
	int lead;

	zpt_get(z, i, &p);
	if (!(p.mask & RX_LINKED) || (p.mask & RX_THREADED) ||
	    p.aux + 4 != p.trans || p.aux - 1 < z->base + z->flushed ||
	    !(p.orig & 4095))
		return;
	s = rc_block_find(r, p.orig);
	if (!s || (s->start >> 12) != ((s->next - 1) >> 12))
		return;
	trans = rb_trans(s, p.pend);
	lead = trans == p.trans + 2 && thread_lead(z, i, &p, s);
	if ((trans != p.trans + 1 && !lead) ||
	    rc_code_write(r, p.aux - 1, lead ? nop7 : nop6, 6) < 0)
		return;
	p.mask |= RX_THREADED;
	zpt_put(z, i, &p);
	r->threaded++;
	r->threaded_lead += lead;
}

/*
 * Link the exits of zone points [from...) whose targets now exist; those
 * whose targets do not wait for them (waiting_link).  Those linked as they
 * were emitted (their target translated in an earlier batch) are noted by
 * that target too, as rc_link_exit() notes the ones it links: where that
 * code goes away, they must go back to their exits.  (They were not: a
 * call into code translated earlier ran that code's old translation after
 * the program rewrote it, tests/targets/jit_prelink.c.)  A linked one
 * may then fall through (thread_point).
 */
static void link_batch(struct bt_recorder *r, size_t *mark)
{
	size_t zi;

	for (zi = 0; zi < r->nzone; zi++) {
		struct zone *z = &r->zone[zi];
		size_t i;

		for (i = mark[zi]; i < z->npts; i++) {
			struct rx_point p;
			const struct rb *b;

			zpt_get(z, i, &p);
			if (p.kind != RX_POINT_EXIT_DIRECT)
				continue;
			if (p.mask & RX_LINKED) {	/* as it was emitted */
				rc_index_add(&r->links, (struct inode){
					.key = p.orig, .zi = (uint32_t)zi,
					.pi = (uint32_t)i });
				thread_point(r, z, i);
				continue;
			}
			b = rc_block_find(r, p.orig);
			if (b && rb_trans(b, p.pend))
				rc_link_exit(r, z, i, rb_trans(b, p.pend));
			if (zpt_linked(z, i))
				thread_point(r, z, i);
			else
				rc_index_add(&r->waiting, (struct inode){
					.key = p.orig, .zi = (uint32_t)zi,
					.pi = (uint32_t)i });
		}
	}
}

/* A block to translate: where, and the outcomes it carries. */
struct ahead {
	uint64_t at;
	uint8_t pend;
};

/*
 * The side of @b (translated carrying @pend) that its translation ends
 * in, where its successor's translation may follow it (thread_point):
 * into *@q; 0 if none.
 */
static int falls_to(struct bt_recorder *r, const struct rb *b, uint8_t pend,
		    struct ahead *q)
{
	if (b->term == RB_CUT) {
		*q = (struct ahead){ b->next, pend };
		return 1;
	}
	if (b->term != RB_COND || (pend != RX_PEND_NONE && !rb_carries(b)))
		return 0;
	rx_set_pend_max(r->x, rb_pend_max(b, pend));	/* as translated */
	*q = (struct ahead){ b->next, rx_cond_pend(r->x, pend, 0) };
	return 1;
}

/* What the translation of @b carrying @p leads to, queued at q[*tail]. */
static void ahead_push(struct bt_recorder *r, const struct rb *b, uint8_t p,
		       struct ahead *q, size_t *tail)
{
	uint64_t g;

	if (p != RX_PEND_NONE && !rb_carries(b)) {	/* a stub */
		q[(*tail)++] = (struct ahead){ b->start, RX_PEND_NONE };
		return;
	}
	rx_set_pend_max(r->x, rb_pend_max(b, p));	/* as translated */
	switch (b->term) {
	case RB_COND:
		q[(*tail)++] = (struct ahead){ b->next,
					       rx_cond_pend(r->x, p, 0) };
		if (b->target - b->end + AHEAD_FAR < 2 * (uint64_t)AHEAD_FAR)
			q[(*tail)++] = (struct ahead){ b->target,
						       rx_cond_pend(r->x, p, 1) };
		break;
	case RB_CALL:
		q[(*tail)++] = (struct ahead){ b->target, p };
		q[(*tail)++] = (struct ahead){ b->next, RX_PEND_NONE };
		break;
	case RB_JUMP:
		q[(*tail)++] = (struct ahead){ b->target, p };
		break;
	case RB_ICALL:
	case RB_IJUMP:		/* where its inline cache will point */
		g = b->icbit ? b->icbit : rc_ic_guess(r, b);
		if (g && span_overlaps(r, g, g + 1))	/* code, likely */
			q[(*tail)++] = (struct ahead){ g, b->icbit ?
				rx_icbit_pend(p) : RX_PEND_NONE };
		if (b->term == RB_IJUMP)
			break;
		/* fall through */
	case RB_CUT:
	case RB_SYSCALL:
		q[(*tail)++] = (struct ahead){ b->next, RX_PEND_NONE };
		break;
	}
}

/*
 * Link the exits that wait for a translation the batch @q (@n of them)
 * made, once the batch is in the process: an exit of an earlier batch to
 * code translated later stopped the first time it was taken (a tenth of
 * node's direct exits, 423 of 4 k; 229 of python3's 1.87 k).
 */
static void waiting_link(struct bt_recorder *r, const struct ahead *q,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct rb *b = rc_block_find(r, q[i].at);
		struct inode **pp;

		if (!b || !rb_trans(b, q[i].pend))
			continue;
		pp = rc_index_head(&r->waiting, q[i].at);
		while (*pp) {
			struct inode *e = *pp;
			struct zone *z = &r->zone[e->zi];
			int here = e->pi < z->npts;
			struct rx_point p;

			if (e->key != q[i].at) {
				pp = &e->next;
				continue;
			}
			if (here)
				zpt_get(z, e->pi, &p);
			if (here && !(p.mask & RX_LINKED) && rb_trans(b, p.pend))
				rc_link_exit(r, z, e->pi, rb_trans(b, p.pend));
			if (here && !zpt_linked(z, e->pi))
				pp = &e->next;	/* its variant is not here */
			else
				rc_index_unlink(&r->waiting, pp);
		}
	}
}

/*
 * The return sites of the calls in the batch @q (@n of them) entered for
 * the lookup, found when callees return; once the batch is in the process
 * (rc_zones_flush(): a thread of the program that probes meanwhile must
 * not find code that is not there yet).  Not every block of the batch:
 * entries taken by blocks that no lookup wants made python3's start-up
 * 3.56 k stops instead of 3.15 k, node's 15.1 k instead of 9.6 k.
 */
static void return_sites(struct bt_recorder *r, const struct ahead *q,
			size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct rb *b = rc_block_find(r, q[i].at);
		struct rb *site;

		if (!b || !rb_trans(b, q[i].pend) ||
		    (b->term != RB_CALL && b->term != RB_ICALL))
			continue;
		rc_native_ret(r, b->next);
		site = rc_block_find(r, b->next);
		if (site && rb_trans(site, RX_PEND_NONE))
			rc_table_insert(r, b->next,
					rb_trans(site, RX_PEND_NONE) -
						RX_ENTRY_LEN, 0);
	}
}

/*
 * Translate the block at @a carrying @pend and what is statically
 * reachable from it, up to AHEAD_MAX blocks; the return sites of calls go
 * into the lookup tables.  *@trans: the translation of @a.  Returns 0 or
 * < 0.
 */
int rc_translate(struct bt_recorder *r, struct bt_thread *th, uint64_t a,
		 uint8_t pend, uint64_t *trans)
{
	struct ahead queue[AHEAD_MAX * 3 + 3], ftq[AHEAD_MAX], ft;
	size_t head = 0, tail = 0, done = 0, mark[ZONE_MAX], i, nft = 0;
	struct rb *first;
	int ret = 0, has_ft = 0;

	rc_profile_enter(r, th, a);	/* a file's profile, at its first */
	first = rc_wp_block_get(r, th, a);
	if (!first)
		return -bte_nomem;
	rc_profile_ran(r, first, RB_PROF_RAN | RB_PROF_VAR(pend));
	if (rb_trans(first, pend)) {
		*trans = rb_trans(first, pend);
		return 0;
	}
	for (i = 0; i < ZONE_MAX; i++)
		mark[i] = i < r->nzone ? r->zone[i].npts : 0;
	queue[tail++] = (struct ahead){ a, pend };
	/* breadth first, but the side a translation ends in right after it
	 * (thread_point) */
	while ((has_ft || head < tail) && done < AHEAD_MAX) {
		struct ahead q = has_ft ? ft : queue[head++];
		int was_ft = has_ft;
		struct rb *b;

		has_ft = 0;
		if (q.at != a && !r->host.translatable(r->t, q.at))
			continue;
		b = rc_wp_block_get(r, th, q.at);
		if (!b || rb_trans(b, q.pend))
			continue;
		ret = translate_one(r, th, b, q.pend);
		if (ret < 0 && q.at == a && q.pend == pend)
			return ret;
		if (ret < 0)
			continue;
		done++;
		if (was_ft)
			ftq[nft++] = q;
		if (tail + 3 <= BT_ARRAY_SIZE(queue))
			ahead_push(r, b, q.pend, queue, &tail);
		has_ft = falls_to(r, b, q.pend, &ft);
	}
	link_batch(r, mark);
	*trans = rb_trans(first, pend);
	ret = rc_zones_flush(r);
	if (ret < 0)
		return ret;
	return_sites(r, queue, head);
	return_sites(r, ftq, nft);
	waiting_link(r, queue, head);
	waiting_link(r, ftq, nft);
	return rc_ic_link_batch(r, mark);	/* into flushed code only */
}

/* The variants a profile's entry @how says ran (RB_PROF_VAR's bits). */
static uint8_t prof_vars(uint8_t how)
{
	return how & RB_PROF_VARS ? how & RB_PROF_VARS :
				    RB_PROF_VAR(RX_PEND_NONE);
}

/*
 * Translate, after @b carrying @p (entry @i of the profile @at, @how, @n
 * of them), the variant of the block its translation ends in, if the
 * profile says it ran, and on from there: so that it may fall through
 * into it (thread_point).  Each into @queue.  Only in @b's page, where it
 * may (and no page is protected anew: rc_wp_block_get could drop the
 * blocks of one, the caller's @b among them).
 */
static void set_follow(struct bt_recorder *r, struct bt_thread *th,
		       const uint64_t *at, const uint8_t *how, size_t n,
		       size_t i, const struct rb *b, uint8_t p,
		       struct ahead *queue, size_t *nq)
{
	struct ahead ft;

	while (i + 1 < n && falls_to(r, b, p, &ft) && at[i + 1] == ft.at &&
	       (ft.at & 4095) && (b->start >> 12) == (ft.at >> 12) &&
	       (prof_vars(how[i + 1]) & RB_PROF_VAR(ft.pend)) &&
	       r->host.translatable(r->t, ft.at)) {
		struct rb *s = rc_wp_block_get(r, th, ft.at);

		if (!s || rb_trans(s, ft.pend) ||
		    translate_one(r, th, s, ft.pend) < 0)
			return;
		s->prof |= RB_PROF_HINT;
		queue[(*nq)++] = ft;
		b = s;
		p = ft.pend;
		i++;
	}
}

int rc_translate_set(struct bt_recorder *r, struct bt_thread *th,
		     const uint64_t *at, const uint8_t *how, size_t n)
{
	size_t mark[ZONE_MAX], i;
	struct ahead *queue = calloc(n * RX_PENDS + 1, sizeof(*queue));
	size_t nq = 0;
	int ret;

	if (!queue)
		return -bte_nomem;
	for (i = 0; i < ZONE_MAX; i++)
		mark[i] = i < r->nzone ? r->zone[i].npts : 0;
	for (i = 0; i < n; i++) {	/* each variant that ran */
		uint8_t p, vars = how[i] & RB_PROF_VARS;
		struct rb *b;

		if (!r->host.translatable(r->t, at[i]))
			continue;
		b = rc_wp_block_get(r, th, at[i]);
		if (!b)
			continue;
		if (!vars)
			vars = RB_PROF_VAR(RX_PEND_NONE);
		for (p = RX_PEND_NONE; p < RX_PENDS; p++)
			if ((vars & RB_PROF_VAR(p)) && !rb_trans(b, p) &&
			    translate_one(r, th, b, p) == 0) {
				b->prof |= RB_PROF_HINT;
				queue[nq++] = (struct ahead){ at[i], p };
				set_follow(r, th, at, how, n, i, b, p, queue,
					   &nq);
			}
	}
	link_batch(r, mark);
	ret = rc_zones_flush(r);
	if (ret < 0) {
		free(queue);
		return ret;
	}
	for (i = 0; i < n; i++) {	/* the lookup's targets first */
		struct rb *b;

		if (!(how[i] & RB_PROF_IBL) || !(b = rc_block_find(r, at[i])) ||
		    !rb_trans(b, RX_PEND_NONE))
			continue;
		b->prof |= RB_PROF_IBL;
		rc_table_insert(r, at[i],
				rb_trans(b, RX_PEND_NONE) - RX_ENTRY_LEN, 0);
	}
	return_sites(r, queue, nq);
	waiting_link(r, queue, nq);
	free(queue);
	return rc_ic_link_batch(r, mark);
}

/* ---- code that goes away ---------------------------------------------- */

/*
 * Links to @orig's translations go back to their exits; its lookup
 * entries are cleared.  (A node whose link was undone otherwise, by a
 * flush, is gone with the flush.)
 */
static void orig_gone(struct bt_recorder *r, uint64_t orig)
{
	struct inode **pp = rc_index_head(&r->links, orig);

	while (*pp) {
		struct inode *e = *pp;

		if (e->key != orig) {
			pp = &e->next;
			continue;
		}
		rc_link_undo(r, &r->zone[e->zi], e->pi);
		rc_index_unlink(&r->links, pp);
	}
	rc_table_clear(r, orig);
}

/* Mark @b dead: out of the hash by start, onto the list *@dead. */
static void block_dies(struct bt_recorder *r, struct rb *b, struct rb **dead)
{
	struct rb **pp;

	if (b->dead)
		return;
	pp = &r->bucket[rc_block_hash(b->start, r->nbucket)];
	while (*pp && *pp != b)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = b->hnext;
		r->nblocks--;
		rc_blocks_dropped(r);
	}
	b->dead = 1;
	b->hnext = *dead;
	*dead = b;
}

/*
 * Blocks that overlap [@lo, @hi), through the index by page, the range's
 * pages or, if it has more pages than the index has nodes, all nodes:
 * with @dead, each marked dead and listed there through hnext (returns
 * 0); without, 1 at the first (0: none).
 */
static int blocks_in(struct bt_recorder *r, uint64_t lo, uint64_t hi,
		     struct rb **dead)
{
	uint64_t first = lo >> 12, last = (hi - 1) >> 12, pg;
	struct inode *e;
	size_t i;

	if (last - first >= r->by_page.n) {
		for (i = 0; i < r->by_page.nbucket; i++)
			for (e = r->by_page.bucket[i]; e; e = e->next) {
				if (e->b->start >= hi || e->b->next + 1 <= lo)
					continue;
				if (!dead)
					return 1;
				block_dies(r, e->b, dead);
			}
		return 0;
	}
	for (pg = first; pg <= last; pg++)
		for (e = *rc_index_head(&r->by_page, pg); e; e = e->next) {
			if (e->key != pg || e->b->start >= hi ||
			    e->b->next + 1 <= lo)
				continue;
			if (!dead)
				return 1;
			block_dies(r, e->b, dead);
		}
	return 0;
}

/*
 * The code in [@lo, @hi) was unmapped, remapped or made writable: nothing
 * may lead into its translations any more.  Links to them go back to
 * their exits, lookup entries for them are cleared, their blocks are
 * dropped (a thread inside one runs it to its end: what the program itself
 * does with code it unmaps while running it).  The indexes make this cost
 * what it takes away, not what the cache holds.
 */
void rc_code_gone(struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo || !span_overlaps(r, lo - RB_MAX_BYTES, hi))
		return;
	rc_code_drop(r, lo, hi);
	r->host.maps_changed(r->t);
}

/* The same for code written (rec_wp.c): the mappings stay. */
void rc_code_drop(struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	struct rb *dead = NULL, *b, *next;
	size_t i;

	blocks_in(r, lo, hi, &dead);
	if (dead)	/* the held records before walk what went */
		r->gen++;
	for (b = dead; b; b = b->hnext)
		orig_gone(r, b->start);
	for (b = dead; b; b = next) {
		next = b->hnext;
		rc_block_drop(r, b);
	}
	rc_grave_trim(r);
	for (i = 0; i < CODE_PAGES; i++)
		if (r->pages[i].addr + 4096 > lo && r->pages[i].addr < hi)
			r->pages[i].valid = 0;
	rc_native_gone(r, lo, hi);
}

void bt_recorder_invalidate(struct bt_recorder *r, uint64_t lo, uint64_t hi)
{
	rc_code_gone(r, lo & ~4095ull, (hi + 4095) & ~4095ull);
}

/* A syscall that may take code away is about to be stepped: note its range. */
void rc_note_syscall(struct rthread *rt, const struct user_regs_struct *regs)
{
	uint64_t lo = regs->rdi & ~4095ull, len = regs->rsi;

	switch (regs->rax) {
	case SYS_mmap:
		if (!(regs->r10 & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
			return;	/* lands where nothing is */
		break;
	case SYS_mprotect:
	case SYS_munmap:
	case SYS_mremap:
		break;
	default:
		return;
	}
	rt->gone_start = lo;
	rt->gone_end = regs->rdi + len + 4095 < regs->rdi ? ~0ull :
		       (regs->rdi + len + 4095) & ~4095ull;
}
