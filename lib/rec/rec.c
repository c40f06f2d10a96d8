// SPDX-License-Identifier: MIT
/*
 * The recorder: translated code in the traced process writing its own
 * branch rings.  See rec.h for the contract with the fast mode,
 * rec_xlate.h for the code and rec_ring.h for the ring.
 *
 * Memory it maps into the process (through system calls run in a stopped
 * thread): zones of translated code near the code they copy (a copy's
 * rip-relative operands and rel32 jumps must reach), written through
 * /proc/PID/mem; the two lookup tables; and one slot per thread, [guard
 * page][ring][control block], the control block at the thread's gs base.
 * All of it stays mapped after detach, never run again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "internal.h"
#include "rec/rec.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"
#include "backend/soft/soft_displace.h"
#include "tracer/tracer.h"

#define ZONE_SIZE	(16u << 20)
#define ZONE_MAX	64
#define ZONE_ROOM	(24u << 10)	/* free space a block may need */
#define SLOT_MAX	256
#define AHEAD_MAX	192		/* blocks translated per miss */
#define WALK_MAX	100000		/* blocks walked without a record */
#define STEP_MAX	256		/* steps to reach a safe point */
#define NEAR		(1ll << 31)
#define SPAN_MAX	64
/*
 * Tables and rings go far below where the kernel puts the program's own
 * mappings (top down from below the stack), so that they do not move
 * them: a program sees its libraries where it would without btrace.
 * Zones lie 256 MiB or more below the code they serve, for the same reason.
 */
#define FAR_HINT	0x600000000000ull

struct zone {
	uint64_t base;
	size_t used;
	size_t flushed;			/* bytes written to the process */
	uint8_t *pend;			/* [flushed, used) not yet written */
	struct rx_point *pts;		/* by trans, ascending */
	size_t npts, ptcap;
};

struct rthread {
	struct bt_thread *th;
	int in;
	int slot;			/* -1: none */
	uint64_t tcb, base, top;	/* ring [base, top), TCB at top */
	uint64_t prog_gs;		/* the program's gs base */
	uint64_t pass_start;		/* bytes written before this pass */
	uint64_t prev_start;		/* the same for the pass before */
	uint64_t prev_low;		/* where that pass ended, 0: none */
	uint64_t drained;		/* bytes decoded so far */
	uint64_t wpc;			/* where decoding stands, 0: unknown */
	uint64_t whi;			/* its high half of targets, ~0: none */
	uint64_t gone_start, gone_end;	/* code its last syscall may take away */
};

#define CODE_PAGES 256

struct code_page {
	uint64_t addr;
	int valid;
	uint8_t bytes[4096];
};

struct bt_rec {
	struct bt_target *t;
	struct bt_rec_host host;
	struct rx *x;
	int memfd;
	pid_t mem_pid;
	int ready;			/* memory mapped in this address space */
	int broken;			/* could not map it: decline from now */
	int trapping;			/* handling a trap of the thread */
	uint64_t syscall_insn;
	uint64_t tables;		/* two RX_TABLE_BYTES tables */
	uint64_t *tab_orig[2];		/* their orig columns, mirrored */
	uint64_t slots;			/* SLOT_MAX slots, PROT_NONE reserved */
	size_t slot_size;
	uint8_t slot_used[SLOT_MAX];
	uint8_t slot_dirty[SLOT_MAX];
	struct zone zone[ZONE_MAX];
	size_t nzone;
	struct rb **bucket;		/* blocks by start */
	size_t nbucket, nblocks;
	uint64_t translated;
	uint64_t version;
	unsigned evict;
	uint64_t span_lo[SPAN_MAX], span_hi[SPAN_MAX];	/* code translated */
	size_t nspan;
	struct rthread *rt;
	size_t nrt, rtcap;
	struct code_page *pages;	/* CODE_PAGES of them */
	uint8_t *ringbuf;		/* a copy of a ring, for decoding */
	uint8_t *emitbuf;
};

/* ---- memory of the process ------------------------------------------ */

static int mem_open(struct bt_rec *r)
{
	char path[64];

	if (r->memfd >= 0 && r->mem_pid == r->t->pid)
		return 0;
	if (r->memfd >= 0)
		close(r->memfd);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)r->t->pid);
	r->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (r->memfd < 0)
		return bt_fail(bte_perm, errno, "open(%s)", path);
	r->mem_pid = r->t->pid;
	return 0;
}

static int mem_write(struct bt_rec *r, uint64_t addr, const void *buf,
		     size_t len)
{
	if (pwrite(r->memfd, buf, len, (off_t)addr) != (ssize_t)len)
		return bt_fail(bte_io, errno, "write 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

static int mem_read(struct bt_rec *r, uint64_t addr, void *buf, size_t len)
{
	if (pread(r->memfd, buf, len, (off_t)addr) != (ssize_t)len)
		return bt_fail(bte_io, errno, "read 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

static int64_t tsyscall(struct bt_rec *r, struct bt_thread *th, long nr,
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

/* ---- threads -------------------------------------------------------- */

static struct rthread *rt_find(const struct bt_rec *r,
			       const struct bt_thread *th)
{
	size_t i;

	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].th == th)
			return &r->rt[i];
	return NULL;
}

static struct rthread *rt_get(struct bt_rec *r, struct bt_thread *th)
{
	struct rthread *rt = rt_find(r, th), *grown;

	if (rt)
		return rt;
	if (r->nrt == r->rtcap) {
		size_t cap = r->rtcap ? 2 * r->rtcap : 16;

		grown = realloc(r->rt, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		r->rt = grown;
		r->rtcap = cap;
	}
	rt = &r->rt[r->nrt++];
	memset(rt, 0, sizeof(*rt));
	rt->th = th;
	rt->slot = -1;
	return rt;
}

int bt_rec_in(const struct bt_rec *r, const struct bt_thread *th)
{
	const struct rthread *rt = r ? rt_find(r, th) : NULL;

	return rt && rt->in;
}

uint64_t bt_rec_blocks(const struct bt_rec *r)
{
	return r ? r->translated : 0;
}

/* ---- blocks ----------------------------------------------------------- */

static size_t bhash(uint64_t a, size_t n)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & (n - 1);
}

static int stop_at(void *ctx, uint64_t addr)
{
	struct bt_rec *r = ctx;

	return r->host.stop_at(r->t, addr);
}

/*
 * The program's code, a page at a time through a small cache: blocks are
 * decoded from code that does not change (the host sends code that may
 * change elsewhere), and a block's decode would otherwise cost a read.
 */
static const uint8_t *code_page(struct bt_rec *r, uint64_t page)
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
	struct bt_rec *r = ctx;
	uint8_t *out = buf;

	while (len) {
		uint64_t page = addr & ~4095ull;
		size_t off = addr - page, n = 4096 - off < len ? 4096 - off : len;
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

static void blocks_grow(struct bt_rec *r)
{
	size_t n = r->nbucket * 2, i;
	struct rb **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;
	for (i = 0; i < r->nbucket; i++) {
		struct rb *b = r->bucket[i], *next;

		for (; b; b = next) {
			next = b->hnext;
			b->hnext = nb[bhash(b->start, n)];
			nb[bhash(b->start, n)] = b;
		}
	}
	free(r->bucket);
	r->bucket = nb;
	r->nbucket = n;
}

static struct rb *block_find(const struct bt_rec *r, uint64_t a)
{
	struct rb *b = r->bucket[bhash(a, r->nbucket)];

	for (; b; b = b->hnext)
		if (b->start == a)
			return b;
	return NULL;
}

/* The block at @a, decoded on first use; NULL only without memory. */
static struct rb *block_get(struct bt_rec *r, uint64_t a)
{
	struct rb *b = block_find(r, a);
	size_t h;

	if (b)
		return b;
	b = malloc(sizeof(*b));
	if (!b || rx_block_decode(r->x, a, code_read, stop_at, r, b) < 0) {
		free(b);
		return NULL;
	}
	if (r->nblocks >= r->nbucket)
		blocks_grow(r);
	h = bhash(a, r->nbucket);
	b->hnext = r->bucket[h];
	r->bucket[h] = b;
	r->nblocks++;
	return b;
}

static void blocks_clear(struct bt_rec *r)
{
	size_t i;

	for (i = 0; i < r->nbucket; i++) {
		struct rb *b = r->bucket[i], *next;

		for (; b; b = next) {
			next = b->hnext;
			rb_release(b);
			free(b);
		}
		r->bucket[i] = NULL;
	}
	r->nblocks = 0;
}

/* ---- zones and points --------------------------------------------------- */

static int reach(uint64_t from, uint64_t to)
{
	int64_t d = (int64_t)(to - from);

	return d > -NEAR + (int64_t)ZONE_SIZE && d < NEAR - (int64_t)ZONE_SIZE;
}

static struct zone *zone_of(struct bt_rec *r, uint64_t pc)
{
	size_t i;

	for (i = 0; i < r->nzone; i++)
		if (pc >= r->zone[i].base && pc < r->zone[i].base + ZONE_SIZE)
			return &r->zone[i];
	return NULL;
}

/* The points at trans == @pc, the first of them; NULL if none. */
static struct rx_point *point_at(struct bt_rec *r, uint64_t pc, size_t *n)
{
	struct zone *z = zone_of(r, pc);
	size_t lo = 0, hi, first;

	*n = 0;
	if (!z)
		return NULL;
	hi = z->npts;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (z->pts[mid].trans < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	while (lo < z->npts && z->pts[lo].trans == pc)
		lo++;
	*n = lo - first;
	return *n ? &z->pts[first] : NULL;
}

static struct rx_point *point_kind(struct bt_rec *r, uint64_t pc, int kind)
{
	size_t n, i;
	struct rx_point *p = point_at(r, pc, &n);

	for (i = 0; i < n; i++)
		if (p[i].kind == kind)
			return &p[i];
	return NULL;
}

static int points_add(struct zone *z, const struct rx_point *p, size_t n)
{
	if (z->npts + n > z->ptcap) {
		size_t cap = z->ptcap ? z->ptcap : 1024;
		struct rx_point *g;

		while (cap < z->npts + n)
			cap *= 2;
		g = realloc(z->pts, cap * sizeof(*g));
		if (!g)
			return bt_fail(bte_nomem, ENOMEM, "points");
		z->pts = g;
		z->ptcap = cap;
	}
	memcpy(z->pts + z->npts, p, n * sizeof(*p));
	z->npts += n;
	return 0;
}

#define PEND_MAX (1u << 20)

/* Write what @z holds back into the process. */
static int zone_flush(struct bt_rec *r, struct zone *z)
{
	int ret = 0;

	if (z->used > z->flushed)
		ret = mem_write(r, z->base + z->flushed, z->pend,
				z->used - z->flushed);
	z->flushed = z->used;
	return ret;
}

static int zones_flush(struct bt_rec *r)
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
static int code_write(struct bt_rec *r, uint64_t addr, const void *buf,
		      size_t len)
{
	struct zone *z = zone_of(r, addr);

	if (z && addr >= z->base + z->flushed && addr + len <= z->base + z->used) {
		memcpy(z->pend + (addr - z->base - z->flushed), buf, len);
		return 0;
	}
	return mem_write(r, addr, buf, len);
}

/* Add @e's bytes and points to @z. */
static int zone_commit(struct bt_rec *r, struct zone *z, struct rx_emit *e)
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
	struct bt_rec *r = ctx;
	const struct rb *b = block_find(r, orig);
	int64_t d;

	if (!b || !b->trans[pend])
		return 0;
	d = (int64_t)(b->trans[pend] - from);
	return d > -NEAR && d < NEAR ? b->trans[pend] : 0;
}

static void emit_init(struct bt_rec *r, struct rx_emit *e, struct zone *z)
{
	memset(e, 0, sizeof(*e));
	e->buf = r->emitbuf;
	e->cap = ZONE_SIZE - z->used < ZONE_ROOM ? ZONE_SIZE - z->used :
						   ZONE_ROOM;
	e->base = z->base + z->used;
	e->link = link_lookup;
	e->ctx = r;
}

/* Map a zone within reach of @near, with its lookup routine. */
static struct zone *zone_new(struct bt_rec *r, struct bt_thread *th,
			     uint64_t near)
{
	const int64_t hints[] = { -(256ll << 20), -(1ll << 30), 512ll << 20,
				  1ll << 30 };
	struct zone *z;
	size_t i;
	int64_t at = -1;

	if (r->nzone == ZONE_MAX)
		return NULL;
	for (i = 0; i < BT_ARRAY_SIZE(hints); i++) {
		uint64_t hint = ((near & ~0xfffffull) + (uint64_t)hints[i]);

		if ((int64_t)hints[i] < 0 && near < (uint64_t)-hints[i] + (64u << 20))
			continue;
		at = tsyscall(r, th, SYS_mmap, hint, ZONE_SIZE,
			      PROT_READ | PROT_EXEC,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      (uint64_t)-1);
		if (at < 0)
			return NULL;	/* no memory, or not at a trap */
		if (reach(near, (uint64_t)at) &&
		    reach(near, (uint64_t)at + ZONE_SIZE))
			break;
		tsyscall(r, th, SYS_munmap, (uint64_t)at, ZONE_SIZE, 0, 0, 0);
		at = -1;
	}
	if (at < 0)
		return NULL;
	z = &r->zone[r->nzone];
	memset(z, 0, sizeof(*z));
	z->base = (uint64_t)at;
	r->nzone++;
	return z;
}

static struct zone *zone_for(struct bt_rec *r, struct bt_thread *th,
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

/* ---- the lookup tables ------------------------------------------------ */

static size_t tab_index(int which, uint64_t a)
{
	return which == 0 ? (a & 0xffff) : ((a >> 8) & 0xffff);
}

/* Threads of the process that may be running now, @th aside. */
static int others_run(const struct bt_rec *r, const struct bt_thread *th)
{
	size_t i;

	for (i = 0; i < r->t->nthreads; i++) {
		const struct bt_thread *o = r->t->threads[i];

		if (o != th && o->state != BT_TH_STOPPED && o->state != BT_TH_GONE)
			return 1;
	}
	return 0;
}

static int table_put(struct bt_rec *r, struct bt_thread *th, int w,
		     uint64_t orig, uint64_t trans)
{
	size_t i = tab_index(w, orig);
	uint64_t at = r->tables + (uint64_t)w * RX_TABLE_BYTES + i * 16;
	uint64_t entry[2] = { orig, trans };

	/* with readers about, trans first: one matching orig finds it whole */
	if (others_run(r, th)) {
		if (mem_write(r, at + 8, &trans, 8) < 0 ||
		    mem_write(r, at, &orig, 8) < 0)
			return 0;
	} else if (mem_write(r, at, entry, sizeof(entry)) < 0) {
		return 0;
	}
	r->tab_orig[w][i] = orig;
	return 1;
}

/*
 * Make @orig -> @trans (its translation's entry) findable by the lookup;
 * 0 if no entry was free.
 * @need: a thread looks for it now, so an entry may be taken over, where
 * no other thread can be reading it meanwhile (it could match the old
 * orig and then load the new trans).
 */
static int table_insert(struct bt_rec *r, struct bt_thread *th,
			uint64_t orig, uint64_t trans, int need)
{
	int w;

	for (w = 0; w < 2; w++) {
		size_t i = tab_index(w, orig);

		if (r->tab_orig[w][i] == orig)
			return 1;
		if (!r->tab_orig[w][i])
			return table_put(r, th, w, orig, trans);
	}
	if (!need || others_run(r, th))
		return 0;
	w = r->evict++ & 1;
	return table_put(r, th, w, orig, trans);
}

/* ---- translating ------------------------------------------------------- */

/* Code in [@lo, @hi) has translations: the spans, merged within 16 MiB. */
static void span_add(struct bt_rec *r, uint64_t lo, uint64_t hi)
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

static int span_overlaps(const struct bt_rec *r, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < r->nspan; i++)
		if (lo < r->span_hi[i] && hi > r->span_lo[i])
			return 1;
	return 0;
}

/* Translate the one block @b carrying @pend; 0, or < 0 (then it stays
 * untranslated). */
static int translate_one(struct bt_rec *r, struct bt_thread *th,
			 struct rb *b, uint8_t pend)
{
	struct zone *z = zone_for(r, th, b->start);
	struct rx_emit e;
	int ret;

	if (!z)
		return -bte_nomem;
	emit_init(r, &e, z);
	ret = rx_translate(r->x, b, pend, &e);
	if (ret == 0) {
		/* direct links go past the lookup's entry */
		b->trans[pend] = e.base +
				 (pend == RX_PEND_NONE ? RX_ENTRY_LEN : 0);
		ret = zone_commit(r, z, &e);
		if (ret < 0)
			b->trans[pend] = 0;
	}
	free(e.pts);
	if (ret == 0) {
		r->translated++;
		span_add(r, b->start, b->next + 1);
	}
	return ret;
}

/* Point the link whose rel32 is at @site (in @z) at @dest. */
static int link_patch(struct bt_rec *r, struct zone *z, uint64_t site,
		      uint64_t dest)
{
	int64_t d = (int64_t)(dest - (site + 4));
	int32_t rel;

	if (d <= -NEAR || d >= NEAR) {
		struct rx_emit e;

		emit_init(r, &e, z);
		if (rx_emit_far_jump(&e, dest) < 0 || zone_commit(r, z, &e) < 0)
			return -bte_nomem;
		free(e.pts);
		d = (int64_t)(e.base - (site + 4));
	}
	rel = (int32_t)d;
	return code_write(r, site, &rel, 4);
}

/* Link the exits of zone points [from...) whose targets now exist. */
static void link_batch(struct bt_rec *r, size_t *mark)
{
	size_t zi;

	for (zi = 0; zi < r->nzone; zi++) {
		struct zone *z = &r->zone[zi];
		size_t i;

		for (i = mark[zi]; i < z->npts; i++) {
			struct rx_point *p = &z->pts[i];
			const struct rb *b;

			if (p->kind != PT_EXIT_DIRECT || (p->mask & RX_LINKED))
				continue;
			b = block_find(r, p->orig);
			if (b && b->trans[p->pend] &&
			    link_patch(r, z, p->aux, b->trans[p->pend]) == 0)
				p->mask |= RX_LINKED;	/* the int3 is dead */
		}
	}
}

/* A block to translate: where, and the outcomes it carries. */
struct ahead {
	uint64_t at;
	uint8_t pend;
};

/*
 * Translate the block at @a carrying @pend and what is statically
 * reachable from it, up to AHEAD_MAX blocks; the return sites of calls go
 * into the lookup tables.  *@trans: the translation of @a.  Returns 0 or
 * < 0.
 */
static int translate(struct bt_rec *r, struct bt_thread *th, uint64_t a,
		     uint8_t pend, uint64_t *trans)
{
	struct ahead queue[AHEAD_MAX * 2 + 2];
	size_t head = 0, tail = 0, done = 0, mark[ZONE_MAX], i;
	struct rb *first = block_get(r, a);
	int ret = 0;

	if (!first)
		return -bte_nomem;
	if (first->trans[pend]) {
		*trans = first->trans[pend];
		return 0;
	}
	for (i = 0; i < ZONE_MAX; i++)
		mark[i] = i < r->nzone ? r->zone[i].npts : 0;
	queue[tail++] = (struct ahead){ a, pend };
	while (head < tail && done < AHEAD_MAX) {
		struct ahead q = queue[head++];
		uint8_t p = q.pend;
		struct rb *b;

		if (q.at != a && !r->host.translatable(r->t, q.at))
			continue;
		b = block_get(r, q.at);
		if (!b || b->trans[p])
			continue;
		ret = translate_one(r, th, b, p);
		if (ret < 0) {
			if (q.at == a && p == pend)
				return ret;
			continue;
		}
		done++;
		if (tail + 2 > BT_ARRAY_SIZE(queue))
			continue;
		if (p != RX_PEND_NONE && !rb_carries(b)) {	/* a stub */
			queue[tail++] = (struct ahead){ b->start, RX_PEND_NONE };
			continue;
		}
		switch (b->term) {
		case RB_COND:
			queue[tail++] = (struct ahead){
				b->next, rx_cond_pend(r->x, p, 0) };
			queue[tail++] = (struct ahead){
				b->target, rx_cond_pend(r->x, p, 1) };
			break;
		case RB_CALL:
			queue[tail++] = (struct ahead){ b->target, p };
			queue[tail++] = (struct ahead){ b->next, RX_PEND_NONE };
			break;
		case RB_JUMP:
			queue[tail++] = (struct ahead){ b->target, p };
			break;
		case RB_CUT:
		case RB_SYSCALL:
		case RB_ICALL:
			queue[tail++] = (struct ahead){ b->next, RX_PEND_NONE };
			break;
		}
	}
	/* return sites: found by the lookup when the callee returns */
	for (i = 0; i < head; i++) {
		struct rb *b = block_find(r, queue[i].at);

		if (b && b->trans[queue[i].pend] &&
		    (b->term == RB_CALL || b->term == RB_ICALL)) {
			struct rb *ret_site = block_find(r, b->next);

			if (ret_site && ret_site->trans[RX_PEND_NONE])
				table_insert(r, th, b->next,
					     ret_site->trans[RX_PEND_NONE] -
						     RX_ENTRY_LEN, 0);
		}
	}
	link_batch(r, mark);
	*trans = first->trans[pend];
	return zones_flush(r);
}

/* ---- code that goes away ---------------------------------------------- */

static int gone(const struct bt_rec *r, uint64_t orig, uint64_t lo,
		uint64_t hi)
{
	const struct rb *b;

	if (orig >= lo && orig < hi)
		return 1;
	b = block_find(r, orig);
	return b && b->dead;
}

/*
 * The code in [@lo, @hi) was unmapped, remapped or made writable: nothing
 * may lead into its translations any more.  Links to them go back to
 * their exits, lookup entries for them are cleared, their blocks are
 * dropped (a thread inside one runs it to its end: what the program itself
 * does with code it unmaps while running it).
 */
static void code_gone(struct bt_rec *r, uint64_t lo, uint64_t hi)
{
	static const uint64_t zero[2];
	size_t i, zi;
	int w;

	if (!span_overlaps(r, lo - RB_MAX_BYTES, hi))
		return;
	for (i = 0; i < r->nbucket; i++) {
		struct rb *b;

		for (b = r->bucket[i]; b; b = b->hnext)
			if (b->start < hi && b->next + 1 > lo)
				b->dead = 1;
	}
	for (zi = 0; zi < r->nzone; zi++) {
		struct zone *z = &r->zone[zi];

		for (i = 0; i < z->npts; i++) {
			struct rx_point *p = &z->pts[i];
			int32_t rel = 0;

			if (p->kind == PT_EXIT_DIRECT && (p->mask & RX_LINKED) &&
			    gone(r, p->orig, lo, hi) &&
			    code_write(r, p->aux, &rel, 4) == 0)
				p->mask &= ~RX_LINKED;
		}
	}
	for (w = 0; w < 2; w++)
		for (i = 0; i < RX_TABLE_ENTRIES; i++) {
			uint64_t o = r->tab_orig[w][i];

			if (o && gone(r, o, lo, hi) &&
			    mem_write(r, r->tables + (uint64_t)w * RX_TABLE_BYTES +
						 i * 16, zero, 8) == 0)
				r->tab_orig[w][i] = 0;
		}
	for (i = 0; i < r->nbucket; i++) {
		struct rb **pp = &r->bucket[i];

		while (*pp) {
			struct rb *b = *pp;

			if (!b->dead) {
				pp = &b->hnext;
				continue;
			}
			*pp = b->hnext;
			rb_release(b);
			free(b);
			r->nblocks--;
		}
	}
	for (i = 0; i < CODE_PAGES; i++)
		if (r->pages[i].addr + 4096 > lo && r->pages[i].addr < hi)
			r->pages[i].valid = 0;
	r->host.maps_changed(r->t);
}

void bt_rec_invalidate(struct bt_rec *r, uint64_t lo, uint64_t hi)
{
	code_gone(r, lo & ~4095ull, (hi + 4095) & ~4095ull);
}

/* A syscall that may take code away is about to be stepped: note its range. */
static void note_syscall(struct rthread *rt, const struct user_regs_struct *regs)
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

/* ---- setting up --------------------------------------------------------- */

static int tables_alloc(struct bt_rec *r)
{
	int w;

	for (w = 0; w < 2; w++) {
		free(r->tab_orig[w]);
		r->tab_orig[w] = calloc(RX_TABLE_ENTRIES, sizeof(uint64_t));
		if (!r->tab_orig[w])
			return bt_fail(bte_nomem, ENOMEM, "tables");
	}
	return 0;
}

/* Map the tables and reserve the slots, through @th. */
static int setup(struct bt_rec *r, struct bt_thread *th)
{
	int64_t at;
	int ret;

	if (r->ready)
		return 0;
	if (r->broken)
		return -bte_nomem;
	ret = mem_open(r);
	if (ret < 0)
		return ret;
	if (!r->syscall_insn)
		r->syscall_insn = bt_find_syscall_insn(r->t, r->memfd);
	if (!r->syscall_insn)
		goto broken;
	at = tsyscall(r, th, SYS_mmap, FAR_HINT, 2 * RX_TABLE_BYTES,
		      PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      (uint64_t)-1);
	if (at == -bte_busy)
		return -bte_busy;
	if (at < 0)
		goto broken;
	r->tables = (uint64_t)at;

	r->slot_size = 4096 + r->t->opts.buffer_size + TCB_SIZE;
	at = tsyscall(r, th, SYS_mmap, FAR_HINT + (4u << 20),
		      SLOT_MAX * r->slot_size, PROT_NONE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			      (uint64_t)-1);
	if (at < 0)
		goto broken;
	r->slots = (uint64_t)at;
	ret = tables_alloc(r);
	if (ret < 0)
		return ret;
	memset(r->slot_used, 0, sizeof(r->slot_used));
	memset(r->slot_dirty, 0, sizeof(r->slot_dirty));
	r->ready = 1;
	return 0;
broken:
	r->broken = 1;
	return bt_fail(bte_nomem, 0, "no memory for the recorder in %d",
		       (int)r->t->pid);
}

/* Give @rt a slot: its ring and control block, readable and writable. */
static int slot_take(struct bt_rec *r, struct bt_thread *th,
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
	ret = (int)tsyscall(r, th, SYS_mprotect, start, len,
			    PROT_READ | PROT_WRITE, 0, 0);
	if (ret == 0 && r->slot_dirty[i])
		ret = (int)tsyscall(r, th, SYS_madvise, start, len,
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
	return mem_write(r, rt->tcb, tcb, sizeof(tcb));
}

/* ---- the ring ----------------------------------------------------------- */

static int head_read(struct bt_rec *r, struct rthread *rt, uint64_t *head)
{
	return mem_read(r, rt->tcb + TCB_HEAD, head, 8);
}

/* The ring's bottom is reached by a record of @len at @head: start over. */
static void ring_wrap(struct rthread *rt, uint64_t head)
{
	rt->prev_start = rt->pass_start;
	rt->prev_low = head;
	rt->pass_start += rt->top - head;
}

/* The tracer writes a record: @len bytes of @rec. */
static int ring_put(struct bt_rec *r, struct rthread *rt, const void *rec,
		    size_t len)
{
	uint64_t head;
	int ret = head_read(r, rt, &head);

	if (ret < 0)
		return ret;
	if (head - len < rt->base) {
		ring_wrap(rt, head);
		head = rt->top;
	}
	head -= len;
	ret = mem_write(r, head, rec, len);
	return ret < 0 ? ret : mem_write(r, rt->tcb + TCB_HEAD, &head, 8);
}

/* The next target @rt records is whole (a place to decode from). */
static int hi_reset(struct bt_rec *r, struct rthread *rt)
{
	uint32_t none = REC_HI_NONE;

	return mem_write(r, rt->tcb + TCB_HI, &none, sizeof(none));
}

static int ring_sync(struct bt_rec *r, struct rthread *rt, uint64_t pc)
{
	uint8_t rec[REC_ADDR_LEN];

	if (hi_reset(r, rt) < 0)
		return -bte_io;
	rec[0] = REC_SYNC;
	memcpy(rec + 1, &pc, 8);
	return ring_put(r, rt, rec, sizeof(rec));
}

static size_t rec_len(uint8_t tag)
{
	if (tag >= (REC_TNT | 2))
		return 1;
	if ((tag & 0xe0) == REC_IND_O && (tag & 0x1f) >= 2)
		return REC_ADDR_LEN;
	if ((tag & 0xe0) == REC_IND32_O && (tag & 0x1f) >= 2)
		return REC_IND32_LEN;
	switch (tag) {
	case REC_IND:
	case REC_SYNC:
		return REC_ADDR_LEN;
	case REC_IND32:
		return REC_IND32_LEN;
	default:
		return 0;
	}
}

/* A record found in the ring, oldest first once collected. */
struct found {
	uint64_t addr;		/* REC_IND, REC_SYNC */
	uint8_t tag;
	uint8_t outcomes;	/* of conditionals before it, REC_TNT's coding */
};

/* The walker: decodes records against the code, one thread. */
struct walk {
	struct bt_rec *r;
	struct bt_thread *th;
	uint64_t pc;		/* 0: unknown */
	uint64_t hi;		/* high half of the last REC_IND, or ~0 */
};

/* A taken branch of block @b to @to; one to the next instruction is none
 * (the steppers cannot tell it from a fall-through). */
static void w_branch(struct walk *w, const struct rb *b, uint64_t to, int kind)
{
	if (to != b->next)
		w->r->host.branch(w->r->t, w->th, b->end, to, kind);
}

static void w_insns(struct walk *w, uint32_t n)
{
	if (n)
		w->r->host.insns(w->r->t, w->th, n);
}

static int term_kind(int term)
{
	switch (term) {
	case RB_COND: return BT_BR_COND;
	case RB_JUMP: return BT_BR_JUMP;
	case RB_CALL: return BT_BR_CALL;
	case RB_RET: return BT_BR_RET;
	case RB_IJUMP: return BT_BR_IJUMP;
	default: return BT_BR_ICALL;
	}
}

/*
 * Walk from w->pc through blocks that need no record, up to the first
 * that does (returned), or to @stop if it comes first (NULL returned,
 * w->pc = @stop).  NULL with w->pc 0: the walk cannot go on.
 */
static struct rb *w_advance(struct walk *w, uint64_t stop)
{
	size_t n;

	for (n = 0; n < WALK_MAX && w->pc; n++) {
		struct rb *b = block_get(w->r, w->pc);

		if (!b) {
			w->pc = 0;
			return NULL;
		}
		if (stop && stop >= b->start && stop <= b->next &&
		    (stop < b->next || b->term == RB_LEAVE)) {
			w_insns(w, rb_insns_before(b, stop));
			w->pc = stop;
			return NULL;
		}
		switch (b->term) {
		case RB_CUT:
		case RB_SYSCALL:
			w_insns(w, b->ninsn);
			w->pc = b->next;
			break;
		case RB_JUMP:
		case RB_CALL:
			w_insns(w, b->ninsn);
			w_branch(w, b, b->target, term_kind(b->term));
			w->pc = b->target;
			break;
		case RB_LEAVE:
			w_insns(w, b->ninsn);
			w->pc = b->end;
			return b;
		default:
			return b;
		}
	}
	if (n == WALK_MAX)
		w->pc = 0;
	return NULL;
}

/* Apply conditionals' @outcomes (REC_TNT's coding); 0, or -1 (a gap). */
static int w_outcomes(struct walk *w, unsigned outcomes)
{
	int i;

	for (i = (int)rx_pend_count(outcomes) - 1; i >= 0; i--) {
		struct rb *b = w_advance(w, 0);

		if (!b || b->term != RB_COND)
			return -1;
		w_insns(w, b->ninsn);
		if (outcomes >> i & 1) {
			w_branch(w, b, b->target, BT_BR_COND);
			w->pc = b->target;
		} else {
			w->pc = b->next;
		}
	}
	return 0;
}

/* Apply one record; 0, or -1 if it does not fit the code (a gap). */
static int w_record(struct walk *w, struct found *f)
{
	struct rb *b;

	if (f->tag == REC_IND) {
		w->hi = f->addr >> 32;
	} else if (f->tag == REC_IND32) {
		if (w->hi == ~0ull) {	/* its high half is lost */
			w->pc = 0;
			return 0;
		}
		f->addr |= w->hi << 32;
		f->tag = REC_IND;
	}

	if (f->tag == REC_SYNC) {
		if (w->pc && w->pc != f->addr)
			w_advance(w, f->addr);
		w->pc = f->addr;
		return 0;
	}
	if (!w->pc) {
		if (f->tag == REC_IND)
			w->pc = f->addr;	/* a place to start from */
		return 0;
	}
	if (w_outcomes(w, f->outcomes) < 0)
		return -1;
	if (f->tag != REC_IND)
		return 0;	/* a REC_TNT: outcomes only */
	b = w_advance(w, 0);
	if (!b || (b->term != RB_RET && b->term != RB_IJUMP &&
		   b->term != RB_ICALL))
		return -1;
	w_insns(w, b->ninsn);
	w_branch(w, b, f->addr, term_kind(b->term));
	w->pc = f->addr;
	return 0;
}

/*
 * Collect the records of @rt written since the last drain, oldest first,
 * into *@out (malloc'ed).  *@lost: the oldest ones were overwritten.
 */
static int ring_collect(struct bt_rec *r, struct rthread *rt,
			struct found **out, size_t *nout, int *lost)
{
	uint64_t head, a, lo, total;
	struct found *f = NULL;
	size_t n = 0, cap = 0;
	int pass, ret;

	*out = NULL;
	*nout = 0;
	*lost = 0;
	ret = head_read(r, rt, &head);
	if (ret < 0)
		return ret;
	if (head < rt->base || head > rt->top)
		return -bte_corrupt;
	lo = rt->prev_low && rt->prev_low < head ? rt->prev_low : head;
	ret = mem_read(r, lo, r->ringbuf + (lo - rt->base), rt->top - lo);
	if (ret < 0)
		return ret;
	total = rt->pass_start + (rt->top - head);
	for (pass = 0; pass < 2 && total > rt->drained; pass++) {
		uint64_t start = pass ? rt->prev_start : rt->pass_start;
		uint64_t limit = pass ? head : rt->top;

		a = pass ? rt->prev_low : head;
		if (pass && !rt->prev_low)
			break;
		while (a < limit) {
			uint8_t tag = r->ringbuf[a - rt->base];
			size_t len = rec_len(tag);

			if (!len || a + len > limit)
				break;
			if (start + (rt->top - a) <= rt->drained) {
				total = rt->drained;	/* reached */
				break;
			}
			if (n == cap) {
				struct found *g;

				cap = cap ? 2 * cap : 4096;
				g = realloc(f, cap * sizeof(*g));
				if (!g) {
					free(f);
					return -bte_nomem;
				}
				f = g;
			}
			f[n].tag = tag;
			f[n].outcomes = RX_PEND_NONE;
			if (tag >= REC_TNT) {
				f[n].outcomes = tag & 0x7f;
			} else if (tag & 0x60) {	/* REC_IND(32)_O */
				f[n].outcomes = tag & 0x1f;
				f[n].tag = (tag & 0xe0) == REC_IND_O ? REC_IND :
								       REC_IND32;
			}
			f[n].addr = 0;
			if (len > 1)
				memcpy(&f[n].addr, r->ringbuf + (a - rt->base) + 1,
				       len - 1);
			n++;
			total = start + (rt->top - a) - len;
			a += len;
		}
	}
	*lost = total > rt->drained;
	/* newest first as walked: turn around */
	for (a = 0; a < n / 2; a++) {
		struct found tmp = f[a];

		f[a] = f[n - 1 - a];
		f[n - 1 - a] = tmp;
	}
	*out = f;
	*nout = n;
	return 0;
}

/*
 * Decode what @rt's ring holds since the last drain into the thread's
 * history, then walk on to @stop (the thread's original pc; 0: unknown).
 */
static void drain(struct bt_rec *r, struct rthread *rt, uint64_t stop)
{
	struct walk w = { r, rt->th, rt->wpc, rt->whi };
	struct found *f;
	size_t n, i;
	uint64_t head;
	int lost;

	if (ring_collect(r, rt, &f, &n, &lost) < 0)
		return;
	if (lost) {
		w.pc = 0;
		w.hi = ~0ull;
		r->host.gap(r->t, rt->th, 0, BT_GAP_OVERFLOW);
	}
	for (i = 0; i < n; i++) {
		if (w_record(&w, &f[i]) < 0) {
			r->host.gap(r->t, rt->th, 0, BT_GAP_DECODE);
			w.pc = 0;
		}
	}
	free(f);
	if (stop && w.pc)
		w_advance(&w, stop);
	rt->wpc = w.pc;
	rt->whi = w.hi;
	if (head_read(r, rt, &head) == 0) {
		uint64_t now = rt->pass_start + (rt->top - head);

		if (!lost)
			r->t->stats.ring_bytes += now - rt->drained;
		rt->drained = now;
	}
}

/* ---- entering ------------------------------------------------------------ */

/* Forget every translation (all threads out): the stops changed. */
static void flush(struct bt_rec *r)
{
	static const uint8_t zero[4096];
	size_t i;
	uint64_t a;

	for (i = 0; i < r->nzone; i++) {
		r->zone[i].used = r->zone[i].flushed = 0;
		r->zone[i].npts = 0;
	}
	blocks_clear(r);
	memset(r->pages, 0, CODE_PAGES * sizeof(*r->pages));
	if (!r->ready)
		return;
	for (a = 0; a < 2 * RX_TABLE_BYTES; a += sizeof(zero))
		mem_write(r, r->tables + a, zero, sizeof(zero));
	for (i = 0; i < 2; i++)
		memset(r->tab_orig[i], 0, RX_TABLE_ENTRIES * sizeof(uint64_t));
}

static int any_in(const struct bt_rec *r)
{
	size_t i;

	for (i = 0; i < r->nrt; i++)
		if (r->rt[i].in)
			return 1;
	return 0;
}

int bt_rec_enter(struct bt_rec *r, struct bt_thread *th,
		 struct user_regs_struct *regs)
{
	uint64_t pc = regs->rip, entry = pc, trans, v;
	struct rthread *rt;
	int in_syscall = 0, ret;

	if (r->broken || (th->tgid && th->tgid != r->t->pid))
		return 0;
	ret = setup(r, th);
	if (ret < 0)
		return 0;	/* the host runs it its own way */
	if (mem_open(r) < 0)
		return 0;
	v = r->host.stops_version(r->t);
	if (v != r->version && !any_in(r)) {
		flush(r);
		r->version = v;
	}
	rt = rt_get(r, th);
	if (!rt)
		return -bte_nomem;
	if (rt->gone_end) {	/* its mmap, munmap, mprotect or mremap ran */
		code_gone(r, rt->gone_start, rt->gone_end);
		rt->gone_start = rt->gone_end = 0;
	}
	if (rt->slot < 0 && slot_take(r, th, rt) < 0)
		return 0;
	if ((int64_t)regs->orig_rax >= 0) {
		uint8_t code[2];

		/* inside a system call: a restart re-runs the syscall insn */
		if (mem_read(r, pc - 2, code, 2) < 0 || code[0] != 0x0f ||
		    code[1] != 0x05)
			return 0;
		entry = pc - 2;
		in_syscall = 1;
	}
	if (translate(r, th, entry, RX_PEND_NONE, &trans) < 0)
		return 0;
	if (in_syscall) {
		/* right after its syscall insn: the point that fixes rcx */
		struct rb *b = block_find(r, entry);
		struct zone *z = zone_of(r, trans);
		const struct rx_point *p, *end;
		size_t n;

		if (!b || b->term != RB_SYSCALL || b->ninsn != 1 || !z)
			return 0;
		p = point_at(r, trans, &n);
		end = z->pts + z->npts;
		while (p && p < end && !(p->mask == RM_FIXRCX && p->orig == pc))
			p++;
		if (!p || p == end)
			return 0;
		trans = p->trans;
	}
	if (ring_sync(r, rt, pc) < 0)
		return 0;
	if (!rt->in)
		rt->prog_gs = regs->gs_base;
	regs->rip = trans;
	regs->gs_base = rt->tcb;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, regs) < 0)
		return bt_fail(bte_ptrace, errno, "ptrace(SETREGS, %d)", th->tid);
	rt->in = 1;
	return 1;
}

/* ---- stops of a thread that is in ------------------------------------------ */

static void regs_restore(struct bt_rec *r, struct rthread *rt,
			 struct user_regs_struct *regs, int mask, uint64_t orig)
{
	uint64_t tcb[TCB_RDX / 8 + 1];

	if ((mask & (RM_RAX | RM_RCX | RM_RDX)) &&
	    mem_read(r, rt->tcb, tcb, sizeof(tcb)) == 0) {
		if (mask & RM_RAX)
			regs->rax = tcb[TCB_RAX / 8];
		if (mask & RM_RCX)
			regs->rcx = tcb[TCB_RCX / 8];
		if (mask & RM_RDX)
			regs->rdx = tcb[TCB_RDX / 8];
	}
	if (mask & RM_FIXRCX)
		regs->rcx = orig;
}

/*
 * Where @regs stand for the program, if at a safe point: 1 with *@orig,
 * the outcomes still pending there in *@pend and @regs restored; 0 if
 * inside a generated sequence.
 */
static int safe_point(struct bt_rec *r, struct rthread *rt,
		      struct user_regs_struct *regs, uint64_t *orig,
		      uint8_t *pend)
{
	size_t n, i;
	struct rx_point *p = point_at(r, regs->rip, &n);

	for (i = 0; i < n; i++) {
		switch (p[i].kind) {
		case PT_SAFE:
			regs_restore(r, rt, regs, p[i].mask, p[i].orig);
			/* fall through */
		case PT_EXIT_DIRECT:
			*orig = p[i].orig;
			*pend = p[i].pend;
			return 1;
		}
	}
	return 0;
}

/*
 * The thread leaves at original @orig, @regs the program's own; the
 * outcomes @pend it carried there go into its ring first.
 */
static void leave_at(struct bt_rec *r, struct rthread *rt,
		     struct user_regs_struct *regs, uint64_t orig, uint8_t pend)
{
	uint8_t tnt = (uint8_t)(REC_TNT | pend);

	if (pend != RX_PEND_NONE)
		ring_put(r, rt, &tnt, 1);
	drain(r, rt, orig);
	rt->wpc = 0;
	regs->rip = orig;
	regs->gs_base = rt->prog_gs;
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	rt->in = 0;
}

static int wrap_fault(struct bt_rec *r, struct rthread *rt,
		      struct user_regs_struct *regs, const siginfo_t *si)
{
	uint64_t addr = (uint64_t)si->si_addr, head, len;
	struct rx_point *p;

	if (si->si_signo != SIGSEGV || addr >= rt->base || addr < rt->base - 4096)
		return 0;
	p = point_kind(r, regs->rip, PT_STORE);
	if (!p || head_read(r, rt, &head) < 0)
		return 0;
	len = head - regs->rcx;
	ring_wrap(rt, head);
	hi_reset(r, rt);
	regs->rcx = rt->top - len;
	if (p->orig) {
		uint8_t rec[REC_ADDR_LEN];

		rec[0] = REC_SYNC;
		memcpy(rec + 1, &p->orig, 8);
		if (mem_write(r, rt->top - REC_ADDR_LEN, rec, sizeof(rec)) < 0)
			return 0;
		regs->rcx -= REC_ADDR_LEN;
	}
	return ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs) == 0;
}

int bt_rec_fault(struct bt_rec *r, struct bt_thread *th, const siginfo_t *si)
{
	struct rthread *rt = r ? rt_find(r, th) : NULL;
	struct user_regs_struct regs;

	if (!rt || !rt->in || bt_thread_regs(th, &regs) < 0)
		return 0;
	return wrap_fault(r, rt, &regs, si);
}

/* A direct exit: @orig needs its translation; link it and go there. */
static int exit_direct(struct bt_rec *r, struct rthread *rt,
		       struct user_regs_struct *regs, struct rx_point pt)
{
	struct rx_point *p;
	uint64_t trans;

	if (!r->host.translatable(r->t, pt.orig) ||
	    translate(r, rt->th, pt.orig, pt.pend, &trans) < 0) {
		leave_at(r, rt, regs, pt.orig, pt.pend);
		return BT_REC_LEFT;
	}
	/* translating may have moved the points: find it again */
	p = point_kind(r, pt.trans, PT_EXIT_DIRECT);
	if (p && !(p->mask & RX_LINKED) &&
	    link_patch(r, zone_of(r, p->trans), p->aux, trans) == 0)
		p->mask |= RX_LINKED;
	zones_flush(r);	/* a far jump it may have made */
	regs->rip = trans;
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	return BT_REC_GO_ON;
}

/* The lookup missed target rdx. */
static int exit_ibl(struct bt_rec *r, struct rthread *rt,
		    struct user_regs_struct *regs, struct rx_point pt)
{
	const struct rx_point *p = &pt;
	uint64_t target = regs->rdx, trans;

	if (!r->host.translatable(r->t, target) ||
	    translate(r, rt->th, target, RX_PEND_NONE, &trans) < 0) {
		regs_restore(r, rt, regs, p->mask, 0);
		leave_at(r, rt, regs, target, RX_PEND_NONE);
		return BT_REC_LEFT;
	}
	if (table_insert(r, rt->th, target, trans - RX_ENTRY_LEN, 1)) {
		regs->rip = p->aux;	/* the retry finds it */
	} else {
		regs_restore(r, rt, regs, p->mask, 0);
		regs->rip = trans;
	}
	ptrace(PTRACE_SETREGS, rt->th->tid, 0, regs);
	return BT_REC_GO_ON;
}

/* Handle the exit whose int3 is at @at; a verdict, 0 if none is there. */
static int exit_at(struct bt_rec *r, struct rthread *rt,
		   struct user_regs_struct *regs, uint64_t at)
{
	size_t n, i;
	struct rx_point *p = point_at(r, at, &n);

	for (i = 0; i < n; i++) {
		switch (p[i].kind) {
		case PT_EXIT_DIRECT:
			return exit_direct(r, rt, regs, p[i]);
		case PT_EXIT_IBL:
			return exit_ibl(r, rt, regs, p[i]);
		case PT_EXIT_LEAVE:
			regs_restore(r, rt, regs, p[i].mask, p[i].orig);
			if (p[i].mask & RM_RCX)	/* a syscall's exit */
				note_syscall(rt, regs);
			leave_at(r, rt, regs, p[i].orig, p[i].pend);
			return BT_REC_LEFT_STEP;
		}
	}
	return 0;
}

int bt_rec_trap(struct bt_rec *r, struct bt_thread *th, const siginfo_t *si)
{
	struct rthread *rt = r ? rt_find(r, th) : NULL;
	struct user_regs_struct regs;
	int v;

	if (!rt || !rt->in || si->si_code != SI_KERNEL ||
	    bt_thread_regs(th, &regs) < 0)
		return BT_REC_NOT_OURS;
	r->trapping = 1;
	v = exit_at(r, rt, &regs, regs.rip - 1);
	r->trapping = 0;
	return v;
}

void bt_rec_leave(struct bt_rec *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rt_find(r, th) : NULL;
	struct user_regs_struct regs;
	uint64_t resend = 0, orig = 0;
	uint8_t pend = RX_PEND_NONE;
	int i, sig;

	if (!rt || !rt->in || th->state != BT_TH_STOPPED)
		return;
	for (i = 0; i < STEP_MAX; i++) {
		siginfo_t si;

		if (bt_thread_regs(th, &regs) < 0)
			goto dead;
		if (safe_point(r, rt, &regs, &orig, &pend))
			break;
		sig = bt_thread_step(r->t, th, &si);
		if (sig < 0)
			goto dead;
		if (sig == 0 && si.si_code == SI_KERNEL &&
		    bt_thread_regs(th, &regs) == 0 &&
		    point_at(r, regs.rip - 1, &(size_t){ 0 })) {
			int v;

			r->trapping = 1;	/* stopped by our own step */
			v = exit_at(r, rt, &regs, regs.rip - 1);
			r->trapping = 0;

			if (v == BT_REC_LEFT || v == BT_REC_LEFT_STEP)
				goto out;	/* it left on its own way out */
			continue;
		}
		if (sig > 0 && bt_thread_regs(th, &regs) == 0 &&
		    wrap_fault(r, rt, &regs, &si))
			continue;
		if (sig > 0 && sig <= 64)
			resend |= 1ull << (sig - 1);
	}
	if (i == STEP_MAX)
		goto dead;
	leave_at(r, rt, &regs, orig, pend);
	goto out;
dead:
	drain(r, rt, 0);
	rt->in = 0;
out:
	for (sig = 1; sig <= 64; sig++)
		if (resend & (1ull << (sig - 1)))
			syscall(SYS_tgkill, th->tgid ? th->tgid : r->t->pid,
				th->tid, sig);
}

void bt_rec_thread_end(struct bt_rec *r, struct bt_thread *th)
{
	struct rthread *rt = r ? rt_find(r, th) : NULL;

	if (!rt)
		return;
	if (rt->in) {
		drain(r, rt, 0);
		rt->in = 0;
	}
	if (rt->slot >= 0)
		r->slot_used[rt->slot] = 0;
	*rt = r->rt[--r->nrt];
}

/* ---- lifetime ----------------------------------------------------------- */

void bt_rec_reset(struct bt_rec *r)
{
	size_t i;

	if (!r)
		return;
	blocks_clear(r);
	memset(r->pages, 0, CODE_PAGES * sizeof(*r->pages));
	for (i = 0; i < r->nzone; i++) {
		free(r->zone[i].pts);
		free(r->zone[i].pend);
	}
	r->nzone = 0;
	r->ready = 0;
	r->broken = 0;
	r->syscall_insn = 0;
	r->mem_pid = 0;
	for (i = 0; i < r->nrt; i++) {
		r->rt[i].in = 0;
		r->rt[i].slot = -1;
		r->rt[i].wpc = 0;
		r->rt[i].whi = ~0ull;
	}
}

int bt_rec_alloc(struct bt_rec **out, struct bt_target *t,
		 const struct bt_rec_host *host)
{
	struct bt_rec *r = calloc(1, sizeof(*r));
	int ret;

	*out = NULL;
	if (!r)
		return bt_fail(bte_nomem, ENOMEM, "recorder");
	r->t = t;
	r->host = *host;
	r->memfd = -1;
	r->nbucket = 4096;
	r->bucket = calloc(r->nbucket, sizeof(*r->bucket));
	r->ringbuf = malloc(t->opts.buffer_size ? t->opts.buffer_size :
						  BT_DEFAULT_BUFFER_SIZE);
	r->emitbuf = malloc(ZONE_ROOM);
	r->pages = calloc(CODE_PAGES, sizeof(*r->pages));
	if (!r->bucket || !r->ringbuf || !r->emitbuf || !r->pages) {
		bt_rec_free(r);
		return bt_fail(bte_nomem, ENOMEM, "recorder");
	}
	ret = rx_alloc(&r->x);
	if (ret < 0) {
		bt_rec_free(r);
		return ret;
	}
	*out = r;
	return 0;
}

void bt_rec_free(struct bt_rec *r)
{
	size_t i;

	if (!r)
		return;
	if (r->bucket)
		blocks_clear(r);
	free(r->bucket);
	for (i = 0; i < r->nzone; i++) {
		free(r->zone[i].pts);
		free(r->zone[i].pend);
	}
	free(r->tab_orig[0]);
	free(r->tab_orig[1]);
	free(r->rt);
	free(r->ringbuf);
	free(r->emitbuf);
	free(r->pages);
	rx_free(r->x);
	if (r->memfd >= 0)
		close(r->memfd);
	free(r);
}
