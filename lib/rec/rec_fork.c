// SPDX-License-Identifier: MIT
/*
 * A fork child's recorder (recorder.h, bt_recorder_fork): the child's
 * memory is a copy of its parent's at the fork, with the parent's zones,
 * lookup tables and ring slots in it, so the tracer's side of the
 * parent's recorder is copied for it: zones and their points, the blocks
 * and both indexes, the mirror of the tables, which slots are dirty, and
 * the pages of code it write-protected (the child's copies are so too),
 * the native exits to untraced code and the int3s where native code
 * comes back (rc_native_fork()).
 * The child goes on running its parent's translations at once, through
 * ptrace nothing but its own slot's set-up.  Its one thread takes a slot
 * of its own (the forking thread's slot holds the parent's ring as it
 * was); its history starts at the fork.
 *
 * Translations the tracer made after the fork belong to the parent's
 * memory only.  The fork's own thread is stopped at its event, out of its
 * translation; another thread of a parent that translates between the
 * fork and the tracer seeing its event is not told apart (see
 * docs/recorder.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"

static int dup_mem(void **out, const void *src, size_t len)
{
	*out = NULL;
	if (!src || !len)
		return 0;
	*out = malloc(len);
	if (!*out)
		return -bte_nomem;
	memcpy(*out, src, len);
	return 0;
}

/* A copy of @b, its arrays its own, not yet in any hash. */
static struct rb *block_dup(struct bt_recorder *r, const struct rb *b)
{
	struct rb *c = rc_rb_new(r);

	if (!c)
		return NULL;
	*c = *b;
	c->hnext = NULL;
	if (rb_dup_arrays(c, b) < 0) {
		rc_rb_free(r, c);
		return NULL;
	}
	return c;
}

/* The blocks, each in the same bucket, and the index by page rebuilt. */
static int blocks_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	size_t i;

	bt_big_free(c->bucket, c->nbucket * sizeof(*c->bucket));
	c->bucket = bt_big_alloc(p->nbucket * sizeof(*c->bucket));
	if (!c->bucket)
		return -bte_nomem;
	c->nbucket = p->nbucket;
	for (i = 0; i < p->nbucket; i++) {
		const struct rb *b;
		struct rb **tail = &c->bucket[i];

		for (b = p->bucket[i]; b; b = b->hnext) {
			struct rb *n = block_dup(c, b);
			uint64_t pg;

			if (!n)
				return -bte_nomem;
			*tail = n;
			tail = &n->hnext;
			c->nblocks++;
			for (pg = n->start >> 12; pg <= n->next >> 12; pg++)
				if (rc_index_add(&c->by_page, (struct inode){
						.key = pg, .b = n }) < 0)
					return -bte_nomem;
		}
	}
	return 0;
}

/* Linked exits by their original: no pointers in them. */
static int links_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	size_t i;

	for (i = 0; i < p->links.nbucket; i++) {
		const struct inode *e;

		for (e = p->links.bucket[i]; e; e = e->next)
			if (rc_index_add(&c->links, *e) < 0)
				return -bte_nomem;
	}
	return 0;
}

/*
 * Zones and their points; code held back for the parent's memory (not
 * written yet at the fork) is written into the child's now.
 */
static int zones_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	size_t i;
	int ret;

	for (i = 0; i < p->nzone; i++) {
		const struct zone *pz = &p->zone[i];
		struct zone *z = &c->zone[i];

		*z = *pz;
		z->pts = NULL;
		z->pend = NULL;
		z->mark_of = NULL;
		z->ptcap = pz->npts;
		z->markcap = pz->mark_of ? pz->nmark : 0;
		c->nzone = i + 1;
		z->pts = pz->npts ? bt_big_alloc(pz->npts * sizeof(*z->pts))
				  : NULL;
		if (z->pts)
			memcpy(z->pts, pz->pts, pz->npts * sizeof(*z->pts));
		if ((pz->npts && !z->pts) ||
		    (pz->mark_of &&
		     dup_mem((void **)&z->mark_of, pz->mark_of,
			     pz->nmark * sizeof(*pz->mark_of)) < 0) ||
		    dup_mem((void **)&z->pend, pz->pend,
			    pz->used - pz->flushed) < 0)
			return -bte_nomem;
	}
	ret = rc_zones_flush(c);
	for (i = 0; i < c->nzone; i++) {
		free(c->zone[i].pend);
		c->zone[i].pend = NULL;
	}
	return ret;
}

static int tables_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	int w, ret = rc_tables_alloc(c);

	for (w = 0; w < 2 && ret == 0; w++)
		memcpy(c->tab_orig[w], p->tab_orig[w],
		       RX_TABLE_ENTRIES * sizeof(uint64_t));
	return ret;
}

/* The parent's slots are in the child's copy, in use or used: dirty. */
static void slots_copy(struct bt_recorder *c, const struct bt_recorder *p)
{
	size_t i;

	c->slots = p->slots;
	c->slot_size = p->slot_size;
	for (i = 0; i < SLOT_MAX; i++) {
		c->slot_used[i] = 0;
		c->slot_dirty[i] = p->slot_used[i] || p->slot_dirty[i];
	}
}

void bt_recorder_set_pid(struct bt_recorder *r, pid_t pid)
{
	r->pid = pid;
}

pid_t bt_recorder_pid(const struct bt_recorder *r)
{
	return r->pid;
}

int bt_recorder_fork(const struct bt_recorder *p, pid_t child,
		     uint64_t stops_version, struct bt_recorder **out)
{
	struct bt_recorder *c;
	int ret;

	*out = NULL;
	ret = bt_recorder_alloc(&c, p->t, &p->host);
	if (ret < 0)
		return ret;
	c->pid = child;
	if (!p->ready || p->broken) {
		*out = c;	/* nothing mapped yet: starts fresh */
		return 0;
	}
	/* its tables are its parent's pages until either writes one */
	c->mirror_off = 1;
	c->clock = p->clock;		/* the same TSC */
	c->segv = p->segv;		/* and the same actions */
	c->segv_known = p->segv_known && p->segv_pid == p->pid;
	c->segv_pid = child;
	c->syscall_insn = p->syscall_insn;
	memcpy(c->mod, p->mod, p->nmod * sizeof(*c->mod));	/* loaded */
	c->nmod = p->nmod;
	c->tables = p->tables;
	/* its entries are its parent's, leading to the check or past it */
	c->tab_unchecked = p->tab_unchecked;
	c->version = stops_version;
	c->translated = p->translated;
	c->evict = p->evict;
	memcpy(c->span_lo, p->span_lo, sizeof(c->span_lo));
	memcpy(c->span_hi, p->span_hi, sizeof(c->span_hi));
	c->nspan = p->nspan;
	slots_copy(c, p);
	ret = blocks_copy(c, p);
	if (ret == 0)
		ret = links_copy(c, p);
	if (ret == 0)
		ret = zones_copy(c, p);
	if (ret == 0)
		ret = tables_copy(c, p);
	if (ret == 0)
		ret = rc_wp_copy(c, p);
	if (ret == 0)
		ret = rc_native_fork(c, p);
	if (ret < 0) {
		bt_recorder_free(c);
		return bt_fail(bte_nomem, ENOMEM, "recorder of %d", (int)child);
	}
	c->ready = 1;
	*out = c;
	return 0;
}
