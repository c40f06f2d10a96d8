// SPDX-License-Identifier: MIT
/*
 * btrace doctor: the facts of a host (bt_host_read) and what they mean for
 * each backend (bt_doctor_eval), every "no" with its remedy.
 */
#include <cpuid.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "btrace/doctor.h"
#include "btrace/error.h"
#include "internal.h"
#include "backend/perf/perf.h"

static int read_long(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void read_cpuid(struct bt_host *h)
{
	unsigned int a, b, c, d, i;
	char brand[49] = "";

	bt_cpu_read(&h->cpu);
	if (__get_cpuid(1, &a, &b, &c, &d)) {
		h->hypervisor = (c >> 31) & 1;
		h->cpuid_ds = (d >> 21) & 1;
	}
	if (__get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		h->cpuid_pt = (b >> 25) & 1;
	}
	if (__get_cpuid_max(0x80000000, NULL) >= 0x80000004) {
		for (i = 0; i < 3; i++) {
			__cpuid(0x80000002 + i, a, b, c, d);
			memcpy(brand + 16 * i, &a, 4);
			memcpy(brand + 16 * i + 4, &b, 4);
			memcpy(brand + 16 * i + 8, &c, 4);
			memcpy(brand + 16 * i + 12, &d, 4);
		}
		brand[48] = '\0';
	}
	snprintf(h->cpu_name, sizeof(h->cpu_name), "%s",
		 brand + strspn(brand, " "));
	if (h->hypervisor) {
		__cpuid(0x40000000, a, b, c, d);
		memcpy(h->hv_name, &b, 4);
		memcpy(h->hv_name + 4, &c, 4);
		memcpy(h->hv_name + 8, &d, 4);
		h->hv_name[12] = '\0';
	}
}

static void read_hypervisor_sysfs(struct bt_host *h)
{
	FILE *f = fopen("/sys/hypervisor/type", "re");
	char type[16];

	if (!f)
		return;
	if (fscanf(f, "%15s", type) == 1) {
		h->hypervisor = 1;
		if (!h->hv_name[0])
			snprintf(h->hv_name, sizeof(h->hv_name), "%s", type);
	}
	fclose(f);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The PMU names under BT_PMU_DIR, sorted, into @buf. */
static void read_pmus(char *buf, size_t size)
{
	struct dirent *de;
	char *names[64];
	size_t n = 0, i, len = 0;
	DIR *d = opendir(BT_PMU_DIR);

	buf[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) && n < BT_ARRAY_SIZE(names))
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		if (names[i] && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len ? " " : "", names[i]);
		free(names[i]);
	}
}

static uint64_t read_cap_eff(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	uint64_t cap = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, &cap) == 1)
			break;
	fclose(f);
	return cap;
}

/* Open and close an event on this thread: what the kernel really says. */
static int trial_open(struct perf_event_attr *attr)
{
	long fd;

	attr->disabled = 1;
	fd = syscall(SYS_perf_event_open, attr, 0, -1, -1,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close((int)fd);
	return 0;
}

static void read_trials(struct bt_host *h)
{
	struct perf_event_attr attr;

	h->pt_open = h->bts_open = BT_HOST_UNTRIED;
	if (h->pmu_pt && !bt_pt_attr_init(&attr, BT_PT_PMU_DIR))
		h->pt_open = trial_open(&attr);
	/* Elsewhere than on Intel the same attr is a plain sampling counter. */
	if (h->cpu.vendor == BT_CPU_INTEL && h->pmu_core) {
		bt_bts_attr_init(&attr);
		h->bts_open = trial_open(&attr);
	}
}

void bt_host_read(struct bt_host *h)
{
	struct rlimit rl;
	long v;

	memset(h, 0, sizeof(*h));
	read_cpuid(h);
	read_hypervisor_sysfs(h);
	read_pmus(h->pmus, sizeof(h->pmus));
	h->pmu_pt = exists(BT_PT_PMU_DIR "/type");
	h->pmu_core = exists(BT_PMU_DIR "/cpu/type") ||
		      exists(BT_PMU_DIR "/cpu_core/type");
	h->paranoid = read_long("/proc/sys/kernel/perf_event_paranoid", &v) ?
		      BT_HOST_UNKNOWN : (int)v;
	h->cap_eff = read_cap_eff();
	h->ptrace_scope = read_long("/proc/sys/kernel/yama/ptrace_scope", &v) ?
			  BT_HOST_UNKNOWN : (int)v;
	h->memlock = getrlimit(RLIMIT_MEMLOCK, &rl) ? 0 :
		     rl.rlim_cur == RLIM_INFINITY ? BT_MEMLOCK_INFINITY :
		     rl.rlim_cur;
	h->mlock_kb = read_long("/proc/sys/kernel/perf_event_mlock_kb", &v) ?
		      BT_HOST_UNKNOWN : v;
	h->ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	read_trials(h);
}

const char *bt_check_state_name(int state)
{
	static const char *const names[] = { "info", "yes", "no", "warn" };

	if (state < 0 || state > BT_CHECK_WARN)
		return "?";
	return names[state];
}

static int has_cap(const struct bt_host *h, int cap)
{
	return (h->cap_eff >> cap) & 1;
}

static struct bt_check *add(struct bt_doctor *d, const char *name, int state,
			    const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static struct bt_check *add(struct bt_doctor *d, const char *name, int state,
			    const char *fmt, ...)
{
	struct bt_check *c = &d->check[d->count];
	va_list ap;

	if (d->count + 1 < BT_DOCTOR_MAX_CHECKS)
		d->count++;
	c->name = name;
	c->state = state;
	va_start(ap, fmt);
	vsnprintf(c->value, sizeof(c->value), fmt, ap);
	va_end(ap);
	c->remedy[0] = '\0';
	return c;
}

#define REMEDY(c, ...) snprintf((c)->remedy, sizeof((c)->remedy), __VA_ARGS__)

static const char *vendor_name(int v)
{
	return v == BT_CPU_INTEL ? "Intel" : v == BT_CPU_AMD ? "AMD" : "unknown";
}

/* perf for another process's user space: paranoid <= 2 or a capability. */
static int perf_allowed(const struct bt_host *h)
{
	return h->paranoid == BT_HOST_UNKNOWN || h->paranoid <= 2 ||
	       has_cap(h, BT_CAP_PERFMON) || has_cap(h, BT_CAP_SYS_ADMIN);
}

static const char perf_remedy[] =
	"sudo sysctl kernel.perf_event_paranoid=2 (Debian's level 3 forbids "
	"perf to unprivileged users), or grant CAP_PERFMON: sudo setcap "
	"cap_perfmon,cap_sys_ptrace+ep $(command -v btrace)";

static void check_paranoid(const struct bt_host *h, struct bt_doctor *d)
{
	struct bt_check *c;

	if (h->paranoid == BT_HOST_UNKNOWN) {
		c = add(d, "perf_event_paranoid", BT_CHECK_NO,
			"unknown (no /proc/sys/kernel/perf_event_paranoid)");
		REMEDY(c, "the kernel has no perf_event support "
			  "(CONFIG_PERF_EVENTS); use --backend soft");
		return;
	}
	if (perf_allowed(h)) {
		add(d, "perf_event_paranoid", BT_CHECK_YES, "%d%s", h->paranoid,
		    h->paranoid > 2 ? " (allowed by capability)" :
				      " (user-space tracing allowed)");
		return;
	}
	c = add(d, "perf_event_paranoid", BT_CHECK_NO,
		"%d: perf is forbidden to unprivileged users", h->paranoid);
	REMEDY(c, "%s", perf_remedy);
}

static void check_caps(const struct bt_host *h, struct bt_doctor *d)
{
	add(d, "capabilities", BT_CHECK_INFO,
	    "CAP_PERFMON %s, CAP_SYS_ADMIN %s, CAP_SYS_PTRACE %s, "
	    "CAP_IPC_LOCK %s",
	    has_cap(h, BT_CAP_PERFMON) ? "yes" : "no",
	    has_cap(h, BT_CAP_SYS_ADMIN) ? "yes" : "no",
	    has_cap(h, BT_CAP_SYS_PTRACE) ? "yes" : "no",
	    has_cap(h, BT_CAP_IPC_LOCK) ? "yes" : "no");
}

/* Can btrace ptrace its children (run) and others (attach)? */
static int check_ptrace(const struct bt_host *h, struct bt_doctor *d)
{
	int cap = has_cap(h, BT_CAP_SYS_PTRACE), s = h->ptrace_scope;
	struct bt_check *c;

	if (s == BT_HOST_UNKNOWN || s == 0 || (cap && s < 3)) {
		add(d, "ptrace_scope", BT_CHECK_YES, "%s",
		    s == BT_HOST_UNKNOWN ? "no yama (classic ptrace rules)" :
		    s == 0 ? "0 (classic ptrace rules)" :
			     "restricted, but CAP_SYS_PTRACE is held");
		return 1;
	}
	if (s == 1) {
		c = add(d, "ptrace_scope", BT_CHECK_WARN,
			"1: run works; attach only to btrace's descendants");
		REMEDY(c, "to attach to any process of yours: sudo sysctl "
			  "kernel.yama.ptrace_scope=0, or run btrace with "
			  "CAP_SYS_PTRACE");
		return 1;
	}
	c = add(d, "ptrace_scope", BT_CHECK_NO, "%d: %s", s,
		s == 2 ? "only CAP_SYS_PTRACE may trace" : "ptrace is disabled");
	if (s == 2)
		REMEDY(c, "sudo sysctl kernel.yama.ptrace_scope=1, or run btrace "
			  "with CAP_SYS_PTRACE");
	else
		REMEDY(c, "scope 3 cannot be lowered until reboot: set "
			  "kernel.yama.ptrace_scope=1 in /etc/sysctl.d and reboot");
	return 0;
}

/* perf pins buffers: perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK. */
static void check_memlock(const struct bt_host *h, struct bt_doctor *d)
{
	uint64_t need = BT_DEFAULT_BUFFER_SIZE + 2 * 4096, room;
	struct bt_check *c;
	char lim[32];

	if (h->memlock == BT_MEMLOCK_INFINITY)
		snprintf(lim, sizeof(lim), "unlimited");
	else
		snprintf(lim, sizeof(lim), "%" PRIu64 " KiB", h->memlock >> 10);
	if (has_cap(h, BT_CAP_IPC_LOCK) || h->memlock == BT_MEMLOCK_INFINITY) {
		add(d, "mlock", BT_CHECK_YES,
		    "RLIMIT_MEMLOCK %s, perf_event_mlock_kb %" PRId64 "%s", lim,
		    h->mlock_kb,
		    has_cap(h, BT_CAP_IPC_LOCK) ? " (CAP_IPC_LOCK: no limit)" : "");
		return;
	}
	room = h->memlock + (h->mlock_kb > 0 ? (uint64_t)h->mlock_kb * 1024 *
				 (uint64_t)(h->ncpu > 0 ? h->ncpu : 1) : 0);
	c = add(d, "mlock", room >= need ? BT_CHECK_YES : BT_CHECK_WARN,
		"RLIMIT_MEMLOCK %s, perf_event_mlock_kb %" PRId64
		": room for %" PRIu64 " thread buffers of %u KiB",
		lim, h->mlock_kb, room / need, BT_DEFAULT_BUFFER_SIZE >> 10);
	if (c->state == BT_CHECK_WARN || room / need < 8)
		REMEDY(c, "buffers shrink to fit; for more: ulimit -l unlimited, "
			  "or sudo sysctl kernel.perf_event_mlock_kb=%u",
		       (BT_DEFAULT_BUFFER_SIZE >> 10) * 16 + 16);
}

/*
 * A backend's verdict: a check row and the reason bt_backend_probe gives.
 * The row is named @name, NULL: after the backend.
 */
static void verdict(struct bt_doctor *d, int backend, const char *name,
		    int ok, const char *value, const char *remedy)
{
	struct bt_check *c = add(d, name ? name : bt_backend_name(backend), ok ? BT_CHECK_YES : BT_CHECK_NO,
				 "%s", strncmp(value, "no: ", 4) ? value : value + 4);

	d->usable[backend] = ok;
	d->error[backend] = ok ? 0 : -bte_nosys;
	if (ok) {
		d->why[backend][0] = '\0';
		return;
	}
	REMEDY(c, "%s", remedy);
	if (!strncmp(value, "no: ", 4))
		value += 4;
	snprintf(d->reason[backend], sizeof(d->reason[backend]), "%s", value);
	snprintf(d->why[backend], sizeof(d->why[backend]), "%s; %s", value,
		 remedy);
}

static const char *open_remedy(int err)
{
	switch (-err) {
	case EACCES:
	case EPERM:
		return perf_remedy;
	case EBUSY:
		return "another tracer holds it (PT and LBR/BTS exclude each "
		       "other on a CPU): stop it, or use --backend soft";
	default:
		return "the kernel refuses this event here; use --backend soft";
	}
}

static void eval_pt(const struct bt_host *h, struct bt_doctor *d)
{
	const char *soft = "use --backend soft";
	char value[160], remedy[240];

	snprintf(remedy, sizeof(remedy), "%s", soft);
	if (h->cpu.vendor != BT_CPU_INTEL) {
		snprintf(value, sizeof(value), "no: %s CPUs have no Intel PT",
			 vendor_name(h->cpu.vendor));
	} else if (!h->cpuid_pt) {
		snprintf(value, sizeof(value), "no: CPUID.(7,0):EBX[25] is clear");
		snprintf(remedy, sizeof(remedy), "%s", h->hypervisor ?
			 "the virtual CPU hides Intel PT: enable PT pass-through "
			 "in the hypervisor (KVM: kvm_intel pt_mode=1, -cpu host), "
			 "run on bare metal, or use --backend soft" :
			 "this CPU has no Intel PT (Broadwell or later has it); "
			 "use --backend soft");
	} else if (!h->pmu_pt) {
		snprintf(value, sizeof(value),
			 "no: no intel_pt PMU in " BT_PMU_DIR);
		snprintf(remedy, sizeof(remedy), "use a kernel built with "
			 "CONFIG_PERF_EVENTS_INTEL_PT, or use --backend soft");
	} else if (!perf_allowed(h)) {
		snprintf(value, sizeof(value), "no: perf_event_paranoid is %d",
			 h->paranoid);
		snprintf(remedy, sizeof(remedy), "%s", perf_remedy);
	} else if (h->pt_open != 0 && h->pt_open != BT_HOST_UNTRIED) {
		snprintf(value, sizeof(value), "no: perf_event_open(intel_pt): %s",
			 strerror(-h->pt_open));
		snprintf(remedy, sizeof(remedy), "%s", open_remedy(h->pt_open));
	} else {
		verdict(d, BT_BACKEND_PT, "intel_pt", 1, "usable", "");
		return;
	}
	verdict(d, BT_BACKEND_PT, "intel_pt", 0, value, remedy);
	if (!perf_allowed(h) || h->pt_open == -EACCES || h->pt_open == -EPERM)
		d->error[BT_BACKEND_PT] = -bte_perm;
}

static void eval_bts(const struct bt_host *h, struct bt_doctor *d)
{
	char value[160], remedy[240];

	snprintf(remedy, sizeof(remedy), "use --backend pt or soft");
	if (h->cpu.vendor != BT_CPU_INTEL) {
		snprintf(value, sizeof(value), "no: %s CPUs have no BTS",
			 vendor_name(h->cpu.vendor));
		snprintf(remedy, sizeof(remedy), "use --backend soft");
	} else if (!h->cpuid_ds) {
		snprintf(value, sizeof(value),
			 "no: no debug store (CPUID.1:EDX[21] is clear)");
		snprintf(remedy, sizeof(remedy), "%s", h->hypervisor ?
			 "hypervisors do not virtualize BTS; run on bare metal, "
			 "or use --backend pt or soft" :
			 "use --backend pt or soft");
	} else if (!h->pmu_core) {
		snprintf(value, sizeof(value),
			 "no: no hardware PMU (no cpu PMU in " BT_PMU_DIR ")");
		snprintf(remedy, sizeof(remedy), "%s", h->hypervisor ?
			 "enable the virtual PMU (KVM: -cpu host,pmu=on), or use "
			 "--backend soft" :
			 "the kernel runs without hardware perf support; use "
			 "--backend soft");
	} else if (!perf_allowed(h)) {
		snprintf(value, sizeof(value), "no: perf_event_paranoid is %d",
			 h->paranoid);
		snprintf(remedy, sizeof(remedy), "%s", perf_remedy);
	} else if (h->bts_open != 0 && h->bts_open != BT_HOST_UNTRIED) {
		snprintf(value, sizeof(value), "no: perf_event_open(bts): %s",
			 strerror(-h->bts_open));
		snprintf(remedy, sizeof(remedy), "%s", open_remedy(h->bts_open));
	} else {
		verdict(d, BT_BACKEND_BTS, NULL, 1, "usable", "");
		return;
	}
	verdict(d, BT_BACKEND_BTS, NULL, 0, value, remedy);
	if (h->cpu.vendor == BT_CPU_INTEL && h->cpuid_ds && h->pmu_core &&
	    (!perf_allowed(h) || h->bts_open == -EACCES ||
	     h->bts_open == -EPERM))
		d->error[BT_BACKEND_BTS] = -bte_perm;
}

static const struct bt_check *find_check(const struct bt_doctor *d,
					 const char *name)
{
	size_t i;

	for (i = 0; i < d->count; i++)
		if (!strcmp(d->check[i].name, name))
			return &d->check[i];
	return &d->check[0];
}

void bt_doctor_eval(const struct bt_host *h, struct bt_doctor *d)
{
	struct bt_check *c;
	int ptrace_ok;

	memset(d, 0, sizeof(*d));
	add(d, "cpu", BT_CHECK_INFO, "%s family %u model %u stepping %u%s%s",
	    vendor_name(h->cpu.vendor), h->cpu.family, h->cpu.model,
	    h->cpu.stepping, h->cpu_name[0] ? ": " : "", h->cpu_name);
	if (h->hypervisor) {
		c = add(d, "hypervisor", BT_CHECK_WARN, "yes%s%s",
			h->hv_name[0] ? ": " : "", h->hv_name);
		REMEDY(c, "virtual machines rarely expose PT or BTS; see the "
			  "intel_pt and bts lines");
	} else {
		add(d, "hypervisor", BT_CHECK_INFO, "none (bare metal)");
	}
	add(d, "perf PMUs", BT_CHECK_INFO, "%s",
	    h->pmus[0] ? h->pmus : "none (no " BT_PMU_DIR ")");
	check_paranoid(h, d);
	check_caps(h, d);
	ptrace_ok = check_ptrace(h, d);
	check_memlock(h, d);
	eval_pt(h, d);
	eval_bts(h, d);
	if (!ptrace_ok) {	/* every backend runs the target under ptrace */
		const char *why = find_check(d, "ptrace_scope")->remedy;

		d->usable[BT_BACKEND_PT] = d->usable[BT_BACKEND_BTS] = 0;
		snprintf(d->why[BT_BACKEND_PT], sizeof(d->why[0]),
			 "ptrace is not allowed; %s", why);
		snprintf(d->why[BT_BACKEND_BTS], sizeof(d->why[0]), "%s",
			 d->why[BT_BACKEND_PT]);
		snprintf(d->reason[BT_BACKEND_PT], sizeof(d->reason[0]),
			 "ptrace is not allowed");
		snprintf(d->reason[BT_BACKEND_BTS], sizeof(d->reason[0]),
			 "ptrace is not allowed");
		d->error[BT_BACKEND_PT] = d->error[BT_BACKEND_BTS] = -bte_perm;
	}
	if (ptrace_ok) {
		verdict(d, BT_BACKEND_SOFT, NULL, 1,
			"usable (the recorder: translated code records its branches)",
			"");
	} else {
		verdict(d, BT_BACKEND_SOFT, NULL, 0, "no: ptrace is not allowed",
			find_check(d, "ptrace_scope")->remedy);
		d->error[BT_BACKEND_SOFT] = -bte_perm;
	}
	d->usable[BT_BACKEND_AUTO] = d->usable[BT_BACKEND_PT] ||
				     d->usable[BT_BACKEND_BTS] ||
				     d->usable[BT_BACKEND_SOFT];
}

int bt_doctor_hw_usable(const struct bt_doctor *d)
{
	return d->usable[BT_BACKEND_PT] || d->usable[BT_BACKEND_BTS];
}

int bt_doctor_probe(int backend, char *why, size_t size)
{
	struct bt_doctor *d;
	struct bt_host h;
	int ret;

	if (backend <= BT_BACKEND_AUTO || backend >= BT_BACKEND_MAX)
		return bt_fail(bte_invalid, 0, "backend %d", backend);
	d = malloc(sizeof(*d));
	if (!d)
		return bt_fail(bte_nomem, 0, "doctor");
	bt_host_read(&h);
	bt_doctor_eval(&h, d);
	ret = d->error[backend];
	if (why && size)
		snprintf(why, size, "%s", d->why[backend]);
	if (ret)
		bt_fail(ret, 0, "%s", d->why[backend]);
	free(d);
	return ret;
}

int bt_doctor_auto(char *why, size_t size)
{
	int order[BT_BACKEND_MAX];
	struct bt_doctor *d;
	struct bt_host h;
	size_t i, n, len = 0;
	int ret = -bte_nosys;

	d = malloc(sizeof(*d));
	if (!d)
		return bt_fail(bte_nomem, 0, "doctor");
	bt_host_read(&h);
	bt_doctor_eval(&h, d);
	if (why && size)
		why[0] = '\0';
	n = bt_backend_auto_order(order, BT_ARRAY_SIZE(order));
	for (i = 0; i < n && i < BT_ARRAY_SIZE(order); i++) {
		if (d->usable[order[i]]) {
			ret = order[i];
			break;
		}
		if (why && size && len < size)
			len += (size_t)snprintf(why + len, size - len, "%s%s: %s",
						len ? "; " : "",
						bt_backend_name(order[i]),
						d->reason[order[i]]);
	}
	if (ret < 0)
		bt_fail(ret, 0, "no backend can trace here");
	free(d);
	return ret;
}
