// SPDX-License-Identifier: MIT
/* PMU sysfs parsing: format terms into attr config bits, caps, type. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "internal.h"
#include "backend/perf/perf.h"
#include "tracer/tracer.h"

static char dir[64];

static void put(const char *file, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A fake intel_pt directory, as the kernel lays it out. */
static int setup(void **state)
{
	char sub[128];

	strcpy(dir, "/tmp/btrace-pmu-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(sub, sizeof(sub), "%s/format", dir);
	mkdir(sub, 0755);
	snprintf(sub, sizeof(sub), "%s/caps", dir);
	mkdir(sub, 0755);
	put("type", "8\n");
	put("max_nonturbo_ratio", "33\n");
	put("format/pt", "config:0\n");
	put("format/branch", "config:13\n");
	put("format/psb_period", "config:24-27\n");
	put("format/split", "config1:0,2-3\n");
	put("format/wide", "config2:0-63\n");
	put("format/bad", "confix:1\n");
	put("format/noretcomp", "config:11\n");
	put("format/tsc", "config:10\n");
	put("format/mtc", "config:9\n");
	put("format/cyc", "config:1\n");
	put("caps/psb_cyc", "1\n");
	put("caps/psb_periods", "3f\n");
	return 0;
}

static void unlink_in(const char *file)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	unlink(path);
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void format_parse(void **state)
{
	uint64_t mask;
	int field;

	assert_int_equal(bt_pmu_format_parse("config:0-7", &field, &mask), 0);
	assert_int_equal(field, 0);
	assert_int_equal(mask, 0xff);
	assert_int_equal(bt_pmu_format_parse("config1:0,2-3", &field, &mask), 0);
	assert_int_equal(field, 1);
	assert_int_equal(mask, 0xd);
	assert_int_equal(bt_pmu_format_parse("config2:63", &field, &mask), 0);
	assert_int_equal(field, 2);
	assert_int_equal(mask, 1ull << 63);
	assert_int_equal(bt_pmu_format_parse("config:0-63", &field, &mask), 0);
	assert_int_equal(mask, ~0ull);
}

static void format_parse_null(void **state)
{
	uint64_t mask;
	int field;

	assert_int_equal(bt_pmu_format_parse("config", &field, &mask), -bte_format);
	assert_int_equal(bt_pmu_format_parse("config:", &field, &mask), -bte_format);
	assert_int_equal(bt_pmu_format_parse("config:7-3", &field, &mask), -bte_format);
	assert_int_equal(bt_pmu_format_parse("config:64", &field, &mask), -bte_format);
	assert_int_equal(bt_pmu_format_parse("config3x:1", &field, &mask), -bte_format);
	assert_int_equal(bt_pmu_format_parse("config:1x", &field, &mask), -bte_format);
}

static void term_set(void **state)
{
	struct perf_event_attr attr;
	uint64_t v;

	memset(&attr, 0, sizeof(attr));
	assert_int_equal(bt_pmu_term_set(dir, "pt", 1, &attr), 0);
	assert_int_equal(bt_pmu_term_set(dir, "branch", 1, &attr), 0);
	assert_int_equal(bt_pmu_term_set(dir, "psb_period", 5, &attr), 0);
	assert_int_equal(attr.config, 1 | 1 << 13 | 5 << 24);
	/* setting again replaces the term's bits only */
	assert_int_equal(bt_pmu_term_set(dir, "psb_period", 2, &attr), 0);
	assert_int_equal(attr.config, 1 | 1 << 13 | 2 << 24);
	/* value bits spread over the term's bits, lowest first */
	assert_int_equal(bt_pmu_term_set(dir, "split", 7, &attr), 0);
	assert_int_equal(attr.config1, 0xd);
	assert_int_equal(bt_pmu_term_set(dir, "wide", ~0ull, &attr), 0);
	assert_int_equal(attr.config2, ~0ull);
	/* and read back */
	assert_int_equal(bt_pmu_term_get(dir, "split", &attr, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(bt_pmu_term_get(dir, "psb_period", &attr, &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(bt_pmu_term_get(dir, "nope", &attr, &v), -bte_noent);
}

static void term_set_null(void **state)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	assert_int_equal(bt_pmu_term_set(dir, "nosuch", 1, &attr), -bte_noent);
	assert_int_equal(bt_pmu_term_set(dir, "branch", 2, &attr), -bte_invalid);
	assert_int_equal(bt_pmu_term_set(dir, "psb_period", 16, &attr),
			 -bte_invalid);
	assert_int_equal(bt_pmu_term_set(dir, "bad", 1, &attr), -bte_format);
	assert_int_equal(attr.config, 0);
}

static void pmu_caps(void **state)
{
	uint64_t v;

	assert_int_equal(bt_pmu_type(dir), 8);
	assert_int_equal(bt_pmu_cap(dir, "psb_periods", &v), 0);
	assert_int_equal(v, 0x3f);
	assert_int_equal(bt_pmu_cap(dir, "psb_cyc", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(bt_pmu_read_u64(dir, "max_nonturbo_ratio", &v), 0);
	assert_int_equal(v, 33);
	assert_int_equal(bt_pmu_cap(dir, "nosuch", &v), -bte_noent);
	assert_int_equal(bt_pmu_type("/nonexistent/pmu"), -bte_noent);
}

/* The PT attr from the PMU's own terms: user space, branches, PSB 4K. */
static void pt_attr(void **state)
{
	struct perf_event_attr attr;

	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.type, 8);
	assert_int_equal(attr.size, sizeof(attr));
	assert_true(attr.exclude_kernel && attr.exclude_hv);
	assert_false(attr.inherit);
	/* pt, branch, tsc, psb_period 1 (4 KiB: bit 1 of psb_periods 0x3f);
	 * no MTC: the PMU lists no mtc_period */
	assert_int_equal(attr.config, 1 | 1 << 13 | 1 << 10 | 1 << 24);
	/* only 8K and more on offer: the densest of them */
	put("caps/psb_periods", "3c\n");
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.config, 1 | 1 << 13 | 1 << 10 | 2 << 24);
	/* no configurable period: the term is left alone */
	put("caps/psb_cyc", "0\n");
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.config, 1 | 1 << 13 | 1 << 10);
	put("caps/psb_cyc", "1\n");
	put("caps/psb_periods", "3f\n");
}

/*
 * Timing: TSC, MTC at the period nearest perf's 3 that caps/mtc_periods
 * offers, never CYC; libipt's MTC frequency read back from the config.
 */
static void pt_attr_mtc(void **state)
{
	struct perf_event_attr attr;
	const uint64_t base = 1 | 1 << 13 | 1 << 10 | 1 << 24;

	put("format/mtc_period", "config:14-17\n");
	put("caps/mtc", "1\n");
	put("caps/mtc_periods", "249\n");	/* 0, 3, 6, 9 */
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.config, base | 1 << 9 | 3 << 14);
	assert_int_equal(bt_pt_mtc_freq(dir, attr.config), 3);
	put("caps/mtc_periods", "c0\n");	/* 6, 7 */
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.config, base | 1 << 9 | 6 << 14);
	assert_int_equal(bt_pt_mtc_freq(dir, attr.config), 6);
	put("caps/mtc_periods", "2\n");	/* 1 */
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(bt_pt_mtc_freq(dir, attr.config), 1);
	/* a CPU without MTC: off, and libipt is told so */
	put("caps/mtc", "0\n");
	assert_int_equal(bt_pt_attr_init(&attr, dir), 0);
	assert_int_equal(attr.config, base);
	assert_int_equal(bt_pt_mtc_freq(dir, attr.config | 5 << 14), 0);
	unlink_in("format/mtc_period");
	unlink_in("caps/mtc");
	unlink_in("caps/mtc_periods");
	assert_int_equal(bt_pt_mtc_freq(dir, 1 << 9 | 3 << 14), 0);
}

/*
 * perf's conversion from a control page, and CLOCK_MONOTONIC's offset
 * from it: bounded by pairs read before and after, whatever the load.
 */
static void tsc_conv(void **state)
{
	struct perf_event_mmap_page pg;
	struct bt_tsc_conv conv, zero;
	uint64_t t1, n1, t2, n2;

	memset(&pg, 0, sizeof(pg));
	pg.cap_user_time_zero = 1;
	pg.time_zero = 123456789;
	pg.time_mult = 0x2aaaaaab;
	pg.time_shift = 30;
	bt_clock_tsc_pair(&t1, &n1);
	bt_perf_tsc_conv(&pg, &conv);
	bt_clock_tsc_pair(&t2, &n2);
	assert_int_equal(conv.time_zero, 123456789);
	assert_int_equal(conv.time_mult, 0x2aaaaaab);
	assert_int_equal(conv.time_shift, 30);
	zero = conv;
	zero.mono_offset = 0;
	assert_true(conv.mono_offset >=
		    (int64_t)(n1 - bt_tsc_conv_ns(&zero, t2)));
	assert_true(conv.mono_offset <=
		    (int64_t)(n2 - bt_tsc_conv_ns(&zero, t1)));
	/* no user time from the kernel: no conversion at all */
	pg.cap_user_time_zero = 0;
	bt_perf_tsc_conv(&pg, &conv);
	memset(&zero, 0, sizeof(zero));
	assert_memory_equal(&conv, &zero, sizeof(conv));
	bt_perf_tsc_conv(NULL, &conv);
	assert_int_equal(conv.time_mult, 0);
}

static void pt_attr_null(void **state)
{
	struct perf_event_attr attr;

	assert_int_equal(bt_pt_attr_init(&attr, "/nonexistent/intel_pt"),
			 -bte_noent);
}

static void bts_attr(void **state)
{
	struct perf_event_attr attr;

	bt_bts_attr_init(&attr);
	assert_int_equal(attr.type, PERF_TYPE_HARDWARE);
	assert_int_equal(attr.config, PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
	assert_int_equal(attr.sample_period, 1);
	assert_int_equal(attr.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_ADDR);
	assert_true(attr.exclude_kernel && attr.exclude_hv);
	assert_false(attr.freq || attr.write_backward || attr.precise_ip);
}

/* The PT decoder's parameters: this CPU, the config used. */
static void pt_params(void **state)
{
	struct bt_capture cap;
	struct bt_cpu cpu;

	memset(&cap, 0, sizeof(cap));
	bt_perf_pt_params(&cap, 0x2001);
	bt_cpu_read(&cpu);
	assert_int_equal(cap.pt_config, 0x2001);
	assert_int_equal(cap.cpu.vendor, cpu.vendor);
	assert_int_equal(cap.cpu.family, cpu.family);
	assert_int_equal(cap.cpu.model, cpu.model);
	/* MTC as this host's PMU has it: none here, without intel_pt */
	assert_int_equal(cap.pt_mtc_freq,
			 bt_pt_mtc_freq(BT_PT_PMU_DIR, 0x2001));
}

/* The real sysfs of this host: the software PMU is type 1 everywhere. */
static void pmu_type_real(void **state)
{
	assert_int_equal(bt_pmu_type(BT_PMU_DIR "/software"), PERF_TYPE_SOFTWARE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_parse),
		cmocka_unit_test(format_parse_null),
		cmocka_unit_test(term_set),
		cmocka_unit_test(term_set_null),
		cmocka_unit_test(pmu_caps),
		cmocka_unit_test(pmu_type_real),
		cmocka_unit_test(pt_attr),
		cmocka_unit_test(pt_attr_null),
		cmocka_unit_test(pt_attr_mtc),
		cmocka_unit_test(tsc_conv),
		cmocka_unit_test(bts_attr),
		cmocka_unit_test(pt_params),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
