// SPDX-License-Identifier: MIT
/*
 * Where the recorder puts a zone (rec_room_pick): within a rel32's reach
 * of the code, 256 MiB or more below it where maps show room, else 512
 * MiB or more above, never over a mapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rec/recorder_int.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define SIZE (16 * MiB)

/* @at is a zone's place within reach of @near, clear of @used. */
static void check_place(const uint64_t (*used)[2], size_t n, uint64_t near,
			uint64_t at)
{
	size_t i;

	assert_true(at != 0);
	assert_true(at % MiB == 0);
	assert_true(at + SIZE <= near + 2 * GiB && at + 2 * GiB >= near);
	for (i = 0; i < n; i++)
		assert_true(at + SIZE <= used[i][0] || at >= used[i][1]);
}

/* A PIE's code with nothing below it: just under 256 MiB below. */
static void room_below(void **state)
{
	const uint64_t used[][2] = {
		{ 0x555555554000ull, 0x555555600000ull },
		{ 0x7ffff7dd0000ull, 0x7ffff7ff0000ull },
	};
	uint64_t near = 0x555555560000ull;
	uint64_t at = rec_room_pick(used, 2, near, SIZE);

	(void)state;
	check_place(used, 2, near, at);
	assert_true(at + SIZE <= near - 256 * MiB);
	assert_true(at + SIZE > near - 257 * MiB);
}

/* Earlier zones and mappings below: under them, still within reach. */
static void room_below_taken(void **state)
{
	uint64_t near = 0x555555560000ull;
	const uint64_t used[][2] = {
		{ near - GiB, near - 200 * MiB },
		{ 0x555555554000ull, 0x555555600000ull },
	};
	uint64_t at = rec_room_pick(used, 2, near, SIZE);

	(void)state;
	check_place(used, 2, near, at);
	assert_true(at + SIZE <= near - GiB);
	assert_true(at + SIZE > near - GiB - 2 * MiB);
}

/* No room below within reach: above, 512 MiB or more up. */
static void room_above(void **state)
{
	uint64_t near = 0x555555560000ull;
	const uint64_t used[][2] = {
		{ near - 3 * GiB, 0x555555600000ull },
		{ near + 600 * MiB, near + 700 * MiB },
	};
	uint64_t at = rec_room_pick(used, 2, near, SIZE);

	(void)state;
	check_place(used, 2, near, at);
	assert_true(at >= near + 512 * MiB);
	assert_true(at + SIZE <= near + 600 * MiB);
}

/* Code low in memory (a non-PIE executable): nothing below fits. */
static void room_low_code(void **state)
{
	const uint64_t used[][2] = { { 0x400000, 0x4c0000 } };
	uint64_t at = rec_room_pick(used, 1, 0x400000, SIZE);

	(void)state;
	check_place(used, 1, 0x400000, at);
	assert_int_equal(at, 0x20400000);
}

/* Everything within reach taken: none. */
static void room_none(void **state)
{
	uint64_t near = 0x555555560000ull;
	const uint64_t used[][2] = { { near - 3 * GiB, near + 3 * GiB } };

	(void)state;
	assert_int_equal(rec_room_pick(used, 1, near, SIZE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(room_below),
		cmocka_unit_test(room_below_taken),
		cmocka_unit_test(room_above),
		cmocka_unit_test(room_low_code),
		cmocka_unit_test(room_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
