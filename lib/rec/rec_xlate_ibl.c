// SPDX-License-Identifier: MIT
/*
 * The lookup of an indirect branch's target (ret, jmp/call r/m), one copy
 * per site (rx_emit_lookup): the target recorded, the inline cache of a
 * jmp or call compared, both tables probed, the target's translation
 * entered through its entry (rx_emit_entry), or an exit to the tracer.
 *
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
 * probe:				(lookup_probe)
 *
 * Flags are kept (mov, not, lea, jrcxz).  The tracer links the rel32 as
 * it links a direct exit (rec_link.c), and undoes it the same way when
 * the target's code goes away; it sets the target only where no thread
 * can be in the sequence (a translation not yet reachable, or the only
 * thread in the translation stopped past it: rec_ibl.c).
 */
#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_emit.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

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

	if (grow(e, RX_IC_LEN) < 0)
		return -bte_nomem;
	/* the rel32 4-byte aligned: patched whole while threads run */
	while ((e->base + e->len + 10 + sizeof(cmp)) & 3)
		put8(e, 0x90);
	put(e, "\x48\xb9", 2);		/* movabs $target,%rcx */
	put64(e, target);
	put(e, cmp, sizeof(cmp));
	rel32 = e->base + e->len;
	put(e, "\0\0\0\0", 4);
	return rx_emit_point(e, RX_POINT_IC, target, rel32, 0);
}

/*
 * The target record of @len bytes: its tag @tag (@tag_o with the outcomes
 * pending), then rdx's low @n bytes by the store @mov (n bytes, into
 * 1(%rcx)), and the commit.
 */
static int target_store(struct rx_emit *e, int8_t len, uint8_t tag,
			uint8_t tag_o, const char *mov, size_t n)
{
	if (rx_record_at(e, len, 0) < 0)
		return -bte_nomem;
	put(e, "\xc6\x01", 2);		/* movb $tag,(%rcx) */
	put8(e, e->pend == RX_PEND_NONE ? tag : tag_o | e->pend);
	put(e, mov, n);
	gs_mov(e, 0, R_CX, TCB_HEAD);	/* the commit */
	return 0;
}

/* The target rdx as a whole REC_IND, and the high half it leaves. */
static int target_whole(struct rx_emit *e)
{
	put(e, "\x89\xd0", 2);			/* mov %edx,%eax */
	put(e, "\x48\xf7\xd0", 3);		/* not %rax */
	put(e, "\x48\x8d\x44\x10\x01", 5);	/* lea 1(%rax,%rdx),%rax */
	gs_mov(e, 0, R_AX, TCB_HI);	/* rdx, its low half 0 */
	return target_store(e, REC_ADDR_LEN, REC_IND, REC_IND_O,
			    "\x48\x89\x51\x01", 4);	/* mov %rdx,1(%rcx) */
}

/* The target rdx as a REC_IND32: its high half is the last REC_IND's. */
static int target_short(struct rx_emit *e)
{
	return target_store(e, REC_IND32_LEN, REC_IND32, REC_IND32_O,
			    "\x89\x51\x01", 3);	/* mov %edx,1(%rcx) */
}

/*
 * Record the target rdx, the outcomes pending in its tag; rax, rcx and
 * rdx saved in the control block.  Each load reads a whole word that a
 * store wrote whole (the head, TCB_HI): a load of a part of a word just
 * stored (its byte 1, its high half) waits on the store on this
 * machine's processors.
 */
static int lookup_record(struct rx_emit *e)
{
	size_t short_at, full_at, whole_at;

	gs_mov(e, 0, R_CX, TCB_RCX);
	gs_mov(e, 0, R_AX, TCB_RAX);
	/*
	 * Whole where the head's bits 8-15 are 0 (once in 64 KiB of ring):
	 * a place to decode from in every part of the ring.
	 */
	gs_mov(e, 1, R_CX, TCB_HEAD);
	put(e, "\x0f\xb6\xcd", 3);		/* movzbl %ch,%ecx */
	put8(e, 0xe3);				/* jrcxz full */
	whole_at = e->len;
	put8(e, 0);
	/*
	 * The same high half as the last full record: 5 bytes, not 9.
	 * rcx = rdx - TCB_HI, less its low half: 0 iff the halves match.
	 */
	gs_mov(e, 1, R_CX, TCB_HI);
	put(e, "\x48\xf7\xd1", 3);		/* not %rcx */
	put(e, "\x48\x8d\x4c\x11\x01", 5);	/* lea 1(%rcx,%rdx),%rcx */
	put(e, "\x89\xc8", 2);			/* mov %ecx,%eax */
	put(e, "\x48\xf7\xd0", 3);		/* not %rax */
	put(e, "\x48\x8d\x4c\x08\x01", 5);	/* lea 1(%rax,%rcx),%rcx */
	put8(e, 0xe3);				/* jrcxz short */
	short_at = e->len;
	put8(e, 0);
	e->buf[whole_at] = (uint8_t)(e->len - whole_at - 1);
	if (target_whole(e) < 0)
		return -bte_nomem;
	put8(e, 0xeb);			/* jmp probe */
	full_at = e->len;
	put8(e, 0);
	e->buf[short_at] = (uint8_t)(e->len - short_at - 1);
	if (target_short(e) < 0)
		return -bte_nomem;
	e->buf[full_at] = (uint8_t)(e->len - full_at - 1);
	e->pend = RX_PEND_NONE;		/* they went with the target */
	return 0;
}

/*
 * Probe both tables for rdx: jump to the translation's entry (which takes
 * rax, rcx and rdx back), or exit to the tracer.
 */
static int lookup_probe(struct rx_emit *e)
{
	static const uint8_t probe_tail[] = {
		0x48, 0x8d, 0x0c, 0x09,		/* lea (%rcx,%rcx),%rcx */
		0x48, 0x8d, 0x04, 0xc8,		/* lea (%rax,%rcx,8),%rax */
		0x48, 0x8b, 0x08,		/* mov (%rax),%rcx */
		0x48, 0xf7, 0xd1,		/* not %rcx */
		0x48, 0x8d, 0x4c, 0x11, 0x01,	/* lea 1(%rcx,%rdx),%rcx */
	};
	uint64_t probe = here(e);
	size_t hit1, hit2;

	gs_mov(e, 1, R_AX, TCB_TABLE1);
	put(e, "\x0f\xb7\xca", 3);	/* movzwl %dx,%ecx */
	put(e, probe_tail, sizeof(probe_tail));
	put8(e, 0xe3);			/* jrcxz hit */
	hit1 = e->len;
	put8(e, 0);
	/* rx_table_index(1, rdx), rax borrowed before it takes the table */
	gs_mov(e, 0, R_DX, TCB_T);
	put(e, "\x65\x0f\xb7\x04\x25", 5);	/* movzwl %gs:TCB_T+2,%eax */
	put32(e, TCB_T + 2);
	put(e, "\x0f\xb7\xca", 3);		/* movzwl %dx,%ecx */
	put(e, "\x8d\x0c\xc1", 3);		/* lea (%rcx,%rax,8),%ecx */
	put(e, "\x0f\xb7\xc9", 3);		/* movzwl %cx,%ecx */
	gs_mov(e, 1, R_AX, TCB_TABLE2);
	put(e, probe_tail, sizeof(probe_tail));
	put8(e, 0xe3);
	hit2 = e->len;
	put8(e, 0);
	if (rx_emit_point(e, RX_POINT_EXIT_IBL, 0, probe,
		  RM_RAX | RM_RCX | RM_RDX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	e->buf[hit1] = (uint8_t)(e->len - hit1 - 1);
	e->buf[hit2] = (uint8_t)(e->len - hit2 - 1);
	put(e, "\xff\x60\x08", 3);		/* jmp *8(%rax): its entry */
	return 0;
}

/* The lookup of target rdx at the site @b (rec_xlate.h). */
int rx_emit_lookup(struct rx_emit *e, const struct rb *b)
{
	int ret;

	ret = grow(e, 280 + RX_IC_LEN);
	if (ret == 0)
		ret = lookup_record(e);
	if (ret == 0 && b->term != RB_RET && !b->icbit)	/* emit_icbit's */
		ret = rx_emit_ic(e, b);
	if (ret == 0)
		ret = lookup_probe(e);
	return ret;
}

/*
 * The entry checks that rdx is its own original: a table entry is
 * replaced while other threads probe it (two stores), so a probe may
 * match the old orig and load the new trans.  A mismatch exits as a miss
 * of rdx; no safe point before the check (the thread stands for rdx, not
 * entry_orig, until it passed).
 */
static int entry_check(struct rx_emit *e)
{
	put(e, "\x48\xb9", 2);			/* movabs $orig,%rcx */
	put64(e, e->entry_orig);
	put(e, "\x48\xf7\xd1", 3);		/* not %rcx */
	put(e, "\x48\x8d\x4c\x11\x01", 5);	/* lea 1(%rcx,%rdx),%rcx */
	put(e, "\xe3\x01", 2);			/* jrcxz ok */
	if (rx_emit_point(e, RX_POINT_EXIT_IBL, 0, 0,
			  RM_RAX | RM_RCX | RM_RDX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	return 0;
}

int rx_emit_entry(struct rx_emit *e)
{
	static const uint8_t regs[] = { R_AX, R_CX, R_DX };
	static const uint32_t slot[] = { TCB_RAX, TCB_RCX, TCB_RDX };
	int mask = RM_RAX | RM_RCX | RM_RDX, ret, i;

	ret = grow(e, RX_ENTRY_LEN);
	if (ret == 0)
		ret = entry_check(e);
	for (i = 0; i < 3 && ret == 0; i++) {
		ret = rx_emit_point(e, RX_POINT_SAFE, e->entry_orig, 0, mask);
		gs_mov(e, 1, regs[i], slot[i]);
		mask &= ~(1 << i);
	}
	return ret;
}

int rx_emit_far_jump(struct rx_emit *e, uint64_t dest)
{
	int ret = grow(e, 14);

	if (ret < 0)
		return ret;
	put(e, "\xff\x25\x00\x00\x00\x00", 6);
	put64(e, dest);
	return 0;
}
