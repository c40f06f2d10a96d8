// SPDX-License-Identifier: MIT
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "btrace/btrace.h"

static int line_of_target;

static __attribute__((noinline)) int target_function(int x)
{
	line_of_target = __LINE__; return x * 3 + 1;
}

/* An address inside target_function, in its body. */
static uint64_t target_addr(void)
{
	return (uint64_t)(uintptr_t)target_function;
}

static void check_target(struct bt_symtab *st)
{
	struct bt_sym sym;
	char buf[128];

	assert_int_equal(bt_symtab_lookup(st, target_addr() + 1, &sym), 0);
	assert_non_null(sym.name);
	assert_string_equal(sym.name, "target_function");
	assert_int_equal(sym.offset, 1);
	assert_non_null(sym.file);
	assert_string_equal(sym.file, "test_symbols.c");
	assert_in_range(sym.line, line_of_target - 3, line_of_target);
	assert_string_equal(sym.module, "test_symbols");
	assert_string_equal(bt_sym_format(&sym, target_addr() + 1, buf,
					  sizeof(buf)),
			    "target_function+0x1");
}

static void from_pid(void **state)
{
	struct bt_symtab *st;
	struct bt_sym sym;
	uint64_t addr;

	target_function(1);
	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	check_target(st);
	/* PIE: the address found by name is the one the program uses. */
	assert_int_equal(bt_symtab_addr(st, "target_function"), target_addr());
	assert_int_equal(bt_symtab_addr(st, "no_such_function_here"), 0);

	/* A shared library. */
	addr = (uint64_t)(uintptr_t)&getpid;
	assert_int_equal(bt_symtab_lookup(st, addr, &sym), 0);
	assert_non_null(sym.module);
	assert_string_equal(sym.module, "libc.so.6");
	assert_non_null(sym.name);
	assert_true(strstr(sym.name, "getpid") != NULL);

	/* The vDSO, read from memory. */
	addr = bt_symtab_addr(st, "__vdso_clock_gettime");
	assert_true(addr != 0);
	assert_int_equal(bt_symtab_lookup(st, addr, &sym), 0);
	assert_string_equal(sym.module, "[vdso]");
	assert_true(addr > getauxval(AT_SYSINFO_EHDR));

	/* Cached: the same answer twice. */
	assert_int_equal(bt_symtab_lookup(st, addr, &sym), 0);
	assert_string_equal(sym.module, "[vdso]");
	bt_symtab_free(st);
}

static void from_pid_dead(void **state)
{
	struct bt_symtab *st;
	struct bt_sym sym;
	pid_t child;

	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	assert_int_equal(bt_symtab_from_pid(&st, child), 0);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* The child is gone: what it mapped still resolves. */
	check_target(st);
	assert_true(bt_symtab_addr(st, "__vdso_clock_gettime") != 0);
	assert_int_equal(bt_symtab_lookup(st, bt_symtab_addr(st,
					"__vdso_clock_gettime"), &sym), 0);
	bt_symtab_free(st);
}

static void from_pid_null(void **state)
{
	struct bt_symtab *st;
	struct bt_sym sym;
	char buf[32];

	assert_int_equal(bt_symtab_from_pid(NULL, getpid()), -bte_invalid);
	assert_true(bt_symtab_from_pid(&st, 0x7ffffff0) < 0);
	bt_symtab_free(NULL);
	assert_int_equal(bt_symtab_lookup(NULL, 0x1000, &sym), -bte_invalid);
	assert_int_equal(bt_symtab_addr(NULL, "main"), 0);
	assert_string_equal(bt_sym_format(NULL, 0x1234, buf, sizeof(buf)),
			    "0x1234");
}

/* /proc/self/maps, parsed here so the test does not rely on maps.c. */
static void read_self_maps(struct bt_maps *maps)
{
	char line[4096], path[4096], perm[8];
	unsigned long long start, end, off;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	memset(maps, 0, sizeof(*maps));
	maps->map = calloc(512, sizeof(*maps->map));
	while (fgets(line, sizeof(line), f) && maps->count < 512) {
		struct bt_map *m = &maps->map[maps->count];

		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &start,
			   &end, perm, &off, path) < 4)
			continue;
		m->start = start;
		m->end = end;
		m->offset = off;
		m->prot = (perm[0] == 'r') | (perm[1] == 'w') << 1 |
			  (perm[2] == 'x') << 2;
		m->path = path[0] ? strdup(path) : NULL;
		maps->count++;
	}
	fclose(f);
}

static void from_maps(void **state)
{
	struct bt_symtab *st;
	struct bt_maps maps;
	struct bt_sym sym;
	size_t i;

	read_self_maps(&maps);
	assert_int_equal(bt_symtab_from_maps(&st, &maps), 0);
	check_target(st);
	assert_int_equal(bt_symtab_lookup(st, (uintptr_t)&getpid, &sym), 0);
	assert_string_equal(sym.module, "libc.so.6");
	/* A build-id that does not match: the file is not trusted. */
	bt_symtab_free(st);
	for (i = 0; i < maps.count; i++) {
		maps.map[i].build_id_len = 20;
		memset(maps.map[i].build_id, 0xab, 20);
	}
	assert_int_equal(bt_symtab_from_maps(&st, &maps), 0);
	assert_int_equal(bt_symtab_lookup(st, target_addr(), &sym),
			 -bte_noent);
	bt_symtab_free(st);
	for (i = 0; i < maps.count; i++)
		free(maps.map[i].path);
	free(maps.map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(from_pid),
		cmocka_unit_test(from_pid_dead),
		cmocka_unit_test(from_pid_null),
		cmocka_unit_test(from_maps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
