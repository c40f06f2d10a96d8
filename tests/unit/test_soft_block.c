// SPDX-License-Identifier: MIT
/* The basic-block cache on hand-assembled code. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "btrace/error.h"
#include "backend/soft/soft_block.h"

#define BASE 0x400000ull

static uint8_t mem[4096];
static int reads;

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	reads++;
	if (addr < BASE || addr + len > BASE + sizeof(mem))
		return -bte_io;
	memcpy(buf, mem + (addr - BASE), len);
	return 0;
}

static void put(size_t off, const uint8_t *code, size_t len)
{
	memcpy(mem + off, code, len);
}

static void test_get(void **state)
{
	/* mov eax,1; add eax,2; jne +5; nop; ret */
	static const uint8_t code[] = { 0xb8, 1, 0, 0, 0, 0x83, 0xc0, 0x02,
					0x75, 0x05, 0x90, 0xc3 };
	struct bt_block_cache *bc;
	const struct bt_block *b, *again;

	memset(mem, 0x90, sizeof(mem));
	put(0, code, sizeof(code));
	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	assert_int_equal(bt_block_get(bc, BASE, read_mem, NULL, &b), 0);
	assert_int_equal(b->start, BASE);
	assert_int_equal(b->end, BASE + 8);
	assert_int_equal(b->next, BASE + 10);
	assert_int_equal(b->target, BASE + 15);
	assert_int_equal(b->ninsn, 3);
	assert_int_equal(b->how, BT_BLOCK_BRANCH);
	assert_int_equal(b->term_class, BT_INSN_COND);
	assert_true(b->emu_ok);
	assert_int_equal(b->emu.op, BT_EMU_JCC);
	assert_int_equal(b->emu.cc, 5);
	assert_int_equal(bt_block_insns_before(b, BASE), 0);
	assert_int_equal(bt_block_insns_before(b, BASE + 5), 1);
	assert_int_equal(bt_block_insns_before(b, BASE + 8), 2);
	assert_int_equal(bt_block_insns_before(b, BASE + 10), 3);

	/* cached: no more reads */
	reads = 0;
	assert_int_equal(bt_block_get(bc, BASE, read_mem, NULL, &again), 0);
	assert_ptr_equal(b, again);
	assert_int_equal(reads, 0);

	/* a block from the middle: nop; ret */
	assert_int_equal(bt_block_get(bc, BASE + 10, read_mem, NULL, &b), 0);
	assert_int_equal(b->ninsn, 2);
	assert_int_equal(b->term_class, BT_INSN_RET);
	assert_int_equal(b->emu.op, BT_EMU_RET);
	assert_int_equal(bt_block_count(bc), 2);
	bt_block_cache_free(bc);
}

static void test_get_kinds(void **state)
{
	static const struct {
		uint8_t code[8];
		size_t len;
		int iclass;
		int emu_ok;
	} t[] = {
		{ { 0xe8, 0x10, 0, 0, 0 }, 5, BT_INSN_CALL, 1 },
		{ { 0xeb, 0xfe }, 2, BT_INSN_JUMP, 1 },
		{ { 0xff, 0xd0 }, 2, BT_INSN_ICALL, 1 },
		{ { 0xff, 0x24, 0xc5, 0, 0x10, 0x40, 0 }, 7, BT_INSN_IJUMP, 1 },
		{ { 0x0f, 0x05 }, 2, BT_INSN_SYSCALL, 0 },
		{ { 0xcc }, 1, BT_INSN_INT3, 0 },
		{ { 0xe2, 0xfe }, 2, BT_INSN_COND, 1 },
	};
	struct bt_block_cache *bc;
	size_t i;

	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct bt_block *b;
		uint64_t at = BASE + 64 * i;

		memset(mem, 0x90, sizeof(mem));
		put(64 * i + 3, t[i].code, t[i].len);	/* after 3 nops */
		assert_int_equal(bt_block_get(bc, at, read_mem, NULL, &b), 0);
		assert_int_equal(b->ninsn, 4);
		assert_int_equal(b->end, at + 3);
		assert_int_equal(b->next, at + 3 + t[i].len);
		assert_int_equal(b->term_class, t[i].iclass);
		assert_int_equal(b->emu_ok, t[i].emu_ok);
	}
	bt_block_cache_free(bc);
}

static void test_get_rep(void **state)
{
	/* rep movsb; ret */
	static const uint8_t code[] = { 0xf3, 0xa4, 0xc3 };
	struct bt_block_cache *bc;
	const struct bt_block *b;

	put(0, code, sizeof(code));
	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	assert_int_equal(bt_block_get(bc, BASE, read_mem, NULL, &b), 0);
	assert_int_equal(b->has_rep, 1);
	assert_int_equal(b->ninsn, 2);
	bt_block_cache_free(bc);
}

static void test_get_limits(void **state)
{
	struct bt_block_cache *bc;
	const struct bt_block *b;

	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	/* nops up to the end of readable memory: ends BAD at the edge */
	memset(mem, 0x90, sizeof(mem));
	assert_int_equal(bt_block_get(bc, BASE + sizeof(mem) - 8, read_mem,
				      NULL, &b), 0);
	assert_int_equal(b->how, BT_BLOCK_BAD);
	assert_int_equal(b->ninsn, 8);
	assert_int_equal(b->next, BASE + sizeof(mem));
	/* nothing readable */
	assert_int_equal(bt_block_get(bc, 0x1000, read_mem, NULL, &b), -bte_io);
	/* undecodable first instruction (push es is invalid in 64-bit) */
	mem[100] = 0x06;
	assert_int_equal(bt_block_get(bc, BASE + 100, read_mem, NULL, &b),
			 -bte_decode);
	/* stops before invalid bytes */
	assert_int_equal(bt_block_get(bc, BASE + 98, read_mem, NULL, &b), 0);
	assert_int_equal(b->how, BT_BLOCK_BAD);
	assert_int_equal(b->next, BASE + 100);
	bt_block_cache_free(bc);
}

static void test_get_cut(void **state)
{
	struct bt_block_cache *bc;
	const struct bt_block *b;

	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	memset(mem, 0x90, sizeof(mem));
	/* 4096 one-byte nops fill mem exactly: the block is cut at the max */
	assert_int_equal(bt_block_get(bc, BASE, read_mem, NULL, &b), 0);
	assert_int_equal(b->ninsn, BT_BLOCK_MAX_INSN);
	assert_int_equal(b->how, BT_BLOCK_CUT);
	bt_block_cache_free(bc);
}

static void test_invalidate(void **state)
{
	static const uint8_t code[] = { 0x90, 0x90, 0xc3 };
	struct bt_block_cache *bc;
	const struct bt_block *b;
	size_t i;

	assert_int_equal(bt_block_cache_alloc(&bc), 0);
	memset(mem, 0xc3, sizeof(mem));
	/* 3000 blocks: forces the table to grow */
	for (i = 0; i < 3000; i++)
		assert_int_equal(bt_block_get(bc, BASE + i, read_mem, NULL, &b), 0);
	assert_int_equal(bt_block_count(bc), 3000);
	for (i = 0; i < 3000; i++)
		assert_non_null(bt_block_find(bc, BASE + i));
	/* each block is one ret: [BASE+10, BASE+20) holds 10 */
	assert_int_equal(bt_block_invalidate(bc, BASE + 10, BASE + 20), 10);
	assert_null(bt_block_find(bc, BASE + 10));
	assert_non_null(bt_block_find(bc, BASE + 20));
	assert_int_equal(bt_block_count(bc), 2990);

	/* code changes: bt_block_same notices, a re-get decodes anew */
	put(0x800, code, sizeof(code));
	bt_block_clear(bc);
	assert_int_equal(bt_block_get(bc, BASE + 0x800, read_mem, NULL, &b), 0);
	assert_int_equal(bt_block_same(b, read_mem, NULL), 1);
	mem[0x801] = 0xc3;
	assert_int_equal(bt_block_same(b, read_mem, NULL), 0);
	/* an overlapping range drops it */
	assert_int_equal(bt_block_invalidate(bc, BASE + 0x802, BASE + 0x803), 1);
	assert_int_equal(bt_block_get(bc, BASE + 0x800, read_mem, NULL, &b), 0);
	assert_int_equal(b->ninsn, 2);
	bt_block_cache_free(bc);
}

static void test_alloc_null(void **state)
{
	bt_block_cache_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get),
		cmocka_unit_test(test_get_kinds),
		cmocka_unit_test(test_get_rep),
		cmocka_unit_test(test_get_limits),
		cmocka_unit_test(test_get_cut),
		cmocka_unit_test(test_invalidate),
		cmocka_unit_test(test_alloc_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
