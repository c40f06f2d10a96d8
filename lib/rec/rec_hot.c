// SPDX-License-Identifier: MIT
/*
 * Hot code, translated again to carry more outcomes (rec_xlate.h).
 *
 * A conditional's outcome costs a record only where the variant it runs
 * in cannot carry it on: a REC_TNT byte holds up to six outcomes, but
 * each outcome carried means more variants of the blocks that follow, and
 * translating them all ahead at start-up costs more than it saves (see
 * docs/recorder.md, "Carried outcomes").  So code carries one outcome
 * (RX_PEND_COLD) until it is found hot, then up to RX_PEND_MAX.
 *
 * Found hot: where a thread's ring wraps (rec_dispatch.c's wrap_fault),
 * the newest records of the pass that ended are read back (64 KiB and a
 * little: a whole target is in every 64 KiB of ring, rec_ring.h) and
 * walked as a drain walks them; a block that ends in a conditional and
 * ran HOT_HITS times in each of HOT_SAMPLES samples is hot: a loop that
 * lasts, not one of start-up's (python3 -c 'print(1)' wraps its ring; with
 * one sample enough, 2.4 k blocks were translated again there, and its
 * start-up took 0.21 s of CPU instead of 0.14 s).  It is translated again
 * once a sample's conditionals' records were dense (HOT_DENSE; the samples
 * after are less so, the code carrying more).  Where they are not, the
 * records are not what the code pays for, and the variants cost more
 * than they save: sqlite3's VDBE loop (a REC_TNT every 19 instructions)
 * ran 5% slower translated again, recursive fib (one every 48) 4% faster,
 * gzip (one every 8) 13% faster, python3's loop (one every 12) 40%
 * faster.  Samples are taken at every wrap only while dense code has
 * blocks on their way to hot; else the wraps between them double, up to
 * HOT_EVERY_MAX.
 *
 * Translated again: each variant it has is translated anew, carrying up
 * to RX_PEND_MAX outcomes, with what that leads to ahead (rc_translate).
 * The direct exits and inline caches linked to the old one and its lookup
 * entries are pointed at the new one (relink), and, where the thread
 * that wrapped is the only one in the translation, the old one's first
 * instruction becomes a jump to it, so that any other way in leads there
 * too (tier_up); a thread inside the old one goes on.  Not while a vfork
 * child shares the memory.
 *
 * Marks dropped: a block that ran MARK_HITS times in MARK_SAMPLES samples,
 * hot or not, has its variants whose marks (rec_profile.c) are set
 * translated again without, all in one batch (unmark): a mark's bytes,
 * run each time, cost sqlite3's CTE and recursive fib 5-9% of their CPU
 * where they ran from a first run's or an audit's translations.
 *
 * BTRACE_TEST_HOT=1 (tests/e2e/rec_hot.sh): a sample at every stop where
 * the thread goes on in the translation, and a block that ran in one is
 * hot and loses its marks, so that the differential tests run through all
 * of this;
 * BTRACE_TEST_HOT_SAMPLES=N: hot in N samples (a test's loop that cannot
 * run long enough to wrap its ring HOT_SAMPLES times while stepped).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_drain.h"
#include "rec/rec_ring.h"
#include "rec/recorder_int.h"

#define HOT_SAMPLE	((64u << 10) + 512)	/* bytes of ring read back */
#define HOT_HITS	16	/* runs in a sample that make a block hot */
#define HOT_SAMPLES	8	/* samples a block must be hot in */
#define HOT_EVERY_MAX	64	/* wraps between samples, at most */
#define HOT_DENSE	16	/* a REC_TNT per this many instructions at
				   least: a sample of code worth it */
#define MARK_HITS	16	/* runs in a sample, in MARK_SAMPLES of them,
				   that drop a block's marks (unmark) */
#define MARK_SAMPLES	2

static void hot_queue(struct bt_recorder *r, uint64_t orig)
{
	uint64_t *g;

	if (r->nhot == r->hotcap) {
		size_t cap = r->hotcap ? 2 * r->hotcap : 64;

		g = realloc(r->hotq, cap * sizeof(*g));
		if (!g)
			return;
		r->hotq = g;
		r->hotcap = cap;
	}
	r->hotq[r->nhot++] = orig;
}

static void mark_queue(struct bt_recorder *r, struct rb *b)
{
	struct rb **g;

	if (r->nmarkq == r->markqcap) {
		size_t cap = r->markqcap ? 2 * r->markqcap : 64;

		g = realloc(r->markq, cap * sizeof(*g));
		if (!g)
			return;
		r->markq = g;
		r->markqcap = cap;
	}
	r->markq[r->nmarkq++] = b;
}

static const struct rb *hot_block(void *ctx, uint64_t pc)
{
	struct bt_recorder *r = ctx;
	struct rb *b = rc_block_walk(r, pc);

	if (!b)
		return b;
	if (b->hit_sample != r->hot_sample) {	/* its first run in this one */
		b->hit_sample = r->hot_sample;
		b->hits = 0;
	}
	if (b->hits == UINT16_MAX)
		return b;
	b->hits++;
	if (b->hits == (r->hot_test ? 1 : MARK_HITS) &&
	    b->mark_samples < UINT8_MAX &&
	    ++b->mark_samples >= (r->hot_test ? 1 : MARK_SAMPLES))
		mark_queue(r, b);
	if (b->hot || b->term != RB_COND)
		return b;
	if (!r->hot_test && b->hits == HOT_HITS) {
		r->hot_cands++;
		if (++b->hot_samples == r->hot_need)
			hot_queue(r, b->start);
	} else if (r->hot_test && b->hits == 1) {
		hot_queue(r, b->start);
	}
	return b;
}

static void hot_insns(void *ctx, uint32_t n)
{
	struct bt_recorder *r = ctx;

	r->hot_insns += n;
}

static void hot_branch(void *ctx, uint64_t from, uint64_t to, int kind)
{
	(void)ctx;
	(void)from;
	(void)to;
	(void)kind;
}

static void hot_gap(void *ctx, int reason)
{
	(void)ctx;
	(void)reason;
}

static const struct rec_drain_ops hot_ops = {
	.block = hot_block,
	.insns = hot_insns,
	.branch = hot_branch,
	.gap = hot_gap,
};

/*
 * Walk the newest records of the pass that ended at @head (below the
 * REC_SYNC the wrap wrote at the top); 1 if their conditionals' records
 * are dense enough to be worth carrying more outcomes: a REC_TNT per
 * HOT_DENSE instructions or more.
 */
static int sample(struct bt_recorder *r, struct rthread *rt, uint64_t head)
{
	uint64_t end = rt->top - REC_ADDR_LEN;
	size_t len = head < end && end - head < HOT_SAMPLE ? end - head :
							    HOT_SAMPLE;
	struct rec_walker *w = &r->hot_w;
	size_t off, rlen, tnt = 0;

	if (head >= end)
		return 0;
	if (!r->hotbuf)
		r->hotbuf = malloc(HOT_SAMPLE);
	if (!r->hotbuf || rc_mem_read(r, head, r->hotbuf, len) < 0)
		return 0;
	r->hot_insns = 0;
	r->hot_cands = 0;
	r->nmarkq = 0;
	r->hot_sample++;
	w->ops = &hot_ops;
	w->ctx = r;
	w->pc = 0;
	w->hi = ~0ull;
	if (rec_drain_walk_raw(w, r->hotbuf, len, 0, 0) < 0)
		return r->hot_test;
	for (off = 0; off < len; off += rlen) {
		rlen = rec_len(r->hotbuf[off]);
		if (!rlen || off + rlen > len)
			break;
		tnt += r->hotbuf[off] >= REC_TNT;
	}
	return r->hot_test || (tnt && r->hot_insns / tnt <= HOT_DENSE);
}

/*
 * The ways into @b's variant carrying @p lead to its translation @trans
 * now: direct exits and inline caches linked to it (rc_link_exit notes
 * them by original), and its lookup entries.  Any one missed still gets
 * there through the old translation's jump.
 */
static void relink(struct bt_recorder *r, const struct rb *b, unsigned p,
		   uint64_t trans)
{
	struct inode *e;

	for (e = *rc_index_head(&r->links, b->start); e; e = e->next) {
		struct zone *z = &r->zone[e->zi];
		struct rx_point pt;

		if (e->key != b->start || e->pi >= z->npts)
			continue;
		zpt_get(z, e->pi, &pt);
		if (!(pt.mask & RX_LINKED) || (pt.mask & RX_THREADED))
			continue;	/* a threaded one falls into the old */
		if (pt.kind == RX_POINT_EXIT_DIRECT && pt.pend == p)
			rc_link_patch(r, z, pt.aux, trans);
		else if (pt.kind == RX_POINT_IC && p == RX_PEND_NONE)
			rc_link_patch(r, z, pt.aux, trans - RX_ENTRY_RESTORE);
	}
	if (p == RX_PEND_NONE)
		rc_table_update(r, b->start, trans - RX_ENTRY_LEN);
}

/*
 * Translate @b again, carrying more; 0 if it was not.  Where other
 * threads are in the translation the old one's first instruction stays
 * (a jmp written over it in two writes would be torn for a thread that
 * runs it meanwhile): the links, inline caches and lookup entries, each
 * changed by one aligned store, lead to the new one, and a way in that
 * none of them is (a thread inside the old one, a re-entry from native
 * code) runs the old one, which records the same branches with fewer
 * outcomes carried.
 */
static int tier_up(struct bt_recorder *r, struct bt_thread *th,
		   struct rb *b, uint64_t pc)
{
	uint64_t old[RX_PENDS_COLD], trans;
	unsigned p;
	int done = 0, others = rc_others_in(r, th);

	for (p = RX_PEND_NONE; p < RX_PENDS_COLD; p++) {
		old[p] = b->trans[p];
		if (old[p] && pc >= old[p] && pc < old[p] + 5) {
			b->hot_samples = 0;	/* the thread is where it
						   changes: later */
			return 0;
		}
	}
	b->hot = 1;
	for (p = RX_PEND_NONE; p < RX_PENDS_COLD; p++) {
		uint8_t jmp = 0xe9;
		struct zone *z;

		if (!old[p])
			continue;
		b->trans[p] = 0;
		if (rc_translate(r, th, b->start, (uint8_t)p, &trans) < 0 ||
		    !(z = rc_zone_of(r, old[p])) ||
		    (!others && (rc_code_write(r, old[p], &jmp, 1) < 0 ||
				 rc_link_patch(r, z, old[p] + 1, trans) < 0))) {
			/* the old one stays where the new one is not there */
			if (!b->trans[p])
				b->trans[p] = old[p];
			continue;
		}
		relink(r, b, p, trans);
		done = 1;
	}
	return done;
}

/*
 * The blocks that ran MARK_HITS times in MARK_SAMPLES samples: their
 * variants whose marks are set translated again without, in one batch,
 * and every link, inline cache and lookup entry that led to the old ones
 * leads to the new ones (one aligned store each).  The old ones stay as
 * they are: a way in that none of those is (a thread inside one, a
 * re-entry from native code) runs them, which record the same branches.
 * 1 if one was.
 */
static int unmark(struct bt_recorder *r, struct bt_thread *th)
{
	uint64_t *at = NULL, *old = NULL;
	uint8_t *how = NULL;
	struct rb **blk = NULL;
	size_t i, n = 0;
	unsigned p;
	int made = 0;

	if (r->nmarkq) {
		at = malloc(r->nmarkq * (1 + RX_PENDS_COLD) * sizeof(*at));
		how = malloc(r->nmarkq);
		blk = malloc(r->nmarkq * sizeof(*blk));
	}
	for (i = 0; at && how && blk && i < r->nmarkq; i++) {
		struct rb *b = r->markq[i];
		unsigned vars = rc_profile_marked(r, b);

		if (!vars)
			continue;
		old = at + r->nmarkq;
		for (p = RX_PEND_NONE; p < RX_PENDS_COLD; p++) {
			old[n * RX_PENDS_COLD + p] = 0;
			if (!(vars & RB_PROF_VAR(p)))
				continue;
			rc_profile_ran(r, b, RB_PROF_RAN | RB_PROF_VAR(p));
			old[n * RX_PENDS_COLD + p] = b->trans[p];
			b->trans[p] = 0;
		}
		blk[n] = b;
		at[n] = b->start;
		how[n++] = (uint8_t)vars;
	}
	if (n)
		rc_translate_set(r, th, at, how, n);
	for (i = 0; i < n; i++)
		for (p = RX_PEND_NONE; p < RX_PENDS_COLD; p++) {
			uint64_t o = old[i * RX_PENDS_COLD + p];

			if (!o)
				continue;
			if (!blk[i]->trans[p]) {	/* not made: it stays */
				blk[i]->trans[p] = o;
				continue;
			}
			relink(r, blk[i], p, blk[i]->trans[p]);
			r->marks_dropped++;
			made = 1;
		}
	free(at);
	free(how);
	free(blk);
	r->nmarkq = 0;
	return made;
}

unsigned rc_hot_samples(void)
{
	const char *s = getenv("BTRACE_TEST_HOT_SAMPLES");
	int n = s ? atoi(s) : 0;

	return n > 0 && n < 256 ? (unsigned)n : HOT_SAMPLES;
}

void rc_hot_wrapped(struct bt_recorder *r, struct rthread *rt,
		    const struct user_regs_struct *regs, uint64_t head)
{
	struct bt_thread *th = rt->th;
	size_t i;
	int made = 0;

	if (r->nguest || r->hot_off)
		return;
	if (++r->hot_wraps < r->hot_every && !r->hot_test)
		return;
	r->hot_wraps = 0;
	if (sample(r, rt, head))
		r->hot_dense = 1;	/* from then on: dense no longer, as
					   code carries more */
	r->cur = th;
	made = unmark(r, th);
	r->cur = NULL;
	/*
	 * A sample costs what decoding 64 KiB costs (recursive fib wraps
	 * its ring 2 k times: sampled at each, 50% more CPU): at the next
	 * wrap only while dense code has blocks on their way to hot, and
	 * HOT_SAMPLES * 2 samples in a row at most without one made hot.
	 */
	if (r->hot_dense && (r->nhot || (r->hot_cands &&
					  ++r->hot_idle < 2 * HOT_SAMPLES)))
		r->hot_every = 1;
	else if (r->hot_every < HOT_EVERY_MAX)
		r->hot_every = r->hot_every ? 2 * r->hot_every : 2;
	if (!r->hot_dense || !r->nhot) {
		if (made)
			rc_zones_flush(r);
		return;	/* found hot, not dense: kept for a sample that is */
	}
	r->hot_idle = 0;
	r->cur = th;
	for (i = 0; i < r->nhot; i++) {
		struct rb *b = rc_block_find(r, r->hotq[i]);

		if (b && !b->hot && !b->dead && tier_up(r, th, b, regs->rip)) {
			r->hot_made++;
			made = 1;
		}
	}
	r->cur = NULL;
	r->nhot = 0;
	if (made)
		rc_zones_flush(r);
}
