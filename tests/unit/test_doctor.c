// SPDX-License-Identifier: MIT
/* btrace doctor's verdicts on described hosts, and on this one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "btrace/btrace.h"
#include "btrace/doctor.h"

/* An Intel bare-metal host where everything works. */
static void good_host(struct bt_host *h)
{
	memset(h, 0, sizeof(*h));
	h->cpu.vendor = BT_CPU_INTEL;
	h->cpu.family = 6;
	h->cpu.model = 0x55;
	h->cpuid_pt = h->cpuid_ds = 1;
	h->pmu_pt = h->pmu_core = 1;
	h->paranoid = 2;
	h->ptrace_scope = 1;
	h->memlock = 8 << 20;
	h->mlock_kb = 516;
	h->ncpu = 4;
	h->pt_open = h->bts_open = 0;
}

static const struct bt_check *find(const struct bt_doctor *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		if (!strcmp(d->check[i].name, name))
			return &d->check[i];
	fail_msg("no check %s", name);
	return NULL;
}

/* Every "no" and "warn" comes with a remedy. */
static void assert_remedies(const struct bt_doctor *d)
{
	size_t i;

	for (i = 0; i < d->count; i++) {
		int needs = d->check[i].state == BT_CHECK_NO ||
			    d->check[i].state == BT_CHECK_WARN;

		if (needs && !d->check[i].remedy[0])
			fail_msg("%s: no remedy", d->check[i].name);
	}
}

static void eval(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	bt_doctor_eval(&h, &d);
	assert_true(d.usable[BT_BACKEND_PT]);
	assert_true(d.usable[BT_BACKEND_BTS]);
	assert_true(d.usable[BT_BACKEND_SOFT]);
	assert_true(bt_doctor_hw_usable(&d));
	assert_int_equal(find(&d, "intel_pt")->state, BT_CHECK_YES);
	assert_int_equal(find(&d, "ptrace_scope")->state, BT_CHECK_WARN);
	assert_string_equal(d.why[BT_BACKEND_PT], "");
	assert_remedies(&d);
}

static void eval_amd(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.cpu.vendor = BT_CPU_AMD;
	h.cpuid_pt = h.pmu_pt = 0;
	bt_doctor_eval(&h, &d);
	assert_false(bt_doctor_hw_usable(&d));
	assert_true(d.usable[BT_BACKEND_SOFT]);
	assert_non_null(strstr(d.why[BT_BACKEND_BTS], "AMD CPUs have no BTS"));
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "no Intel PT"));
	assert_int_equal(d.error[BT_BACKEND_PT], -bte_nosys);
	assert_int_equal(d.error[BT_BACKEND_BTS], -bte_nosys);
	assert_int_equal(d.error[BT_BACKEND_SOFT], 0);
	assert_string_equal(d.reason[BT_BACKEND_BTS], "AMD CPUs have no BTS");
	assert_remedies(&d);
}

/* A VM: PT hidden by the hypervisor, no virtual PMU. */
static void eval_vm(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.hypervisor = 1;
	h.cpuid_pt = h.pmu_pt = h.pmu_core = 0;
	bt_doctor_eval(&h, &d);
	assert_false(bt_doctor_hw_usable(&d));
	assert_int_equal(find(&d, "hypervisor")->state, BT_CHECK_WARN);
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "pt_mode=1"));
	assert_non_null(strstr(d.why[BT_BACKEND_BTS], "no hardware PMU"));
	assert_remedies(&d);
}

/* Debian's level 3 without capabilities; then with CAP_PERFMON. */
static void eval_paranoid(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.paranoid = 3;
	bt_doctor_eval(&h, &d);
	assert_false(bt_doctor_hw_usable(&d));
	assert_int_equal(find(&d, "perf_event_paranoid")->state, BT_CHECK_NO);
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "perf_event_paranoid is 3"));
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "perf_event_paranoid=2"));
	assert_int_equal(d.error[BT_BACKEND_PT], -bte_perm);
	assert_int_equal(d.error[BT_BACKEND_BTS], -bte_perm);
	assert_remedies(&d);
	h.cap_eff = 1ull << BT_CAP_PERFMON;
	bt_doctor_eval(&h, &d);
	assert_true(d.usable[BT_BACKEND_PT]);
}

/* The kernel says no at the trial open. */
static void eval_open_fails(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.pt_open = -16;	/* EBUSY */
	h.bts_open = -95;	/* EOPNOTSUPP */
	bt_doctor_eval(&h, &d);
	assert_false(bt_doctor_hw_usable(&d));
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "exclude each other"));
	assert_non_null(strstr(d.why[BT_BACKEND_BTS], "perf_event_open(bts)"));
	assert_remedies(&d);
}

static void eval_ptrace(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.ptrace_scope = 3;
	bt_doctor_eval(&h, &d);
	assert_false(d.usable[BT_BACKEND_SOFT]);
	assert_false(d.usable[BT_BACKEND_PT]);
	assert_false(d.usable[BT_BACKEND_AUTO]);
	assert_non_null(strstr(d.why[BT_BACKEND_PT], "reboot"));
	assert_remedies(&d);
	h.ptrace_scope = 2;
	h.cap_eff = 1ull << BT_CAP_SYS_PTRACE;
	bt_doctor_eval(&h, &d);
	assert_true(d.usable[BT_BACKEND_SOFT]);
}

/* Without CAP_IPC_LOCK a small limit shrinks buffers: a warning. */
static void eval_memlock(void **state)
{
	struct bt_doctor d;
	struct bt_host h;

	good_host(&h);
	h.memlock = 64 << 10;
	h.mlock_kb = 128;
	h.ncpu = 2;
	bt_doctor_eval(&h, &d);
	assert_int_equal(find(&d, "mlock")->state, BT_CHECK_WARN);
	assert_non_null(strstr(find(&d, "mlock")->remedy, "ulimit -l"));
	h.cap_eff = 1ull << BT_CAP_IPC_LOCK;
	bt_doctor_eval(&h, &d);
	assert_int_equal(find(&d, "mlock")->state, BT_CHECK_YES);
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* This host's facts agree with what the system says. */
static void host_read(void **state)
{
	struct bt_host h;
	struct bt_cpu cpu;
	struct bt_doctor d;
	struct stat st;

	bt_host_read(&h);
	bt_cpu_read(&cpu);
	assert_int_equal(h.cpu.vendor, cpu.vendor);
	assert_int_equal(h.cpu.model, cpu.model);
	assert_int_equal(h.paranoid,
			 read_int("/proc/sys/kernel/perf_event_paranoid"));
	assert_int_equal(h.pmu_pt, stat("/sys/bus/event_source/devices/intel_pt",
					 &st) == 0);
	bt_doctor_eval(&h, &d);
	if (!h.pmu_pt) {
		char why[512];

		assert_false(d.usable[BT_BACKEND_PT]);
		/* the probe says the same, with the reason */
		assert_int_equal(bt_doctor_probe(BT_BACKEND_PT, why, sizeof(why)),
				 d.error[BT_BACKEND_PT]);
		assert_string_equal(why, d.why[BT_BACKEND_PT]);
	}
	assert_int_equal(bt_doctor_probe(BT_BACKEND_AUTO, NULL, 0), -bte_invalid);
	/* auto takes the first usable of pt, bts, soft, and says why */
	{
		char why[1024];
		int b = bt_doctor_auto(why, sizeof(why));

		if (d.usable[BT_BACKEND_PT]) {
			assert_int_equal(b, BT_BACKEND_PT);
			assert_string_equal(why, "");
		} else {
			assert_memory_equal(why, "pt: ", 4);
			assert_non_null(strstr(why, d.reason[BT_BACKEND_PT]));
			assert_int_equal(b, d.usable[BT_BACKEND_BTS] ?
				 BT_BACKEND_BTS : BT_BACKEND_SOFT);
		}
	}
	if (h.cpu.vendor != BT_CPU_INTEL)
		assert_false(d.usable[BT_BACKEND_BTS]);
	assert_remedies(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(eval),
		cmocka_unit_test(eval_amd),
		cmocka_unit_test(eval_vm),
		cmocka_unit_test(eval_paranoid),
		cmocka_unit_test(eval_open_fails),
		cmocka_unit_test(eval_ptrace),
		cmocka_unit_test(eval_memlock),
		cmocka_unit_test(host_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
