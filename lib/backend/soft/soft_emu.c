// SPDX-License-Identifier: MIT
/*
 * Decision-branch emulation for the fast software backend: the outcome of
 * jcc, loop*, jrcxz, ret and jmp/call r/m from registers, flags and memory.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/error.h"
#include "internal.h"
#include "backend/soft/soft_emu.h"

#define EFL_CF (1u << 0)
#define EFL_PF (1u << 2)
#define EFL_ZF (1u << 6)
#define EFL_SF (1u << 7)
#define EFL_OF (1u << 11)

struct bt_emu {
	csh cs;
	cs_insn *insn;
};

int bt_emu_alloc(struct bt_emu **emu)
{
	struct bt_emu *e;

	*emu = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return bt_fail(bte_nomem, ENOMEM, "emulator");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &e->cs) != CS_ERR_OK) {
		free(e);
		return bt_fail(bte_internal, 0, "cs_open");
	}
	cs_option(e->cs, CS_OPT_DETAIL, CS_OPT_ON);
	e->insn = cs_malloc(e->cs);
	if (!e->insn) {
		cs_close(&e->cs);
		free(e);
		return bt_fail(bte_nomem, ENOMEM, "cs_malloc");
	}
	*emu = e;
	return 0;
}

void bt_emu_free(struct bt_emu *emu)
{
	if (!emu)
		return;
	cs_free(emu->insn, 1);
	cs_close(&emu->cs);
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

/* Capstone register -> enum bt_emu_reg; *wide32 set for eax..r15d, eip. */
static int emu_reg(x86_reg reg, int *wide32)
{
	static const x86_reg r64[] = {
		X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX,
		X86_REG_RSP, X86_REG_RBP, X86_REG_RSI, X86_REG_RDI,
		X86_REG_R8, X86_REG_R9, X86_REG_R10, X86_REG_R11,
		X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15,
		X86_REG_RIP,
	};
	static const x86_reg r32[] = {
		X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX,
		X86_REG_ESP, X86_REG_EBP, X86_REG_ESI, X86_REG_EDI,
		X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
		X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D,
		X86_REG_EIP,
	};
	size_t i;

	*wide32 = 0;
	if (reg == X86_REG_INVALID)
		return BT_EMU_R_NONE;
	for (i = 0; i < BT_ARRAY_SIZE(r64); i++) {
		if (reg == r64[i])
			return (int)i + 1;
		if (reg == r32[i]) {
			*wide32 = 1;
			return (int)i + 1;
		}
	}
	return -1;
}

static int emu_cc(unsigned int id)
{
	switch (id) {
	case X86_INS_JO: return 0;
	case X86_INS_JNO: return 1;
	case X86_INS_JB: return 2;
	case X86_INS_JAE: return 3;
	case X86_INS_JE: return 4;
	case X86_INS_JNE: return 5;
	case X86_INS_JBE: return 6;
	case X86_INS_JA: return 7;
	case X86_INS_JS: return 8;
	case X86_INS_JNS: return 9;
	case X86_INS_JP: return 10;
	case X86_INS_JNP: return 11;
	case X86_INS_JL: return 12;
	case X86_INS_JGE: return 13;
	case X86_INS_JLE: return 14;
	case X86_INS_JG: return 15;
	default: return -1;
	}
}

/* The r/m operand of jmp/call r/m64. */
static int emu_decode_rm(const cs_x86 *x, struct bt_emu_insn *ei)
{
	const cs_x86_op *op = &x->operands[0];
	int w32 = 0, w32i = 0, base, index;

	if (x->op_count != 1 || op->size != 8 || x->prefix[2])
		return -bte_nosys;
	if (op->type == X86_OP_REG) {
		base = emu_reg(op->reg, &w32);
		if (base <= 0 || w32)
			return -bte_nosys;
		ei->reg = (uint8_t)base;
		return 0;
	}
	if (op->type != X86_OP_MEM)
		return -bte_nosys;
	base = emu_reg(op->mem.base, &w32);
	index = emu_reg(op->mem.index, &w32i);
	if (base < 0 || index < 0 || index == BT_EMU_R_RIP)
		return -bte_nosys;
	switch (op->mem.segment) {
	case X86_REG_INVALID: case X86_REG_DS: case X86_REG_ES:
	case X86_REG_SS: case X86_REG_CS:
		break;		/* base 0 in 64-bit mode */
	case X86_REG_FS: ei->seg = 'f'; break;
	case X86_REG_GS: ei->seg = 'g'; break;
	default: return -bte_nosys;
	}
	ei->mem = 1;
	ei->reg = (uint8_t)base;
	ei->index = (uint8_t)index;
	ei->scale = (uint8_t)(op->mem.scale ? op->mem.scale : 1);
	ei->disp = op->mem.disp;
	ei->addr32 = x->addr_size == 4;
	return 0;
}

static int emu_classify(const cs_insn *in, struct bt_emu_insn *ei)
{
	const cs_x86 *x = &in->detail->x86;
	int cc;

	switch (in->id) {
	case X86_INS_LOOP: ei->op = BT_EMU_LOOP; break;
	case X86_INS_LOOPE: ei->op = BT_EMU_LOOPE; break;
	case X86_INS_LOOPNE: ei->op = BT_EMU_LOOPNE; break;
	case X86_INS_JRCXZ: ei->op = BT_EMU_JRCXZ; break;
	case X86_INS_JECXZ: ei->op = BT_EMU_JRCXZ; ei->addr32 = 1; break;
	case X86_INS_RET:
		if (x->prefix[2])
			return -bte_nosys;	/* 16-bit return */
		ei->op = BT_EMU_RET;
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
			ei->imm = (uint16_t)x->operands[0].imm;
		return 0;
	case X86_INS_JMP:
	case X86_INS_CALL:
		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			ei->op = in->id == X86_INS_JMP ? BT_EMU_JMP : BT_EMU_CALL;
			break;
		}
		ei->op = in->id == X86_INS_JMP ? BT_EMU_JMP_RM : BT_EMU_CALL_RM;
		return emu_decode_rm(x, ei);
	default:
		cc = emu_cc(in->id);
		if (cc < 0)
			return -bte_nosys;
		ei->op = BT_EMU_JCC;
		ei->cc = (uint8_t)cc;
		break;
	}
	/* loop family: a 16-bit operand size would truncate rip */
	if (x->prefix[2] || x->op_count != 1 || x->operands[0].type != X86_OP_IMM)
		return -bte_nosys;
	if ((ei->op == BT_EMU_LOOP || ei->op == BT_EMU_LOOPE ||
	     ei->op == BT_EMU_LOOPNE) && x->addr_size != 8)
		return -bte_nosys;	/* loop on ecx: leave it to the CPU */
	ei->target = (uint64_t)x->operands[0].imm;
	return 0;
}

int bt_emu_decode(struct bt_emu *emu, const uint8_t *code, size_t len,
		  uint64_t addr, struct bt_emu_insn *ei)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t n = len;
	int ret;

	memset(ei, 0, sizeof(*ei));
	if (!emu || !code)
		return -bte_invalid;
	if (!cs_disasm_iter(emu->cs, &p, &n, &a, emu->insn))
		return -bte_decode;
	ei->addr = addr;
	ei->len = (uint8_t)emu->insn->size;
	ret = emu_classify(emu->insn, ei);
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
