// SPDX-License-Identifier: MIT
/*
 * Decision-branch emulation for the fast software backend: the outcome of
 * jcc, loop*, jrcxz, ret and jmp/call r/m from registers, flags and memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/soft/soft_emu.h"
#include "x86/decode.h"

#define EFL_CF (1u << 0)
#define EFL_PF (1u << 2)
#define EFL_ZF (1u << 6)
#define EFL_SF (1u << 7)
#define EFL_OF (1u << 11)

_Static_assert((int)BT_EMU_R_RAX == (int)BT_X86_R_RAX &&
	       (int)BT_EMU_R_R15 == (int)BT_X86_R_R15 &&
	       (int)BT_EMU_R_RIP == (int)BT_X86_R_RIP,
	       "bt_emu_reg numbers registers as bt_x86_reg does");

/* The decoder keeps no state (x86/decode.h): the handle only says so. */
struct bt_emu {
	int unused;
};

int bt_emu_alloc(struct bt_emu **emu)
{
	*emu = calloc(1, sizeof(**emu));
	if (!*emu)
		return bt_fail(bte_nomem, ENOMEM, "emulator");
	return 0;
}

void bt_emu_free(struct bt_emu *emu)
{
	free(emu);
}

int bt_emu_cond(unsigned int cc, uint64_t f)
{
	int cf = !!(f & EFL_CF), zf = !!(f & EFL_ZF), sf = !!(f & EFL_SF);
	int of = !!(f & EFL_OF), pf = !!(f & EFL_PF);
	int r;

	switch (cc >> 1) {
	case 0: r = of; break;			/* o */
	case 1: r = cf; break;			/* b */
	case 2: r = zf; break;			/* e */
	case 3: r = cf || zf; break;		/* be */
	case 4: r = sf; break;			/* s */
	case 5: r = pf; break;			/* p */
	case 6: r = sf != of; break;		/* l */
	default: r = zf || sf != of; break;	/* le */
	}
	return (cc & 1) ? !r : r;
}

uint64_t bt_emu_reg_get(const struct user_regs_struct *r, int reg)
{
	switch (reg) {
	case BT_EMU_R_RAX: return r->rax;
	case BT_EMU_R_RCX: return r->rcx;
	case BT_EMU_R_RDX: return r->rdx;
	case BT_EMU_R_RBX: return r->rbx;
	case BT_EMU_R_RSP: return r->rsp;
	case BT_EMU_R_RBP: return r->rbp;
	case BT_EMU_R_RSI: return r->rsi;
	case BT_EMU_R_RDI: return r->rdi;
	case BT_EMU_R_R8: return r->r8;
	case BT_EMU_R_R9: return r->r9;
	case BT_EMU_R_R10: return r->r10;
	case BT_EMU_R_R11: return r->r11;
	case BT_EMU_R_R12: return r->r12;
	case BT_EMU_R_R13: return r->r13;
	case BT_EMU_R_R14: return r->r14;
	case BT_EMU_R_R15: return r->r15;
	case BT_EMU_R_RIP: return r->rip;
	default: return 0;
	}
}

/* The r/m operand of jmp/call r/m64: a 64-bit register or memory. */
static int emu_decode_rm(const struct bt_x86_insn *in, struct bt_emu_insn *ei)
{
	const struct bt_x86_rm *rm = &in->rm;

	if (rm->size != 8 || in->osize16)
		return -bte_nosys;
	if (!rm->mem) {
		if (rm->base == BT_X86_R_NONE || rm->base >= BT_X86_R_RIP ||
		    rm->base32)
			return -bte_nosys;
		ei->reg = rm->base;
		return 0;
	}
	if (rm->base == BT_X86_R_OTHER || rm->index >= BT_X86_R_RIP)
		return -bte_nosys;
	ei->mem = 1;
	ei->reg = rm->base;
	ei->index = rm->index;
	ei->scale = rm->scale;
	ei->seg = rm->seg;
	ei->disp = rm->disp;
	ei->addr32 = in->addr32;
	return 0;
}

/* jcc, loop*, jrcxz. */
static int emu_cond_of(const struct bt_x86_insn *in, struct bt_emu_insn *ei)
{
	static const uint8_t ops[] = {
		[BT_X86_CC_LOOP - BT_X86_CC_LOOP] = BT_EMU_LOOP,
		[BT_X86_CC_LOOPE - BT_X86_CC_LOOP] = BT_EMU_LOOPE,
		[BT_X86_CC_LOOPNE - BT_X86_CC_LOOP] = BT_EMU_LOOPNE,
		[BT_X86_CC_RCXZ - BT_X86_CC_LOOP] = BT_EMU_JRCXZ,
	};

	if (in->cond < BT_X86_CC_LOOP) {
		ei->op = BT_EMU_JCC;
		ei->cc = in->cond;
		return 0;
	}
	ei->op = ops[in->cond - BT_X86_CC_LOOP];
	if (ei->op == BT_EMU_JRCXZ)
		ei->addr32 = in->addr32;	/* jecxz */
	else if (in->addr32)
		return -bte_nosys;	/* loop on ecx: leave it to the CPU */
	return 0;
}

static int emu_classify(const struct bt_x86_insn *in, struct bt_emu_insn *ei)
{
	/* a 16-bit operand size would truncate rip (and pop 2 bytes) */
	if (in->osize16)
		return -bte_nosys;
	ei->target = in->target;
	switch (in->flow) {
	case BT_X86_COND:
		return emu_cond_of(in, ei);
	case BT_X86_RET:
		ei->op = BT_EMU_RET;
		ei->imm = in->imm;
		return 0;
	case BT_X86_JUMP:
		ei->op = BT_EMU_JMP;
		return 0;
	case BT_X86_CALL:
		ei->op = BT_EMU_CALL;
		return 0;
	case BT_X86_IJUMP:
		ei->op = BT_EMU_JMP_RM;
		return emu_decode_rm(in, ei);
	case BT_X86_ICALL:
		ei->op = BT_EMU_CALL_RM;
		return emu_decode_rm(in, ei);
	default:
		return -bte_nosys;
	}
}

int bt_emu_decode(struct bt_emu *emu, const uint8_t *code, size_t len,
		  uint64_t addr, struct bt_emu_insn *ei)
{
	struct bt_x86_insn in;
	int ret;

	memset(ei, 0, sizeof(*ei));
	if (!emu || !code)
		return -bte_invalid;
	if (bt_x86_decode(code, len, addr, &in) < 0)
		return -bte_decode;
	ei->addr = addr;
	ei->len = in.len;
	ret = emu_classify(&in, ei);
	if (ret < 0)
		ei->op = BT_EMU_NONE;
	return ret;
}

static int emu_seg_base(const struct bt_emu_insn *ei,
			const struct user_regs_struct *r, uint64_t *base)
{
	*base = 0;
	if (ei->seg == 'f')
		*base = r->fs_base;
	else if (ei->seg == 'g')
		*base = r->gs_base;
	return 0;
}

/* The address of the memory operand, as the CPU computes it. */
static uint64_t emu_ea(const struct bt_emu_insn *ei,
		       const struct user_regs_struct *r)
{
	uint64_t ea = (uint64_t)ei->disp, seg;

	if (ei->reg == BT_EMU_R_RIP)
		ea += ei->addr + ei->len;
	else if (ei->reg)
		ea += bt_emu_reg_get(r, ei->reg);
	if (ei->index)
		ea += bt_emu_reg_get(r, ei->index) * ei->scale;
	if (ei->addr32)
		ea = (uint32_t)ea;
	emu_seg_base(ei, r, &seg);
	return ea + seg;
}

static int emu_read64(bt_emu_read_fn read, void *ctx, uint64_t addr,
		      uint64_t *val)
{
	if (!read || read(ctx, addr, val, sizeof(*val)) < 0)
		return -bte_io;
	return 0;
}

static int emu_rm(const struct bt_emu_insn *ei,
		  const struct user_regs_struct *r, bt_emu_read_fn read,
		  void *ctx, uint64_t *target)
{
	if (!ei->mem) {
		*target = bt_emu_reg_get(r, ei->reg);
		return 0;
	}
	return emu_read64(read, ctx, emu_ea(ei, r), target);
}

static int emu_loop(const struct bt_emu_insn *ei, struct user_regs_struct *r)
{
	uint64_t rcx = r->rcx - 1;
	int zf = !!(r->eflags & EFL_ZF), taken = rcx != 0;

	if (ei->op == BT_EMU_LOOPE)
		taken = taken && zf;
	else if (ei->op == BT_EMU_LOOPNE)
		taken = taken && !zf;
	r->rcx = rcx;
	return taken;
}

int bt_emu_eval(const struct bt_emu_insn *ei, struct user_regs_struct *regs,
		bt_emu_read_fn read, void *ctx, struct bt_emu_result *res)
{
	uint64_t fall = ei->addr + ei->len, target = 0, rsp = regs->rsp;
	int ret;

	memset(res, 0, sizeof(*res));
	switch (ei->op) {
	case BT_EMU_JCC:
		res->taken = bt_emu_cond(ei->cc, regs->eflags);
		break;
	case BT_EMU_LOOP: case BT_EMU_LOOPE: case BT_EMU_LOOPNE:
		res->taken = emu_loop(ei, regs);
		break;
	case BT_EMU_JRCXZ:
		res->taken = ei->addr32 ? (uint32_t)regs->rcx == 0 : regs->rcx == 0;
		break;
	case BT_EMU_RET:
		ret = emu_read64(read, ctx, rsp, &target);
		if (ret < 0)
			return ret;
		regs->rsp = rsp + 8 + ei->imm;
		res->taken = 1;
		res->next = target;
		regs->rip = target;
		return 0;
	case BT_EMU_JMP: case BT_EMU_CALL:
	case BT_EMU_JMP_RM: case BT_EMU_CALL_RM:
		target = ei->target;
		if (ei->op == BT_EMU_JMP_RM || ei->op == BT_EMU_CALL_RM) {
			ret = emu_rm(ei, regs, read, ctx, &target);
			if (ret < 0)
				return ret;
		}
		if (ei->op == BT_EMU_CALL_RM || ei->op == BT_EMU_CALL) {
			regs->rsp = rsp - 8;
			res->push = 1;
			res->push_value = fall;
		}
		res->taken = 1;
		res->next = target;
		regs->rip = target;
		return 0;
	default:
		return -bte_nosys;
	}
	res->next = res->taken ? ei->target : fall;
	regs->rip = res->next;
	return 0;
}
