// SPDX-License-Identifier: MIT
/*
 * Inline caches of indirect jumps and calls (rec_xlate.h): each site of
 * the program's jmp r/m or call r/m holds one target in its translation,
 * compared before the lookup's probe, so that a site that always goes to
 * one place (a PLT slot, a function pointer, a virtual call seen by one
 * class) costs a compare and a direct jump instead of a probe of the
 * tables and an entry's check:
 *
 *	movabs $target,%rcx		the target it holds (0: none)
 *	not %rcx
 *	lea 1(%rcx,%rdx),%rcx		0 iff rdx == target
 *	jrcxz hit
 *	jmp probe
 * hit:	jmp rel32			target's entry past its check; 0 while
 *					not linked: falls into the probe
 * probe:				(rec_xlate.c)
 *
 * Flags are kept (mov, not, lea, jrcxz).  The tracer links the rel32 as
 * it links a direct exit (rec_link.c), and undoes it the same way when
 * the target's code goes away; it sets the target only where no thread
 * can be in the sequence (a translation not yet reachable, or the only
 * thread in the translation stopped past it: rec_ibl.c).
 */
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_xlate.h"

static void put(struct rx_emit *e, const void *p, size_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

int rx_emit_ic(struct rx_emit *e, const struct rb *b)
{
	static const uint8_t cmp[] = {
		0x48, 0xf7, 0xd1,		/* not %rcx */
		0x48, 0x8d, 0x4c, 0x11, 0x01,	/* lea 1(%rcx,%rdx),%rcx */
		0xe3, 0x02,			/* jrcxz hit */
		0xeb, 0x05,			/* jmp probe */
		0xe9,				/* hit: jmp rel32 */
	};
	uint64_t target = e->guess ? e->guess(e->ctx, b) : 0;
	uint64_t rel32;

	if (e->len + RX_IC_LEN > e->cap)
		return bt_fail(bte_nomem, 0, "translation buffer full");
	/* the rel32 4-byte aligned: patched whole while threads run */
	while ((e->base + e->len + 10 + sizeof(cmp)) & 3)
		put(e, "\x90", 1);
	put(e, "\x48\xb9", 2);		/* movabs $target,%rcx */
	put(e, &target, 8);
	put(e, cmp, sizeof(cmp));
	rel32 = e->base + e->len;
	put(e, "\0\0\0\0", 4);
	return rx_emit_point(e, RX_POINT_IC, target, rel32, 0);
}
