// SPDX-License-Identifier: MIT
/*
 * x86-64 instruction classification on top of capstone: what a step over
 * this instruction can do to the control flow.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btrace/branch.h"
#include "btrace/error.h"
#include "btrace/insn.h"
#include "internal.h"

struct bt_disasm {
	csh cs;
	cs_insn *insn;	/* scratch for cs_disasm_iter, with detail */
};

int bt_disasm_alloc(struct bt_disasm **out)
{
	struct bt_disasm *dis;

	if (!out)
		return bt_fail(bte_invalid, 0, "bt_disasm_alloc(NULL)");
	dis = calloc(1, sizeof(*dis));
	if (!dis)
		return bt_fail(bte_nomem, errno, "bt_disasm_alloc");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dis->cs) != CS_ERR_OK)
		goto err_free;
	if (cs_option(dis->cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		goto err_close;
	dis->insn = cs_malloc(dis->cs);
	if (!dis->insn)
		goto err_close;
	*out = dis;
	return 0;

err_close:
	cs_close(&dis->cs);
err_free:
	free(dis);
	return bt_fail(bte_internal, 0, "capstone cs_open");
}

void bt_disasm_free(struct bt_disasm *dis)
{
	if (!dis)
		return;
	cs_free(dis->insn, 1);
	cs_close(&dis->cs);
	free(dis);
}

static int insn_in_group(const cs_insn *insn, uint8_t group)
{
	const cs_detail *d = insn->detail;
	int i;

	for (i = 0; i < d->groups_count; i++)
		if (d->groups[i] == group)
			return 1;
	return 0;
}

/* The immediate target of a relative branch, or 0. */
static uint64_t insn_direct_target(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;

	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
		return (uint64_t)x->operands[0].imm;
	return 0;
}

static int insn_is_cond(unsigned int id)
{
	switch (id) {
	case X86_INS_JAE: case X86_INS_JA: case X86_INS_JBE: case X86_INS_JB:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
	case X86_INS_JE: case X86_INS_JGE: case X86_INS_JG: case X86_INS_JLE:
	case X86_INS_JL: case X86_INS_JNE: case X86_INS_JNO: case X86_INS_JNP:
	case X86_INS_JNS: case X86_INS_JO: case X86_INS_JP: case X86_INS_JS:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		return 1;
	default:
		return 0;
	}
}

static int insn_classify(const cs_insn *insn, uint64_t *target)
{
	unsigned int id = insn->id;
	int direct = insn_in_group(insn, X86_GRP_BRANCH_RELATIVE);

	*target = 0;
	if (insn_is_cond(id)) {
		*target = insn_direct_target(insn);
		return BT_INSN_COND;
	}
	switch (id) {
	case X86_INS_JMP:
		if (!direct)
			return BT_INSN_IJUMP;
		*target = insn_direct_target(insn);
		return BT_INSN_JUMP;
	case X86_INS_CALL:
		if (!direct)
			return BT_INSN_ICALL;
		*target = insn_direct_target(insn);
		return BT_INSN_CALL;
	case X86_INS_RET:
		return BT_INSN_RET;
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT:
	case X86_INS_INTO:
		return BT_INSN_SYSCALL;
	case X86_INS_INT3:
		return BT_INSN_INT3;
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_SYSRET: case X86_INS_SYSEXIT: case X86_INS_UD2:
	case X86_INS_INT1: case X86_INS_HLT:
		return BT_INSN_FAR;
	default:
		return BT_INSN_OTHER;
	}
}

/*
 * ins, outs, movs, cmps, stos, lods, scas: the only instructions where a
 * rep prefix repeats (elsewhere f2/f3 are mandatory SSE prefixes, bnd, or
 * the old "repz ret").
 */
static int insn_is_string(const cs_x86 *x)
{
	uint8_t op = x->opcode[0];

	if (x->opcode[1])
		return 0;
	return (op >= 0x6c && op <= 0x6f) || (op >= 0xa4 && op <= 0xa7) ||
	       (op >= 0xaa && op <= 0xaf);
}

/* Decode one instruction into the scratch; 0 or -bte_decode. */
static int disasm_one(struct bt_disasm *dis, const uint8_t *code, size_t len,
		      uint64_t addr)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t n = len;

	if (!cs_disasm_iter(dis->cs, &p, &n, &a, dis->insn))
		return bt_fail(bte_decode, 0, "no instruction at 0x%llx",
			       (unsigned long long)addr);
	return 0;
}

/*
 * The length of a VEX (C4, C5) or EVEX (62) encoded instruction, or 0 for
 * any other encoding.  In 64-bit mode those bytes always start VEX/EVEX
 * (LES, LDS and BOUND are gone), and no such instruction transfers control,
 * so the length is all a tracer needs.  capstone 4 cannot decode many of
 * them (kmovd, AVX-512 compares into mask registers), and glibc's string
 * functions are full of them on CPUs with AVX-512.
 *
 * After the prefix: opcode, ModRM (all but vzeroupper/vzeroall), SIB and
 * displacement as ModRM says, and an imm8 for map 0F3A and for the few 0F
 * opcodes that take one.
 */
static size_t vex_length(const uint8_t *code, size_t len)
{
	size_t i = 0, n;
	unsigned int map, op, modrm, mod, rm;
	int imm;

	while (i < len && i < 4 &&
	       (code[i] == 0x66 || code[i] == 0x67 || code[i] == 0xf2 ||
		code[i] == 0xf3 || code[i] == 0x2e || code[i] == 0x36 ||
		code[i] == 0x3e || code[i] == 0x26 || code[i] == 0x64 ||
		code[i] == 0x65))
		i++;
	if (i + 2 >= len)
		return 0;
	switch (code[i]) {
	case 0xc5:
		map = 1;
		n = i + 2;
		break;
	case 0xc4:
		map = code[i + 1] & 0x1f;
		n = i + 3;
		break;
	case 0x62:
		map = code[i + 1] & 0x7;
		n = i + 4;
		break;
	default:
		return 0;
	}
	if (n >= len)
		return 0;
	op = code[n++];
	if (map == 1 && op == 0x77)	/* vzeroupper, vzeroall */
		return n;
	if (n >= len)
		return 0;
	modrm = code[n++];
	mod = modrm >> 6;
	rm = modrm & 7;
	if (mod != 3 && rm == 4) {
		if (n >= len)
			return 0;
		if (mod == 0 && (code[n] & 7) == 5)
			n += 4;
		n++;
	} else if (mod == 0 && rm == 5) {
		n += 4;		/* rip-relative */
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2)
		n += 4;
	imm = map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) ||
					(op >= 0xc2 && op <= 0xc6)));
	n += imm;
	return n <= len && n <= BT_INSN_MAX_LEN ? n : 0;
}

int bt_insn_decode(struct bt_disasm *dis, const uint8_t *code, size_t len,
		   uint64_t addr, struct bt_insn *insn)
{
	const cs_x86 *x;
	int ret, i;

	if (!dis || !code || !insn)
		return bt_fail(bte_invalid, 0, "bt_insn_decode(NULL)");
	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->len = vex_length(code, len);
	if (insn->len)
		return 0;
	ret = disasm_one(dis, code, len, addr);
	if (ret < 0)
		return ret;
	insn->len = dis->insn->size;
	insn->iclass = insn_classify(dis->insn, &insn->target);
	insn->late_trap = dis->insn->id == X86_INS_CPUID;
	x = &dis->insn->detail->x86;
	if (insn_is_string(x))
		for (i = 0; i < 4; i++)
			if (x->prefix[i] == X86_PREFIX_REP ||
			    x->prefix[i] == X86_PREFIX_REPNE)
				insn->rep = 1;
	return 0;
}

int bt_insn_format(struct bt_disasm *dis, const uint8_t *code, size_t len,
		   uint64_t addr, char *buf, size_t size)
{
	const cs_insn *in;
	int ret;

	if (!dis || !code || !buf)
		return bt_fail(bte_invalid, 0, "bt_insn_format(NULL)");
	ret = disasm_one(dis, code, len, addr);
	if (ret < 0)
		return ret;
	in = dis->insn;
	if (in->op_str[0])
		snprintf(buf, size, "%s %s", in->mnemonic, in->op_str);
	else
		snprintf(buf, size, "%s", in->mnemonic);
	return in->size;
}

int bt_insn_branch_kind(int iclass)
{
	static const int kinds[] = {
		[BT_INSN_OTHER] = BT_BR_NONE,	 [BT_INSN_COND] = BT_BR_COND,
		[BT_INSN_JUMP] = BT_BR_JUMP,	 [BT_INSN_CALL] = BT_BR_CALL,
		[BT_INSN_RET] = BT_BR_RET,	 [BT_INSN_IJUMP] = BT_BR_IJUMP,
		[BT_INSN_ICALL] = BT_BR_ICALL,	 [BT_INSN_SYSCALL] = BT_BR_SYSCALL,
		[BT_INSN_INT3] = BT_BR_INTR,	 [BT_INSN_FAR] = BT_BR_IJUMP,
	};

	if (iclass < 0 || (size_t)iclass >= BT_ARRAY_SIZE(kinds))
		return BT_BR_NONE;
	return kinds[iclass];
}
