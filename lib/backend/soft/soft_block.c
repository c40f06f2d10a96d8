// SPDX-License-Identifier: MIT
/*
 * Basic-block cache: decode once, look up by start address.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/soft/soft_block.h"

#define CHUNK 256	/* code bytes read at a time */

struct bt_block_cache {
	struct bt_block **bucket;
	size_t nbucket;		/* power of two */
	size_t count;
	struct bt_disasm *dis;
	struct bt_emu *emu;
};

static size_t hash(uint64_t addr, size_t n)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & (n - 1);
}

int bt_block_cache_alloc(struct bt_block_cache **out)
{
	struct bt_block_cache *bc;
	int ret;

	*out = NULL;
	bc = calloc(1, sizeof(*bc));
	if (!bc)
		return bt_fail(bte_nomem, ENOMEM, "block cache");
	bc->nbucket = 1024;
	bc->bucket = calloc(bc->nbucket, sizeof(*bc->bucket));
	if (!bc->bucket) {
		ret = bt_fail(bte_nomem, ENOMEM, "block cache");
		goto err;
	}
	ret = bt_disasm_alloc(&bc->dis);
	if (ret < 0)
		goto err;
	ret = bt_emu_alloc(&bc->emu);
	if (ret < 0)
		goto err;
	*out = bc;
	return 0;
err:
	bt_block_cache_free(bc);
	return ret;
}

static void block_free(struct bt_block *b)
{
	if (b) {
		free(b->bytes);
		free(b->off);
		free(b);
	}
}

void bt_block_clear(struct bt_block_cache *bc)
{
	size_t i;

	for (i = 0; i < bc->nbucket; i++) {
		struct bt_block *b = bc->bucket[i], *n;

		for (; b; b = n) {
			n = b->hnext;
			block_free(b);
		}
		bc->bucket[i] = NULL;
	}
	bc->count = 0;
}

void bt_block_cache_free(struct bt_block_cache *bc)
{
	if (!bc)
		return;
	if (bc->bucket)
		bt_block_clear(bc);
	free(bc->bucket);
	bt_disasm_free(bc->dis);
	bt_emu_free(bc->emu);
	free(bc);
}

const struct bt_block *bt_block_find(const struct bt_block_cache *bc,
				     uint64_t addr)
{
	const struct bt_block *b = bc->bucket[hash(addr, bc->nbucket)];

	while (b && b->start != addr)
		b = b->hnext;
	return b;
}

size_t bt_block_count(const struct bt_block_cache *bc)
{
	return bc->count;
}

static void cache_grow(struct bt_block_cache *bc)
{
	size_t n = bc->nbucket * 2, i;
	struct bt_block **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return;		/* keep the longer chains */
	for (i = 0; i < bc->nbucket; i++) {
		struct bt_block *b = bc->bucket[i], *next;

		for (; b; b = next) {
			size_t h = hash(b->start, n);

			next = b->hnext;
			b->hnext = nb[h];
			nb[h] = b;
		}
	}
	free(bc->bucket);
	bc->bucket = nb;
	bc->nbucket = n;
}

/* Code bytes being decoded: a growing copy of what was read. */
struct code_buf {
	uint8_t *p;
	size_t len, cap;
	int eof;		/* nothing more can be read */
};

static int code_more(struct code_buf *cb, uint64_t start,
		     bt_block_read_fn read, void *ctx)
{
	size_t want = CHUNK;
	uint8_t *np;

	if (cb->eof)
		return -bte_eos;
	if (cb->len + want > cb->cap) {
		size_t cap = cb->cap ? cb->cap * 2 : 2 * CHUNK;

		np = realloc(cb->p, cap);
		if (!np)
			return -bte_nomem;
		cb->p = np;
		cb->cap = cap;
	}
	/* shorter reads at the end of a mapping: byte by byte down to 1 */
	while (want && read(ctx, start + cb->len, cb->p + cb->len, want) < 0)
		want /= 2;
	if (!want) {
		cb->eof = 1;
		return -bte_eos;
	}
	cb->len += want;
	return 0;
}

/* Decode from b->start until a terminator, filling @b. */
static int block_decode(struct bt_block_cache *bc, struct bt_block *b,
			struct code_buf *cb, bt_block_read_fn read, void *ctx)
{
	struct bt_insn in;
	size_t off = 0;

	for (;;) {
		int ret;

		if (cb->len - off < BT_INSN_MAX_LEN && !cb->eof)
			code_more(cb, b->start, read, ctx);
		if (off >= cb->len ||
		    bt_insn_decode(bc->dis, cb->p + off, cb->len - off,
				   b->start + off, &in) < 0) {
			if (!b->ninsn)
				return off >= cb->len ? -bte_io : -bte_decode;
			b->how = BT_BLOCK_BAD;
			return 0;
		}
		if (!(b->ninsn & 63)) {
			uint16_t *no = realloc(b->off, (b->ninsn + 64) *
						       sizeof(*no));

			if (!no)
				return -bte_nomem;
			b->off = no;
		}
		b->off[b->ninsn] = (uint16_t)off;
		b->end = b->start + off;
		b->ninsn++;
		off += in.len;
		b->next = b->start + off;
		if (in.rep)
			b->has_rep = 1;
		if (in.iclass != BT_INSN_OTHER) {
			b->how = BT_BLOCK_BRANCH;
			b->term_class = in.iclass;
			b->target = in.target;
			ret = bt_emu_decode(bc->emu, cb->p + (b->end - b->start),
					    in.len, b->end, &b->emu);
			b->emu_ok = ret == 0;
			return 0;
		}
		if (b->ninsn >= BT_BLOCK_MAX_INSN) {
			b->how = BT_BLOCK_CUT;
			return 0;
		}
	}
}

int bt_block_get(struct bt_block_cache *bc, uint64_t addr,
		 bt_block_read_fn read, void *ctx, const struct bt_block **out)
{
	struct code_buf cb = { 0 };
	struct bt_block *b;
	size_t h;
	int ret;

	*out = bt_block_find(bc, addr);
	if (*out)
		return 0;
	b = calloc(1, sizeof(*b));
	if (!b)
		return bt_fail(bte_nomem, ENOMEM, "block");
	b->start = addr;
	ret = block_decode(bc, b, &cb, read, ctx);
	if (ret < 0)
		goto err;
	b->bytes = cb.p;	/* keep [start, next) for bt_block_same */
	cb.p = NULL;
	if (bc->count >= bc->nbucket)
		cache_grow(bc);
	h = hash(addr, bc->nbucket);
	b->hnext = bc->bucket[h];
	bc->bucket[h] = b;
	bc->count++;
	*out = b;
	return 0;
err:
	free(cb.p);
	free(b->off);
	free(b);
	return ret;
}

uint32_t bt_block_insns_before(const struct bt_block *b, uint64_t addr)
{
	uint32_t lo = 0, hi = b->ninsn;

	if (addr <= b->start)
		return 0;
	/* the first instruction at or after addr */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (b->start + b->off[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int overlaps(const struct bt_block *b, uint64_t start, uint64_t end)
{
	uint64_t bend = b->how == BT_BLOCK_BAD ? b->next + 1 : b->next;

	return b->start < end && start < bend;
}

size_t bt_block_invalidate(struct bt_block_cache *bc, uint64_t start,
			   uint64_t end)
{
	size_t i, n = 0;

	for (i = 0; i < bc->nbucket; i++) {
		struct bt_block **pp = &bc->bucket[i];

		while (*pp) {
			struct bt_block *b = *pp;

			if (overlaps(b, start, end)) {
				*pp = b->hnext;
				block_free(b);
				n++;
			} else {
				pp = &b->hnext;
			}
		}
	}
	bc->count -= n;
	return n;
}

int bt_block_same(const struct bt_block *b, bt_block_read_fn read, void *ctx)
{
	size_t len = b->next - b->start;
	uint8_t stack[256], *p = len <= sizeof(stack) ? stack : malloc(len);
	int ret;

	if (!p)
		return -bte_nomem;
	ret = read(ctx, b->start, p, len);
	if (ret >= 0)
		ret = !memcmp(p, b->bytes, len);
	if (p != stack)
		free(p);
	return ret;
}
