// SPDX-License-Identifier: MIT
/*
 * decoder/symbols_range.c against libdwfl itself: the ranges kept for
 * addresses libdwfl named give, for every address in them, the name and
 * offset dwfl_module_addrinfo() gives.  On the libc this test runs with
 * (and its debug file's symbol table where one is installed: thousands of
 * symbols, aliases and IFUNC variants that overlap), from seeds spread
 * over the whole module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols_range.h"

static char *debuginfo_path;

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
	const char **path = data;

	(void)size;
	if (strstr(info->dlpi_name, "/libc.so"))
		*path = info->dlpi_name;
	return 0;
}

/* A xorshift: the same seeds in every run. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void ranges_match_libdwfl(void **state)
{
	const char *libc = NULL, *name, *got;
	struct sym_ranges r;
	Dwarf_Addr low, high;
	Dwfl_Module *mod;
	uint64_t seed = 0x9e3779b97f4a7c15ull, kept = 0, checked = 0;
	Dwfl *dwfl;
	int i, j;

	(void)state;
	dl_iterate_phdr(find_libc, &libc);
	if (!libc)
		skip();
	dwfl = dwfl_begin(&callbacks);
	assert_non_null(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_offline(dwfl, "libc", libc, -1);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	assert_true(dwfl_module_getsymtab(mod) > 100);
	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);

	memset(&r, 0, sizeof(r));
	for (i = 0; i < 300; i++) {
		uint64_t addr = low + next_rand(&seed) % (high - low), off = 0;
		GElf_Off o = 0;
		GElf_Sym sym;

		name = dwfl_module_addrinfo(mod, addr, &o, &sym, NULL, NULL,
					    NULL);
		sym_ranges_add(&r, mod, addr, name, o);
		if (!sym_ranges_find(&r, addr, &off))
			continue;
		kept++;
		/* every address of the range kept, at most 40 of them */
		for (j = 0; j < 40; j++) {
			unsigned k = (r.next + SYM_RANGES - 1) % SYM_RANGES;
			uint64_t lo = r.r[k].lo, hi = r.r[k].hi;
			uint64_t span = hi - lo;
			uint64_t a = lo + (span > 40 ? next_rand(&seed) % span
					       : (uint64_t)j % span);

			got = sym_ranges_find(&r, a, &off);
			name = dwfl_module_addrinfo(mod, a, &o, &sym, NULL,
						    NULL, NULL);
			assert_non_null(got);
			assert_non_null(name);
			if (strcmp(got, name) || off != o)
				fail_msg("%#lx: kept %s+%#lx, libdwfl %s+%#lx",
					 (unsigned long)a, got,
					 (unsigned long)off, name,
					 (unsigned long)o);
			checked++;
		}
	}
	print_message("%lu ranges kept of 300 addresses, %lu addresses checked\n",
		      (unsigned long)kept, (unsigned long)checked);
	assert_true(kept > 100);
	sym_ranges_release(&r);
	dwfl_end(dwfl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranges_match_libdwfl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
