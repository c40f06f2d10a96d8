// SPDX-License-Identifier: MIT
/*
 * BTS: the hardware writes one {from, to, flags} record per taken branch.
 * intel_bts leaves them in its AUX area oldest first; classic BTS through
 * perf wraps each pair in a PERF_RECORD_SAMPLE {header, ip, addr}, oldest
 * or newest first.  The kind of a
 * branch comes from the instruction at "from", read through the image.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "brvec.h"
#include "btrace/error.h"
#include "btrace/insn.h"
#include "decode_internal.h"
#include "image_internal.h"
#include "internal.h"

#define BTS_REC_SIZE 24
/* A block (to .. next from) longer than this is a discontinuity. */
#define BTS_MAX_BLOCK 0x10000
#define KIND_CACHE 4096		/* entries, a power of two */

struct bts_rec {
	uint64_t from, to;
};

/* What one parsed item of the stream is. */
enum { ITEM_BRANCH, ITEM_LOST, ITEM_CORRUPT };

struct bts_item {
	uint64_t from, to;
	int type;
};

struct bts_items {
	struct bts_item *v;
	size_t n;
};

static inline int kernel_addr(uint64_t addr)
{
	return addr >> 63;
}

static int items_alloc(struct bts_items *it, size_t n)
{
	it->n = 0;
	it->v = malloc((n ? n : 1) * sizeof(*it->v));
	return it->v ? 0 : bt_fail(bte_nomem, ENOMEM, "%zu bts records", n);
}

static void items_push(struct bts_items *it, int type, uint64_t from,
		       uint64_t to)
{
	struct bts_item *item = &it->v[it->n++];

	item->type = type;
	item->from = from;
	item->to = to;
}

/* intel_bts: plain 24-byte records; a torn tail is a decode gap. */
static int parse_bts(const struct bt_capture *cap, struct bts_items *it)
{
	size_t n = cap->size / BTS_REC_SIZE, i;
	int err = items_alloc(it, n + 1);

	if (err < 0)
		return err;
	for (i = 0; i < n; i++) {
		struct bts_rec r;

		memcpy(&r, cap->data + i * BTS_REC_SIZE, sizeof(r));
		items_push(it, ITEM_BRANCH, r.from, r.to);
	}
	if (cap->size % BTS_REC_SIZE)
		items_push(it, ITEM_CORRUPT, 0, 0);
	return 0;
}

static int sane_header(const struct perf_event_header *h, size_t left)
{
	return h->size >= sizeof(*h) && !(h->size & 7) && h->size <= left;
}

/*
 * perf samples: skip other record types, turn PERF_RECORD_LOST into an
 * overflow gap, and step over garbage 8 bytes at a time (records are
 * 8-byte aligned) to the next sample that looks right.
 */
static int parse_perf(const struct bt_capture *cap, struct bts_items *it)
{
	size_t off = 0, size = cap->size;
	int err = items_alloc(it, size / 8 + 1), bad = 0;

	if (err < 0)
		return err;
	while (size - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t v[2];

		memcpy(&h, cap->data + off, sizeof(h));
		if (!sane_header(&h, size - off) ||
		    (h.type == PERF_RECORD_SAMPLE && h.size != BTS_REC_SIZE)) {
			if (!bad)
				items_push(it, ITEM_CORRUPT, 0, 0);
			bad = 1;
			off += 8;
			continue;
		}
		bad = 0;
		if (h.type == PERF_RECORD_SAMPLE) {
			memcpy(v, cap->data + off + sizeof(h), sizeof(v));
			items_push(it, ITEM_BRANCH, v[0], v[1]);
		} else if (h.type == PERF_RECORD_LOST) {
			items_push(it, ITEM_LOST, 0, 0);
		}
		off += h.size;
	}
	if (off < size && !bad)
		items_push(it, ITEM_CORRUPT, 0, 0);
	return 0;
}


struct bts_ctx;
static int chained(struct bts_ctx *c, const struct bts_item *a,
		   const struct bts_item *b);

static void reverse(struct bts_item *v, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		struct bts_item t = v[i];

		v[i] = v[n - 1 - i];
		v[n - 1 - i] = t;
	}
}

/*
 * Put perf samples oldest first: a ring copied out newest record first
 * reads backwards.  In time order the target of one branch runs straight
 * into the next branch; count which direction does that more often.
 * (perf's backward rings come newest batch first, each batch in time
 * order: the reader puts those in order by their timestamps.)
 */
static void order_records(struct bts_ctx *c, struct bts_items *it)
{
	size_t i, fwd = 0, back = 0;

	for (i = 1; i < it->n; i++) {
		fwd += chained(c, &it->v[i - 1], &it->v[i]);
		back += chained(c, &it->v[i], &it->v[i - 1]);
	}
	if (back > fwd)
		reverse(it->v, it->n);
}

/* Kinds by address, so that hot branches are decoded once. */
struct kind_cache {
	uint64_t addr[KIND_CACHE];
	uint8_t kind[KIND_CACHE];
	uint8_t len[KIND_CACHE];
	uint64_t start[KIND_CACHE];	/* straight-line runs: from here */
	uint64_t end[KIND_CACHE];	/* to the first unconditional branch */
};

struct bts_ctx {
	struct bt_image *image;
	struct bt_disasm *dis;
	struct kind_cache *cache;
};

/* The kind of the branch at @from and its length (0 if unknown). */
static int branch_kind(struct bts_ctx *c, uint64_t from, int *len)
{
	size_t slot = (from ^ (from >> 12)) & (KIND_CACHE - 1);
	uint8_t code[BT_INSN_MAX_LEN];
	struct bt_insn insn;
	ssize_t n;
	int kind = BT_BR_NONE;

	*len = 0;
	if (!c->dis || !from)
		return BT_BR_NONE;
	if (c->cache->addr[slot] == from) {
		*len = c->cache->len[slot];
		return c->cache->kind[slot];
	}
	n = bt_image_read(c->image, from, code, sizeof(code));
	if (n > 0 && !bt_insn_decode(c->dis, code, n, from, &insn)) {
		kind = bt_insn_branch_kind(insn.iclass);
		*len = insn.len;
	}
	c->cache->addr[slot] = from;
	c->cache->kind[slot] = kind;
	c->cache->len[slot] = *len;
	return kind;
}

/*
 * The address of the first instruction from @start on that always
 * branches: the flow from @start runs straight through every address up
 * to it (not-taken conditional branches and syscalls included).  0 when
 * the code is unknown.
 */
static uint64_t run_end(struct bts_ctx *c, uint64_t start)
{
	size_t slot = (start ^ (start >> 9)) & (KIND_CACHE - 1), i;
	uint64_t addr = start;

	if (c->cache->start[slot] == start)
		return c->cache->end[slot];
	for (i = 0; i < 4096; i++) {
		uint8_t code[BT_INSN_MAX_LEN];
		struct bt_insn insn;
		ssize_t n = bt_image_read(c->image, addr, code, sizeof(code));

		if (n <= 0 || bt_insn_decode(c->dis, code, n, addr, &insn)) {
			addr = 0;
			break;
		}
		if (insn.iclass != BT_INSN_OTHER &&
		    insn.iclass != BT_INSN_COND &&
		    insn.iclass != BT_INSN_SYSCALL)
			break;
		addr += insn.len;
	}
	c->cache->start[slot] = start;
	c->cache->end[slot] = addr;
	return addr;
}

/* Does the block from @a's target run straight to @b's branch? */
static int chained(struct bts_ctx *c, const struct bts_item *a,
		   const struct bts_item *b)
{
	uint64_t end;

	if (a->type != ITEM_BRANCH || b->type != ITEM_BRANCH ||
	    b->from < a->to)
		return 0;
	if (!c->dis)
		return b->from - a->to < BTS_MAX_BLOCK;
	end = run_end(c, a->to);
	return end ? b->from <= end : b->from - a->to < BTS_MAX_BLOCK;
}

static void set_gap(struct bt_branch *br, int reason, uint64_t from,
		    uint64_t to)
{
	memset(br, 0, sizeof(*br));
	br->kind = BT_BR_GAP;
	br->gap = reason;
	br->from = from;
	br->to = to;
}

/*
 * One record into an entry.  With user-only tracing the kernel's own
 * records are filtered out; when they are not, an entry into the kernel
 * waits for the return out of it, and the pair becomes one syscall (or
 * interrupt) entry.  A "from" of 0 is a record the hardware could not
 * attribute.  Returns 1 if @br is an entry.
 */
static int bts_entry(struct bts_ctx *c, const struct bts_item *item,
		     struct bt_branch *pend, struct bt_branch *br)
{
	int len;

	switch (item->type) {
	case ITEM_LOST:
		set_gap(br, BT_GAP_OVERFLOW, 0, 0);
		return 1;
	case ITEM_CORRUPT:
		set_gap(br, BT_GAP_DECODE, 0, 0);
		return 1;
	}
	memset(br, 0, sizeof(*br));
	br->from = item->from;
	br->to = item->to;
	if (!item->from) {
		set_gap(br, BT_GAP_DECODE, 0, item->to);
		return 1;
	}
	if (kernel_addr(item->from) && kernel_addr(item->to))
		return 0;
	if (kernel_addr(item->to)) {
		*pend = *br;
		pend->kind = branch_kind(c, item->from, &len);
		if (pend->kind != BT_BR_SYSCALL)
			pend->kind = BT_BR_INTR;
		return 0;
	}
	if (kernel_addr(item->from)) {
		if (!pend->from) {
			br->kind = BT_BR_SYSRET;
			return 1;
		}
		*br = *pend;
		br->to = item->to;
		memset(pend, 0, sizeof(*pend));
		return 1;
	}
	br->kind = branch_kind(c, item->from, &len);
	return 1;
}

static int bts_items_decode(struct bts_ctx *c, const struct bts_items *it,
			    struct bt_brvec *vec)
{
	struct bt_branch pend = { 0 }, br;
	uint64_t last_to = 0;
	size_t i;

	if (bt_brvec_reserve(vec, it->n + 1) < 0)
		return bt_fail(bte_nomem, ENOMEM, "%zu branches", it->n);
	for (i = 0; i < it->n; i++) {
		if (!bts_entry(c, &it->v[i], &pend, &br))
			continue;
		/* The flow must run from the last target to this branch. */
		if (br.kind != BT_BR_GAP && last_to && !kernel_addr(br.from) &&
		    !chained(c, &(struct bts_item){ 0, last_to, ITEM_BRANCH },
			     &(struct bts_item){ br.from, 0, ITEM_BRANCH })) {
			struct bt_branch gap;

			set_gap(&gap, BT_GAP_UNTRACED, last_to, br.from);
			if (bt_brvec_push(vec, &gap) < 0)
				return -bte_nomem;
		}
		if (br.kind == BT_BR_GAP && !br.from)
			br.from = last_to;
		last_to = br.to;
		if (bt_brvec_push(vec, &br) < 0)
			return -bte_nomem;
	}
	return 0;
}

static int bts_ctx_init(struct bts_ctx *c, const struct bt_decode_opts *opts)
{
	memset(c, 0, sizeof(*c));
	c->image = opts->image;
	if (!c->image)
		return 0;
	c->cache = calloc(1, sizeof(*c->cache));
	if (!c->cache)
		return bt_fail(bte_nomem, ENOMEM, "kind cache");
	/* Without capstone the kinds stay unknown; the addresses still hold. */
	if (bt_disasm_alloc(&c->dis) < 0)
		c->dis = NULL;
	return 0;
}

static void bts_ctx_release(struct bts_ctx *c)
{
	bt_disasm_free(c->dis);
	free(c->cache);
}

/* The records of @cap, oldest first, cut to what the last N need. */
static int bts_parse(struct bts_ctx *c, const struct bt_capture *cap,
		     const struct bt_decode_opts *opts, struct bts_items *it)
{
	int err;

	if (cap->format == BT_FMT_PERF_BTS) {
		err = parse_perf(cap, it);
		if (!err)
			order_records(c, it);
	} else {
		err = parse_bts(cap, it);
	}
	if (err < 0)
		return err;
	/* Room for kernel pairs and gaps: decode a little more than N. */
	if (opts->last && it->n > 2 * opts->last + 16) {
		size_t skip = it->n - (2 * opts->last + 16);

		memmove(it->v, it->v + skip, (it->n - skip) * sizeof(*it->v));
		it->n -= skip;
	}
	return 0;
}

int bt_decode_bts(const struct bt_capture *cap,
		  const struct bt_decode_opts *opts, struct bt_history *hist)
{
	struct bt_brvec vec = { 0 };
	struct bts_items it = { 0 };
	struct bts_ctx c;
	int err;

	if (!cap || !opts || !hist)
		return bt_fail(bte_invalid, 0, "bt_decode_bts(NULL)");
	hist->lost = cap->lost;
	err = bts_ctx_init(&c, opts);
	if (!err)
		err = bts_parse(&c, cap, opts, &it);
	if (!err)
		err = bts_items_decode(&c, &it, &vec);
	bts_ctx_release(&c);
	free(it.v);
	if (err < 0) {
		bt_brvec_release(&vec);
		return err;
	}
	if (cap->status < 0) {
		struct bt_branch gap;

		set_gap(&gap, BT_GAP_DECODE, vec.n ? vec.v[vec.n - 1].to : 0,
			0);
		if (bt_brvec_push(&vec, &gap) < 0) {
			bt_brvec_release(&vec);
			return bt_fail(bte_nomem, ENOMEM, "branches");
		}
	}
	bt_brvec_to_history(&vec, opts->last, hist);
	return 0;
}

/*
 * Walk the block from @start to the branch at @end, one instruction at a
 * time.  Returns 0 if it got there, 1 if the code does not lead there.
 */
static int walk_block(struct bts_ctx *c, uint64_t start, uint64_t end,
		      bt_insn_fn fn, void *ctx, int *ret)
{
	uint64_t addr = start;

	while (addr <= end && addr - start < BTS_MAX_BLOCK) {
		uint8_t code[BT_INSN_MAX_LEN];
		struct bt_insn insn;
		ssize_t n;

		*ret = fn(addr, 0, ctx);
		if (*ret)
			return 0;
		if (addr == end)
			return 0;
		n = bt_image_read(c->image, addr, code, sizeof(code));
		if (n <= 0 || bt_insn_decode(c->dis, code, n, addr, &insn))
			return 1;
		addr += insn.len;
	}
	return 1;
}

int bt_decode_bts_insns(const struct bt_capture *cap,
			const struct bt_decode_opts *opts, bt_insn_fn fn,
			void *ctx)
{
	struct bt_history hist = { 0 };
	struct bts_ctx c;
	size_t i;
	int err, ret = 0;

	if (!cap || !opts || !fn || !opts->image)
		return bt_fail(bte_invalid, 0, "bts instructions need an image");
	err = bt_decode_bts(cap, opts, &hist);
	if (err < 0)
		return err;
	err = bts_ctx_init(&c, opts);
	if (!err && !c.dis)
		err = bt_fail(bte_nosys, 0, "no disassembler");
	for (i = 0; !err && i < hist.count && !ret; i++) {
		const struct bt_branch *br = &hist.branch[i];
		uint64_t start = i ? hist.branch[i - 1].to : 0;

		if (br->kind == BT_BR_GAP)
			ret = fn(0, 1, ctx);
		else if (!start)
			ret = fn(br->from, 0, ctx);
		else if (walk_block(&c, start, br->from, fn, ctx, &ret) &&
			 !ret)
			ret = fn(0, 1, ctx);
	}
	bts_ctx_release(&c);
	free(hist.branch);
	return err < 0 ? err : 0;
}
