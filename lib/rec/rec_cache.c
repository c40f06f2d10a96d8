// SPDX-License-Identifier: MIT
/*
 * The recorder's code cache (recorder_int.h): the process's memory as the
 * recorder reads and writes it, the blocks it decoded (from a small cache
 * of the program's code pages), the zones that hold translations and
 * their points (where generated code stands for the program); the two
 * lookup tables in the process that indirect branches probe are
 * rec_tables.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"
#include "tracer/aspace.h"
#include "tracer/tracer.h"

/* ---- memory of the process ------------------------------------------ */

/* The target's memory (tracer/aspace.h): the process the recorder runs. */
static struct bt_aspace *rc_as(struct bt_recorder *r)
{
	return bt_target_aspace(r->t, r->pid);
}

int rc_mem_open(struct bt_recorder *r)
{
	struct bt_aspace *as = rc_as(r);
	int fd;

	if (!as)
		return -bte_nomem;
	fd = bt_aspace_fd(as);
	return fd < 0 ? fd : 0;
}

int rc_mem_write(struct bt_recorder *r, uint64_t addr, const void *buf,
		 size_t len)
{
	uint8_t *m = rc_mirror_at(r, addr, len);
	ssize_t n;

	if (m) {
		rc_mirror_store(m, buf, len);
		return 0;
	}
	n = bt_aspace_write_raw(rc_as(r), addr, buf, len);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? (int)n : bt_fail(bte_io, 0, "write 0x%llx",
					(unsigned long long)addr);
}

int rc_mem_read(struct bt_recorder *r, uint64_t addr, void *buf, size_t len)
{
	const uint8_t *m = rc_mirror_at(r, addr, len);
	ssize_t n;

	if (m) {
		memcpy(buf, m, len);
		return 0;
	}
	n = bt_aspace_read_raw(rc_as(r), addr, buf, len);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? (int)n : bt_fail(bte_io, 0, "read 0x%llx",
					(unsigned long long)addr);
}

int64_t rc_syscall(struct bt_recorder *r, struct bt_thread *th, long nr,
		   uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
		   uint64_t a4)
{
	uint64_t args[6] = { a0, a1, a2, a3, a4, 0 };
	int64_t res = -ENOSYS;
	int ret;

	/*
	 * Only where no system call of the thread's own is under way (an
	 * exec or clone event would finish it over ours): at a trap.
	 */
	if (!r->trapping && th->why != BT_TS_TRAP)
		return -bte_busy;

	ret = bt_thread_syscall(r->t, th, r->syscall_insn, nr, args, &res);
	return ret < 0 ? ret : res;
}


/* ---- blocks ----------------------------------------------------------- */

size_t rc_block_hash(uint64_t a, size_t n)
{
	return (size_t)((a >> 3) ^ (a >> 27)) & (n - 1);
}

static int stop_at(void *ctx, uint64_t addr)
{
	struct bt_recorder *r = ctx;

	return r->host.stop_at(r->t, addr);
}

/*
 * The program's code, a page at a time through a small cache: blocks are
 * decoded from code that does not change (the host sends code that may
 * change elsewhere), and a block's decode would otherwise cost a read.
 */
static const uint8_t *code_page(struct bt_recorder *r, uint64_t page)
{
	struct code_page *c = &r->pages[(page >> 12) & (CODE_PAGES - 1)];

	if (c->valid && c->addr == page)
		return c->bytes;
	if (r->host.read(r->t, page, c->bytes, 4096) < 0) {
		c->valid = 0;
		return NULL;
	}
	c->addr = page;
	c->valid = 1;
	return c->bytes;
}

static int code_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct bt_recorder *r = ctx;
	uint8_t *out = buf;

	while (len) {
		uint64_t page = addr & ~4095ull;
		size_t off = addr - page,
		       n = 4096 - off < len ? 4096 - off : len;
		const uint8_t *p = code_page(r, page);

		if (!p)
			return r->host.read(r->t, addr, out, len);
		memcpy(out, p + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* ---- indexes by address ------------------------------------------------ */

/*
 * Keys that lie together, in buckets that lie together (as
 * rc_block_hash()): a batch adds the links of a file's code in ascending
 * order, the index by page its pages.  A multiplicative hash sent each
 * add, and each node moved when the buckets double, to a bucket of its
 * own cache line: rc_index_add() was 7% of the tracer's time at python3's
 * start-up, nine tenths of it two loads that missed.
 */
static size_t ihash(const struct index *x, uint64_t key)
{
	return (size_t)((key >> x->shift) ^ (key >> 27)) & (x->nbucket - 1);
}

/* A slab's nodes: the first 4096 (128 KiB), each next one twice its
 * predecessor's up to 2 MiB (huge pages, lib/mem.c). */
#define ISLAB_NODES	4096

/* A node on the free list: no key of an address or a page. */
#define INODE_FREE	UINT64_MAX

/*
 * Twice the buckets, the nodes taken in the order of their slabs (the
 * memory they lie in), not of their chains: a chain's walk missed the
 * cache at each node, three fifths of rc_index_add()'s time.
 */
static int index_grow(struct index *x)
{
	struct inode **nb;
	struct bt_slab *sl;
	size_t n = x->nbucket ? x->nbucket * 2 : 1024, i;

	nb = bt_big_alloc(n * sizeof(*nb));
	if (!nb)
		return bt_fail(bte_nomem, ENOMEM, "index");
	bt_big_free(x->bucket, x->nbucket * sizeof(*x->bucket));
	x->bucket = nb;
	x->nbucket = n;
	for (sl = x->slabs; sl; sl = sl->next)
		for (i = 0; i < sl->used; i++) {
			struct inode *e = (struct inode *)sl->mem + i;
			size_t h;

			if (e->key == INODE_FREE)
				continue;
			h = ihash(x, e->key);
			e->next = nb[h];
			nb[h] = e;
		}
	return 0;
}

static struct inode *inode_alloc(struct index *x)
{
	struct inode *e = x->free;

	if (e) {
		x->free = e->next;
		return e;
	}
	return bt_slab_take(&x->slabs, sizeof(*e), ISLAB_NODES);
}

int rc_index_add(struct index *x, struct inode node)
{
	struct inode *e;
	size_t h;

	if (x->n >= x->nbucket && index_grow(x) < 0 && !x->nbucket)
		return -bte_nomem;
	e = inode_alloc(x);
	if (!e)
		return bt_fail(bte_nomem, ENOMEM, "index");
	*e = node;
	h = ihash(x, node.key);
	e->next = x->bucket[h];
	x->bucket[h] = e;
	x->n++;
	return 0;
}

/* The chain that holds @key's nodes (among others: check e->key). */
struct inode **rc_index_head(const struct index *x, uint64_t key)
{
	static struct inode *none;

	if (!x->nbucket)
		return &none;
	return &x->bucket[ihash(x, key)];
}

/* Take out and free the node *@pp, which then is the next one. */
void rc_index_unlink(struct index *x, struct inode **pp)
{
	struct inode *e = *pp;

	*pp = e->next;
	e->key = INODE_FREE;
	e->next = x->free;
	x->free = e;
	x->n--;
}

void rc_index_clear(struct index *x)
{
	if (x->bucket)
		memset(x->bucket, 0, x->nbucket * sizeof(*x->bucket));
	bt_slabs_free(&x->slabs, sizeof(struct inode));
	x->free = NULL;
	x->n = 0;
}

/* The index emptied and its buckets freed. */
void rc_index_free(struct index *x)
{
	rc_index_clear(x);
	bt_big_free(x->bucket, x->nbucket * sizeof(*x->bucket));
	x->bucket = NULL;
	x->nbucket = 0;
}

/* Pages a block covers: [start, next] (next: its fall-through, which a
 * range that ends there also takes away, as rc_code_gone counts it). */
static void block_pages(const struct rb *b, uint64_t *first, uint64_t *last)
{
	*first = b->start >> 12;
	*last = b->next >> 12;
}

static void blocks_grow(struct bt_recorder *r)
{
	size_t n = r->nbucket * 2, i;
	struct rb **nb = bt_big_alloc(n * sizeof(*nb));

	if (!nb)
		return;
	for (i = 0; i < r->nbucket; i++) {
		struct rb *b = r->bucket[i], *next;

		for (; b; b = next) {
			next = b->hnext;
			b->hnext = nb[rc_block_hash(b->start, n)];
			nb[rc_block_hash(b->start, n)] = b;
		}
	}
	bt_big_free(r->bucket, r->nbucket * sizeof(*r->bucket));
	r->bucket = nb;
	r->nbucket = n;
}

/*
 * Blocks lie in slabs (the first of 1024, each next one twice its
 * predecessor's up to 2 MiB: huge pages, lib/mem.c), freed ones on a
 * list: node's first run makes 180 k blocks, 28 MiB, whose first touch
 * was 7 k of its tracer's 27 k page faults, and the hash's lookups walk
 * them in no order.
 */
#define RB_SLAB_FIRST	1024

/* A block's room, zeroed; NULL without memory. */
struct rb *rc_rb_new(struct bt_recorder *r)
{
	struct rb *b = r->rb_free;

	if (b) {
		r->rb_free = b->hnext;
		memset(b, 0, sizeof(*b));
		return b;
	}
	return bt_slab_take(&r->rb_slabs, sizeof(*b), RB_SLAB_FIRST);
}

void rc_rb_free(struct bt_recorder *r, struct rb *b)
{
	b->hnext = r->rb_free;
	r->rb_free = b;
}

void rc_rb_slabs_free(struct bt_recorder *r)
{
	bt_slabs_free(&r->rb_slabs, sizeof(struct rb));
	r->rb_free = NULL;
}

struct rb *rc_block_find(const struct bt_recorder *r, uint64_t a)
{
	struct rb *b = r->bucket[rc_block_hash(a, r->nbucket)];

	for (; b; b = b->hnext)
		if (b->start == a)
			return b;
	return NULL;
}

static void unindex(struct bt_recorder *r, const struct rb *b, uint64_t first,
		    uint64_t end);

static struct rb *block_make(struct bt_recorder *r, uint64_t a);

/*
 * The block at @a; with @make decoded on first use, else NULL if there is
 * none.  A walk asks for every block a thread ran, one after another: a
 * block's successors (next and target) are kept in it, so that the walk
 * goes from block to block without the hash (half the drain's time was
 * its lookups).  They hold while no block has left the hash since
 * (r->epoch).
 */
static struct rb *block_next(struct bt_recorder *r, uint64_t a, int make)
{
	struct rb *p = r->prev_epoch == r->epoch ? r->prev : NULL, *b;
	/* a return's or indirect branch's last target in its target's place */
	int k = !p ? -1 : a == p->next ? 0 :
		a == p->target || !p->target ? 1 : -1;

	if (k >= 0 && p->succ_epoch == r->epoch && p->succ[k] &&
	    p->succ[k]->start == a) {
		r->prev = p->succ[k];
		return r->prev;
	}
	b = rc_block_find(r, a);
	if (!b && make)
		b = block_make(r, a);
	if (!b)
		return NULL;
	if (k >= 0) {
		if (p->succ_epoch != r->epoch)
			p->succ[0] = p->succ[1] = NULL;
		p->succ[k] = b;
		p->succ_epoch = r->epoch;
	}
	r->prev = b;
	r->prev_epoch = r->epoch;
	return b;
}

struct rb *rc_block_get(struct bt_recorder *r, uint64_t a)
{
	return block_next(r, a, 1);
}

struct rb *rc_block_walk(struct bt_recorder *r, uint64_t a)
{
	return block_next(r, a, 0);
}

/* A block left the hash (and may be freed): every kept successor goes. */
void rc_blocks_dropped(struct bt_recorder *r)
{
	r->epoch++;
	r->prev = NULL;
}

/* The block at @a decoded, into the hash; NULL only without memory. */
static struct rb *block_make(struct bt_recorder *r, uint64_t a)
{
	struct rb *b;
	uint64_t first, last, pg;
	size_t h;

	b = rc_rb_new(r);
	if (!b)
		return NULL;
	if (rx_block_decode(r->x, a, code_read, stop_at, r, b) < 0) {
		rc_rb_free(r, b);
		return NULL;
	}
	block_pages(b, &first, &last);
	for (pg = first; pg <= last; pg++)
		if (rc_index_add(&r->by_page,
				 (struct inode){ .key = pg, .b = b }) < 0) {
			unindex(r, b, first, pg);
			rb_release(b);
			rc_rb_free(r, b);
			return NULL;
		}
	if (r->nblocks >= r->nbucket)
		blocks_grow(r);
	h = rc_block_hash(a, r->nbucket);
	b->hnext = r->bucket[h];
	r->bucket[h] = b;
	r->nblocks++;
	return b;
}

/* Take @b out of the index by page, pages [@first, @end). */
static void unindex(struct bt_recorder *r, const struct rb *b, uint64_t first,
		    uint64_t end)
{
	uint64_t pg;

	for (pg = first; pg < end; pg++) {
		struct inode **pp = rc_index_head(&r->by_page, pg);

		while (*pp && !((*pp)->key == pg && (*pp)->b == b))
			pp = &(*pp)->next;
		if (*pp)
			rc_index_unlink(&r->by_page, pp);
	}
}

/* Block @b, out of the hash by start already, out of the index by page
 * too: buried, for the records held that ran it (rec_grave.c). */
void rc_block_drop(struct bt_recorder *r, struct rb *b)
{
	uint64_t first, last;

	block_pages(b, &first, &last);
	unindex(r, b, first, last + 1);
	rc_grave_bury(r, b);
}

void rc_blocks_clear(struct bt_recorder *r)
{
	size_t i;

	rc_settle_all(r);	/* the records of the blocks that go: now */
	rc_grave_clear(r);	/* and of those that went */
	rc_profile_save(r);	/* and what they ran, for the next run */
	for (i = 0; i < r->nbucket; i++) {
		struct rb *b = r->bucket[i], *next;

		for (; b; b = next) {
			next = b->hnext;
			rb_release(b);
			rc_rb_free(r, b);
		}
		r->bucket[i] = NULL;
	}
	r->nblocks = 0;
	rc_blocks_dropped(r);
	rc_index_clear(&r->by_page);
}

/* ---- zones and points --------------------------------------------------- */

static int reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > -NEAR + (int64_t)ZONE_SIZE && d < NEAR - (int64_t)ZONE_SIZE;
}

struct zone *rc_zone_of(struct bt_recorder *r, uint64_t pc)
{
	size_t i;

	for (i = 0; i < r->nzone; i++)
		if (pc >= r->zone[i].base && pc < r->zone[i].base + ZONE_SIZE)
			return &r->zone[i];
	return NULL;
}

/*
 * The points at trans == @pc, decoded into r->pt_at (the first's index in
 * its zone in r->pt_at_first), valid until the next call; NULL if none.
 * Inside a run of copied instructions (rec_xlate.h's RX_POINT_SAFE), the
 * one point that stands there.
 */
struct rx_point *rc_point_at(struct bt_recorder *r, uint64_t pc, size_t *n)
{
	struct zone *z = rc_zone_of(r, pc);
	struct rx_point run;
	size_t lo, first;

	*n = 0;
	if (!z)
		return NULL;
	first = lo = zpt_from(z, pc);
	while (lo < z->npts && zpt_trans(z, lo) == pc && *n < PT_AT_MAX)
		zpt_get(z, lo++, &r->pt_at[(*n)++]);
	r->pt_at_first = first;
	if (*n)
		return r->pt_at;
	if (!first)
		return NULL;
	zpt_get(z, first - 1, &run);
	if (!rx_point_in_run(&run, pc, &r->pt_at[0]))
		return NULL;
	r->pt_at_first = first - 1;
	*n = 1;
	return r->pt_at;
}

struct rx_point *rc_point_kind(struct bt_recorder *r, uint64_t pc, int kind)
{
	size_t n, i;
	struct rx_point *p = rc_point_at(r, pc, &n);

	for (i = 0; i < n; i++)
		if (p[i].kind == kind)
			return &p[i];
	return NULL;
}

/* The index in its zone of @p, which rc_point_at() returned last. */
size_t rc_point_index(const struct bt_recorder *r, const struct rx_point *p)
{
	return r->pt_at_first + (size_t)(p - r->pt_at);
}

static int points_add(struct zone *z, const struct rx_point *p, size_t n)
{
	if (z->npts + n > z->ptcap) {
		size_t cap = z->ptcap ? z->ptcap : 1024;
		struct zpt *g;

		while (cap < z->npts + n)
			cap *= 2;
		g = bt_big_grow(z->pts, z->ptcap * sizeof(*g),
				cap * sizeof(*g));
		if (!g)
			return bt_fail(bte_nomem, ENOMEM, "points");
		z->pts = g;
		z->ptcap = cap;
	}
	while (n--)
		zpt_put(z, z->npts++, p++);
	return 0;
}

#define PEND_MAX ZONE_SIZE	/* a batch is written whole, its links in it */

/* Write what @z holds back into the process. */
static int zone_flush(struct bt_recorder *r, struct zone *z)
{
	int ret = 0;

	if (z->used > z->flushed)
		ret = rc_mem_write(r, z->base + z->flushed, z->pend,
				z->used - z->flushed);
	z->flushed = z->used;
	return ret;
}

int rc_zones_flush(struct bt_recorder *r)
{
	size_t i;
	int ret = 0;

	for (i = 0; i < r->nzone; i++)
		if (zone_flush(r, &r->zone[i]) < 0)
			ret = -bte_io;
	return ret;
}

/*
 * Write generated code: into a zone's held-back bytes if it is there
 * (translations are written in one go when a batch is done), else into
 * the process.
 */
int rc_code_write(struct bt_recorder *r, uint64_t addr, const void *buf,
		  size_t len)
{
	struct zone *z = rc_zone_of(r, addr);

	if (z && addr >= z->base + z->flushed &&
	    addr + len <= z->base + z->used) {
		memcpy(z->pend + (addr - z->base - z->flushed), buf, len);
		return 0;
	}
	return rc_mem_write(r, addr, buf, len);
}

/* Add @e's bytes and points to @z. */
int rc_zone_commit(struct bt_recorder *r, struct zone *z, struct rx_emit *e)
{
	int ret = 0;

	if (!z->pend)
		z->pend = malloc(PEND_MAX);
	if (!z->pend)
		return bt_fail(bte_nomem, ENOMEM, "zone");
	if (z->used - z->flushed + e->len > PEND_MAX)
		ret = zone_flush(r, z);
	if (ret == 0) {
		memcpy(z->pend + (z->used - z->flushed), e->buf, e->len);
		ret = points_add(z, e->pts, e->npts);
	}
	if (ret == 0)
		z->used += e->len;
	e->npts = 0;
	return ret;
}

static uint64_t link_lookup(void *ctx, uint64_t orig, uint8_t pend,
			    uint64_t from)
{
	struct bt_recorder *r = ctx;
	const struct rb *b = rc_block_find(r, orig);
	int64_t d;

	if (!b || !rb_trans(b, pend))
		return 0;
	d = (int64_t)(rb_trans(b, pend) - from);
	return d > -NEAR && d < NEAR ? rb_trans(b, pend) : 0;
}

void rc_emit_init(struct bt_recorder *r, struct rx_emit *e, struct zone *z)
{
	memset(e, 0, sizeof(*e));
	e->buf = r->emitbuf;
	e->pts = r->emitpts;
	e->ptcap = r->emitptcap;
	e->cap = ZONE_SIZE - z->used < ZONE_ROOM ? ZONE_SIZE - z->used :
						   ZONE_ROOM;
	e->base = z->base + z->used;
	e->link = link_lookup;
	e->ctx = r;
	e->no_time = rc_clock_off();
}

void rc_emit_done(struct bt_recorder *r, struct rx_emit *e)
{
	r->emitpts = e->pts;	/* grown by the emitter: kept for the next */
	r->emitptcap = e->ptcap;
}

/* Map a zone within reach of @near (rec_room.c). */
static struct zone *zone_new(struct bt_recorder *r, struct bt_thread *th,
			     uint64_t near)
{
	struct zone *z;
	int64_t at;

	if (r->nzone == ZONE_MAX)
		return NULL;
	at = rc_room_map(r, th, near, ZONE_SIZE + ZONE_MARKS,
			 PROT_READ | PROT_EXEC);
	if (at < 0 || !reach(near, (uint64_t)at) ||
	    !reach(near, (uint64_t)at + ZONE_SIZE))
		return NULL;	/* no room, no memory, or not at a trap */
	rc_name(r, th, (uint64_t)at, ZONE_SIZE + ZONE_MARKS, RC_NAME_CODE);
	z = &r->zone[r->nzone];
	memset(z, 0, sizeof(*z));
	z->base = (uint64_t)at;
	/* the marks (rec_profile.c), where profiles are kept */
	if (!r->cache_dir ||
	    rc_syscall(r, th, SYS_mprotect, z->base + ZONE_SIZE, ZONE_MARKS,
		       PROT_READ | PROT_WRITE, 0, 0) != 0)
		z->nmark = ZONE_MARKS;	/* none */
	r->nzone++;
	return z;
}

struct zone *rc_zone_for(struct bt_recorder *r, struct bt_thread *th,
			 uint64_t a)
{
	size_t i;

	for (i = 0; i < r->nzone; i++) {
		struct zone *z = &r->zone[i];

		if (ZONE_SIZE - z->used >= ZONE_ROOM && reach(a, z->base) &&
		    reach(a, z->base + ZONE_SIZE))
			return z;
	}
	return zone_new(r, th, a);
}

/* ---- forgetting it all ---------------------------------------------- */

/* @len bytes of the process's memory at @addr zeroed. */
static void mem_zero(struct bt_recorder *r, uint64_t addr, uint64_t len)
{
	static const uint8_t zero[4096];
	uint64_t a;

	for (a = 0; a < len; a += sizeof(zero))
		rc_mem_write(r, addr + a, zero,
			     len - a < sizeof(zero) ? len - a : sizeof(zero));
}

/* Forget every translation (all threads out): the stops changed. */
void rc_cache_flush(struct bt_recorder *r)
{
	size_t i;

	rc_profile_harvest(r);	/* the marks start over too */
	for (i = 0; i < r->nzone; i++) {
		struct zone *z = &r->zone[i];

		z->used = z->flushed = 0;
		z->npts = 0;
		if (z->mark_of) {
			mem_zero(r, z->base + ZONE_SIZE, z->nmark);
			z->nmark = 0;
		}
	}
	rc_blocks_clear(r);
	rc_index_clear(&r->links);
	rc_index_clear(&r->waiting);
	rc_native_flush(r);
	rc_wp_flush(r);
	memset(r->pages, 0, CODE_PAGES * sizeof(*r->pages));
	if (!r->ready)
		return;
	mem_zero(r, r->tables, 2 * RX_TABLE_BYTES);
	for (i = 0; i < 2; i++)
		memset(r->tab_orig[i], 0, RX_TABLE_ENTRIES * sizeof(uint64_t));
}
