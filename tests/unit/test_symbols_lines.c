// SPDX-License-Identifier: MIT
/* bt_symtab_foreach and bt_symtab_line_addr, on this very process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "btrace/btrace.h"

static int line_of_body;

int lines_function(int x);

__attribute__((noinline)) int lines_function(int x)
{
	line_of_body = __LINE__; return x * 5 + 2;
}

static uint64_t fn_addr(void)
{
	return (uint64_t)(uintptr_t)lines_function;
}

struct seen {
	uint64_t addr;
	size_t count;
	int stop_after;
};

static int collect(const char *name, uint64_t addr, void *ctx)
{
	struct seen *s = ctx;

	s->count++;
	if (!strcmp(name, "lines_function"))
		s->addr = addr;
	return s->stop_after && (int)s->count >= s->stop_after ? 42 : 0;
}

static void foreach(void **state)
{
	struct bt_symtab *st;
	struct seen s = { 0 };

	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	assert_int_equal(bt_symtab_foreach(st, collect, &s), 0);
	assert_int_equal(s.addr, fn_addr());
	/* libc alone has well over a thousand functions. */
	assert_true(s.count > 1000);

	/* A non-zero return stops the walk and comes back. */
	memset(&s, 0, sizeof(s));
	s.stop_after = 3;
	assert_int_equal(bt_symtab_foreach(st, collect, &s), 42);
	assert_int_equal(s.count, 3);
	bt_symtab_free(st);
}

static void foreach_null(void **state)
{
	struct seen s = { 0 };

	assert_int_equal(bt_symtab_foreach(NULL, collect, &s), -bte_invalid);
	assert_int_equal(s.count, 0);
}

static void line_addr(void **state)
{
	struct bt_symtab *st;
	struct bt_sym sym;
	uint64_t addr;

	lines_function(1);
	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	addr = bt_symtab_line_addr(st, "test_symbols_lines.c", line_of_body);
	assert_true(addr != 0);
	/* The code of that line is inside the function, and maps back. */
	assert_int_equal(bt_symtab_lookup(st, addr, &sym), 0);
	assert_string_equal(sym.name, "lines_function");
	assert_int_equal(sym.line, line_of_body);
	assert_string_equal(sym.file, "test_symbols_lines.c");

	/* The full path names the same file. */
	assert_int_equal(bt_symtab_line_addr(st, __FILE__[0] == '/' ? __FILE__
					     : "test_symbols_lines.c",
					     line_of_body), addr);
	bt_symtab_free(st);
}

static void line_addr_null(void **state)
{
	struct bt_symtab *st;

	assert_int_equal(bt_symtab_line_addr(NULL, "x.c", 1), 0);
	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	assert_int_equal(bt_symtab_line_addr(st, NULL, 1), 0);
	assert_int_equal(bt_symtab_line_addr(st, "test_symbols_lines.c", 0), 0);
	assert_int_equal(bt_symtab_line_addr(st, "no_such_file.c", 10), 0);
	/* A line with no code (this comment's, far past the end). */
	assert_int_equal(bt_symtab_line_addr(st, "test_symbols_lines.c", 100000),
			 0);
	bt_symtab_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(foreach),
		cmocka_unit_test(foreach_null),
		cmocka_unit_test(line_addr),
		cmocka_unit_test(line_addr_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
