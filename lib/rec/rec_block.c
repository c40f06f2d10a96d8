// SPDX-License-Identifier: MIT
/*
 * Blocks of the program, as the translator sees them (rec_xlate.h): a
 * block is decoded once, from its start to its first control transfer,
 * each instruction classified by what its translation must do (copied,
 * a branch to record, a system call, a place to leave), and kept with
 * its bytes and offsets for every variant translated from it.  The other
 * half, what a block's translation looks like, is rec_xlate.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_xlate.h"
#include "x86/decode.h"

struct rx {
	unsigned pend_max;
	uint8_t bytes[RB_MAX_BYTES + 16];	/* a block being decoded */
	uint16_t off[RB_MAX_INSN];
	uint8_t rip[RB_MAX_INSN];
};

int rx_alloc(struct rx **out)
{
	struct rx *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return bt_fail(bte_nomem, ENOMEM, "translator");
	x->pend_max = RX_PEND_COLD;
	*out = x;
	return 0;
}

void rx_free(struct rx *x)
{
	free(x);
}

void rb_release(struct rb *b)
{
	free(b->off);		/* the one allocation of all three */
	b->bytes = NULL;
	b->off = NULL;
	b->rip = NULL;
	free(b->xtrans);
	b->xtrans = NULL;
}

int rb_set_trans(struct rb *b, unsigned pend, uint64_t trans)
{
	if (pend < RX_PENDS_COLD) {
		b->trans[pend] = trans;
		return 0;
	}
	if (pend >= RX_PENDS)
		return -bte_nomem;
	if (!b->xtrans) {
		if (!trans)
			return 0;
		b->xtrans = calloc(RX_PENDS - RX_PENDS_COLD,
				   sizeof(*b->xtrans));
		if (!b->xtrans)
			return -bte_nomem;
	}
	b->xtrans[pend - RX_PENDS_COLD] = trans;
	return 0;
}

void rx_set_pend_max(struct rx *x, unsigned max)
{
	x->pend_max = max < RX_PEND_MAX ? max : RX_PEND_MAX;
}

int rb_carries(const struct rb *b)
{
	switch (b->term) {
	case RB_COND:
	case RB_JUMP:
	case RB_CALL:
	case RB_RET:
	case RB_IJUMP:
	case RB_ICALL:
		return 1;
	default:
		return 0;
	}
}

uint8_t rx_cond_pend(const struct rx *x, uint8_t pend, int taken)
{
	unsigned p = (unsigned)pend << 1 | (taken ? 1u : 0u);

	return rx_pend_count(p) <= x->pend_max ? (uint8_t)p : RX_PEND_NONE;
}

uint32_t rb_insns_before(const struct rb *b, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i < b->ninsn; i++)
		if (b->start + b->off[i] >= pc)
			return i;
	return b->ninsn;
}

/* ---- decoding -------------------------------------------------------- */

/* What an instruction is to the translator: its term. */
static int classify(const struct bt_x86_insn *in)
{
	static const uint8_t term[] = {
		[BT_X86_SEQ] = RB_CUT,		/* copied */
		[BT_X86_COND] = RB_COND,	[BT_X86_JUMP] = RB_JUMP,
		[BT_X86_CALL] = RB_CALL,	[BT_X86_RET] = RB_RET,
		[BT_X86_IJUMP] = RB_IJUMP,	[BT_X86_ICALL] = RB_ICALL,
		[BT_X86_SYSCALL] = RB_SYSCALL,	[BT_X86_TRAP] = RB_LEAVE,
	};

	if (in->gs || in->flow >= BT_ARRAY_SIZE(term))
		return RB_LEAVE;	/* gs is the recorder's own */
	return term[in->flow];
}

/* Read up to @want bytes at @addr, fewer where the mapping ends. */
static size_t read_some(rx_read_fn read, void *ctx, uint64_t addr,
			uint8_t *buf, size_t want)
{
	size_t page = 4096 - (addr & 4095);

	if (want <= page)
		return read(ctx, addr, buf, want) < 0 ? 0 : want;
	if (read(ctx, addr, buf, want) == 0)
		return want;
	return read(ctx, addr, buf, page) < 0 ? 0 : page;
}

/* Keep only what the block uses of the decoder's scratch arrays. */
static int rb_keep(struct rb *b, const uint8_t *bytes, const uint16_t *off,
		   const uint8_t *rip)
{
	size_t n = b->ninsn;

	b->off = malloc(n * (sizeof(*b->off) + sizeof(*b->rip)) + b->nbytes +
			1);
	if (!b->off) {
		b->bytes = NULL;
		b->rip = NULL;
		return bt_fail(bte_nomem, ENOMEM, "block");
	}
	b->rip = (uint8_t *)(b->off + n);
	b->bytes = b->rip + n;
	memcpy(b->bytes, bytes, b->nbytes);
	memcpy(b->off, off, b->ninsn * sizeof(*off));
	memcpy(b->rip, rip, b->ninsn);
	return 0;
}

int rb_dup_arrays(struct rb *c, const struct rb *b)
{
	c->bytes = NULL;
	c->off = NULL;
	c->rip = NULL;
	c->xtrans = NULL;
	c->succ[0] = c->succ[1] = NULL;	/* @b's neighbours, not @c's */
	if (b->xtrans) {
		c->xtrans = malloc((RX_PENDS - RX_PENDS_COLD) *
				   sizeof(*c->xtrans));
		if (!c->xtrans)
			return -bte_nomem;
		memcpy(c->xtrans, b->xtrans,
		       (RX_PENDS - RX_PENDS_COLD) * sizeof(*c->xtrans));
	}
	if (rb_keep(c, b->bytes, b->off, b->rip) < 0) {
		free(c->xtrans);
		c->xtrans = NULL;
		return -bte_nomem;
	}
	return 0;
}

int rx_block_decode(struct rx *x, uint64_t addr, rx_read_fn read,
		    rx_stop_fn stop, void *ctx, struct rb *b)
{
	struct bt_x86_insn in;
	uint8_t *bytes = x->bytes;
	uint16_t *off = x->off;
	size_t have, pos = 0;

	memset(b, 0, sizeof(*b));
	b->start = addr;
	have = read_some(read, ctx, addr, bytes, 256);
	for (;;) {
		uint64_t pc = addr + pos;
		int cls;

		if (have - pos < 15 && have < RB_MAX_BYTES)
			have += read_some(read, ctx, addr + have, bytes + have,
					  RB_MAX_BYTES - have < 256 ?
						  RB_MAX_BYTES - have : 256);
		if (pos >= have || (stop && stop(ctx, pc)) ||
		    bt_x86_decode(bytes + pos, have - pos, pc, &in) < 0)
			cls = RB_LEAVE;
		else
			cls = classify(&in);
		b->end = pc;
		if (cls == RB_LEAVE) {
			b->next = pc;
			b->term = RB_LEAVE;
			break;
		}
		x->rip[b->ninsn] = in.rip_off;
		off[b->ninsn++] = (uint16_t)pos;
		pos += in.len;
		b->next = addr + pos;
		if (cls != RB_CUT) {
			b->term = (uint8_t)cls;
			b->target = in.target;	/* 0 for the indirect */
			break;
		}
		if (b->ninsn == RB_MAX_INSN || pos + 15 > RB_MAX_BYTES) {
			b->term = RB_CUT;
			break;
		}
	}
	b->nbytes = (uint16_t)(b->next - b->start);
	return rb_keep(b, bytes, off, x->rip);
}
