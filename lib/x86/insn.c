// SPDX-License-Identifier: MIT
/*
 * x86-64 instruction classification for the tracer and the decoders: what
 * a step over this instruction can do to the control flow (decoded by
 * x86/decode.h), and its text for users (capstone).
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
#include "x86/decode.h"

struct bt_disasm {
	csh cs;
	cs_insn *insn;	/* scratch for cs_disasm_iter */
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

/* The tracer's class of what x86/decode.h decoded. */
static int insn_class(const struct bt_x86_insn *in)
{
	static const uint8_t flows[] = {
		[BT_X86_SEQ] = BT_INSN_OTHER,	[BT_X86_COND] = BT_INSN_COND,
		[BT_X86_JUMP] = BT_INSN_JUMP,	[BT_X86_CALL] = BT_INSN_CALL,
		[BT_X86_RET] = BT_INSN_RET,	[BT_X86_IJUMP] = BT_INSN_IJUMP,
		[BT_X86_ICALL] = BT_INSN_ICALL,
		[BT_X86_SYSCALL] = BT_INSN_SYSCALL,
	};
	static const uint8_t traps[] = {
		[BT_X86_TRAP_OTHER] = BT_INSN_OTHER,
		[BT_X86_TRAP_SYSTEM] = BT_INSN_SYSCALL,
		[BT_X86_TRAP_INT3] = BT_INSN_INT3,
		[BT_X86_TRAP_FAR] = BT_INSN_FAR,
	};

	if (in->flow == BT_X86_TRAP)
		return in->trap < BT_ARRAY_SIZE(traps) ? traps[in->trap] :
							  BT_INSN_FAR;
	return in->flow < BT_ARRAY_SIZE(flows) ? flows[in->flow] : BT_INSN_FAR;
}

/*
 * Decoded by the instruction layer (Zydis), which knows every instruction
 * glibc uses: capstone 4 cannot decode many VEX and EVEX ones (kmovd,
 * AVX-512 compares into mask registers), and glibc's string functions are
 * full of them on CPUs with AVX-512.  capstone only formats (below).
 */
int bt_insn_decode(struct bt_disasm *dis, const uint8_t *code, size_t len,
		   uint64_t addr, struct bt_insn *insn)
{
	struct bt_x86_insn in;

	if (!dis || !code || !insn)
		return bt_fail(bte_invalid, 0, "bt_insn_decode(NULL)");
	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	if (bt_x86_decode(code, len, addr, &in) < 0)
		return bt_fail(bte_decode, 0, "no instruction at 0x%llx",
			       (unsigned long long)addr);
	insn->len = in.len;
	insn->iclass = (uint8_t)insn_class(&in);
	if (in.flow >= BT_X86_COND && in.flow <= BT_X86_CALL)
		insn->target = in.target;
	insn->rep = in.rep;
	insn->late_trap = in.late_trap;
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
