// SPDX-License-Identifier: MIT
/* The function-call history (decoder/calls.c) on histories made here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <unistd.h>

#include "btrace/btrace.h"

#define BR(f, t, k) { .from = (f), .to = (t), .kind = (k), .ninsn = 2 }

static struct bt_calls *build(struct bt_branch *br, size_t n,
			      struct bt_symtab *st)
{
	struct bt_history h = { .branch = br, .count = n };
	struct bt_calls *calls;

	assert_int_equal(bt_calls_build(&h, st, &calls), 0);
	return calls;
}

static void check(const struct bt_call *c, int depth, uint64_t start,
		  size_t nbranches)
{
	assert_int_equal(c->gap, 0);
	assert_int_equal(c->depth, depth);
	assert_int_equal(c->start, start);
	assert_int_equal(c->nbranches, nbranches);
}

/* main calls f, f calls g, g returns, f returns past where it began. */
static void nesting(void **state)
{
	struct bt_branch br[] = {
		BR(0x100, 0x200, BT_BR_CALL),	/* main -> f */
		BR(0x210, 0x220, BT_BR_COND),	/* in f */
		BR(0x230, 0x300, BT_BR_ICALL),	/* f -> g */
		BR(0x310, 0x234, BT_BR_RET),	/* g -> f */
		BR(0x240, 0x105, BT_BR_RET),	/* f -> main */
		BR(0x110, 0x50, BT_BR_RET),	/* main -> its caller */
	};
	struct bt_calls *c = build(br, 6, NULL);

	assert_int_equal(c->count, 6);
	check(&c->call[0], 1, 0x100, 1);	/* main */
	check(&c->call[1], 2, 0x200, 2);	/* f, two branches */
	assert_int_equal(c->call[1].ninsn, 4);
	assert_int_equal(c->call[1].first, 1);
	assert_int_equal(c->call[1].last, 2);
	check(&c->call[2], 3, 0x300, 1);	/* g */
	check(&c->call[3], 2, 0x234, 1);	/* f again */
	check(&c->call[4], 1, 0x105, 1);	/* main again */
	check(&c->call[5], 0, 0x50, 0);		/* where it is now */
	bt_calls_free(c);
}

static void gap(void **state)
{
	struct bt_branch br[] = {
		BR(0x100, 0x200, BT_BR_CALL),
		{ .kind = BT_BR_GAP, .gap = BT_GAP_OVERFLOW, .to = 0x400 },
		BR(0x410, 0x500, BT_BR_RET),
	};
	struct bt_calls *c = build(br, 3, NULL);

	/* f's segment had no branch before the gap: it is dropped. */
	assert_int_equal(c->count, 4);
	check(&c->call[0], 0, 0x100, 1);
	assert_int_equal(c->call[1].gap, 1);
	assert_int_equal(c->call[1].reason, BT_GAP_OVERFLOW);
	assert_int_equal(c->call[1].depth, 1);
	assert_int_equal(c->call[1].first, 1);
	check(&c->call[2], 1, 0x400, 1);
	check(&c->call[3], 0, 0x500, 0);
	bt_calls_free(c);
}

static __attribute__((noinline)) int func_a(int x)
{
	return x + 1;
}

static __attribute__((noinline)) int func_b(int x)
{
	return x * 2;
}

/* A jump into another function (a tail call) starts a segment. */
static void tail_call(void **state)
{
	uint64_t a = (uintptr_t)func_a, b = (uintptr_t)func_b;
	struct bt_branch br[] = {
		BR(a + 1, a + 2, BT_BR_JUMP),	/* inside func_a */
		BR(a + 3, b, BT_BR_JUMP),	/* tail call into func_b */
		BR(b + 1, 0x10, BT_BR_RET),
	};
	struct bt_symtab *st;
	struct bt_calls *c;

	assert_int_equal(func_a(1) + func_b(1), 4);
	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	c = build(br, 3, st);
	assert_int_equal(c->count, 3);
	check(&c->call[0], 1, a + 1, 2);
	check(&c->call[1], 1, b, 1);
	check(&c->call[2], 0, 0x10, 0);
	bt_calls_free(c);
	/* Without names, the jumps stay in one segment. */
	c = build(br, 3, NULL);
	assert_int_equal(c->count, 2);
	check(&c->call[0], 1, a + 1, 3);
	bt_calls_free(c);
	bt_symtab_free(st);
}

static void empty(void **state)
{
	struct bt_calls *c = build(NULL, 0, NULL);

	assert_int_equal(c->count, 0);
	bt_calls_free(c);
}

static void null(void **state)
{
	struct bt_history h = { 0 };
	struct bt_calls *c;

	assert_int_equal(bt_calls_build(NULL, NULL, &c), -bte_invalid);
	assert_int_equal(bt_calls_build(&h, NULL, NULL), -bte_invalid);
	bt_calls_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nesting),
		cmocka_unit_test(gap),
		cmocka_unit_test(tail_call),
		cmocka_unit_test(empty),
		cmocka_unit_test(null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
