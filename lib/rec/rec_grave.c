// SPDX-License-Identifier: MIT
/*
 * Blocks whose code went away, kept while records that ran them are
 * held undecoded (rec_slot.c's held parts).  A JIT writes its code pages
 * again and again; before, each write that dropped translated blocks
 * walked every thread's held history first (node: a quarter of the
 * tracer's time), because the walk decodes blocks from what the process
 * holds now.  Now every drop is a new generation of the code: a held part
 * knows the one it was taken in, a block that goes is buried with the
 * generation it died in, and the walk of an older part asks here first
 * (rc_grave_get): the block that was there then, with the bytes it had.
 *
 * A filter by page (a bit per hash of a page that has buried blocks)
 * keeps the walk of code that never went off the graveyard's hash.
 * A buried block is freed once no thread holds a part of an older
 * generation (rthread.hgen: the oldest a thread may still hold); past
 * GRAVE_MAX of them, the held history is walked now and all are freed.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/tracer.h"

#define GRAVE_HASH	16384
#define GRAVE_MAX	(1u << 16)
#define GRAVE_PAGES	(1u << 16)	/* bits of the filter by page */

static size_t page_bit(uint64_t a)
{
	uint64_t pg = a >> 12;

	return (size_t)((pg ^ (pg >> 16)) & (GRAVE_PAGES - 1));
}

/* The oldest generation a thread's held parts may be of; r->gen: none.
 * A thread that holds nothing any more is marked so (hvalid). */
static uint32_t oldest_held(struct bt_recorder *r)
{
	uint32_t min = r->gen;
	size_t i;

	for (i = 0; i < r->nrt; i++) {
		struct rthread *rt = &r->rt[i];

		if (!rt->th || rt->ended || !bt_thread_held(rt->th))
			rt->hvalid = 0;
		else if (rt->hvalid && (int32_t)(rt->hgen - min) < 0)
			min = rt->hgen;
	}
	return min;
}

static void grave_unhash(struct bt_recorder *r, struct rb *b)
{
	struct rb **pp = &r->grave_hash[rc_block_hash(b->start, GRAVE_HASH)];

	while (*pp && *pp != b)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = b->hnext;
}

/* Free the buried blocks no held part may walk: those dead since @gen or
 * before (all of them where @gen is the current generation). */
static void grave_free(struct bt_recorder *r, uint32_t gen)
{
	size_t i = r->grave_head;

	for (; i < r->ngrave && (int32_t)(r->grave[i]->died - gen) <= 0; i++) {
		grave_unhash(r, r->grave[i]);
		rb_release(r->grave[i]);
		rc_rb_free(r, r->grave[i]);
	}
	r->grave_head = i;
	if (i == r->ngrave) {
		r->ngrave = r->grave_head = 0;
		if (r->grave_pages)
			memset(r->grave_pages, 0, GRAVE_PAGES / 8);
	}
}

/* @b, out of the hash and its index by page, died now: kept, until
 * rc_grave_trim() finds no held part that may walk it. */
void rc_grave_bury(struct bt_recorder *r, struct rb *b)
{
	b->died = r->gen;
	if (!r->grave_hash) {
		r->grave_hash = calloc(GRAVE_HASH, sizeof(*r->grave_hash));
		r->grave_pages = calloc(GRAVE_PAGES / 64, sizeof(uint64_t));
		if (!r->grave_hash || !r->grave_pages) {
			free(r->grave_hash);
			free(r->grave_pages);
			r->grave_hash = NULL;
			r->grave_pages = NULL;
			goto drop;
		}
	}
	if (r->ngrave == r->grave_cap) {
		size_t cap = r->grave_cap ? 2 * r->grave_cap : 256;
		struct rb **g;

		if (r->grave_head) {	/* room at the front first */
			r->ngrave -= r->grave_head;
			memmove(r->grave, r->grave + r->grave_head,
				r->ngrave * sizeof(*g));
			r->grave_head = 0;
		} else {
			g = realloc(r->grave, cap * sizeof(*g));
			if (!g)
				goto drop;
			r->grave = g;
			r->grave_cap = cap;
		}
	}
	r->grave[r->ngrave++] = b;
	r->grave_pages[page_bit(b->start) / 64] |= 1ull << (page_bit(b->start) % 64);
	b->hnext = r->grave_hash[rc_block_hash(b->start, GRAVE_HASH)];
	r->grave_hash[rc_block_hash(b->start, GRAVE_HASH)] = b;
	return;
drop:
	rb_release(b);
	rc_rb_free(r, b);
}

/* After a drop: what no held part needs goes (all it buried, where no
 * thread holds anything), and all of it past GRAVE_MAX, once the held
 * history is walked. */
void rc_grave_trim(struct bt_recorder *r)
{
	if (r->ngrave == r->grave_head)
		return;
	if (r->ngrave - r->grave_head > GRAVE_MAX) {
		rc_settle_all(r);
		grave_free(r, r->gen);
		return;
	}
	grave_free(r, oldest_held(r));
}

/* Every buried block freed: nothing held is of an older generation. */
void rc_grave_clear(struct bt_recorder *r)
{
	grave_free(r, r->gen);
	free(r->grave);
	free(r->grave_hash);
	free(r->grave_pages);
	r->grave = NULL;
	r->grave_hash = NULL;
	r->grave_pages = NULL;
	r->grave_cap = 0;
}

/*
 * The block at @a as a part taken in generation @gen saw it: the buried
 * one that died first after @gen, else the live one (rc_block_get).
 */
struct rb *rc_grave_get(struct bt_recorder *r, uint64_t a, uint32_t gen)
{
	struct rb *b, *best = NULL;

	if (gen == r->gen || r->ngrave == r->grave_head ||
	    !(r->grave_pages[page_bit(a) / 64] & (1ull << (page_bit(a) % 64))))
		return rc_block_get(r, a);
	for (b = r->grave_hash[rc_block_hash(a, GRAVE_HASH)]; b; b = b->hnext)
		if (b->start == a && (int32_t)(b->died - gen) > 0 &&
		    (!best || (int32_t)(b->died - best->died) < 0))
			best = b;
	return best ? best : rc_block_get(r, a);
}
