/* SPDX-License-Identifier: MIT */
/*
 * The translator's emitting primitives, shared by its files (rec_xlate.c:
 * a block's code; rec_xlate_ibl.c: the lookup of an indirect branch's
 * target).  Each put writes at the end of @e without a check: a caller
 * grows first for the most its sequence takes.
 */
#ifndef BTRACE_REC_EMIT_H
#define BTRACE_REC_EMIT_H

#include <stdint.h>
#include <string.h>

#include "btrace/error.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

static inline int grow(struct rx_emit *e, size_t n)
{
	if (e->len + n <= e->cap)
		return 0;
	return bt_fail(bte_nomem, 0, "translation buffer full");
}

static inline uint64_t here(const struct rx_emit *e)
{
	return e->base + e->len;
}

static inline void put(struct rx_emit *e, const void *p, size_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static inline void put8(struct rx_emit *e, uint8_t v)
{
	e->buf[e->len++] = v;
}

static inline void put32(struct rx_emit *e, uint32_t v)
{
	put(e, &v, 4);
}

static inline void put64(struct rx_emit *e, uint64_t v)
{
	put(e, &v, 8);
}

#define R_AX 0
#define R_CX 1
#define R_DX 2

/* mov %reg,%gs:off (store) or mov %gs:off,%reg (load); reg 0-7. */
static inline void gs_mov(struct rx_emit *e, int load, int reg, uint32_t off)
{
	const uint8_t op[] = { 0x65, 0x48, load ? 0x8b : 0x89,
			       (uint8_t)((reg << 3) | 4), 0x25 };

	put(e, op, sizeof(op));
	put32(e, off);
}

/*
 * The start of a ring record of @size bytes, rcx saved already: rcx =
 * head - @size, and the point of the store that follows, its first byte
 * first, which faults on the guard page when the record does not fit
 * (rec_ring.h).  @branch: the branch it records (a place to decode from),
 * 0 for a target.
 */
static inline int rx_record_at(struct rx_emit *e, int8_t size,
			       uint64_t branch)
{
	gs_mov(e, 1, R_CX, TCB_HEAD);
	put(e, "\x48\x8d\x49", 3);	/* lea -size(%rcx),%rcx */
	put8(e, (uint8_t)-size);
	return rx_emit_point(e, RX_POINT_STORE, branch, 0, 0);
}

#endif /* BTRACE_REC_EMIT_H */
