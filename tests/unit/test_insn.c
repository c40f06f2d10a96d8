// SPDX-License-Identifier: MIT
/*
 * Instruction classification, checked against hand-assembled x86-64
 * encodings (from the Intel SDM opcode tables) and against the machine
 * code of functions in this very binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "btrace/btrace.h"

struct sample {
	const char *name;
	uint8_t code[BT_INSN_MAX_LEN];
	uint8_t len;
	int iclass;
	int64_t rel;	/* direct target - (addr + len), if any */
	int rep;
};

static const struct sample samples[] = {
	{ "nop", { 0x90 }, 1, BT_INSN_OTHER, 0, 0 },
	{ "mov rax, rbx", { 0x48, 0x89, 0xd8 }, 3, BT_INSN_OTHER, 0, 0 },
	{ "je rel8", { 0x74, 0x10 }, 2, BT_INSN_COND, 0x10, 0 },
	{ "jne rel32", { 0x0f, 0x85, 0x00, 0x01, 0x00, 0x00 }, 6, BT_INSN_COND,
	  0x100, 0 },
	{ "jrcxz", { 0xe3, 0xfe }, 2, BT_INSN_COND, -2, 0 },
	{ "loop", { 0xe2, 0x05 }, 2, BT_INSN_COND, 5, 0 },
	{ "jmp rel8", { 0xeb, 0xfe }, 2, BT_INSN_JUMP, -2, 0 },
	{ "jmp rel32", { 0xe9, 0x10, 0x00, 0x00, 0x00 }, 5, BT_INSN_JUMP, 0x10, 0 },
	{ "call rel32", { 0xe8, 0xf0, 0xff, 0xff, 0xff }, 5, BT_INSN_CALL,
	  -0x10, 0 },
	{ "ret", { 0xc3 }, 1, BT_INSN_RET, 0, 0 },
	{ "ret imm16", { 0xc2, 0x08, 0x00 }, 3, BT_INSN_RET, 0, 0 },
	{ "repz ret", { 0xf3, 0xc3 }, 2, BT_INSN_RET, 0, 0 },
	{ "bnd jmp", { 0xf2, 0xe9, 0, 0, 0, 0 }, 6, BT_INSN_JUMP, 0, 0 },
	{ "jmp rax", { 0xff, 0xe0 }, 2, BT_INSN_IJUMP, 0, 0 },
	{ "jmp [rip+0]", { 0xff, 0x25, 0, 0, 0, 0 }, 6, BT_INSN_IJUMP, 0, 0 },
	{ "notrack jmp rax", { 0x3e, 0xff, 0xe0 }, 3, BT_INSN_IJUMP, 0, 0 },
	{ "call rax", { 0xff, 0xd0 }, 2, BT_INSN_ICALL, 0, 0 },
	{ "call [rbx+8]", { 0xff, 0x53, 0x08 }, 3, BT_INSN_ICALL, 0, 0 },
	{ "syscall", { 0x0f, 0x05 }, 2, BT_INSN_SYSCALL, 0, 0 },
	{ "int 0x80", { 0xcd, 0x80 }, 2, BT_INSN_SYSCALL, 0, 0 },
	{ "int3", { 0xcc }, 1, BT_INSN_INT3, 0, 0 },
	{ "ud2", { 0x0f, 0x0b }, 2, BT_INSN_FAR, 0, 0 },
	{ "iretq", { 0x48, 0xcf }, 2, BT_INSN_FAR, 0, 0 },
	{ "rep movsb", { 0xf3, 0xa4 }, 2, BT_INSN_OTHER, 0, 1 },
	{ "rep stosq", { 0xf3, 0x48, 0xab }, 3, BT_INSN_OTHER, 0, 1 },
	{ "repne scasb", { 0xf2, 0xae }, 2, BT_INSN_OTHER, 0, 1 },
	{ "movsd xmm0, xmm1", { 0xf2, 0x0f, 0x10, 0xc1 }, 4, BT_INSN_OTHER, 0, 0 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, BT_INSN_OTHER, 0, 0 },
};

static void decode(void **state)
{
	const uint64_t addr = 0x401000;
	struct bt_disasm *dis;
	struct bt_insn insn;
	size_t i;

	assert_int_equal(bt_disasm_alloc(&dis), 0);
	for (i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		const struct sample *s = &samples[i];
		uint64_t want = s->rel || s->iclass == BT_INSN_JUMP ||
						s->iclass == BT_INSN_CALL ||
						s->iclass == BT_INSN_COND ?
					addr + s->len + s->rel :
					0;

		print_message("%s\n", s->name);
		assert_int_equal(bt_insn_decode(dis, s->code, sizeof(s->code),
						addr, &insn), 0);
		assert_int_equal(insn.addr, addr);
		assert_int_equal(insn.len, s->len);
		assert_int_equal(insn.iclass, s->iclass);
		assert_int_equal(insn.target, want);
		assert_int_equal(insn.rep, s->rep);
	}
	bt_disasm_free(dis);
}

static void decode_null(void **state)
{
	struct bt_disasm *dis;
	struct bt_insn insn;
	uint8_t code[1] = { 0x90 };

	bt_disasm_free(NULL);
	assert_int_equal(bt_disasm_alloc(NULL), -bte_invalid);
	assert_int_equal(bt_disasm_alloc(&dis), 0);
	assert_int_equal(bt_insn_decode(dis, NULL, 1, 0, &insn), -bte_invalid);
	assert_int_equal(bt_insn_decode(dis, code, 1, 0, NULL), -bte_invalid);
	assert_int_equal(bt_insn_decode(NULL, code, 1, 0, &insn), -bte_invalid);
	bt_disasm_free(dis);
}

/* Bytes cut short, or no instruction at all. */
static void decode_truncated(void **state)
{
	const uint8_t jmp32[] = { 0xe9, 0x10, 0x00 };
	const uint8_t bad[] = { 0x06, 0x06, 0x06, 0x06 };	/* push es: not in 64-bit mode */
	struct bt_disasm *dis;
	struct bt_insn insn;

	assert_int_equal(bt_disasm_alloc(&dis), 0);
	assert_int_equal(bt_insn_decode(dis, jmp32, sizeof(jmp32), 0, &insn),
			 -bte_decode);
	assert_int_equal(bt_insn_decode(dis, bad, sizeof(bad), 0, &insn),
			 -bte_decode);
	assert_int_equal(bt_insn_decode(dis, jmp32, 0, 0, &insn), -bte_decode);
	bt_disasm_free(dis);
}

static void format(void **state)
{
	const uint8_t call[] = { 0xe8, 0xfb, 0x0f, 0x00, 0x00 };
	const uint8_t ret[] = { 0xc3 };
	struct bt_disasm *dis;
	char buf[64];

	assert_int_equal(bt_disasm_alloc(&dis), 0);
	assert_int_equal(bt_insn_format(dis, call, sizeof(call), 0x401000, buf,
					 sizeof(buf)), 5);
	assert_string_equal(buf, "call 0x402000");
	assert_int_equal(bt_insn_format(dis, ret, 1, 0x401000, buf, sizeof(buf)),
			 1);
	assert_string_equal(buf, "ret");
	/* Truncated to the buffer, still terminated. */
	assert_int_equal(bt_insn_format(dis, call, sizeof(call), 0x401000, buf,
					 5), 5);
	assert_string_equal(buf, "call");
	assert_int_equal(bt_insn_format(dis, ret, 0, 0, buf, sizeof(buf)),
			 -bte_decode);
	bt_disasm_free(dis);
}

static void branch_kind(void **state)
{
	assert_int_equal(bt_insn_branch_kind(BT_INSN_COND), BT_BR_COND);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_JUMP), BT_BR_JUMP);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_CALL), BT_BR_CALL);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_RET), BT_BR_RET);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_IJUMP), BT_BR_IJUMP);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_ICALL), BT_BR_ICALL);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_SYSCALL), BT_BR_SYSCALL);
	assert_int_equal(bt_insn_branch_kind(BT_INSN_OTHER), BT_BR_NONE);
	assert_int_equal(bt_insn_branch_kind(-1), BT_BR_NONE);
	assert_int_equal(bt_insn_branch_kind(100), BT_BR_NONE);
}

static int __attribute__((noinline)) callee(int x)
{
	return x + 1;
}

/*
 * Walk this binary's own code for a function that calls another: decoding
 * instruction by instruction from its start must find a direct call whose
 * target is the callee, and a return, with lengths that chain exactly.
 */
static int __attribute__((noinline)) caller(int x)
{
	return callee(x) * 2;
}

/*
 * VEX and EVEX instructions (AVX-512 compares into mask registers, kmov:
 * glibc's string functions on CPUs with AVX-512), many of which capstone 4
 * cannot decode.  Encodings and lengths from GNU as and objdump.
 */
static void decode_vex_evex(void **state)
{
	static const struct {
		uint8_t bytes[16];
		uint8_t len;
	} cases[] = {
		{ { 0x62, 0xf3, 0x7d, 0x20, 0x3f, 0x07, 0x00 }, 7 },
		{ { 0xc5, 0xfb, 0x93, 0xc0 }, 4 },
		{ { 0xc5, 0xf8, 0x77 }, 3 },
		{ { 0xc4, 0xe1, 0xfb, 0x93, 0xc1 }, 5 },
		{ { 0x62, 0xf3, 0x6d, 0x48, 0x25, 0x5c, 0x9c, 0x01, 0xde }, 9 },
		{ { 0x62, 0xf3, 0x75, 0x48, 0x3e, 0x15, 0, 0, 0, 0, 0x04 }, 11 },
		{ { 0xc5, 0xfd, 0x70, 0xd1, 0x1b }, 5 },
		{ { 0x62, 0xe1, 0xfe, 0x48, 0x7f, 0x4f, 0xfc }, 7 },
		{ { 0xc4, 0xe2, 0xe0, 0xf2, 0xc8 }, 5 },
		{ { 0xc4, 0xe3, 0xfb, 0xf0, 0xd8, 0x03 }, 6 },
	};
	struct bt_disasm *dis;
	struct bt_insn insn;
	size_t i;

	assert_int_equal(bt_disasm_alloc(&dis), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* Followed by a taken-looking jmp: it must not be read. */
		uint8_t code[32];

		memset(code, 0xeb, sizeof(code));
		memcpy(code, cases[i].bytes, cases[i].len);
		assert_int_equal(bt_insn_decode(dis, code, sizeof(code),
						0x1000, &insn), 0);
		assert_int_equal(insn.len, cases[i].len);
		assert_int_equal(insn.iclass, BT_INSN_OTHER);
		/* Cut short: not an instruction, never a wrong length. */
		assert_int_not_equal(bt_insn_decode(dis, code, cases[i].len - 1,
						    0x1000, &insn) == 0 &&
					     insn.len == cases[i].len,
				     1);
	}
	bt_disasm_free(dis);
}

static void decode_own_code(void **state)
{
	const uint8_t *code = (const uint8_t *)caller;
	uint64_t addr = (uint64_t)(uintptr_t)caller;
	int found_call = 0, found_ret = 0, i;
	struct bt_disasm *dis;
	struct bt_insn insn;

	assert_int_equal(caller(1), 4);
	assert_int_equal(bt_disasm_alloc(&dis), 0);
	for (i = 0; i < 64 && !found_ret; i++) {
		assert_int_equal(bt_insn_decode(dis, code, BT_INSN_MAX_LEN, addr,
						&insn), 0);
		if (insn.iclass == BT_INSN_CALL &&
		    insn.target == (uint64_t)(uintptr_t)callee)
			found_call = 1;
		if (insn.iclass == BT_INSN_RET)
			found_ret = 1;
		code += insn.len;
		addr += insn.len;
	}
	assert_true(found_call);
	assert_true(found_ret);
	bt_disasm_free(dis);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decode),
		cmocka_unit_test(decode_null),
		cmocka_unit_test(decode_truncated),
		cmocka_unit_test(format),
		cmocka_unit_test(branch_kind),
		cmocka_unit_test(decode_own_code),
		cmocka_unit_test(decode_vex_evex),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
