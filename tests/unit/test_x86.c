// SPDX-License-Identifier: MIT
/*
 * The instruction layer (x86/decode.h) and the relocator (x86/reloc.h),
 * checked against hand-assembled x86-64 encodings (Intel SDM opcode
 * tables), including AVX-512 ones that capstone 4 cannot decode.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "btrace/error.h"
#include "x86/decode.h"
#include "x86/reloc.h"

#define ADDR 0x401000ull

struct flow_case {
	const char *name;
	uint8_t code[15];
	uint8_t len;
	int flow;
	int64_t rel;		/* direct target - (ADDR + len), if any */
};

static const struct flow_case flows[] = {
	{ "nop", { 0x90 }, 1, BT_X86_SEQ, 0 },
	{ "mov rax, rbx", { 0x48, 0x89, 0xd8 }, 3, BT_X86_SEQ, 0 },
	{ "cpuid", { 0x0f, 0xa2 }, 2, BT_X86_SEQ, 0 },
	{ "kmovd eax, k1", { 0xc5, 0xfb, 0x93, 0xc1 }, 4, BT_X86_SEQ, 0 },
	{ "vpcmpeqb k1, zmm0, [rdi]", { 0x62, 0xf1, 0x7d, 0x48, 0x74, 0x0f },
	  6, BT_X86_SEQ, 0 },
	{ "je rel8", { 0x74, 0x10 }, 2, BT_X86_COND, 0x10 },
	{ "jne rel32", { 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00 }, 6, BT_X86_COND,
	  0x100 },
	{ "loop", { 0xe2, 0xfe }, 2, BT_X86_COND, -2 },
	{ "jmp rel8", { 0xeb, 0x10 }, 2, BT_X86_JUMP, 0x10 },
	{ "bnd jmp", { 0xf2, 0xe9, 0, 0, 0, 0 }, 6, BT_X86_JUMP, 0 },
	{ "call rel32", { 0xe8, 0xf0, 0xff, 0xff, 0xff }, 5, BT_X86_CALL,
	  -0x10 },
	{ "ret", { 0xc3 }, 1, BT_X86_RET, 0 },
	{ "repz ret", { 0xf3, 0xc3 }, 2, BT_X86_RET, 0 },
	{ "jmp rax", { 0xff, 0xe0 }, 2, BT_X86_IJUMP, 0 },
	{ "notrack jmp rax", { 0x3e, 0xff, 0xe0 }, 3, BT_X86_IJUMP, 0 },
	{ "call [rbx+8]", { 0xff, 0x53, 0x08 }, 3, BT_X86_ICALL, 0 },
	{ "syscall", { 0x0f, 0x05 }, 2, BT_X86_SYSCALL, 0 },
	{ "int3", { 0xcc }, 1, BT_X86_TRAP, 0 },
	{ "int 0x80", { 0xcd, 0x80 }, 2, BT_X86_TRAP, 0 },
	{ "ud2", { 0x0f, 0x0b }, 2, BT_X86_TRAP, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, BT_X86_TRAP, 0 },
	{ "hlt", { 0xf4 }, 1, BT_X86_TRAP, 0 },
	{ "xabort", { 0xc6, 0xf8, 0x01 }, 3, BT_X86_TRAP, 0 },
	{ "xbegin", { 0xc7, 0xf8, 0, 0, 0, 0 }, 6, BT_X86_TRAP, 0 },
	{ "ljmp [rsp]", { 0xff, 0x2c, 0x24 }, 3, BT_X86_TRAP, 0 },
	{ "sysenter", { 0x0f, 0x34 }, 2, BT_X86_TRAP, 0 },
};

static void decode_flow(void **state)
{
	struct bt_x86_insn in;
	size_t i;

	for (i = 0; i < sizeof(flows) / sizeof(flows[0]); i++) {
		const struct flow_case *c = &flows[i];

		if (bt_x86_decode(c->code, sizeof(c->code), ADDR, &in) < 0)
			fail_msg("%s does not decode", c->name);
		if (in.len != c->len || in.flow != c->flow)
			fail_msg("%s: len %u flow %u", c->name, in.len,
				 in.flow);
		if (c->flow >= BT_X86_COND && c->flow <= BT_X86_CALL &&
		    in.target != ADDR + c->len + (uint64_t)c->rel)
			fail_msg("%s: target 0x%llx", c->name,
				 (unsigned long long)in.target);
	}
}

static void decode_cond(void **state)
{
	static const uint8_t jne[] = { 0x75, 0x00 }, jg[] = { 0x0f, 0x8f, 0, 0,
							       0, 0 };
	static const uint8_t loope[] = { 0xe1, 0 }, jecxz[] = { 0x67, 0xe3, 0 };
	struct bt_x86_insn in;

	assert_int_equal(bt_x86_decode(jne, sizeof(jne), ADDR, &in), 0);
	assert_int_equal(in.cond, 5);
	assert_int_equal(bt_x86_decode(jg, sizeof(jg), ADDR, &in), 0);
	assert_int_equal(in.cond, 15);
	assert_int_equal(bt_x86_decode(loope, sizeof(loope), ADDR, &in), 0);
	assert_int_equal(in.cond, BT_X86_CC_LOOPE);
	assert_int_equal(bt_x86_decode(jecxz, sizeof(jecxz), ADDR, &in), 0);
	assert_int_equal(in.cond, BT_X86_CC_RCXZ);
	assert_true(in.addr32);
}

static void decode_operands(void **state)
{
	static const uint8_t sib[] = { 0xff, 0x64, 0x98, 0x08 };
	static const uint8_t rip[] = { 0xff, 0x15, 0x10, 0, 0, 0 };
	static const uint8_t fs[] = { 0x64, 0xff, 0x14, 0x25, 0x28, 0, 0, 0 };
	static const uint8_t reti[] = { 0xc2, 0x10, 0x00 };
	struct bt_x86_insn in;

	/* jmp *8(%rax,%rbx,4) */
	assert_int_equal(bt_x86_decode(sib, sizeof(sib), ADDR, &in), 0);
	assert_true(in.rm.mem);
	assert_int_equal(in.rm.base, BT_X86_R_RAX);
	assert_int_equal(in.rm.index, BT_X86_R_RBX);
	assert_int_equal(in.rm.scale, 4);
	assert_int_equal(in.rm.disp, 8);
	assert_int_equal(in.rm.size, 8);
	assert_int_equal(in.rip_off, 0);
	/* call *0x10(%rip) */
	assert_int_equal(bt_x86_decode(rip, sizeof(rip), ADDR, &in), 0);
	assert_int_equal(in.flow, BT_X86_ICALL);
	assert_int_equal(in.rm.base, BT_X86_R_RIP);
	assert_int_equal(in.rip_off, 2);
	assert_int_equal(in.rip_target, ADDR + 6 + 0x10);
	/* call *%fs:0x28 */
	assert_int_equal(bt_x86_decode(fs, sizeof(fs), ADDR, &in), 0);
	assert_int_equal(in.rm.seg, 'f');
	assert_int_equal(in.rm.base, BT_X86_R_NONE);
	assert_int_equal(in.rm.disp, 0x28);
	assert_int_equal(bt_x86_decode(reti, sizeof(reti), ADDR, &in), 0);
	assert_int_equal(in.imm, 0x10);
}

static void decode_gs(void **state)
{
	/* mov %gs:0,%rax: the recorder's control block is at the gs base */
	static const uint8_t gs[] = { 0x65, 0x48, 0x8b, 0x04, 0x25,
				      0, 0, 0, 0 };
	struct bt_x86_insn in;

	assert_int_equal(bt_x86_decode(gs, sizeof(gs), ADDR, &in), 0);
	assert_int_equal(in.flow, BT_X86_SEQ);
	assert_true(in.gs);
}

/* What a trap does, string instructions, cpuid. */
static void decode_kinds(void **state)
{
	static const struct {
		const char *name;
		uint8_t code[8];
		int trap;
	} traps[] = {
		{ "int 0x80", { 0xcd, 0x80 }, BT_X86_TRAP_SYSTEM },
		{ "sysenter", { 0x0f, 0x34 }, BT_X86_TRAP_SYSTEM },
		{ "int3", { 0xcc }, BT_X86_TRAP_INT3 },
		{ "ud2", { 0x0f, 0x0b }, BT_X86_TRAP_FAR },
		{ "iretq", { 0x48, 0xcf }, BT_X86_TRAP_FAR },
		{ "lret", { 0xcb }, BT_X86_TRAP_FAR },
		{ "xbegin", { 0xc7, 0xf8, 0, 0, 0, 0 }, BT_X86_TRAP_OTHER },
	};
	static const uint8_t movs[] = { 0xf3, 0xa4 }, repret[] = { 0xf3, 0xc3 };
	static const uint8_t cpuid[] = { 0x0f, 0xa2 };
	struct bt_x86_insn in;
	size_t i;

	for (i = 0; i < sizeof(traps) / sizeof(traps[0]); i++) {
		assert_int_equal(bt_x86_decode(traps[i].code,
					       sizeof(traps[i].code), ADDR,
					       &in), 0);
		if (in.flow != BT_X86_TRAP || in.trap != traps[i].trap)
			fail_msg("%s: flow %u trap %u", traps[i].name, in.flow,
				 in.trap);
	}
	assert_int_equal(bt_x86_decode(movs, sizeof(movs), ADDR, &in), 0);
	assert_true(in.rep);
	assert_int_equal(bt_x86_decode(repret, sizeof(repret), ADDR, &in), 0);
	assert_false(in.rep);	/* "repz ret": the prefix repeats nothing */
	assert_int_equal(bt_x86_decode(cpuid, sizeof(cpuid), ADDR, &in), 0);
	assert_true(in.late_trap);
}

static void decode_bad(void **state)
{
	static const uint8_t bad[] = { 0x06 }, cut[] = { 0xe8, 0x00 };
	struct bt_x86_insn in;

	assert_int_equal(bt_x86_decode(bad, sizeof(bad), ADDR, &in),
			 -bte_decode);
	assert_int_equal(bt_x86_decode(cut, sizeof(cut), ADDR, &in),
			 -bte_decode);
	assert_int_equal(bt_x86_decode(NULL, 1, ADDR, &in), -bte_invalid);
	assert_int_equal(bt_x86_decode(bad, 1, ADDR, NULL), -bte_invalid);
}

static void reloc_in_reach(void **state)
{
	assert_true(bt_x86_in_reach(0, 0x7fffffff));
	assert_false(bt_x86_in_reach(0, 0x80000000));
	assert_true(bt_x86_in_reach(0x80000000, 0));
	assert_false(bt_x86_in_reach(0x80000001, 0));
}

static void reloc_rip(void **state)
{
	/* mov 0x10(%rip),%rax at ADDR, to 1 MiB above */
	static const uint8_t load[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	uint64_t to = ADDR + 0x100000;
	struct bt_x86_insn in;
	uint8_t out[15];
	int32_t disp;

	assert_int_equal(bt_x86_decode(load, sizeof(load), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc(&in, load, to, out), 7);
	assert_memory_equal(out, load, 3);
	memcpy(&disp, out + 3, 4);
	assert_int_equal(to + 7 + (int64_t)disp, ADDR + 7 + 0x10);
	assert_int_equal(bt_x86_reloc(&in, load, ADDR + (3ull << 30), out),
			 -bte_nosys);
	/* nothing rip-relative: any distance */
	assert_int_equal(bt_x86_decode(mov, sizeof(mov), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc(&in, mov, ADDR + (3ull << 30), out), 3);
	assert_memory_equal(out, mov, 3);
}

static void reloc_load(void **state)
{
	static const uint8_t rip[] = { 0xff, 0x25, 0x10, 0, 0, 0 };
	static const uint8_t r11[] = { 0x41, 0xff, 0xe3 };
	static const uint8_t fs[] = { 0x64, 0xff, 0x14, 0x25, 0x28, 0, 0, 0 };
	static const uint8_t ret[] = { 0xc3 };
	uint64_t to = ADDR - 0x1000;
	uint8_t out[BT_X86_LOAD_MAX];
	struct bt_x86_insn in;
	int32_t disp;

	/* jmp *0x10(%rip) -> mov 0x..(%rip),%rdx reading the same word */
	assert_int_equal(bt_x86_decode(rip, sizeof(rip), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc_load(&in, rip, 2, to, out), 7);
	assert_memory_equal(out, "\x48\x8b\x15", 3);
	memcpy(&disp, out + 3, 4);
	assert_int_equal(to + 7 + (int64_t)disp, ADDR + 6 + 0x10);
	/* jmp *%r11 -> mov %r11,%rdx */
	assert_int_equal(bt_x86_decode(r11, sizeof(r11), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc_load(&in, r11, 2, to, out), 3);
	assert_memory_equal(out, "\x49\x8b\xd3", 3);
	/* call *%fs:0x28 -> mov %fs:0x28,%rdx */
	assert_int_equal(bt_x86_decode(fs, sizeof(fs), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc_load(&in, fs, 2, to, out), 9);
	assert_memory_equal(out, "\x64\x48\x8b\x14\x25\x28\0\0\0", 9);
	assert_int_equal(bt_x86_decode(ret, sizeof(ret), ADDR, &in), 0);
	assert_int_equal(bt_x86_reloc_load(&in, ret, 2, to, out), -bte_nosys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode_flow),
		cmocka_unit_test(decode_cond),
		cmocka_unit_test(decode_operands),
		cmocka_unit_test(decode_gs),
		cmocka_unit_test(decode_kinds),
		cmocka_unit_test(decode_bad),
		cmocka_unit_test(reloc_in_reach),
		cmocka_unit_test(reloc_rip),
		cmocka_unit_test(reloc_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
