// SPDX-License-Identifier: MIT
/*
 * lib/mem.c's arrays: zeroed when made, their contents kept through every
 * grow (within the heap, from the heap into a mapping, mapping to larger
 * mapping, and back down), and from 2 MiB up a mapping of its own that
 * asked for huge pages (its VmFlags in /proc/self/smaps hold "hg"), whose
 * pages go back to the system when it is freed; and its slabs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* The VmFlags line of the mapping holding @p, "" if none. */
static void vmflags_of(const void *p, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0;

	out[0] = '\0';
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && !strncmp(line, "VmFlags:", 8)) {
			snprintf(out, len, "%.200s", line + 8);
			break;
		}
	}
	fclose(f);
}

static int mapped(const void *p)
{
	char flags[256];

	vmflags_of(p, flags, sizeof(flags));
	return flags[0] != '\0';
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131 + seed);
}

static void check(const uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (uint8_t)(i * 131 + seed))
			fail_msg("byte %zu of %zu differs", i, n);
}

static void zeroed(const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			fail_msg("byte %zu of %zu not zero", i, n);
}

/* Every size class made zeroed, written whole, freed. */
static void test_alloc_zeroed(void **state)
{
	static const size_t sizes[] = { 1, 100, 255 * KiB, 256 * KiB,
					2 * MiB - 1, 2 * MiB, 3 * MiB + 5 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint8_t *p = bt_big_alloc(sizes[i]);

		assert_non_null(p);
		zeroed(p, sizes[i]);
		fill(p, sizes[i], (unsigned)i);
		check(p, sizes[i], (unsigned)i);
		bt_big_free(p, sizes[i]);
	}
	bt_big_free(NULL, 5 * MiB);	/* nothing */
}

/* Doubling from 4 KiB to 16 MiB and halving back: what was written stays. */
static void test_grow_keeps(void **state)
{
	size_t n = 4 * KiB, keep;
	uint8_t *p = bt_big_alloc(n);

	(void)state;
	assert_non_null(p);
	fill(p, n, 7);
	while (n < 16 * MiB) {
		uint8_t *q = bt_big_grow(p, n, 2 * n);

		assert_non_null(q);
		check(q, n, 7);
		p = q;
		fill(p + n, n, (unsigned)(7 + n));	/* the new half */
		keep = n;
		n *= 2;
		check(p + keep, keep, (unsigned)(7 + keep));
		fill(p, n, 7);
	}
	while (n > 4 * KiB) {
		uint8_t *q = bt_big_grow(p, n, n / 2);

		assert_non_null(q);
		n /= 2;
		check(q, n, 7);
		p = q;
	}
	bt_big_free(p, n);
	p = bt_big_grow(NULL, 0, 3 * MiB);	/* from nothing: made */
	assert_non_null(p);
	zeroed(p, 3 * MiB);
	bt_big_free(p, 3 * MiB);
}

/* From 2 MiB up a mapping of its own asking for huge pages; below 256 KiB
 * the heap's; freed, the mapping is gone. */
static void test_huge_pages(void **state)
{
	char flags[256];
	uint8_t *big = bt_big_alloc(4 * MiB), *mid = bt_big_alloc(512 * KiB);

	(void)state;
	assert_non_null(big);
	assert_non_null(mid);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK) != 0) {
		/* a kernel without them: madvise refuses, the rest holds */
		bt_big_free(big, 4 * MiB);
		bt_big_free(mid, 512 * KiB);
		skip();
	}
	vmflags_of(big, flags, sizeof(flags));
	assert_non_null(strstr(flags, " hg"));
	vmflags_of(mid, flags, sizeof(flags));
	assert_null(strstr(flags, " hg"));	/* a mapping, small pages */
	big = bt_big_grow(big, 4 * MiB, 8 * MiB);
	assert_non_null(big);
	vmflags_of(big, flags, sizeof(flags));
	assert_non_null(strstr(flags, " hg"));	/* still, grown */
	bt_big_free(big, 8 * MiB);
	assert_false(mapped(big));
	bt_big_free(mid, 512 * KiB);
}

/* Slabs: things zeroed and apart, each slab twice the one before up to
 * 2 MiB (then a mapping that asked for huge pages), newest first. */
static void test_slabs(void **state)
{
	struct bt_slab *slabs = NULL, *s;
	size_t i, n = 0, item = 40, caps[64];
	uint8_t *prev = NULL;

	(void)state;
	for (i = 0; i < 200000; i++) {
		uint8_t *p = bt_slab_take(&slabs, item, 1000);

		assert_non_null(p);
		zeroed(p, item);
		memset(p, 0xa5, item);
		if (prev)
			assert_true(p >= prev + item || p + item <= prev);
		prev = p;
	}
	for (s = slabs; s; s = s->next) {
		assert_true(n < 64);
		assert_true(s->used <= s->cap);
		assert_true(sizeof(*s) + s->cap * item <= 2 * MiB);
		caps[n++] = s->cap;
	}
	assert_int_equal(caps[n - 1], 1000);	/* the first, last listed */
	for (i = n - 1; i > 0; i--)
		assert_true(caps[i - 1] == 2 * caps[i] ||
			    caps[i - 1] == (2 * MiB - sizeof(*s)) / item);
	if (access("/sys/kernel/mm/transparent_hugepage", F_OK) == 0) {
		char flags[256];

		vmflags_of(slabs, flags, sizeof(flags));
		assert_non_null(strstr(flags, " hg"));
	}
	bt_slabs_free(&slabs, item);
	assert_null(slabs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_zeroed),
		cmocka_unit_test(test_grow_keeps),
		cmocka_unit_test(test_huge_pages),
		cmocka_unit_test(test_slabs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
