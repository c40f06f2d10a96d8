// SPDX-License-Identifier: MIT
/*
 * The instruction layer on top of Zydis.  See x86/decode.h.
 */
#include <string.h>
#include <Zydis/Zydis.h>

#include "btrace/error.h"
#include "internal.h"
#include "x86/decode.h"

/*
 * Instructions that cannot run anywhere but where they are, whatever
 * their category says: traps, far and privileged returns, transactions
 * (an abort goes back to xbegin's fallback), and the gs base's own, which
 * the recorder uses for its control block.
 */
static int is_trap(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_RDGSBASE: case ZYDIS_MNEMONIC_WRGSBASE:
	case ZYDIS_MNEMONIC_SWAPGS: case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSEXIT: case ZYDIS_MNEMONIC_SYSRET:
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT3:
	case ZYDIS_MNEMONIC_INTO: case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD:
	case ZYDIS_MNEMONIC_IRETQ: case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT: case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_ENCLU:
	case ZYDIS_MNEMONIC_UIRET:
		return 1;
	default:
		return 0;
	}
}

static int trap_of(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_SYSENTER:
		return BT_X86_TRAP_SYSTEM;
	case ZYDIS_MNEMONIC_INT3:
		return BT_X86_TRAP_INT3;
	case ZYDIS_MNEMONIC_RDGSBASE: case ZYDIS_MNEMONIC_WRGSBASE:
	case ZYDIS_MNEMONIC_SWAPGS: case ZYDIS_MNEMONIC_XBEGIN:
	case ZYDIS_MNEMONIC_XABORT: case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_ENCLU:
		return BT_X86_TRAP_OTHER;
	default:
		return BT_X86_TRAP_FAR;
	}
}

/* A near branch's flow by its category; direct: an immediate target. */
static int branch_flow(const ZydisDecodedInstruction *z, int direct)
{
	if (z->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ||
	    z->operand_width == 16)
		return BT_X86_TRAP;
	switch (z->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
		return direct ? BT_X86_COND : BT_X86_TRAP;
	case ZYDIS_CATEGORY_RET:
		return BT_X86_RET;
	case ZYDIS_CATEGORY_CALL:
		return direct ? BT_X86_CALL : BT_X86_ICALL;
	default:
		return direct ? BT_X86_JUMP : BT_X86_IJUMP;
	}
}

static int flow_of(const ZydisDecodedInstruction *z)
{
	int direct;

	if (z->mnemonic == ZYDIS_MNEMONIC_SYSCALL)
		return BT_X86_SYSCALL;
	if (is_trap(z->mnemonic))
		return BT_X86_TRAP;
	switch (z->meta.category) {
	case ZYDIS_CATEGORY_COND_BR:
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
	case ZYDIS_CATEGORY_RET:
		/* a relative immediate (ret's is not); the VEX-coded jumps
		 * on a mask of the Xeon Phi are no x86-64 branches */
		direct = z->raw.imm[0].is_relative &&
			 z->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY;
		return branch_flow(z, direct);
	case ZYDIS_CATEGORY_SYSCALL:
	case ZYDIS_CATEGORY_INTERRUPT:
		return BT_X86_TRAP;
	default:
		return BT_X86_SEQ;
	}
}

static int cond_of(const ZydisDecodedInstruction *z)
{
	switch (z->mnemonic) {
	case ZYDIS_MNEMONIC_LOOP: return BT_X86_CC_LOOP;
	case ZYDIS_MNEMONIC_LOOPE: return BT_X86_CC_LOOPE;
	case ZYDIS_MNEMONIC_LOOPNE: return BT_X86_CC_LOOPNE;
	case ZYDIS_MNEMONIC_JCXZ: case ZYDIS_MNEMONIC_JECXZ:
	case ZYDIS_MNEMONIC_JRCXZ: return BT_X86_CC_RCXZ;
	default: return z->opcode & 0x0f;	/* 7x, 0f 8x: tttn */
	}
}

/* Zydis register -> enum bt_x86_reg; *r32 set for eax..r15d, eip. */
static uint8_t reg_of(ZydisRegister reg, uint8_t *r32)
{
	ZydisRegisterClass c = ZydisRegisterGetClass(reg);

	*r32 = 0;
	if (reg == ZYDIS_REGISTER_NONE)
		return BT_X86_R_NONE;
	if (reg == ZYDIS_REGISTER_RIP || reg == ZYDIS_REGISTER_EIP) {
		*r32 = reg == ZYDIS_REGISTER_EIP;
		return BT_X86_R_RIP;
	}
	if (c != ZYDIS_REGCLASS_GPR64 && c != ZYDIS_REGCLASS_GPR32)
		return BT_X86_R_OTHER;
	*r32 = c == ZYDIS_REGCLASS_GPR32;
	return (uint8_t)(BT_X86_R_RAX + ZydisRegisterGetId(reg));
}

static uint8_t seg_of(ZydisRegister seg)
{
	if (seg == ZYDIS_REGISTER_FS)
		return 'f';
	if (seg == ZYDIS_REGISTER_GS)
		return 'g';
	return 0;	/* cs, ds, es, ss: base 0 in 64-bit mode */
}

static void rm_of(const ZydisDecodedOperand *op, struct bt_x86_rm *rm)
{
	uint8_t r32;

	rm->size = (uint8_t)(op->size / 8);
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		rm->base = reg_of(op->reg.value, &rm->base32);
		return;
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY) {
		rm->base = BT_X86_R_OTHER;	/* a far pointer */
		return;
	}
	rm->mem = 1;
	rm->base = reg_of(op->mem.base, &rm->base32);
	rm->index = reg_of(op->mem.index, &r32);
	rm->scale = op->mem.scale ? op->mem.scale : 1;
	rm->seg = seg_of(op->mem.segment);
	rm->disp = op->mem.disp.has_displacement ? op->mem.disp.value : 0;
}

/*
 * Does @z (decoded in Zydis's minimal mode, which decodes no operands)
 * need its operands decoded: an indirect branch's r/m, which only they
 * give.  A direct branch's target, a ret's immediate and a rip-relative
 * displacement are in the raw fields (raw_of).  (An instruction with a
 * gs prefix is decoded whole too: only the full decode says whether the
 * prefix applies to it.)
 */
static int needs_operands(const ZydisDecodedInstruction *z)
{
	switch (z->meta.category) {
	case ZYDIS_CATEGORY_UNCOND_BR:
	case ZYDIS_CATEGORY_CALL:
		return !z->raw.imm[0].is_relative;
	default:
		return 0;
	}
}

/* Has @z the prefix byte @v (the raw prefixes)? */
static int has_prefix(const ZydisDecodedInstruction *z, uint8_t v)
{
	uint8_t i;

	for (i = 0; i < z->raw.prefix_count; i++)
		if (z->raw.prefixes[i].value == v)
			return 1;
	return 0;
}

/*
 * A string instruction with a rep, repe or repne prefix (the attributes
 * that say so are the full decode's): set only where the prefix repeats.
 */
static int rep_of(const ZydisDecodedInstruction *z)
{
	if (z->meta.category != ZYDIS_CATEGORY_STRINGOP &&
	    z->meta.category != ZYDIS_CATEGORY_IOSTRINGOP &&
	    z->meta.category != ZYDIS_CATEGORY_PADLOCK)	/* rep xcrypt* */
		return 0;
	return has_prefix(z, 0xf2) || has_prefix(z, 0xf3);
}

/*
 * What the minimal decode leaves out, from the raw fields: the flow of a
 * branch without operands (direct: a relative immediate), a direct
 * target, a ret's immediate, the rip-relative displacement (ModRM mod 00
 * rm 101: in 64-bit mode, rip-relative; eip-relative under a 67 prefix,
 * which is not one).
 */
static void raw_of(const ZydisDecodedInstruction *z, struct bt_x86_insn *in)
{
	const int64_t next = (int64_t)(in->addr + z->length);

	if (z->raw.modrm.offset && z->raw.modrm.mod == 0 &&
	    z->raw.modrm.rm == 5 && z->raw.disp.size == 32 &&
	    z->address_width == 64) {
		in->rip_off = z->raw.disp.offset;
		in->rip_target = (uint64_t)(next + z->raw.disp.value);
	}
	switch (in->flow) {
	case BT_X86_COND:
		in->cond = (uint8_t)cond_of(z);
		/* fall through */
	case BT_X86_JUMP:
	case BT_X86_CALL:
		in->target = (uint64_t)(next + z->raw.imm[0].value.s);
		break;
	case BT_X86_RET:
		if (z->raw.imm[0].size)
			in->imm = (uint16_t)z->raw.imm[0].value.u;
		break;
	}
}

int bt_x86_decode(const uint8_t *code, size_t len, uint64_t addr,
		  struct bt_x86_insn *in)
{
	ZydisDecoder dec;
	ZydisDecoderContext ctx;
	ZydisDecodedInstruction z;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int full;

	if (!code || !in)
		return -bte_invalid;
	memset(in, 0, sizeof(*in));
	in->addr = addr;
	/* cheap (a few stores): no decoder state to keep or share */
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderEnableMode(&dec,
						 ZYDIS_DECODER_MODE_MINIMAL,
						 ZYAN_TRUE)))
		return bt_fail(bte_internal, 0, "ZydisDecoderInit");
	/*
	 * The minimal mode costs three quarters of a full decode (135
	 * against 180 ns an instruction over libc, python3 and node), and
	 * operands as much again: an instruction is decoded whole only where
	 * its operands are read (an indirect branch's r/m) or a gs prefix
	 * may apply (tests/unit/test_x86_full.c compares the two).
	 */
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, &ctx, code, len,
							&z)))
		return -bte_decode;
	full = needs_operands(&z) || has_prefix(&z, 0x65);
	if (full && (!ZYAN_SUCCESS(ZydisDecoderEnableMode(&dec,
					ZYDIS_DECODER_MODE_MINIMAL, ZYAN_FALSE)) ||
		     !ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&dec, &ctx,
					code, len, &z)) ||
		     !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(&dec, &ctx, &z,
					ops, z.operand_count))))
		return -bte_decode;
	in->len = z.length;
	in->flow = (uint8_t)flow_of(&z);
	in->modrm_off = z.raw.modrm.offset;
	in->addr32 = z.address_width == 32;
	in->osize16 = !!(z.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE);
	/* whether gs applies is the full decode's: decoded whole above */
	in->gs = full && !!(z.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS);
	if (in->flow == BT_X86_TRAP)
		in->trap = (uint8_t)trap_of(z.mnemonic);
	in->rep = rep_of(&z);
	in->late_trap = z.mnemonic == ZYDIS_MNEMONIC_CPUID;
	raw_of(&z, in);
	if (full && (in->flow == BT_X86_IJUMP || in->flow == BT_X86_ICALL) &&
	    z.operand_count)
		rm_of(&ops[0], &in->rm);
	return 0;
}
