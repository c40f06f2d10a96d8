// SPDX-License-Identifier: MIT
/*
 * The symbol layer's options (bt_symtab_opts), PLT stub names and
 * bt_symtab_add_elf, on this very process (a PIE calling puts through its
 * PLT).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "btrace/btrace.h"

static __attribute__((noinline)) int target_function(int x)
{
	return x * 3 + 1;
}

static void check_opts(void **state)
{
	struct bt_symtab_opts o = { .size = sizeof(o) };

	assert_int_equal(bt_symtab_check_opts(NULL), 0);
	assert_int_equal(bt_symtab_check_opts(&o), 0);
	o.debug_dir = "/:/tmp";
	assert_int_equal(bt_symtab_check_opts(&o), 0);
	o.debug_dir = "";
	assert_int_equal(bt_symtab_check_opts(&o), 0);
	o.debug_dir = "/tmp:/no/such/dir/here";
	assert_int_equal(bt_symtab_check_opts(&o), -bte_noent);
	assert_non_null(strstr(bt_errdetail(), "'/no/such/dir/here'"));
	o.debug_dir = "/proc/self/exe";
	assert_int_equal(bt_symtab_check_opts(&o), -bte_invalid);
	/* Fields beyond the size the caller knew are not read. */
	o.size = offsetof(struct bt_symtab_opts, debug_dir);
	assert_int_equal(bt_symtab_check_opts(&o), 0);
}

static void alloc_bad_dir(void **state)
{
	struct bt_symtab_opts o = { .size = sizeof(o),
				    .debug_dir = "/no/such/dir/here" };
	struct bt_symtab *st = (void *)1;

	assert_int_equal(bt_symtab_alloc(&st, &o), -bte_noent);
	assert_null(st);
	assert_int_equal(bt_symtab_from_pid_opts(&st, getpid(), &o),
			 -bte_noent);
	assert_int_equal(bt_symtab_alloc(NULL, NULL), -bte_invalid);
}

/* puts@plt of this program: named, sized, jumping through puts's slot. */
static void check_plt(struct bt_symtab *st)
{
	uint64_t plt = bt_symtab_addr(st, "puts@plt"), slot;
	const uint8_t *p = (const uint8_t *)(uintptr_t)plt;
	struct bt_sym sym;
	int32_t disp;

	assert_true(plt != 0);
	assert_int_equal(bt_symtab_lookup(st, plt, &sym), 0);
	assert_string_equal(sym.name, "puts@plt");
	assert_int_equal(sym.offset, 0);
	assert_string_equal(sym.module, "test_symbols_debug");
	assert_null(sym.file);
	assert_int_equal(bt_symtab_lookup(st, plt + 6, &sym), 0);
	assert_string_equal(sym.name, "puts@plt");
	assert_int_equal(sym.offset, 6);
	/* The stub is jmp *disp(%rip) through the slot that holds puts. */
	if (p[0] == 0xf3)	/* endbr64; bnd */
		p += 5;
	assert_int_equal(p[0], 0xff);
	assert_int_equal(p[1], 0x25);
	memcpy(&disp, p + 2, sizeof(disp));
	slot = (uintptr_t)p + 6 + disp;
	assert_int_equal(*(uint64_t *)(uintptr_t)slot, (uintptr_t)&puts);
}

static void plt_from_pid(void **state)
{
	struct bt_symtab *st;

	puts("binding puts@plt");	/* the slot holds puts from now on */
	assert_int_equal(bt_symtab_from_pid(&st, getpid()), 0);
	check_plt(st);
	bt_symtab_free(st);
}

/* This program's file as an ELF at its load bias. */
static void add_elf(void **state)
{
	struct bt_symtab *st;
	struct bt_sym sym;
	char exe[4096];
	Dl_info info;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_true(dladdr((void *)target_function, &info) != 0);
	puts("binding puts@plt");
	assert_int_equal(bt_symtab_alloc(&st, NULL), 0);
	assert_int_equal(bt_symtab_lookup(st, (uintptr_t)target_function, &sym),
			 -bte_noent);
	assert_int_equal(bt_symtab_add_elf(st, exe, (uintptr_t)info.dli_fbase),
			 0);
	assert_int_equal(bt_symtab_lookup(st, (uintptr_t)target_function, &sym),
			 0);
	assert_string_equal(sym.name, "target_function");
	assert_string_equal(sym.file, "test_symbols_debug.c");
	check_plt(st);
	assert_int_equal(bt_symtab_add_elf(st, "/no/such/file", 0), -bte_noent);
	assert_int_equal(bt_symtab_add_elf(st, "/proc/self/status", 0x1000),
			 -bte_format);
	assert_int_equal(bt_symtab_add_elf(NULL, exe, 0), -bte_invalid);
	/* Still as it was. */
	assert_int_equal(bt_symtab_lookup(st, (uintptr_t)target_function, &sym),
			 0);
	bt_symtab_free(st);
}

static int fetches;

static void count_fetch(void *ctx, const char *what)
{
	assert_true(what[0] == '/' || !strcmp(what, "[vdso]"));
	fetches++;
}

/*
 * On: the modules without debug info here (the vDSO at least) are asked
 * for, and each download said, even when the server refuses (port 1).
 */
static void debuginfod_fetch(void **state)
{
	struct bt_symtab_opts o = { .size = sizeof(o), .fetch = count_fetch };
	char cache[] = "/tmp/test_symbols_debug.XXXXXX", cmd[64];
	struct bt_symtab *st;

	assert_non_null(mkdtemp(cache));
	assert_int_equal(setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1), 0);
	assert_int_equal(setenv("DEBUGINFOD_CACHE_PATH", cache, 1), 0);
	fetches = 0;
	assert_int_equal(bt_symtab_from_pid_opts(&st, getpid(), &o), 0);
	assert_true(fetches > 0);
	bt_symtab_free(st);
	unsetenv("DEBUGINFOD_URLS");
	unsetenv("DEBUGINFOD_CACHE_PATH");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache);
	assert_int_equal(system(cmd), 0);
}

/* A listening socket on 127.0.0.1: its "http://127.0.0.1:PORT". */
static int listener(char *url, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	snprintf(url, size, "http://127.0.0.1:%d", ntohs(a.sin_port));
	return fd;
}

/*
 * Off: DEBUGINFOD_URLS is emptied while the symtab loads and restored
 * after; the server named there is never connected to.
 */
static void no_debuginfod(void **state)
{
	struct bt_symtab_opts o = { .size = sizeof(o), .no_debuginfod = 1,
				    .fetch = count_fetch };
	struct bt_symtab *st;
	char url[64];
	int fd = listener(url, sizeof(url));

	assert_int_equal(setenv("DEBUGINFOD_URLS", url, 1), 0);
	fetches = 0;
	assert_int_equal(bt_symtab_from_pid_opts(&st, getpid(), &o), 0);
	assert_string_equal(getenv("DEBUGINFOD_URLS"), url);
	assert_int_equal(fetches, 0);
	assert_int_equal(accept(fd, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	check_plt(st);
	bt_symtab_free(st);
	unsetenv("DEBUGINFOD_URLS");
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(check_opts),
		cmocka_unit_test(alloc_bad_dir),
		cmocka_unit_test(plt_from_pid),
		cmocka_unit_test(add_elf),
		cmocka_unit_test(debuginfod_fetch),
		cmocka_unit_test(no_debuginfod),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
