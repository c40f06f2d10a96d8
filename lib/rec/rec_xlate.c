// SPDX-License-Identifier: MIT
/*
 * The recorder's translator: the code generated for a block (its
 * decoding is rec_block.c).  See rec_xlate.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_ring.h"
#include "rec/rec_emit.h"
#include "rec/rec_xlate.h"
#include "x86/decode.h"
#include "x86/reloc.h"

_Static_assert(RX_PEND_MAX + 1 <= REC_TNT_MAX && RX_PEND_MAX <= REC_O_MAX,
	       "pending outcomes must fit the records that take them");

/* ---- emitting -------------------------------------------------------- */

static int point(struct rx_emit *e, int kind, uint64_t orig, uint64_t aux,
		 int mask)
{
	struct rx_point *p;

	if (e->npts == e->ptcap) {
		size_t cap = e->ptcap ? 2 * e->ptcap : 64;

		p = realloc(e->pts, cap * sizeof(*p));
		if (!p)
			return bt_fail(bte_nomem, ENOMEM, "points");
		e->pts = p;
		e->ptcap = cap;
	}
	p = &e->pts[e->npts++];
	p->trans = here(e);
	p->orig = orig;
	p->aux = aux;
	p->kind = (uint8_t)kind;
	p->mask = (uint8_t)mask;
	p->pend = e->pend;
	return 0;
}

int rx_emit_point(struct rx_emit *e, int kind, uint64_t orig, uint64_t aux,
		  int mask)
{
	return point(e, kind, orig, aux, mask);
}

/*
 * A jump to the translation of @orig, or an exit to the tracer the first
 * time: jmp rel32 (its rel32 4-byte aligned, to be patched whole while
 * other threads run), then the int3 it points at until then.
 */
static int link(struct rx_emit *e, uint64_t orig)
{
	uint64_t dest;
	int ret;

	ret = grow(e, 3 + 6);
	if (ret < 0)
		return ret;
	ret = point(e, RX_POINT_SAFE, orig, 0, 0);
	if (ret < 0)
		return ret;
	while ((here(e) + 1) & 3)
		put8(e, 0x90);
	dest = e->link ? e->link(e->ctx, orig, e->pend, here(e) + 5) : 0;
	put8(e, 0xe9);
	/* linked or not, the exit is kept: the link may be undone */
	put32(e, dest ? (uint32_t)(int32_t)(dest - (here(e) + 4)) : 0);
	ret = point(e, RX_POINT_EXIT_DIRECT, orig, here(e) - 4,
		    dest ? RX_LINKED : 0);
	if (ret < 0)
		return ret;
	put8(e, 0xcc);
	return 0;
}

/*
 * The start of a ring record of @size bytes: rcx (saved) = head - @size,
 * and the point of the store that follows, its first byte first, which
 * faults on the guard page when the record does not fit (rec_ring.h).
 * @branch: the branch it records (a place to decode from), 0 for a target.
 */
static int record_begin(struct rx_emit *e, int8_t size, uint64_t branch)
{
	gs_mov(e, 0, R_CX, TCB_RCX);
	return rx_record_at(e, size, branch);
}

/*
 * Record the outcomes @o (REC_TNT's coding) that end at the conditional
 * at @branch (0: no conditional here), as one REC_TNT byte; none pending
 * after it.
 */
static int record_tnt(struct rx_emit *e, unsigned o, uint64_t branch)
{
	int ret;

	ret = grow(e, 60);
	if (ret == 0)	/* a REC_SYNC at a wrap: for one outcome only */
		ret = record_begin(e, 1, rx_pend_count(o) == 1 ? branch : 0);
	if (ret < 0)
		return ret;
	put8(e, 0xc6);		/* movb $tag,(%rcx) */
	put8(e, 0x01);
	put8(e, (uint8_t)(REC_TNT | o));
	gs_mov(e, 0, R_CX, TCB_HEAD);	/* the commit */
	gs_mov(e, 1, R_CX, TCB_RCX);
	e->pend = RX_PEND_NONE;
	return 0;
}

/*
 * Copy the instruction @code (@len) from @orig (x86/reloc.h), its
 * rip-relative disp32 at @rip (0: none), as the block's decode found it:
 * not decoded again for each variant.
 */
static int copy_insn(struct rx_emit *e, const uint8_t *code, size_t len,
		     uint64_t orig, uint8_t rip)
{
	struct bt_x86_insn in = { .addr = orig, .len = (uint8_t)len,
				  .rip_off = rip };
	int32_t disp;
	int ret;

	ret = grow(e, len);
	if (ret < 0)
		return ret;
	if (rip) {
		memcpy(&disp, code + rip, 4);
		in.rip_target = orig + len + (uint64_t)(int64_t)disp;
	}
	ret = bt_x86_reloc(&in, code, here(e), e->buf + e->len);
	if (ret < 0)
		return ret;
	e->len += len;
	return 0;
}

/* mov OP,%rdx for the jmp/call r/m at @orig (@code, @len). */
static int load_operand(struct rx_emit *e, const uint8_t *code, size_t len,
			uint64_t orig)
{
	uint8_t out[BT_X86_LOAD_MAX];
	struct bt_x86_insn in;
	int n;

	if (bt_x86_decode(code, len, orig, &in) < 0)
		return bt_fail(bte_internal, 0, "re-decode");
	n = bt_x86_reloc_load(&in, code, R_DX, here(e), out);
	if (n < 0)
		return n;
	if (grow(e, (size_t)n) < 0)
		return -bte_nomem;
	put(e, out, (size_t)n);
	return 0;
}

/*
 * Push the 64-bit @value without touching flags or registers: push
 * $imm32 where it fits sign-extended, else push the 8 bytes of a literal
 * placed after the translation (emit_literal).  The push may fault as
 * the original call's would: a point for it, the program's state there
 * being the call's with @mask to restore.
 */
static int push_value(struct rx_emit *e, uint64_t value, int mask,
		      uint64_t call)
{
	if (point(e, RX_POINT_SAFE, call, 0, mask) < 0)
		return -bte_nomem;
	if (value < 0x80000000ull) {
		put8(e, 0x68);		/* push $imm32 */
		put32(e, (uint32_t)value);
		return 0;
	}
	/*
	 * push 8 bytes from a literal after the translation: one store.
	 * push $lo then movl $hi,4(%rsp) made the return's pop read two
	 * stores, which the processor cannot forward (a stall each return).
	 */
	put(e, "\xff\x35", 2);		/* push lit(%rip) */
	e->lit_at = e->len;
	e->lit = value;
	put32(e, 0);
	return 0;
}

/* The literal a push reads, after the translation's last instruction. */
static int emit_literal(struct rx_emit *e)
{
	int32_t d;
	int ret = grow(e, 16);

	if (ret < 0)
		return ret;
	while ((e->base + e->len) & 7)
		put8(e, 0xcc);
	d = (int32_t)(e->len - (e->lit_at + 4));
	memcpy(e->buf + e->lit_at, &d, 4);
	put64(e, e->lit);
	return 0;
}

/*
 * One side of the conditional @b, @pend pending before it: its outcome
 * carried on into the successor's variant, or recorded with them.
 */
static int cond_side(const struct rx *x, const struct rb *b,
		     struct rx_emit *e, uint8_t pend, int taken)
{
	unsigned o = (unsigned)pend << 1 | (taken ? 1u : 0u);
	int ret;

	e->pend = rx_cond_pend(x, pend, taken);
	if (e->pend == RX_PEND_NONE) {
		ret = record_tnt(e, o, b->end);
		if (ret < 0)
			return ret;
	}
	return link(e, taken ? b->target : b->next);
}

/*
 * The taken side of the conditional @b, laid out before the translation's
 * entry (rx_translate), so that the side not taken comes last and may
 * fall through into its successor's translation (rec_link.c's
 * thread_point).  Where the taken side carries its outcome on, the jump
 * is its link and this is only its exit (an int3 and its point, whose
 * rel32 emit_cond fills in); else its record and link.
 */
static int emit_cond_lead(const struct rx *x, const struct rb *b,
			  struct rx_emit *e)
{
	uint8_t pend = e->pend, tpend = rx_cond_pend(x, pend, 1);
	int ret;

	e->taken_at = e->len;
	e->taken_dest = 0;
	if (tpend == RX_PEND_NONE) {
		ret = cond_side(x, b, e, pend, 1);
		e->pend = pend;
		return ret;
	}
	if (e->link)	/* in reach of the conditional, a zone away at most */
		e->taken_dest = e->link(e->ctx, b->target, tpend, here(e));
	ret = grow(e, 1);
	e->pend = tpend;
	e->taken_pt = e->npts;
	if (ret == 0)
		ret = point(e, RX_POINT_EXIT_DIRECT, b->target, 0,
			    e->taken_dest ? RX_LINKED : 0);
	if (ret == 0)
		put8(e, 0xcc);
	e->pend = pend;
	return ret;
}

/* A nop of @n bytes (0 to 3): one instruction, not @n. */
static void nop(struct rx_emit *e, size_t n)
{
	static const uint8_t nops[4][3] = {
		{ 0 }, { 0x90 }, { 0x66, 0x90 }, { 0x0f, 0x1f, 0x00 },
	};

	put(e, nops[n], n);
}

/*
 * The conditional @b: the same condition, its jump to the taken side
 * (emit_cond_lead), then the side not taken, last.  Where the taken side
 * carries its outcome on, the jump is its link: its rel32 (4-byte
 * aligned, patched whole) leads straight to the target's translation, or
 * to the int3 before the entry until that is there (rc_link_undo).
 */
static int emit_cond(const struct rx *x, const struct rb *b,
		     struct rx_emit *e)
{
	const uint8_t *code = b->bytes + (b->end - b->start);
	uint8_t pend = e->pend, op[8];
	int direct = e->taken_pt != ~(size_t)0;	/* emit_cond_lead's exit */
	uint64_t rel_at, to;
	size_t n = 0, p = 0;
	int ret;

	ret = grow(e, 24);
	if (ret < 0)
		return ret;
	while (code[p] == 0x2e || code[p] == 0x3e || code[p] == 0xf2 ||
	       code[p] == 0x66 || code[p] == 0x67 ||
	       (code[p] & 0xf0) == 0x40) {
		if (code[p] == 0x67)
			op[n++] = 0x67;	/* jecxz, loop on ecx */
		p++;
	}
	if (code[p] == 0x0f) {
		op[n++] = 0x0f;
		op[n++] = code[p + 1];
	} else if (code[p] >= 0x70 && code[p] <= 0x7f) {
		op[n++] = 0x0f;
		op[n++] = (uint8_t)(code[p] + 0x10);
	} else {		/* e0-e3: loopne, loope, loop, jrcxz */
		op[n++] = code[p];
		op[n++] = 2;
		op[n++] = 0xeb;
		op[n++] = 5;
		op[n++] = 0xe9;
	}
	if (direct)
		nop(e, (4 - ((here(e) + n) & 3)) & 3);
	put(e, op, n);
	rel_at = here(e);
	to = e->taken_dest ? e->taken_dest : e->base + e->taken_at;
	put32(e, (uint32_t)(int32_t)(to - (rel_at + 4)));
	if (direct)
		e->pts[e->taken_pt].aux = rel_at;
	return cond_side(x, b, e, pend, 0);
}

/*
 * The jmp/call r/m @b whose target rdx is compared with the one its
 * block holds for good (rb.icbit, rec_xlate.h): where they match, a
 * taken outcome carried on into that target's variant, as a taken
 * conditional's is, and no record; where not, an outcome not taken in
 * the target record's tag, and the lookup.
 *
 *	mov %rcx,%gs:TCB_RCX
 *	movabs $icbit,%rcx
 *	not %rcx
 *	lea 1(%rcx,%rdx),%rcx		0 iff rdx == icbit
 *	jrcxz hit
 *	jmp miss
 * hit:	mov %gs:TCB_RCX,%rcx
 *	mov %gs:TCB_RDX,%rdx
 *	(REC_TNT if the outcomes are full)
 *	jmp rel32			icbit's variant, as a direct link
 * miss: mov %gs:TCB_RCX,%rcx
 *	(REC_TNT of those pending if the tag has no room for one more)
 *	the target recorded, the outcome in its tag; probe (rx_emit_lookup,
 *	without an inline cache)
 */
static int emit_icbit(const struct rx *x, const struct rb *b,
		      struct rx_emit *e)
{
	uint8_t pend = e->pend;
	unsigned o;
	size_t miss;
	int ret;

	ret = grow(e, 64);	/* up to the hit's REC_TNT or link */
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_CX, TCB_RCX);
	put(e, "\x48\xb9", 2);			/* movabs $icbit,%rcx */
	put64(e, b->icbit);
	put(e, "\x48\xf7\xd1", 3);		/* not %rcx */
	put(e, "\x48\x8d\x4c\x11\x01", 5);	/* lea 1(%rcx,%rdx),%rcx */
	put(e, "\xe3\x05", 2);			/* jrcxz hit */
	put8(e, 0xe9);				/* jmp miss */
	miss = e->len;
	put32(e, 0);
	gs_mov(e, 1, R_CX, TCB_RCX);		/* hit: */
	gs_mov(e, 1, R_DX, TCB_RDX);
	e->pend = rx_icbit_pend(pend);
	if (e->pend == RX_PEND_NONE) {
		ret = record_tnt(e, (unsigned)pend << 1 | 1u, 0);
		if (ret < 0)
			return ret;
	}
	ret = link(e, b->icbit);
	if (ret == 0)	/* the miss's load (record_tnt and rx_emit_lookup
			   check their own) */
		ret = grow(e, 9);
	if (ret < 0)
		return ret;
	memcpy(e->buf + miss, &(int32_t){ (int32_t)(e->len - miss - 4) }, 4);
	gs_mov(e, 1, R_CX, TCB_RCX);		/* miss: */
	e->pend = pend;
	o = (unsigned)pend << 1;
	if (rx_pend_count(o) > REC_O_MAX) {
		ret = record_tnt(e, pend, 0);
		if (ret < 0)
			return ret;
		o = (unsigned)RX_PEND_NONE << 1;
	}
	e->pend = (uint8_t)o;
	return rx_emit_lookup(e, b);
}

/* A ret or jmp/call r/m: the target into rdx, then its own lookup. */
static int emit_indirect(const struct rx *x, const struct rb *b,
			 struct rx_emit *e)
{
	const uint8_t *code = b->bytes + (b->end - b->start);
	size_t len = b->next - b->end;
	int ret;

	ret = grow(e, 64);
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_DX, TCB_RDX);
	if (point(e, RX_POINT_SAFE, b->end, 0, RM_RDX) < 0)
		return -bte_nomem;
	if (b->term == RB_RET) {
		const uint8_t *p = code;

		put8(e, 0x5a);		/* pop %rdx */
		while (*p == 0xf2 || *p == 0xf3 || *p == 0x66 || *p == 0x3e)
			p++;
		if (*p == 0xc2) {	/* ret imm16: lea imm(%rsp),%rsp */
			uint16_t imm;

			memcpy(&imm, p + 1, 2);
			put(e, "\x48\x8d\xa4\x24", 4);
			put32(e, imm);
		}
	} else {
		ret = load_operand(e, code, len, b->end);
		if (ret < 0)
			return ret;
		if (b->term == RB_ICALL) {
			ret = push_value(e, b->next, RM_RDX, b->end);
			if (ret < 0)
				return ret;
		}
		if (b->icbit)
			return emit_icbit(x, b, e);
	}
	return rx_emit_lookup(e, b);
}

/*
 * Syscalls the tracer must see from outside the translation (and
 * rt_sigaction, rt_sigprocmask: emit_sig_leave).
 */
static const uint16_t leave_syscalls[] = {
	15,	/* rt_sigreturn */
	56, 57, 58, 435,	/* clone, fork, vfork, clone3 */
	59, 322,	/* execve, execveat */
	60, 231,	/* exit, exit_group */
	158,	/* arch_prctl: the gs base is ours */
	9, 10, 11, 25,	/* mmap, mprotect, munmap, mremap: code may go */
	203, 204,	/* sched_{set,get}affinity: the tracer's CPU binding */
};

/*
 * A time record: the TSC (rdtsc, which changes rax and rdx only, no
 * flags) in a REC_TIME_SYS or REC_TIME record (@tag) of 9 bytes; rcx is
 * borrowed already, rax and rdx are put back.
 */
static int emit_tsc(struct rx_emit *e, uint8_t tag)
{
	int ret = grow(e, 96);	/* 69, and what follows it */

	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_AX, TCB_RAX);
	gs_mov(e, 0, R_DX, TCB_RDX);
	put(e, "\x0f\x31", 2);		/* rdtsc */
	ret = rx_record_at(e, REC_ADDR_LEN, 0);
	if (ret < 0)
		return ret;
	put(e, "\xc6\x01", 2);		/* movb $tag,(%rcx) */
	put8(e, tag);
	put(e, "\x89\x41\x01\x89\x51\x05", 6); /* eax, edx: 1(%rcx), 5(%rcx) */
	gs_mov(e, 0, R_CX, TCB_HEAD);	/* the commit */
	gs_mov(e, 1, R_AX, TCB_RAX);
	gs_mov(e, 1, R_DX, TCB_RDX);
	return 0;
}

/* A jump's rel8 at @at, to the end of @e. */
static void rel8_here(struct rx_emit *e, size_t at)
{
	e->buf[at] = (uint8_t)(e->len - at - 1);
}

/*
 * rt_sigaction and rt_sigprocmask leave where they set what the tracer
 * must know (rec_sigs.c): SIGSEGV's action, the thread's mask.  Those
 * that only read run on (python3 asks for every signal's action).  rcx is
 * borrowed; the syscall's number in rax, its arguments in rdi, rsi.
 */
static int emit_sig_leave(const struct rb *b, struct rx_emit *e)
{
	size_t act, mask, act_mask, on[3];

	put(e, "\x8d\x48\xf3\x67\xe3", 5);	/* lea -13(%rax),%ecx; jecxz */
	act = e->len;
	put8(e, 0);
	put(e, "\x8d\x48\xf2\x67\xe3", 5);	/* lea -14(%rax),%ecx; jecxz */
	mask = e->len;
	put8(e, 0);
	put8(e, 0xeb);				/* jmp on */
	on[0] = e->len;
	put8(e, 0);
	rel8_here(e, act);			/* act: */
	put(e, "\x8d\x4f\xf5\x67\xe3", 5);	/* lea -11(%rdi),%ecx; jecxz */
	act_mask = e->len;
	put8(e, 0);
	put8(e, 0xeb);				/* jmp on: not SIGSEGV's */
	on[1] = e->len;
	put8(e, 0);
	rel8_here(e, mask);			/* mask: */
	rel8_here(e, act_mask);
	put(e, "\x48\x8d\x0e\xe3", 4);	/* lea (%rsi),%rcx; jrcxz on */
	on[2] = e->len;
	put8(e, 0);
	if (point(e, RX_POINT_EXIT_LEAVE, b->end, 0, RM_RCX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	rel8_here(e, on[0]);			/* on: */
	rel8_here(e, on[1]);
	rel8_here(e, on[2]);
	return 0;
}

static int emit_syscall(const struct rb *b, struct rx_emit *e)
{
	size_t i, exit_at[BT_ARRAY_SIZE(leave_syscalls)];
	int ret;

	ret = grow(e, 64 + 9 * BT_ARRAY_SIZE(leave_syscalls));
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_CX, TCB_RCX);
	ret = emit_sig_leave(b, e);
	if (ret < 0)
		return ret;
	for (i = 0; i < BT_ARRAY_SIZE(leave_syscalls); i++) {
		if (leave_syscalls[i] < 128) {
			put(e, "\x8d\x48", 2);	/* lea -nr(%rax),%ecx */
			put8(e, (uint8_t)-(int8_t)leave_syscalls[i]);
		} else {
			put(e, "\x8d\x88", 2);	/* the same, disp32 */
			put32(e, (uint32_t)-(int32_t)leave_syscalls[i]);
		}
		put(e, "\x67\xe3", 2);	/* jecxz to the exit below */
		exit_at[i] = e->len;
		put8(e, 0);
	}
	put(e, "\xeb\x01", 2);		/* over the exit */
	if (e->len - exit_at[0] - 1 > 127)	/* a jecxz's reach */
		return bt_fail(bte_internal, 0, "too many syscalls to leave at");
	for (i = 0; i < BT_ARRAY_SIZE(leave_syscalls); i++)
		rel8_here(e, exit_at[i]);
	if (point(e, RX_POINT_EXIT_LEAVE, b->end, 0, RM_RCX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	ret = e->no_time ? 0 : emit_tsc(e, REC_TIME_SYS); /* time blocked
							     in it shows */
	if (ret == 0 && point(e, RX_POINT_SAFE, b->end, 0, RM_RCX) < 0)
		ret = -bte_nomem;
	if (ret < 0)
		return ret;
	put(e, "\x0f\x05", 2);
	if (point(e, RX_POINT_SAFE, b->next, 0, RM_FIXRCX) < 0)
		return -bte_nomem;
	ret = e->no_time ? 0 : emit_tsc(e, REC_TIME);
	if (ret == 0 && point(e, RX_POINT_SAFE, b->next, 0, RM_FIXRCX) < 0)
		ret = -bte_nomem;
	if (ret < 0)
		return ret;
	put(e, "\x48\xb9", 2);		/* movabs $next,%rcx */
	put64(e, b->next);
	return link(e, b->next);
}

static int emit_leave(struct rx_emit *e, uint64_t at)
{
	int ret = grow(e, 1);

	if (ret == 0)
		ret = point(e, RX_POINT_SAFE, at, 0, 0);
	if (ret == 0)
		ret = point(e, RX_POINT_EXIT_LEAVE, at, 0, 0);
	if (ret == 0)
		put8(e, 0xcc);
	return ret;
}

/*
 * The variant of a block that does not carry outcomes on: record them,
 * then go on as its translation without.
 */
static int emit_stub(const struct rb *b, struct rx_emit *e)
{
	int ret = point(e, RX_POINT_SAFE, b->start, 0, 0);

	if (ret == 0)
		ret = record_tnt(e, e->pend, 0);
	return ret < 0 ? ret : link(e, b->start);
}

/*
 * The instructions of @b before its terminator, copied: each as long as
 * the original, so that one point stands for all of them (a run: an
 * instruction's start in the copy is its start in the original, moved).
 * Python3's start-up stores 1.06 M points of 32 bytes, 1.31 M with one
 * for each copied instruction.
 */
static int emit_body(const struct rb *b, struct rx_emit *e)
{
	uint32_t i, body = b->ninsn;
	uint64_t end;
	size_t run;
	int ret;

	if (b->term != RB_CUT && b->term != RB_LEAVE)
		body--;		/* the terminator: emit_term */
	if (!body)
		return 0;
	end = body < b->ninsn ? b->start + b->off[body] : b->next;
	run = e->npts;
	ret = point(e, RX_POINT_SAFE, b->start + b->off[0], 0, 0);
	for (i = 0; i < body && ret == 0; i++) {
		uint64_t at = b->start + b->off[i];
		size_t n = (i + 1 < b->ninsn ? b->start + b->off[i + 1] :
					       b->next) - at;

		ret = copy_insn(e, b->bytes + b->off[i], n, at, b->rip[i]);
	}
	if (ret == 0)
		e->pts[run].aux = end - (b->start + b->off[0]);
	return ret;
}

/* A call rel: the original return address pushed, then chained. */
static int emit_call(const struct rb *b, struct rx_emit *e)
{
	int ret = grow(e, 40);

	if (ret == 0)
		ret = point(e, RX_POINT_SAFE, b->end, 0, 0);
	if (ret == 0)
		ret = push_value(e, b->next, 0, b->end);
	if (ret == 0)
		ret = link(e, b->target);
	return ret;
}

/* movb $1,mark(%rip): the translation ran (rec_xlate.h). */
static int emit_mark(const struct rb *b, struct rx_emit *e)
{
	int64_t d;
	int ret = grow(e, 7);

	if (ret == 0)
		ret = point(e, RX_POINT_SAFE, b->start, 0, 0);
	if (ret < 0)
		return ret;
	d = (int64_t)(e->mark - (here(e) + 7));
	if (d != (int32_t)d)
		return 0;	/* out of reach: no mark */
	put(e, "\xc6\x05", 2);
	put32(e, (uint32_t)(int32_t)d);
	put8(e, 1);
	return 0;
}

/* What the translation of @b does at its terminator (rec_xlate.h). */
static int emit_term(const struct rx *x, const struct rb *b,
		     struct rx_emit *e)
{
	int ret;

	switch (b->term) {
	case RB_CUT:
		return link(e, b->next);
	case RB_LEAVE:
		return emit_leave(e, b->end);
	case RB_JUMP:
		return link(e, b->target);
	case RB_CALL:
		return emit_call(b, e);
	}
	ret = point(e, RX_POINT_SAFE, b->end, 0, 0);
	if (ret < 0)
		return ret;
	switch (b->term) {
	case RB_COND:
		return emit_cond(x, b, e);
	case RB_SYSCALL:
		return emit_syscall(b, e);
	default:
		return emit_indirect(x, b, e);
	}
}

int rx_translate(struct rx *x, const struct rb *b, uint8_t pend,
		 struct rx_emit *e)
{
	size_t len0 = e->len, npts0 = e->npts;
	int ret = 0;

	e->pend = pend;
	e->lead = 0;
	e->taken_pt = ~(size_t)0;
	e->taken_dest = 0;
	if (pend != RX_PEND_NONE && !rb_carries(b)) {
		ret = emit_stub(b, e);
	} else {
		if (b->term == RB_COND) {	/* its taken side first */
			ret = emit_cond_lead(x, b, e);
			e->lead = e->len - len0;
		}
		if (ret == 0 && pend == RX_PEND_NONE) {	/* the lookup's way in */
			e->entry_orig = b->start;
			ret = rx_emit_entry(e);
		}
		if (ret == 0 && e->mark)
			ret = emit_mark(b, e);
		if (ret == 0)
			ret = emit_body(b, e);
		if (ret == 0)
			ret = emit_term(x, b, e);
		if (ret == 0 && e->lit_at)
			ret = emit_literal(e);
	}
	e->lit_at = 0;
	if (ret < 0) {	/* nothing half-made stays */
		e->len = len0;
		e->npts = npts0;
	}
	return ret;
}
