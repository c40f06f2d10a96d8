/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_DOCTOR_H
#define BTRACE_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

#include "btrace/capture.h"
#include "btrace/target.h"

/*
 * What can trace on this machine, and why not.
 *
 * Two steps, so that the verdicts can be tested on any host: gather the
 * facts of a host (struct bt_host: CPUID, sysfs, /proc, limits, and a
 * trial perf_event_open of each hardware backend), then evaluate them into
 * checks (struct bt_doctor), each with a state, the value found and, for
 * every "no", its remedy.  bt_backend_probe() gives the same verdicts.
 */

struct bt_host {
	struct bt_cpu cpu;
	char cpu_name[64];	/* CPUID brand string, "" if none */
	int hypervisor;		/* CPUID.1:ECX[31] or /sys/hypervisor */
	char hv_name[16];	/* CPUID 0x40000000 vendor or sysfs type */
	int cpuid_pt;		/* CPUID.(7,0):EBX[25]: Intel PT */
	int cpuid_ds;		/* CPUID.1:EDX[21]: debug store (BTS) */
	int pmu_pt;		/* sysfs intel_pt PMU */
	int pmu_core;		/* sysfs core PMU (cpu, cpu_core) */
	char pmus[160];		/* the PMUs in sysfs, space-separated */
	int paranoid;		/* perf_event_paranoid; BT_HOST_UNKNOWN */
	uint64_t cap_eff;	/* CapEff of /proc/self/status */
	int ptrace_scope;	/* yama; BT_HOST_UNKNOWN if no yama */
	uint64_t memlock;	/* RLIMIT_MEMLOCK soft limit, bytes */
	int64_t mlock_kb;	/* perf_event_mlock_kb; BT_HOST_UNKNOWN */
	int ncpu;		/* online CPUs (perf's mlock allowance is per CPU) */
	int pt_open;		/* trial open: 0, -errno, BT_HOST_UNTRIED */
	int bts_open;
};

#define BT_HOST_UNKNOWN (-1000)
#define BT_HOST_UNTRIED 1
#define BT_MEMLOCK_INFINITY UINT64_MAX

/* Capability bits of CapEff. */
#define BT_CAP_IPC_LOCK 14
#define BT_CAP_SYS_PTRACE 19
#define BT_CAP_SYS_ADMIN 21
#define BT_CAP_PERFMON 38

/* Gather the facts of this host (never fails; unknowns are marked). */
void bt_host_read(struct bt_host *host);

enum bt_check_state {
	BT_CHECK_INFO = 0,	/* a fact, no verdict */
	BT_CHECK_YES,
	BT_CHECK_NO,		/* with a remedy */
	BT_CHECK_WARN,		/* works, with a limit; with a remedy */
};

struct bt_check {
	const char *name;	/* "cpu", "intel_pt", "perf_event_paranoid", ... */
	int state;		/* enum bt_check_state */
	char value[160];	/* what was found */
	char remedy[240];	/* what to do, for NO and WARN; "" otherwise */
};

#define BT_DOCTOR_MAX_CHECKS 16

struct bt_doctor {
	struct bt_check check[BT_DOCTOR_MAX_CHECKS];
	size_t count;
	/* Per enum bt_backend (AUTO unused): usable, else why not + remedy. */
	int usable[BT_BACKEND_MAX];
	int error[BT_BACKEND_MAX];	/* 0, -bte_perm or -bte_nosys */
	char why[BT_BACKEND_MAX][512];
	char reason[BT_BACKEND_MAX][160];	/* why, short: no remedy */
};

/* Evaluate @host into @doc (pure: no system access). */
void bt_doctor_eval(const struct bt_host *host, struct bt_doctor *doc);

/*
 * Gather this host's facts and judge @backend: 0 if usable, else -bte_perm
 * (a permission or limit can be lifted) or -bte_nosys (no such hardware or
 * kernel support), with the reason and its remedy in @why.  The probe of
 * the pt and bts backends behind bt_backend_probe().
 */
int bt_doctor_probe(int backend, char *why, size_t size);

/*
 * The backend --backend auto takes here (in the registry's order: pt, then
 * bts, then soft; -bte_nosys if none can trace) and, in @why, what it
 * passed over and why: "pt: no Intel PT ...; bts: ...", or "" when pt
 * itself is usable.
 */
int bt_doctor_auto(char *why, size_t size);

/* Whether any hardware backend (pt, bts) is usable. */
int bt_doctor_hw_usable(const struct bt_doctor *doc);

/* "info", "yes", "no", "warn". */
const char *bt_check_state_name(int state);

#endif /* BTRACE_DOCTOR_H */
