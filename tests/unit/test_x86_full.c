// SPDX-License-Identifier: MIT
/*
 * bt_x86_decode() decodes in Zydis's minimal mode and takes what that
 * mode leaves out (a direct target, a rip-relative displacement, rep,
 * gs) from the raw fields.  Checked here, instruction for instruction,
 * against the same facts read from Zydis's full decode with operands,
 * as the decoder read them before: over libc's code as this process maps
 * it, this program's own, and 4 MiB of pseudo-random bytes (prefixes,
 * VEX, far and odd forms that compilers never emit).
 */
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <Zydis/Zydis.h>

#include "btrace/error.h"
#include "x86/decode.h"

/* ---- the reference: Zydis's full decode, operands read ---------------- */

/* What never runs moved: traps, far and privileged returns, transactions,
 * the gs base's own instructions. */
static const ZydisMnemonic traps[] = {
	ZYDIS_MNEMONIC_RDGSBASE, ZYDIS_MNEMONIC_WRGSBASE, ZYDIS_MNEMONIC_SWAPGS,
	ZYDIS_MNEMONIC_SYSENTER, ZYDIS_MNEMONIC_SYSEXIT, ZYDIS_MNEMONIC_SYSRET,
	ZYDIS_MNEMONIC_INT, ZYDIS_MNEMONIC_INT3, ZYDIS_MNEMONIC_INTO,
	ZYDIS_MNEMONIC_INT1, ZYDIS_MNEMONIC_IRET, ZYDIS_MNEMONIC_IRETD,
	ZYDIS_MNEMONIC_IRETQ, ZYDIS_MNEMONIC_UD0, ZYDIS_MNEMONIC_UD1,
	ZYDIS_MNEMONIC_UD2, ZYDIS_MNEMONIC_HLT, ZYDIS_MNEMONIC_XBEGIN,
	ZYDIS_MNEMONIC_XABORT, ZYDIS_MNEMONIC_ENCLU, ZYDIS_MNEMONIC_UIRET,
};

/* A branch's flow by its category, with an immediate operand or not. */
static const struct {
	ZydisInstructionCategory category;
	uint8_t direct, indirect;
} flows[] = {
	{ ZYDIS_CATEGORY_COND_BR, BT_X86_COND, BT_X86_TRAP },
	{ ZYDIS_CATEGORY_UNCOND_BR, BT_X86_JUMP, BT_X86_IJUMP },
	{ ZYDIS_CATEGORY_CALL, BT_X86_CALL, BT_X86_ICALL },
	{ ZYDIS_CATEGORY_RET, BT_X86_RET, BT_X86_RET },
};

static int ref_flow(const ZydisDecodedInstruction *z,
		    const ZydisDecodedOperand *ops)
{
	size_t i;
	int direct;

	if (z->mnemonic == ZYDIS_MNEMONIC_SYSCALL)
		return BT_X86_SYSCALL;
	for (i = 0; i < sizeof(traps) / sizeof(traps[0]); i++)
		if (z->mnemonic == traps[i])
			return BT_X86_TRAP;
	direct = z->operand_count_visible > 0 &&
		 ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE;
	for (i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		if (flows[i].category != z->meta.category)
			continue;
		if (z->meta.branch_type == ZYDIS_BRANCH_TYPE_FAR ||
		    z->operand_width == 16)
			return BT_X86_TRAP;
		return direct ? flows[i].direct : flows[i].indirect;
	}
	if (z->meta.category == ZYDIS_CATEGORY_SYSCALL ||
	    z->meta.category == ZYDIS_CATEGORY_INTERRUPT)
		return BT_X86_TRAP;
	return BT_X86_SEQ;
}

struct ref {
	int ok;
	uint8_t len, flow, rip_off, rep, gs, mem_base, modrm_off, addr32,
		osize16;
	uint64_t target, rip_target;
	uint16_t imm;
};

static struct ref ref_decode(const uint8_t *code, size_t len, uint64_t addr)
{
	ZydisDecoder dec;
	ZydisDecodedInstruction z;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	struct ref r = { 0 };
	uint8_t i;

	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, code, len, &z, ops)))
		return r;
	r.ok = 1;
	r.len = z.length;
	r.flow = (uint8_t)ref_flow(&z, ops);
	r.gs = !!(z.attributes & ZYDIS_ATTRIB_HAS_SEGMENT_GS);
	r.modrm_off = z.raw.modrm.offset;
	r.addr32 = z.address_width == 32;
	r.osize16 = !!(z.attributes & ZYDIS_ATTRIB_HAS_OPERANDSIZE);
	r.rep = !!(z.attributes & (ZYDIS_ATTRIB_HAS_REP |
				   ZYDIS_ATTRIB_HAS_REPE |
				   ZYDIS_ATTRIB_HAS_REPNE));
	for (i = 0; i < z.operand_count; i++)
		if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY &&
		    ops[i].mem.base == ZYDIS_REGISTER_RIP &&
		    z.raw.disp.size == 32) {
			r.rip_off = z.raw.disp.offset;
			r.rip_target = addr + z.length +
				       (uint64_t)z.raw.disp.value;
		}
	switch (r.flow) {
	case BT_X86_COND:
	case BT_X86_JUMP:
	case BT_X86_CALL:
		ZydisCalcAbsoluteAddress(&z, &ops[0], addr, &r.target);
		break;
	case BT_X86_RET:
		if (z.operand_count_visible &&
		    ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE)
			r.imm = (uint16_t)ops[0].imm.value.u;
		break;
	case BT_X86_IJUMP:
	case BT_X86_ICALL:
		r.mem_base = ops[0].type == ZYDIS_OPERAND_TYPE_MEMORY;
		break;
	}
	return r;
}

/* ---- the comparison --------------------------------------------------- */

/* Decode @n bytes at @code (claimed at @addr) both ways; mismatches. */
static size_t compare(const uint8_t *code, size_t n, uint64_t addr,
		      size_t *count)
{
	size_t off = 0, bad = 0;

	while (off < n) {
		size_t len = n - off < 15 ? n - off : 15;
		struct ref r = ref_decode(code + off, len, addr + off);
		struct bt_x86_insn in;
		int ret = bt_x86_decode(code + off, len, addr + off, &in);
		int same;

		(*count)++;
		if (!r.ok) {
			bad += ret != -bte_decode;
			off++;
			continue;
		}
		same = ret == 0 && in.len == r.len && in.gs == r.gs &&
		       in.rep == r.rep && in.rip_off == r.rip_off &&
		       in.rip_target == r.rip_target && in.flow == r.flow &&
		       in.target == r.target && in.modrm_off == r.modrm_off &&
		       in.addr32 == r.addr32 && in.osize16 == r.osize16 &&
		       in.imm == r.imm &&
		       ((in.flow != BT_X86_IJUMP && in.flow != BT_X86_ICALL) ||
			in.rm.mem == r.mem_base);
		if (!same && bad++ < 5) {
			size_t i;

			print_message("differs at +%zx:", off);
			for (i = 0; i < r.len; i++)
				print_message(" %02x", code[off + i]);
			print_message(" (flow %d/%d len %d/%d)\n", in.flow,
				      r.flow, in.len, r.len);
		}
		off += r.len;
	}
	return bad;
}

struct text {
	const char *name;
	const uint8_t *at;
	size_t len;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text *t = arg;
	int i;

	(void)size;
	if (t->name[0] ? !strstr(info->dlpi_name, t->name) : info->dlpi_name[0])
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			t->at = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
			t->len = ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void agrees_on(const char *name)
{
	struct text t = { name, NULL, 0 };
	size_t count = 0;

	dl_iterate_phdr(find_text, &t);
	assert_non_null(t.at);
	assert_int_equal(compare(t.at, t.len, (uint64_t)(uintptr_t)t.at,
				 &count), 0);
	print_message("%s: %zu instructions agree\n",
		      name[0] ? name : "this program", count);
	assert_true(count > 1000);
}

static void decode_agrees_libc(void **state)
{
	(void)state;
	agrees_on("libc.so");
}

static void decode_agrees_self(void **state)
{
	(void)state;
	agrees_on("");
}

static void decode_agrees_random(void **state)
{
	size_t n = 4u << 20, count = 0, i;
	uint8_t *buf = malloc(n);
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_non_null(buf);
	for (i = 0; i < n; i++) {	/* xorshift64 */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
	assert_int_equal(compare(buf, n, 0x400000, &count), 0);
	print_message("random bytes: %zu instructions agree\n", count);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_agrees_libc),
		cmocka_unit_test(decode_agrees_self),
		cmocka_unit_test(decode_agrees_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
