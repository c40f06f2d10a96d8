/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_SOFT_BLOCK_H
#define BTRACE_SOFT_BLOCK_H

/*
 * The basic-block cache of the fast software backend.  A block is decoded
 * once, from its start to the first control transfer (its terminator), and
 * looked up by start address afterwards.  Code that changes is handled by
 * dropping the blocks of an address range (bt_block_invalidate), or by
 * comparing a block's saved bytes with memory (bt_block_same).
 *
 * Internal to the library.
 */

#include <stddef.h>
#include <stdint.h>

#include "btrace/insn.h"
#include "backend/soft/soft_emu.h"

/* How a block ends. */
enum bt_block_end {
	BT_BLOCK_BRANCH = 0,	/* at a control transfer: term_class */
	BT_BLOCK_CUT,		/* at the length limit: term is ordinary */
	BT_BLOCK_BAD,		/* before bytes that do not decode (at end) */
};

#define BT_BLOCK_MAX_INSN 4096

struct bt_block {
	uint64_t start;		/* first instruction */
	uint64_t end;		/* the terminator (last instruction) */
	uint64_t next;		/* end + its length: the fall-through */
	uint64_t target;	/* the terminator's direct target, 0 if none */
	uint32_t ninsn;		/* instructions, terminator included */
	uint8_t how;		/* enum bt_block_end */
	uint8_t term_class;	/* enum bt_insn_class of the terminator */
	uint8_t has_rep;	/* a rep-prefixed string instruction inside */
	uint8_t emu_ok;		/* emu holds the terminator, decoded */
	struct bt_emu_insn emu;
	uint8_t *bytes;		/* a copy of [start, next) as decoded */
	uint16_t *off;		/* offset of each instruction from start */
	struct bt_block *hnext;
};

/* Read original code (btrace's breakpoints hidden); 0 or a negative bt_error. */
typedef int (*bt_block_read_fn)(void *ctx, uint64_t addr, void *buf,
				size_t len);

struct bt_block_cache;

/* Returns 0 or -bte_nomem; bt_block_cache_free accepts NULL. */
int bt_block_cache_alloc(struct bt_block_cache **bc);
void bt_block_cache_free(struct bt_block_cache *bc);

/*
 * The block starting at @addr, decoded through @read on first use.  The
 * pointer stays valid until the block is invalidated or the cache cleared.
 * Returns 0; -bte_io if no code can be read at @addr; -bte_decode if the
 * first instruction does not decode.
 */
int bt_block_get(struct bt_block_cache *bc, uint64_t addr,
		 bt_block_read_fn read, void *ctx, const struct bt_block **out);

/* A cached block, or NULL (no decoding). */
const struct bt_block *bt_block_find(const struct bt_block_cache *bc,
				     uint64_t addr);

/*
 * Drop every block that overlaps [@start, @end).  Returns how many were
 * dropped.
 */
size_t bt_block_invalidate(struct bt_block_cache *bc, uint64_t start,
			   uint64_t end);

/* Drop everything (a new address space after exec). */
void bt_block_clear(struct bt_block_cache *bc);

/* Blocks cached now. */
size_t bt_block_count(const struct bt_block_cache *bc);

/* Instructions of @b that start before @addr (in [start, next)). */
uint32_t bt_block_insns_before(const struct bt_block *b, uint64_t addr);

/* Does memory still hold the bytes @b was decoded from? 1, 0, or < 0. */
int bt_block_same(const struct bt_block *b, bt_block_read_fn read, void *ctx);

#endif /* BTRACE_SOFT_BLOCK_H */
