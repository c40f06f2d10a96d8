// SPDX-License-Identifier: MIT
/*
 * The recorder's translator: block decoding and code generation.  See
 * rec_xlate.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "btrace/error.h"
#include "internal.h"
#include "rec/rec_ring.h"
#include "rec/rec_xlate.h"

#define NEAR_LIMIT (1ll << 31)

_Static_assert(RX_PEND_MAX + 1 <= REC_TNT_MAX && RX_PEND_MAX <= REC_O_MAX,
	       "pending outcomes must fit the records that take them");

struct rx {
	ZydisDecoder dec;
	unsigned pend_max;
	uint8_t bytes[RB_MAX_BYTES + 16];	/* a block being decoded */
	uint16_t off[RB_MAX_INSN];
};

int rx_alloc(struct rx **out)
{
	struct rx *x = calloc(1, sizeof(*x));

	*out = NULL;
	if (!x)
		return bt_fail(bte_nomem, ENOMEM, "translator");
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&x->dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64))) {
		free(x);
		return bt_fail(bte_internal, 0, "ZydisDecoderInit");
	}
	x->pend_max = RX_PEND_MAX;
	*out = x;
	return 0;
}

void rx_free(struct rx *x)
{
	free(x);
}

void rb_release(struct rb *b)
{
	free(b->bytes);
	free(b->off);
	b->bytes = NULL;
	b->off = NULL;
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

/* What an instruction is to the translator. */
static int classify(const ZydisDecodedInstruction *in,
		    const ZydisDecodedOperand *ops)
{
	int direct;

	if (in->attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS)
		return RB_LEAVE;
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_SYSCALL:
		return RB_SYSCALL;
	case ZYDIS_MNEMONIC_RDGSBASE: case ZYDIS_MNEMONIC_WRGSBASE:
	case ZYDIS_MNEMONIC_SWAPGS: case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT: case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_ENCLU: case ZYDIS_MNEMONIC_UIRET:
		return RB_LEAVE;
	default:
		break;
	}
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
		break;
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT:
		return RB_LEAVE;
	default:
		return RB_CUT;	/* an ordinary instruction: copied */
	}
	if (in->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ||
	    in->operand_width == 16)
		return RB_LEAVE;
	/* direct: an immediate target (IS_RELATIVE also means rip-relative) */
	direct = ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	switch (in->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		return direct ? RB_COND : RB_LEAVE;
	case ZYDIS_CATEGORY_RET:
		return RB_RET;
	case ZYDIS_CATEGORY_CALL:
		return direct ? RB_CALL : RB_ICALL;
	default:
		return direct ? RB_JUMP : RB_IJUMP;
	}
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
static int rb_keep(struct rb *b, const uint8_t *bytes, const uint16_t *off)
{
	b->bytes = malloc(b->nbytes ? b->nbytes : 1);
	b->off = malloc((b->ninsn ? b->ninsn : 1) * sizeof(*b->off));
	if (!b->bytes || !b->off) {
		rb_release(b);
		return bt_fail(bte_nomem, ENOMEM, "block");
	}
	memcpy(b->bytes, bytes, b->nbytes);
	memcpy(b->off, off, b->ninsn * sizeof(*off));
	return 0;
}

int rx_block_decode(struct rx *x, uint64_t addr, rx_read_fn read,
		    rx_stop_fn stop, void *ctx, struct rb *b)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
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
		    !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x->dec, bytes + pos,
							 have - pos, &in, ops))) {
			cls = RB_LEAVE;
		} else {
			cls = classify(&in, ops);
		}
		b->end = pc;
		if (cls == RB_LEAVE) {
			b->next = pc;
			b->term = RB_LEAVE;
			break;
		}
		off[b->ninsn++] = (uint16_t)pos;
		pos += in.length;
		b->next = addr + pos;
		if (cls != RB_CUT) {
			b->term = (uint8_t)cls;
			if (cls == RB_COND || cls == RB_JUMP || cls == RB_CALL)
				ZydisCalcAbsoluteAddress(&in, &ops[0], pc,
							 &b->target);
			break;
		}
		if (b->ninsn == RB_MAX_INSN || pos + 15 > RB_MAX_BYTES) {
			b->term = RB_CUT;
			break;
		}
	}
	b->nbytes = (uint16_t)(b->next - b->start);
	return rb_keep(b, bytes, off);
}

/* ---- emitting -------------------------------------------------------- */

static int grow(struct rx_emit *e, size_t n)
{
	if (e->len + n <= e->cap)
		return 0;
	return bt_fail(bte_nomem, 0, "translation buffer full");
}

static uint64_t here(const struct rx_emit *e)
{
	return e->base + e->len;
}

static void put(struct rx_emit *e, const void *p, size_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

static void put8(struct rx_emit *e, uint8_t v)
{
	e->buf[e->len++] = v;
}

static void put32(struct rx_emit *e, uint32_t v)
{
	put(e, &v, 4);
}

static void put64(struct rx_emit *e, uint64_t v)
{
	put(e, &v, 8);
}

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

/* mov %reg,%gs:off (store) or mov %gs:off,%reg (load); reg 0-7. */
static void gs_mov(struct rx_emit *e, int load, int reg, uint32_t off)
{
	const uint8_t op[] = { 0x65, 0x48, load ? 0x8b : 0x89,
			       (uint8_t)((reg << 3) | 4), 0x25 };

	put(e, op, sizeof(op));
	put32(e, off);
}

#define R_AX 0
#define R_CX 1
#define R_DX 2

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
	ret = point(e, PT_SAFE, orig, 0, 0);
	if (ret < 0)
		return ret;
	while ((here(e) + 1) & 3)
		put8(e, 0x90);
	dest = e->link ? e->link(e->ctx, orig, e->pend, here(e) + 5) : 0;
	put8(e, 0xe9);
	/* linked or not, the exit is kept: the link may be undone */
	put32(e, dest ? (uint32_t)(int32_t)(dest - (here(e) + 4)) : 0);
	ret = point(e, PT_EXIT_DIRECT, orig, here(e) - 4, dest ? RX_LINKED : 0);
	if (ret < 0)
		return ret;
	put8(e, 0xcc);
	return 0;
}

static int record_at(struct rx_emit *e, int8_t size, uint64_t branch);

/*
 * The start of a ring record of @size bytes: rcx (saved) = head - @size,
 * and the point of the store that follows, its first byte first, which
 * faults on the guard page when the record does not fit (rec_ring.h).
 * @branch: the branch it records (a place to decode from), 0 for a target.
 */
static int record_begin(struct rx_emit *e, int8_t size, uint64_t branch)
{
	gs_mov(e, 0, R_CX, TCB_RCX);
	return record_at(e, size, branch);
}

/* The same with rcx saved already. */
static int record_at(struct rx_emit *e, int8_t size, uint64_t branch)
{
	gs_mov(e, 1, R_CX, TCB_HEAD);
	put(e, "\x48\x8d\x49", 3);	/* lea -size(%rcx),%rcx */
	put8(e, (uint8_t)-size);
	return point(e, PT_STORE, branch, 0, 0);
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

static int in_reach(int64_t d)
{
	return d > -NEAR_LIMIT && d < NEAR_LIMIT;
}

/* Copy the instruction @code (@len) from @orig, re-basing a rip-relative
 * displacement. */
static int copy_insn(struct rx *x, struct rx_emit *e, const uint8_t *code,
		     size_t len, uint64_t orig)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t i;
	int ret;

	ret = grow(e, len);
	if (ret < 0)
		return ret;
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x->dec, code, len, &in, ops)))
		return bt_fail(bte_internal, 0, "re-decode");
	put(e, code, len);
	for (i = 0; i < in.operand_count; i++) {
		int64_t disp;

		if (ops[i].type != ZYDIS_OPERAND_TYPE_MEMORY ||
		    ops[i].mem.base != ZYDIS_REGISTER_RIP)
			continue;
		if (in.raw.disp.size != 32)
			return -bte_nosys;
		disp = (int64_t)in.raw.disp.value +
		       (int64_t)(orig - (here(e) - len));
		if (!in_reach(disp))
			return -bte_nosys;
		memcpy(e->buf + e->len - len + in.raw.disp.offset, &(int32_t){
			       (int32_t)disp }, 4);
		break;
	}
	return 0;
}

/*
 * mov OP,%rdx for the jmp/call r/m at @orig (@code, @len): the same
 * ModRM operand under opcode 8B with reg = rdx and REX.W.
 */
static int rewrite_operand(struct rx *x, struct rx_emit *e,
			   const uint8_t *code, size_t len, uint64_t orig)
{
	ZydisDecodedInstruction in;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	uint8_t out[20], rex = 0x48;
	size_t n = 0, i, m, start;
	int rip = 0;

	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&x->dec, code, len, &in, ops)))
		return bt_fail(bte_internal, 0, "re-decode");
	m = in.raw.modrm.offset;
	if (m < 1 || code[m - 1] != 0xff)
		return -bte_nosys;
	start = m - 1;
	if (start && (code[start - 1] & 0xf0) == 0x40) {
		start--;
		rex |= code[start] & 0x03;	/* X, B */
	}
	for (i = 0; i < start; i++)
		if (code[i] == 0x64 || code[i] == 0x67)
			out[n++] = code[i];
	out[n++] = rex;
	out[n++] = 0x8b;
	out[n++] = (uint8_t)((code[m] & 0xc7) | (R_DX << 3));
	memcpy(out + n, code + m + 1, len - m - 1);
	if ((code[m] & 0xc7) == 0x05)
		rip = 1;
	n += len - m - 1;
	if (grow(e, n) < 0)
		return -bte_nomem;
	if (rip) {
		uint64_t target = orig + len + (int64_t)(int32_t)in.raw.disp.value;
		int64_t disp = (int64_t)(target - (here(e) + n));

		if (!in_reach(disp))
			return -bte_nosys;
		memcpy(out + n - (len - in.raw.disp.offset), &(int32_t){
			       (int32_t)disp }, 4);
	}
	put(e, out, n);
	return 0;
}

/*
 * Push the 64-bit @value without touching flags or registers: push its
 * low half (sign-extended), then store its high half over what that put
 * there.  The push may fault as the original call's would: a point for
 * it, the program's state there being the call's with @mask to restore.
 * Between the two stores there is no point: a thread stopped there is
 * stepped on to the next.
 */
static int push_value(struct rx_emit *e, uint64_t value, int mask,
		      uint64_t call)
{
	if (point(e, PT_SAFE, call, 0, mask) < 0)
		return -bte_nomem;
	put8(e, 0x68);			/* push $lo */
	put32(e, (uint32_t)value);
	if (value < 0x80000000ull)
		return 0;
	put(e, "\xc7\x44\x24\x04", 4);	/* movl $hi,4(%rsp) */
	put32(e, (uint32_t)(value >> 32));
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

static int emit_cond(const struct rx *x, const struct rb *b,
		     struct rx_emit *e)
{
	const uint8_t *code = b->bytes + (b->end - b->start);
	uint8_t pend = e->pend;
	size_t at_taken;
	uint8_t op;
	size_t p = 0;
	int ret;

	ret = grow(e, 16);
	if (ret < 0)
		return ret;
	while (code[p] == 0x2e || code[p] == 0x3e || code[p] == 0xf2 ||
	       code[p] == 0x66 || code[p] == 0x67 ||
	       (code[p] & 0xf0) == 0x40) {
		if (code[p] == 0x67)
			put8(e, 0x67);	/* jecxz, loop on ecx */
		p++;
	}
	op = code[p];
	if (op == 0x0f) {
		put8(e, 0x0f);
		put8(e, code[p + 1]);
	} else if (op >= 0x70 && op <= 0x7f) {
		put8(e, 0x0f);
		put8(e, (uint8_t)(op + 0x10));
	} else {		/* e0-e3: loopne, loope, loop, jrcxz */
		put8(e, op);
		put8(e, 2);
		put8(e, 0xeb);
		put8(e, 5);
		put8(e, 0xe9);
	}
	at_taken = e->len;
	put32(e, 0);
	ret = cond_side(x, b, e, pend, 0);
	if (ret < 0)
		return ret;
	memcpy(e->buf + at_taken, &(int32_t){ (int32_t)(e->len - at_taken - 4) },
	       4);
	return cond_side(x, b, e, pend, 1);
}

static int emit_lookup(struct rx_emit *e);

/* A ret or jmp/call r/m: the target into rdx, then its own lookup. */
static int emit_indirect(struct rx *x, const struct rb *b, struct rx_emit *e)
{
	const uint8_t *code = b->bytes + (b->end - b->start);
	size_t len = b->next - b->end;
	int ret;

	ret = grow(e, 64);
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_DX, TCB_RDX);
	if (point(e, PT_SAFE, b->end, 0, RM_RDX) < 0)
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
		ret = rewrite_operand(x, e, code, len, b->end);
		if (ret < 0)
			return ret;
		if (b->term == RB_ICALL) {
			ret = push_value(e, b->next, RM_RDX, b->end);
			if (ret < 0)
				return ret;
		}
	}
	return emit_lookup(e);
}

/* Syscalls the tracer must see from outside the translation. */
static const uint16_t leave_syscalls[] = {
	15,	/* rt_sigreturn */
	56, 57, 58, 435,	/* clone, fork, vfork, clone3 */
	59, 322,	/* execve, execveat */
	60, 231,	/* exit, exit_group */
	158,	/* arch_prctl: the gs base is ours */
	9, 10, 11, 25,	/* mmap, mprotect, munmap, mremap: code may go */
};

static int emit_syscall(const struct rb *b, struct rx_emit *e)
{
	size_t i, exit_at[BT_ARRAY_SIZE(leave_syscalls)];
	int ret;

	ret = grow(e, 16 + 8 * BT_ARRAY_SIZE(leave_syscalls));
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_CX, TCB_RCX);
	for (i = 0; i < BT_ARRAY_SIZE(leave_syscalls); i++) {
		put(e, "\x8d\x88", 2);	/* lea -nr(%rax),%ecx */
		put32(e, (uint32_t)-(int32_t)leave_syscalls[i]);
		put(e, "\x67\xe3", 2);	/* jecxz to the exit below */
		exit_at[i] = e->len;
		put8(e, 0);
	}
	put(e, "\xeb\x01", 2);		/* over the exit */
	for (i = 0; i < BT_ARRAY_SIZE(leave_syscalls); i++)
		e->buf[exit_at[i]] = (uint8_t)(e->len - exit_at[i] - 1);
	if (point(e, PT_EXIT_LEAVE, b->end, 0, RM_RCX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	if (point(e, PT_SAFE, b->end, 0, RM_RCX) < 0)
		return -bte_nomem;
	put(e, "\x0f\x05", 2);
	if (point(e, PT_SAFE, b->next, 0, RM_FIXRCX) < 0)
		return -bte_nomem;
	put(e, "\x48\xb9", 2);		/* movabs $next,%rcx */
	put64(e, b->next);
	return link(e, b->next);
}

static int emit_leave(struct rx_emit *e, uint64_t at)
{
	int ret = grow(e, 1);

	if (ret == 0)
		ret = point(e, PT_SAFE, at, 0, 0);
	if (ret == 0)
		ret = point(e, PT_EXIT_LEAVE, at, 0, 0);
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
	int ret = point(e, PT_SAFE, b->start, 0, 0);

	if (ret == 0)
		ret = record_tnt(e, e->pend, 0);
	return ret < 0 ? ret : link(e, b->start);
}

int rx_translate(struct rx *x, const struct rb *b, uint8_t pend,
		 struct rx_emit *e)
{
	size_t len0 = e->len, npts0 = e->npts;
	uint32_t i, body = b->ninsn;
	int ret = 0;

	e->pend = pend;
	if (pend != RX_PEND_NONE && !rb_carries(b)) {
		ret = emit_stub(b, e);
		goto out;
	}
	if (pend == RX_PEND_NONE) {	/* the lookup's way in */
		e->entry_orig = b->start;
		ret = rx_emit_entry(e);
		if (ret < 0)
			goto out;
	}

	if (b->term != RB_CUT && b->term != RB_LEAVE)
		body--;		/* the terminator is emitted below */
	for (i = 0; i < body && ret == 0; i++) {
		uint64_t at = b->start + b->off[i];
		size_t n = (i + 1 < b->ninsn ? b->start + b->off[i + 1] :
					       b->next) - at;

		ret = point(e, PT_SAFE, at, 0, 0);
		if (ret == 0)
			ret = copy_insn(x, e, b->bytes + b->off[i], n, at);
	}
	if (ret == 0) {
		switch (b->term) {
		case RB_CUT:
			ret = link(e, b->next);
			break;
		case RB_LEAVE:
			ret = emit_leave(e, b->end);
			break;
		case RB_JUMP:
			ret = link(e, b->target);
			break;
		case RB_CALL:
			ret = grow(e, 40);
			if (ret == 0)
				ret = point(e, PT_SAFE, b->end, 0, 0);
			if (ret == 0)
				ret = push_value(e, b->next, 0, b->end);
			if (ret == 0)
				ret = link(e, b->target);
			break;
		case RB_COND:
			ret = point(e, PT_SAFE, b->end, 0, 0);
			if (ret == 0)
				ret = emit_cond(x, b, e);
			break;
		case RB_SYSCALL:
			ret = point(e, PT_SAFE, b->end, 0, 0);
			if (ret == 0)
				ret = emit_syscall(b, e);
			break;
		default:
			ret = point(e, PT_SAFE, b->end, 0, 0);
			if (ret == 0)
				ret = emit_indirect(x, b, e);
			break;
		}
	}
out:
	if (ret < 0) {
		e->len = len0;
		e->npts = npts0;
	}
	return ret;
}

/*
 * The lookup of target rdx (the program's rdx in its slot): record it
 * (the outcomes pending, in its tag), probe both tables, jump to the
 * translation's entry (which takes rax, rcx and rdx back), or exit to
 * the tracer.  One copy per site, so that each indirect branch of the
 * program has its own indirect jump here, predicted as the program's own
 * would be.
 */
static int emit_lookup(struct rx_emit *e)
{
	uint64_t probe;
	static const uint8_t probe_tail[] = {
		0x48, 0x8d, 0x0c, 0x09,		/* lea (%rcx,%rcx),%rcx */
		0x48, 0x8d, 0x04, 0xc8,		/* lea (%rax,%rcx,8),%rax */
		0x48, 0x8b, 0x08,		/* mov (%rax),%rcx */
		0x48, 0xf7, 0xd1,		/* not %rcx */
		0x48, 0x8d, 0x4c, 0x11, 0x01,	/* lea 1(%rcx,%rdx),%rcx */
	};
	size_t hit1, hit2, short_at, full_at, whole_at;
	int ret;

	ret = grow(e, 280);
	if (ret < 0)
		return ret;
	gs_mov(e, 0, R_CX, TCB_RCX);
	gs_mov(e, 0, R_AX, TCB_RAX);
	gs_mov(e, 0, R_DX, TCB_T);	/* its halves and bytes, for below */
	/*
	 * Whole where the head's bits 8-15 are 0 (once in 64 KiB of ring):
	 * a place to decode from in every part of the ring.
	 */
	put(e, "\x65\x0f\xb6\x0c\x25", 5);	/* movzbl %gs:TCB_HEAD+1,%ecx */
	put32(e, TCB_HEAD + 1);
	put8(e, 0xe3);				/* jrcxz full */
	whole_at = e->len;
	put8(e, 0);
	/* the same high half as the last full record: 5 bytes, not 9 */
	put(e, "\x65\x8b\x0c\x25", 4);	/* mov %gs:TCB_T+4,%ecx */
	put32(e, TCB_T + 4);
	put(e, "\x65\x8b\x04\x25", 4);	/* mov %gs:TCB_HI,%eax */
	put32(e, TCB_HI);
	put(e, "\x48\xf7\xd0", 3);		/* not %rax */
	put(e, "\x48\x8d\x4c\x08\x01", 5);	/* lea 1(%rax,%rcx),%rcx */
	put8(e, 0xe3);				/* jrcxz short */
	short_at = e->len;
	put8(e, 0);
	e->buf[whole_at] = (uint8_t)(e->len - whole_at - 1);
	put(e, "\x65\x8b\x04\x25", 4);	/* mov %gs:TCB_T+4,%eax */
	put32(e, TCB_T + 4);
	put(e, "\x65\x89\x04\x25", 4);	/* mov %eax,%gs:TCB_HI */
	put32(e, TCB_HI);
	if (record_at(e, REC_ADDR_LEN, 0) < 0)
		return -bte_nomem;
	put(e, "\xc6\x01", 2);		/* movb $tag,(%rcx) */
	put8(e, e->pend == RX_PEND_NONE ? REC_IND : REC_IND_O | e->pend);
	put(e, "\x48\x89\x51\x01", 4);	/* mov %rdx,1(%rcx) */
	gs_mov(e, 0, R_CX, TCB_HEAD);	/* the commit */
	put8(e, 0xeb);			/* jmp probe */
	full_at = e->len;
	put8(e, 0);
	e->buf[short_at] = (uint8_t)(e->len - short_at - 1);
	if (record_at(e, REC_IND32_LEN, 0) < 0)
		return -bte_nomem;
	put(e, "\xc6\x01", 2);		/* movb $tag,(%rcx) */
	put8(e, e->pend == RX_PEND_NONE ? REC_IND32 : REC_IND32_O | e->pend);
	put(e, "\x89\x51\x01", 3);	/* mov %edx,1(%rcx) */
	gs_mov(e, 0, R_CX, TCB_HEAD);	/* the commit */
	e->buf[full_at] = (uint8_t)(e->len - full_at - 1);
	e->pend = RX_PEND_NONE;		/* they went with the target */
	probe = here(e);
	gs_mov(e, 1, R_AX, TCB_TABLE1);
	put(e, "\x0f\xb7\xca", 3);	/* movzwl %dx,%ecx */
	put(e, probe_tail, sizeof(probe_tail));
	put8(e, 0xe3);			/* jrcxz hit */
	hit1 = e->len;
	put8(e, 0);
	gs_mov(e, 1, R_AX, TCB_TABLE2);
	put(e, "\x65\x0f\xb7\x0c\x25", 5);	/* movzwl %gs:TCB_T+1,%ecx */
	put32(e, TCB_T + 1);
	put(e, probe_tail, sizeof(probe_tail));
	put8(e, 0xe3);
	hit2 = e->len;
	put8(e, 0);
	if (point(e, PT_EXIT_IBL, 0, probe, RM_RAX | RM_RCX | RM_RDX) < 0)
		return -bte_nomem;
	put8(e, 0xcc);
	e->buf[hit1] = (uint8_t)(e->len - hit1 - 1);
	e->buf[hit2] = (uint8_t)(e->len - hit2 - 1);
	put(e, "\xff\x60\x08", 3);		/* jmp *8(%rax): its entry */
	return 0;
}

int rx_emit_entry(struct rx_emit *e)
{
	static const uint8_t regs[] = { R_AX, R_CX, R_DX };
	static const uint32_t slot[] = { TCB_RAX, TCB_RCX, TCB_RDX };
	int mask = RM_RAX | RM_RCX | RM_RDX, ret, i;

	ret = grow(e, RX_ENTRY_LEN);
	for (i = 0; i < 3 && ret == 0; i++) {
		ret = point(e, PT_SAFE, e->entry_orig, 0, mask);
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
