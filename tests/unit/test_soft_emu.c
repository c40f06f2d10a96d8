// SPDX-License-Identifier: MIT
/*
 * Decision-branch emulation checked against the CPU: each instruction is
 * executed natively from an executable buffer with known registers and
 * flags, and the emulator must predict the same outcome.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "btrace/error.h"
#include "backend/soft/soft_emu.h"

#define ARRAY_N(a) (sizeof(a) / sizeof((a)[0]))

static uint8_t *code;		/* one RWX page for native runs */
static struct bt_emu *emu;

static int setup(void **state)
{
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	return bt_emu_alloc(&emu);
}

static int teardown(void **state)
{
	bt_emu_free(emu);
	munmap(code, 4096);
	return 0;
}

static int read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	memcpy(buf, (void *)(uintptr_t)addr, len);
	return 0;
}

/*
 * Native: push rsi; popfq; <branch at offset 2 of blen bytes, target +3>;
 * xor eax,eax; ret; mov eax,1; ret.  Returns 1 if the branch was taken.
 * rdi is moved to rcx first for the rcx-based branches.
 */
typedef uint64_t (*native_fn)(uint64_t rcx, uint64_t flags, uint64_t *rcx_out);

static size_t emit_branch_test(const uint8_t *br, size_t blen, size_t *at)
{
	static const uint8_t pre[] = {
		0x48, 0x89, 0xf9,	/* mov rcx, rdi */
		0x56, 0x9d,		/* push rsi; popfq */
	};
	static const uint8_t post[] = {
		0x31, 0xc0,		/* xor eax, eax */
		0xeb, 0x05,		/* jmp +5 (to the rcx store) */
		0xb8, 0x01, 0, 0, 0,	/* mov eax, 1 */
		0x48, 0x89, 0x0a,	/* mov [rdx], rcx */
		0xc3,			/* ret */
	};
	size_t n = 0;

	memcpy(code, pre, sizeof(pre));
	n += sizeof(pre);
	*at = n;
	memcpy(code + n, br, blen);
	n += blen;
	memcpy(code + n, post, sizeof(post));
	return n + sizeof(post);
}

static void check_branch(const uint8_t *br, size_t blen, uint64_t rcx,
			 uint64_t flags)
{
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;
	uint64_t native, rcx_out = 0;
	size_t at;

	emit_branch_test(br, blen, &at);
	__builtin___clear_cache((char *)code, (char *)code + 64);
	native = ((native_fn)(void *)code)(rcx, flags, &rcx_out);

	assert_int_equal(bt_emu_decode(emu, code + at, 15,
				       (uintptr_t)(code + at), &ei), 0);
	memset(&regs, 0, sizeof(regs));
	regs.rcx = rcx;
	regs.eflags = flags;
	regs.rip = (uintptr_t)(code + at);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	if (res.taken != (int)native)
		fail_msg("branch %02x %02x rcx %lx flags %lx: cpu %d emu %d",
			 br[0], br[1], (unsigned long)rcx,
			 (unsigned long)flags, (int)native, res.taken);
	assert_int_equal(regs.rcx, rcx_out);
	assert_int_equal(res.next, (uintptr_t)(code + at + blen) +
				   (native ? 4 : 0));
	assert_int_equal(regs.rip, res.next);
}

/* Every combination of CF, PF, ZF, SF, OF (bit 1 is always set). */
static uint64_t flag_combo(unsigned int i)
{
	static const uint64_t bits[] = { 1u << 0, 1u << 2, 1u << 6, 1u << 7,
					 1u << 11 };
	uint64_t f = 2;
	unsigned int b;

	for (b = 0; b < 5; b++)
		if (i & (1u << b))
			f |= bits[b];
	return f;
}

static void test_cond(void **state)
{
	unsigned int cc, i;

	for (cc = 0; cc < 16; cc++) {
		uint8_t br[2] = { (uint8_t)(0x70 + cc), 4 };

		for (i = 0; i < 32; i++)
			check_branch(br, sizeof(br), 0, flag_combo(i));
	}
}

static void test_cond_near(void **state)
{
	unsigned int cc, i;

	for (cc = 0; cc < 16; cc++) {
		uint8_t br[6] = { 0x0f, (uint8_t)(0x80 + cc), 4, 0, 0, 0 };

		for (i = 0; i < 32; i++)
			check_branch(br, sizeof(br), 0, flag_combo(i));
	}
}

static void test_cond_flags(void **state)
{
	unsigned int cc;

	/* the 16 conditions are 8 pairs of opposites */
	for (cc = 0; cc < 16; cc += 2) {
		unsigned int i;

		for (i = 0; i < 32; i++)
			assert_int_not_equal(bt_emu_cond(cc, flag_combo(i)),
					     bt_emu_cond(cc + 1, flag_combo(i)));
	}
}

static void test_loop(void **state)
{
	static const uint8_t ops[] = { 0xe2, 0xe1, 0xe0 }; /* loop, e, ne */
	static const uint64_t rcx[] = { 0, 1, 2, 0x100000000ull, ~0ull };
	size_t o, r;
	unsigned int z;

	for (o = 0; o < sizeof(ops); o++)
		for (r = 0; r < ARRAY_N(rcx); r++)
			for (z = 0; z < 2; z++) {
				uint8_t br[2] = { ops[o], 4 };

				check_branch(br, 2, rcx[r], z ? 0x42 : 0x2);
			}
}

static void test_jrcxz(void **state)
{
	static const uint64_t rcx[] = { 0, 1, 0x100000000ull, ~0ull };
	static const uint8_t jrcxz[2] = { 0xe3, 4 };
	static const uint8_t jecxz[3] = { 0x67, 0xe3, 4 };
	size_t r;

	for (r = 0; r < ARRAY_N(rcx); r++) {
		check_branch(jrcxz, sizeof(jrcxz), rcx[r], 2);
		check_branch(jecxz, sizeof(jecxz), rcx[r], 2);
	}
}

static void test_ret(void **state)
{
	static const uint8_t ret[] = { 0xc3 }, reti[] = { 0xc2, 0x10, 0 };
	static const uint8_t repret[] = { 0xf3, 0xc3 };
	uint64_t stack[4] = { 0x401234, 1, 2, 3 };
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	memset(&regs, 0, sizeof(regs));
	regs.rsp = (uintptr_t)stack;
	assert_int_equal(bt_emu_decode(emu, ret, 1, 0x1000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x401234);
	assert_int_equal(regs.rsp, (uintptr_t)&stack[1]);

	regs.rsp = (uintptr_t)stack;
	assert_int_equal(bt_emu_decode(emu, reti, 3, 0x1000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(regs.rsp, (uintptr_t)stack + 8 + 16);

	regs.rsp = (uintptr_t)stack;
	assert_int_equal(bt_emu_decode(emu, repret, 2, 0x1000, &ei), 0);
	assert_int_equal(ei.op, BT_EMU_RET);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x401234);
}

/* Stubs "mov eax, K; ret" at code + 256 + 16 * K. */
static uint64_t stub(unsigned int k)
{
	uint8_t *p = code + 256 + 16 * k;

	p[0] = 0xb8;
	memcpy(p + 1, &k, 4);
	p[5] = 0xc3;
	return (uintptr_t)p;
}

typedef uint64_t (*rm_fn)(uint64_t rdi, uint64_t rsi);

/*
 * Run @br (a jmp r/m) natively with rdi and rsi set; the stub it lands on
 * tells where it went.  The emulator must compute that stub's address.
 */
static void check_rm(const uint8_t *br, size_t len, uint64_t rdi,
		     uint64_t rsi, uint64_t fs)
{
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;
	uint64_t k;

	memcpy(code, br, len);
	__builtin___clear_cache((char *)code, (char *)code + 4096);
	k = ((rm_fn)(void *)code)(rdi, rsi);

	assert_int_equal(bt_emu_decode(emu, code, len, (uintptr_t)code, &ei), 0);
	memset(&regs, 0, sizeof(regs));
	regs.rdi = rdi;
	regs.rsi = rsi;
	regs.rsp = 0x7000;
	regs.fs_base = fs;
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, stub((unsigned int)k));
	assert_int_equal(res.taken, 1);
}

static void test_jmp_rm(void **state)
{
	static const uint8_t jmp_rdi[] = { 0xff, 0xe7 };
	static const uint8_t jmp_sib[] = { 0xff, 0x64, 0xf7, 0x08 };
	static const uint8_t jmp_rip[] = { 0xff, 0x25, 0xfa, 0x01, 0, 0 };
	static const uint8_t jmp_ntrack[] = { 0x3e, 0xff, 0xe6 };
	static const uint8_t jmp_r8[] = { 0x49, 0x89, 0xf8, 0x41, 0xff, 0xe0 };
	uint64_t table[8];
	unsigned int i;

	for (i = 0; i < 8; i++)
		table[i] = stub(i);
	/* jmp rdi */
	check_rm(jmp_rdi, sizeof(jmp_rdi), table[3], 0, 0);
	/* notrack jmp rsi */
	check_rm(jmp_ntrack, sizeof(jmp_ntrack), 0, table[5], 0);
	/* jmp [rdi + rsi*8 + 8] */
	for (i = 0; i < 7; i++)
		check_rm(jmp_sib, sizeof(jmp_sib), (uintptr_t)table, i, 0);
	/* jmp [rip + 0x200 - 6]: the slot at code + 0x200 */
	memcpy(code + 0x200, &table[6], 8);
	check_rm(jmp_rip, sizeof(jmp_rip), 0, 0, 0);
	/* mov r8, rdi; jmp r8: the jmp is at offset 3 */
	memcpy(code, jmp_r8, sizeof(jmp_r8));
	{
		struct user_regs_struct regs;
		struct bt_emu_result res;
		struct bt_emu_insn ei;

		assert_int_equal(bt_emu_decode(emu, code + 3, 3,
					       (uintptr_t)code + 3, &ei), 0);
		memset(&regs, 0, sizeof(regs));
		regs.r8 = table[2];
		assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
		assert_int_equal(res.next, table[2]);
	}
}

static __thread uint64_t tls_slot;

static void test_jmp_rm_fs(void **state)
{
	uint8_t jmp_fs[8] = { 0x64, 0xff, 0x24, 0x25 };
	unsigned long fs;
	int32_t off;

	assert_int_equal(syscall(SYS_arch_prctl, ARCH_GET_FS, &fs), 0);
	tls_slot = stub(7);
	off = (int32_t)((intptr_t)&tls_slot - (intptr_t)fs);
	memcpy(jmp_fs + 4, &off, 4);
	check_rm(jmp_fs, sizeof(jmp_fs), 0, 0, fs);
}

static void test_call_rm(void **state)
{
	static const uint8_t call_rax[] = { 0xff, 0xd0 };
	static const uint8_t call_m[] = { 0x41, 0xff, 0x54, 0x24, 0x10 };
	uint64_t table[4] = { 0, 0, 0x555000, 0 };
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	memset(&regs, 0, sizeof(regs));
	regs.rax = 0x401000;
	regs.rsp = 0x7ff0;
	assert_int_equal(bt_emu_decode(emu, call_rax, 2, 0x2000, &ei), 0);
	assert_int_equal(ei.op, BT_EMU_CALL_RM);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x401000);
	assert_int_equal(res.push, 1);
	assert_int_equal(res.push_value, 0x2002);
	assert_int_equal(regs.rsp, 0x7fe8);

	/* call [r12 + 0x10] */
	regs.r12 = (uintptr_t)table;
	assert_int_equal(bt_emu_decode(emu, call_m, 5, 0x2000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x555000);
	assert_int_equal(res.push_value, 0x2005);
}

static int read_fail(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return -bte_io;
}

static void test_eval_io(void **state)
{
	static const uint8_t jmp_m[] = { 0xff, 0x20 };	/* jmp [rax] */
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	memset(&regs, 0, sizeof(regs));
	regs.rip = 0x1000;
	assert_int_equal(bt_emu_decode(emu, jmp_m, 2, 0x1000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_fail, NULL, &res),
			 -bte_io);
	assert_int_equal(regs.rip, 0x1000);
}

static void test_direct(void **state)
{
	static const uint8_t jmp_rel[] = { 0xeb, 0x10 };
	static const uint8_t call_rel[] = { 0xe8, 0x10, 0, 0, 0 };
	struct user_regs_struct regs;
	struct bt_emu_result res;
	struct bt_emu_insn ei;

	memset(&regs, 0, sizeof(regs));
	regs.rsp = 0x8000;
	assert_int_equal(bt_emu_decode(emu, jmp_rel, 2, 0x1000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x1012);
	assert_int_equal(res.push, 0);
	assert_int_equal(bt_emu_decode(emu, call_rel, 5, 0x1000, &ei), 0);
	assert_int_equal(bt_emu_eval(&ei, &regs, read_self, NULL, &res), 0);
	assert_int_equal(res.next, 0x1015);
	assert_int_equal(res.push_value, 0x1005);
	assert_int_equal(regs.rsp, 0x8000 - 8);
}

static void test_decode_nosys(void **state)
{
	static const uint8_t nop[] = { 0x90 };
	static const uint8_t ret16[] = { 0x66, 0xc3 };
	static const uint8_t jmp16[] = { 0x66, 0xff, 0xe0 };
	static const uint8_t ljmp[] = { 0xff, 0x28 };	/* jmp far [rax] */
	static const uint8_t loop32[] = { 0x67, 0xe2, 0x10 };
	struct bt_emu_insn ei;

	assert_int_equal(bt_emu_decode(emu, nop, 1, 0, &ei), -bte_nosys);
	assert_int_equal(bt_emu_decode(emu, ret16, 2, 0, &ei), -bte_nosys);
	assert_int_equal(bt_emu_decode(emu, jmp16, 3, 0, &ei), -bte_nosys);
	assert_int_equal(bt_emu_decode(emu, ljmp, 2, 0, &ei), -bte_nosys);
	assert_int_equal(bt_emu_decode(emu, loop32, 3, 0, &ei), -bte_nosys);
	assert_int_equal(ei.op, BT_EMU_NONE);
}

static void test_decode_null(void **state)
{
	struct bt_emu_insn ei;
	uint8_t bad[1] = { 0x06 };	/* push es: invalid in 64-bit mode */

	assert_int_equal(bt_emu_decode(NULL, bad, 1, 0, &ei), -bte_invalid);
	assert_int_equal(bt_emu_decode(emu, NULL, 1, 0, &ei), -bte_invalid);
	assert_int_equal(bt_emu_decode(emu, bad, 1, 0, &ei), -bte_decode);
	bt_emu_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cond),
		cmocka_unit_test(test_cond_near),
		cmocka_unit_test(test_cond_flags),
		cmocka_unit_test(test_loop),
		cmocka_unit_test(test_jrcxz),
		cmocka_unit_test(test_ret),
		cmocka_unit_test(test_jmp_rm),
		cmocka_unit_test(test_jmp_rm_fs),
		cmocka_unit_test(test_call_rm),
		cmocka_unit_test(test_eval_io),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_decode_nosys),
		cmocka_unit_test(test_decode_null),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
