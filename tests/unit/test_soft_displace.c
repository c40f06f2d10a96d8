// SPDX-License-Identifier: MIT
/*
 * Displaced execution (soft_displace.h): which instructions may run from a
 * slot, and slots that really run.  Each instruction is placed in an
 * executable page followed by ret, its slot is encoded into another page
 * and called; the result must equal the original's, called in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "btrace/error.h"
#include "backend/soft/soft_displace.h"

#define PAGE 4096

struct pages {
	uint8_t *code;		/* the original, then ret; data at +0x800 */
	uint8_t *slot;		/* where its slot runs */
};

typedef uint64_t (*fn1)(uint64_t);

static void pages_map(struct pages *p)
{
	p->code = mmap(NULL, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p->code != MAP_FAILED);
	/* the slot near it, as the backend places its areas */
	p->slot = mmap(p->code - (16 << 20), PAGE,
		       PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p->slot != MAP_FAILED);
}

static void pages_unmap(struct pages *p)
{
	munmap(p->code, PAGE);
	munmap(p->slot, PAGE);
}

/* Put @insn at the code page, ret after it; run it there and displaced. */
static void run_both(struct bt_displace *d, const uint8_t *insn, size_t len,
		     uint64_t arg, uint64_t *in_place, uint64_t *displaced)
{
	struct pages p;
	uint8_t out[BT_DISPLACE_SLOT_SIZE];
	int n;

	pages_map(&p);
	memset(p.code, 0xcc, PAGE);
	memcpy(p.code, insn, len);
	p.code[len] = 0xc3;
	memcpy(p.code + 0x800, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
	n = bt_displace_encode(d, p.code, len + 1, (uint64_t)p.code,
			       (uint64_t)p.slot, out);
	assert_int_equal(n, (int)len + 14);
	memcpy(p.slot, out, (size_t)n);
	*in_place = ((fn1)(void *)p.code)(arg);
	*displaced = ((fn1)(void *)p.slot)(arg);
	pages_unmap(&p);
}

static void displace_plain(void **state)
{
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };	/* mov %rdi,%rax */
	struct bt_displace *d;
	uint64_t a, b;

	assert_int_equal(bt_displace_alloc(&d), 0);
	run_both(d, mov, sizeof(mov), 0x1234, &a, &b);
	assert_int_equal(a, 0x1234);
	assert_int_equal(b, a);
	bt_displace_free(d);
}

/* disp32 from the end of a @len-byte instruction at page start to +0x800 */
static void put_disp(uint8_t *insn, size_t len)
{
	int32_t disp = 0x800 - (int32_t)len;

	memcpy(insn + len - 4, &disp, 4);
}

static void displace_rip_relative(void **state)
{
	uint8_t load[7] = { 0x48, 0x8b, 0x05 };	/* mov disp(%rip),%rax */
	uint8_t lea[7] = { 0x48, 0x8d, 0x05 };	/* lea disp(%rip),%rax */
	uint8_t load32[6] = { 0x8b, 0x05 };	/* mov disp(%rip),%eax */
	struct bt_displace *d;
	uint64_t a, b;

	assert_int_equal(bt_displace_alloc(&d), 0);
	put_disp(load, sizeof(load));
	run_both(d, load, sizeof(load), 0, &a, &b);
	assert_int_equal(a, 0x8877665544332211ull);
	assert_int_equal(b, a);

	put_disp(lea, sizeof(lea));
	run_both(d, lea, sizeof(lea), 0, &a, &b);
	assert_int_equal(b, a);		/* the original's address, not the slot's */

	put_disp(load32, sizeof(load32));
	run_both(d, load32, sizeof(load32), 0, &a, &b);
	assert_int_equal(a, 0x44332211);
	assert_int_equal(b, a);
	bt_displace_free(d);
}

static void displace_rip_out_of_reach(void **state)
{
	uint8_t load[7] = { 0x48, 0x8b, 0x05 };
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8 };
	uint8_t out[BT_DISPLACE_SLOT_SIZE];
	uint64_t addr = 0x400000, far = addr + (3ull << 30);
	struct bt_displace *d;

	assert_int_equal(bt_displace_alloc(&d), 0);
	put_disp(load, sizeof(load));
	assert_int_equal(bt_displace_encode(d, load, sizeof(load), addr, far,
					    out), -bte_nosys);
	/* the same distance is fine without a rip-relative operand */
	assert_int_equal(bt_displace_encode(d, mov, sizeof(mov), addr, far,
					    out), (int)sizeof(mov) + 14);
	/* the jump back goes to the next instruction, absolute */
	assert_memory_equal(out + 3, "\xff\x25\0\0\0\0", 6);
	assert_int_equal(*(uint64_t *)(void *)(out + 9), addr + 3);
	bt_displace_free(d);
}

/* Control transfers, traps and system calls are stepped instead. */
static void displace_refused(void **state)
{
	static const struct {
		const char *what;
		uint8_t code[8];
		size_t len;
	} no[] = {
		{ "jmp rel8", { 0xeb, 0x00 }, 2 },
		{ "jne rel8", { 0x75, 0x00 }, 2 },
		{ "call rel32", { 0xe8, 0, 0, 0, 0 }, 5 },
		{ "call *%rax", { 0xff, 0xd0 }, 2 },
		{ "jmp *%rax", { 0xff, 0xe0 }, 2 },
		{ "ret", { 0xc3 }, 1 },
		{ "syscall", { 0x0f, 0x05 }, 2 },
		{ "int3", { 0xcc }, 1 },
		{ "int $0x80", { 0xcd, 0x80 }, 2 },
		{ "ud2", { 0x0f, 0x0b }, 2 },
		{ "loop", { 0xe2, 0x00 }, 2 },
		{ "bad", { 0x06 }, 1 },
	};
	uint8_t out[BT_DISPLACE_SLOT_SIZE];
	struct bt_displace *d;
	size_t i;

	assert_int_equal(bt_displace_alloc(&d), 0);
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		if (bt_displace_can(d, no[i].code, no[i].len, 0x400000))
			fail_msg("%s may run displaced", no[i].what);
		assert_int_equal(bt_displace_encode(d, no[i].code, no[i].len,
						    0x400000, 0x500000, out),
				 -bte_nosys);
	}
	assert_true(bt_displace_can(d, (const uint8_t *)"\x0f\xa2", 2,
				    0x400000));	/* cpuid runs anywhere */
	assert_int_equal(bt_displace_count(d), 0);
	bt_displace_free(d);
}

static void displace_null(void **state)
{
	bt_displace_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(displace_plain),
		cmocka_unit_test(displace_rip_relative),
		cmocka_unit_test(displace_rip_out_of_reach),
		cmocka_unit_test(displace_refused),
		cmocka_unit_test(displace_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
