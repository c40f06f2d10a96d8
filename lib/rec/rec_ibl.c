// SPDX-License-Identifier: MIT
/*
 * The tracer's side of the inline caches of indirect jumps and calls
 * (rec_xlate_ibl.c): what a site holds is guessed when it is translated
 * (the word a rip-relative operand points at: a PLT's GOT slot, a
 * `call *fn@GOTPCREL(%rip)`), translated ahead with it and linked at the
 * end of the batch; a site whose target misses the tables learns it at
 * that miss.  Links are undone with direct ones (rec_link.c's orig_gone,
 * through the index of links by original), so a cache never leads into
 * code that went away.
 */
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/recorder_int.h"

/*
 * The address a jmp/call r/m at @code (@len bytes, ending at @next)
 * reads its target from, if it is rip-relative (ff /2 or ff /4, mod 00,
 * rm 101, nothing after the displacement); 0 otherwise.
 */
static uint64_t rip_operand(const uint8_t *code, size_t len, uint64_t next)
{
	size_t p = 0;
	int32_t disp;

	while (p < len && (code[p] == 0x3e || code[p] == 0x2e ||
			   code[p] == 0xf2 || (code[p] & 0xf0) == 0x40))
		p++;
	if (p + 6 != len || code[p] != 0xff || (code[p + 1] & 0xc7) != 0x05)
		return 0;
	if (((code[p + 1] >> 3) & 7) != 2 && ((code[p + 1] >> 3) & 7) != 4)
		return 0;
	__builtin_memcpy(&disp, code + p + 2, 4);
	return next + (uint64_t)(int64_t)disp;
}

uint64_t rc_ic_guess(void *ctx, const struct rb *b)
{
	struct bt_recorder *r = ctx;
	uint64_t at, target;

	if (b->term != RB_IJUMP && b->term != RB_ICALL)
		return 0;
	at = rip_operand(b->bytes + (b->end - b->start), b->next - b->end,
			 b->next);
	if (!at || rc_mem_read(r, at, &target, 8) < 0)
		return 0;
	return target;
}

/*
 * What @b's block holds for good as its icbit (rec_xlate.h): the word its
 * operand points at now, if that is traced code (a hit is a direct link:
 * to untraced code it would stop each time, where the lookup's native
 * exit does not, rec_native.c), and not a lazily bound PLT slot not bound
 * yet (its word leads to the PLT's own push $n, with or without endbr64
 * before it): the first call changes it, and every call after would miss.
 */
uint64_t rc_icbit_guess(struct bt_recorder *r, const struct rb *b)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint64_t target = rc_ic_guess(r, b);
	uint8_t code[5];

	if (!target || !r->host.translatable(r->t, target))
		return 0;
	if (rc_mem_read(r, target, code, sizeof(code)) < 0)
		return target;
	if (code[memcmp(code, endbr64, sizeof(endbr64)) ? 0 : 4] == 0x68)
		return 0;	/* push $imm32 */
	return target;
}

/* Link the cache @z->pts[@pi] to its target's translation if it has one. */
static void ic_link(struct bt_recorder *r, struct zone *z, size_t pi)
{
	struct rx_point p;
	const struct rb *b;

	zpt_get(z, pi, &p);
	if (p.kind != RX_POINT_IC || (p.mask & RX_LINKED) || !p.orig)
		return;
	b = rc_block_find(r, p.orig);
	if (b && rb_trans(b, RX_PEND_NONE))
		rc_link_exit(r, z, pi,
			     rb_trans(b, RX_PEND_NONE) - RX_ENTRY_RESTORE);
}

int rc_ic_link_batch(struct bt_recorder *r, const size_t *mark)
{
	size_t zi, i;

	for (zi = 0; zi < r->nzone; zi++)
		for (i = mark[zi]; i < r->zone[zi].npts; i++)
			ic_link(r, &r->zone[zi], i);
	return rc_zones_flush(r);	/* far jumps it may have made */
}

/*
 * The lookup whose probe is at @probe missed @target, now translated: its
 * site's cache takes it if it holds nothing linked, and the target is its
 * own or no other thread is in the translation (the thread @rt is stopped
 * past the cache; another could be between its compare and its jump).
 */
void rc_ic_learn(struct bt_recorder *r, struct rthread *rt, uint64_t probe,
		 uint64_t target)
{
	struct rx_point *p = rc_point_kind(r, probe, RX_POINT_IC);
	struct zone *z = p ? rc_zone_of(r, probe) : NULL;
	size_t pi;

	if (!z || (p->mask & RX_LINKED))
		return;
	pi = rc_point_index(r, p);
	if (p->orig != target) {
		if (rc_others_in(r, rt->th) ||
		    rc_code_write(r, RX_IC_IMM(p->aux), &target, 8) < 0)
			return;
		p->orig = target;
		zpt_put(z, pi, p);
	}
	ic_link(r, z, pi);
	rc_zones_flush(r);	/* a far jump it may have made */
}
