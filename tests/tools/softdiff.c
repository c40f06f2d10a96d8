// SPDX-License-Identifier: MIT
/*
 * softdiff: the fast software backend against the single-step reference.
 *
 *	softdiff [-t] [-v] -- PROGRAM [ARGS...]
 *
 * Runs PROGRAM twice under the soft backend, once single-stepping every
 * instruction (BT_SOFT_STEP) and once in the fast mode (BT_SOFT_FAST), each
 * until it exits or stops on a fatal signal, and compares every thread's
 * full branch history, record for record (from, to, kind, flags, gap,
 * instruction count).  Threads are matched by creation order, those that
 * ended before the stop too (which had ended by then is timing).
 *
 * -m MODE: the mode checked (fast, record; default fast); -b MODE: the
 *     reference (step, fast; default step).
 * -k: follow fork children (--follow-fork) and compare theirs too.
 * -B MIB: ring size per thread (default 64; a power of two); -B 64K: KiB.
 * -L: compare only the last branches both runs kept (rings too small for
 *     the whole run: -B), and their instruction counts but the first's.
 * -S: compare only the thread that stopped (the others' paths wait on
 *     each other: joins, locks).
 * -V: where both histories are inside the vDSO they may differ (its clock
 *     reads retry when the clock moved meanwhile, and tracing takes time).
 * -o GLOB, -x GLOB: --only, --exclude in the checked run (and in the
 *     reference if it is fast); a stepped reference records everything, and
 *     its history is then filtered as the modes record one: the branch
 *     into untraced code kept, what ran there dropped, the way back an
 *     untraced gap.  Gaps are compared by where they lead.
 * -F SYMBOL: --from, in both runs (the reference must be fast).
 * -s, -f: run one mode only and report it (for benchmarks).
 * -P: leave a stepped run on every CPU.  By default a stepped run (the
 *     reference, or -s) keeps the tracer and the program on the CPU the
 *     tracer is on: a single step costs 30 us so against 130 to 430 us with
 *     the two on different CPUs of a virtual machine (each stop and each
 *     restart then wakes a CPU through the hypervisor).  The checked run
 *     keeps every CPU, so threads there run in parallel.
 * -v: write each thread's history to softdiff.step.N, softdiff.fast.N
 *     (with -s or -f, the one run's).
 * A dynamically linked program's path through the loader depends on
 * /etc/ld.so.cache, which a package install rewrites: when the two runs
 * differ and the cache changed meanwhile, both are run once more.
 * -t: threads run concurrently, so where a thread other than the one that
 *     stopped had got to, and how often a spin loop went round, depend on
 *     timing: runs of identical records are compared as one, and for those
 *     other threads one history must be a prefix of the other, but for a
 *     gap that ends one (the exit ended the thread where its last part
 *     could not be decoded).
 *
 * Prints one line per run with branches and ptrace stops, and exits 0 when
 * the histories agree, 1 at the first difference (printed), 2 on errors.
 */
#include <fnmatch.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btrace/btrace.h"

#define MAX_THREADS 64

struct history {
	pid_t tid;
	struct bt_rec_branch *rec;
	size_t n;
};

struct run {
	struct history th[MAX_THREADS];
	size_t nth;
	pid_t stop_tid;
	int reason, signal;
	struct bt_stats stats;
	double seconds;
};

static int threaded, verbose, follow, vdso_loose, stopped_only, tails_only, no_pin;
static int only_mode = -1;
static uint64_t vdso_start, vdso_end;	/* the last run's [vdso] */
static size_t buffer_bytes = 64u << 20;
static int ref_mode = BT_SOFT_STEP, cmp_mode = BT_SOFT_FAST;
static const char *only[16], *exclude[16], *from_sym;
static size_t nonly, nexclude;

static const char *mode_name(int mode)
{
	return mode == BT_SOFT_STEP ? "step" :
	       mode == BT_SOFT_FAST ? "fast" : "record";
}

static int mode_parse(const char *s)
{
	if (!strcmp(s, "step"))
		return BT_SOFT_STEP;
	if (!strcmp(s, "fast"))
		return BT_SOFT_FAST;
	if (!strcmp(s, "record"))
		return BT_SOFT_RECORD;
	return -1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int history_load(struct history *h, const struct bt_capture *cap)
{
	const struct bt_rec_hdr *rec;
	size_t off = 0;

	h->tid = cap->tid;
	h->rec = calloc(cap->size / sizeof(struct bt_rec_branch) + 1,
			sizeof(*h->rec));
	if (!h->rec)
		return -1;
	while (bt_rec_next(cap->data, cap->size, &off, &rec) == 0) {
		struct bt_rec_branch *r = &h->rec[h->n];

		if (rec->type != BT_REC_BRANCH)
			continue;
		memcpy(r, rec, sizeof(*r));
		memset(&r->hdr, 0, sizeof(r->hdr));
		if (threaded && h->n && !memcmp(r, r - 1, sizeof(*r)))
			continue;
		h->n++;
	}
	return 0;
}

/* Where the vDSO of @pid lies (the same in every run: no randomization). */
static void vdso_find(pid_t pid)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%" SCNx64 "-%" SCNx64, &vdso_start, &vdso_end);
	fclose(f);
}

/* Code of the modules the filters trace, as the soft backend tells it. */
struct region {
	uint64_t lo, hi;
	int traced;
};
static struct region regions[512];
static size_t nregions;

static int glob_match(const char *const *globs, size_t n, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	base = base ? base + 1 : path;
	for (i = 0; i < n; i++)
		if (!fnmatch(globs[i], path, 0) || !fnmatch(globs[i], base, 0))
			return 1;
	return 0;
}

static void regions_find(pid_t pid)
{
	char path[64], line[1024], file[768], perm[8];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	nregions = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nregions < 512) {
		struct region *r = &regions[nregions];

		file[0] = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %767s",
			   &r->lo, &r->hi, perm, file) < 3 || perm[2] != 'x')
			continue;
		r->traced = !(nonly && !(file[0] && glob_match(only, nonly, file))) &&
			    !(nexclude && file[0] && glob_match(exclude, nexclude, file));
		nregions++;
	}
	fclose(f);
}

static int addr_traced(uint64_t a)
{
	size_t i;

	for (i = 0; i < nregions; i++)
		if (a >= regions[i].lo && a < regions[i].hi)
			return regions[i].traced;
	return 1;
}

/* A stepped history as the filters would have it (-o, -x). */
static void history_filter(struct history *h)
{
	size_t i, n = 0;
	int native = h->n && !addr_traced(h->rec[0].from);
	uint64_t left_to = 0;

	for (i = 0; i < h->n; i++) {
		struct bt_rec_branch r = h->rec[i];

		if (native) {
			if (r.kind == BT_BR_GAP || !addr_traced(r.to))
				continue;
			r.from = left_to;
			r.kind = BT_BR_GAP;
			r.gap = BT_GAP_UNTRACED;
			r.flags = 0;
			r.ninsn = 0;
			native = 0;
		} else if (r.kind != BT_BR_GAP && !addr_traced(r.to)) {
			native = 1;
			left_to = r.to;
		}
		h->rec[n++] = r;
	}
	h->n = n;
}

static int in_vdso(const struct bt_rec_branch *r)
{
	return r->from >= vdso_start && r->from < vdso_end;
}

/*
 * Keep this thread, and so the program it launches, on the CPU it is on
 * (-P: not); @saved keeps the CPUs it had, for unpin().
 */
static void pin(cpu_set_t *saved)
{
	cpu_set_t one;
	int cpu = sched_getcpu();

	if (cpu < 0 || sched_getaffinity(0, sizeof(*saved), saved) < 0) {
		CPU_ZERO(saved);
		return;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		CPU_ZERO(saved);
}

static void unpin(const cpu_set_t *saved)
{
	if (CPU_COUNT(saved))
		sched_setaffinity(0, sizeof(*saved), saved);
}

static int run_one(int mode, char **argv, struct run *run)
{
	struct bt_target_opts o;
	struct bt_target *t;
	struct bt_stop stop;
	pid_t tids[MAX_THREADS];
	size_t i, n;
	double t0 = now();
	cpu_set_t cpus;
	int ret;

	CPU_ZERO(&cpus);
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = BT_BACKEND_SOFT;
	o.soft_mode = mode;
	o.buffer_size = buffer_bytes;
	o.follow_fork = follow;
	if (mode != BT_SOFT_STEP) {
		o.only = nonly ? only : NULL;
		o.exclude = nexclude ? exclude : NULL;
	}
	o.from_sym = from_sym;
	if (mode == BT_SOFT_STEP && !no_pin)
		pin(&cpus);
	ret = bt_target_launch(&t, &o, argv);
	if (ret < 0) {
		fprintf(stderr, "softdiff: cannot launch %s: %s (%s)\n",
			argv[0], bt_errstr(ret), bt_errdetail());
		unpin(&cpus);
		return -1;
	}
	for (;;) {
		ret = bt_target_cont(t, &stop);
		if (ret < 0) {
			fprintf(stderr, "softdiff: %s (%s)\n", bt_errstr(ret),
				bt_errdetail());
			bt_target_free(t);
			unpin(&cpus);
			return -1;
		}
		if (stop.reason == BT_STOP_SIGNAL || stop.reason == BT_STOP_EXIT ||
		    stop.reason == BT_STOP_KILLED)
			break;
	}
	run->seconds = now() - t0;
	vdso_find(bt_target_pid(t));
	regions_find(bt_target_pid(t));
	run->stop_tid = stop.tid;
	run->reason = stop.reason;
	run->signal = stop.signal;
	n = bt_target_threads_all(t, tids, MAX_THREADS);
	for (i = 0; i < n && i < MAX_THREADS; i++) {
		struct bt_capture cap;

		if (bt_target_capture(t, tids[i], &cap) < 0)
			continue;
		history_load(&run->th[run->nth], &cap);
		if (mode == BT_SOFT_STEP && (nonly || nexclude))
			history_filter(&run->th[run->nth]);
		run->nth++;
		bt_capture_release(&cap);
	}
	bt_target_stats(t, &run->stats);
	bt_target_finish(t, &ret);
	bt_target_free(t);
	unpin(&cpus);
	return 0;
}

static void print_rec(const char *what, const struct bt_rec_branch *r)
{
	fprintf(stderr, "  %s: 0x%llx -> 0x%llx %s flags %u gap %u ninsn %u\n",
		what, (unsigned long long)r->from, (unsigned long long)r->to,
		bt_branch_kind_name(r->kind), r->flags, r->gap, r->ninsn);
}

/* -v: every history into softdiff.<mode>.<thread> for a diff(1). */
static void dump(const char *mode, const struct run *r)
{
	size_t i, k;

	for (i = 0; i < r->nth; i++) {
		char name[64];
		FILE *f;

		snprintf(name, sizeof(name), "softdiff.%s.%zu", mode, i);
		f = fopen(name, "w");
		if (!f)
			return;
		for (k = 0; k < r->th[i].n; k++) {
			const struct bt_rec_branch *b = &r->th[i].rec[k];

			fprintf(f, "0x%llx -> 0x%llx %s flags %u gap %u ninsn %u\n",
				(unsigned long long)b->from,
				(unsigned long long)b->to,
				bt_branch_kind_name(b->kind), b->flags, b->gap,
				b->ninsn);
		}
		fclose(f);
	}
}

static const struct history *stopped_of(const struct run *r)
{
	size_t i;

	for (i = 0; i < r->nth; i++)
		if (r->th[i].tid == r->stop_tid)
			return &r->th[i];
	return NULL;
}

/* Records @x and @y the same?  Gaps by where they lead under -o, -x. */
static int rec_same(struct bt_rec_branch x, struct bt_rec_branch y)
{
	if ((nonly || nexclude) && x.kind == BT_BR_GAP && y.kind == BT_BR_GAP)
		x.from = y.from = 0;
	return !memcmp(&x, &y, sizeof(x));
}

/* -S: the thread that stopped, in each run, record for record. */
static int compare_stopped(const struct run *ref, const struct run *fast)
{
	const struct history *a = stopped_of(ref), *b = stopped_of(fast);
	size_t k;

	if (!a || !b) {
		fprintf(stderr, "softdiff: no history of the stopped thread\n");
		return 1;
	}
	for (k = 0; k < a->n && k < b->n; k++)
		if (!rec_same(a->rec[k], b->rec[k]))
			break;
	if (k == a->n && k == b->n)
		return 0;
	fprintf(stderr, "softdiff: the stopped thread differs at branch %zu of "
		"%zu (%s) / %zu (%s)\n", k, a->n, mode_name(ref_mode), b->n,
		mode_name(cmp_mode));
	if (k < a->n)
		print_rec(mode_name(ref_mode), &a->rec[k]);
	if (k < b->n)
		print_rec(mode_name(cmp_mode), &b->rec[k]);
	return 1;
}

/* -L: the last branches both histories kept, the same (the first of them
 * without its instruction count, which counts from where a ring began). */
static int compare_tails(const struct run *ref, const struct run *fast)
{
	size_t i, k;

	for (i = 0; i < ref->nth && i < fast->nth; i++) {
		const struct history *a = &ref->th[i], *b = &fast->th[i];
		size_t m = a->n < b->n ? a->n : b->n;

		for (k = 0; k < m; k++) {
			struct bt_rec_branch x = a->rec[a->n - m + k];
			struct bt_rec_branch y = b->rec[b->n - m + k];

			if (!k)
				x.ninsn = y.ninsn = 0;
			if (!rec_same(x, y))
				break;
		}
		if (k == m && m > 0)
			continue;
		fprintf(stderr, "softdiff: thread #%zu's last %zu branches "
			"differ at %zu\n", i, m, k);
		if (k < m) {
			print_rec(mode_name(ref_mode), &a->rec[a->n - m + k]);
			print_rec(mode_name(cmp_mode), &b->rec[b->n - m + k]);
		}
		return 1;
	}
	if (ref->nth != fast->nth) {
		fprintf(stderr, "softdiff: %zu threads stepping, %zu fast\n",
			ref->nth, fast->nth);
		return 1;
	}
	return 0;
}

static int compare(const struct run *ref, const struct run *fast)
{
	size_t i, k;

	if (stopped_only)
		return compare_stopped(ref, fast);
	if (tails_only)
		return compare_tails(ref, fast);
	if (ref->nth != fast->nth) {
		fprintf(stderr, "softdiff: %zu threads stepping, %zu fast\n",
			ref->nth, fast->nth);
		return 1;
	}
	for (i = 0; i < ref->nth; i++) {
		const struct history *a = &ref->th[i], *b = &fast->th[i];
		int stopped = a->tid == ref->stop_tid, loose = 0;
		size_t ka = 0, kb = 0;


		while (ka < a->n && kb < b->n) {
			struct bt_rec_branch x = a->rec[ka], y = b->rec[kb];

			if (loose)	/* the first after a vDSO divergence */
				x.ninsn = y.ninsn = 0;
			if (rec_same(x, y)) {
				ka++, kb++, loose = 0;
				continue;
			}
			/* clock reads in the vDSO retry as timing has it */
			if (!vdso_loose || !in_vdso(&x) || !in_vdso(&y))
				break;
			while (ka < a->n && in_vdso(&a->rec[ka]))
				ka++;
			while (kb < b->n && in_vdso(&b->rec[kb]))
				kb++;
			loose = 1;
		}
		if ((ka == a->n && kb == b->n) ||
		    ((ka == a->n || kb == b->n) && threaded && !stopped))
			continue;
		/* a thread the exit ended in the middle of a step: its
		 * last record may be a gap where the other run has the
		 * branch */
		if (threaded && !stopped &&
		    ((kb + 1 == b->n && b->rec[kb].kind == BT_BR_GAP) ||
		     (ka + 1 == a->n && a->rec[ka].kind == BT_BR_GAP)))
			continue;
		k = ka;
		fprintf(stderr, "softdiff: thread #%zu differs at branch %zu "
			"of %zu (%s) / %zu (%s)\n", i, k, a->n,
			mode_name(ref_mode), b->n, mode_name(cmp_mode));
		if (k > 0)
			print_rec("before", &a->rec[k - 1]);
		if (ka < a->n)
			print_rec(mode_name(ref_mode), &a->rec[ka]);
		if (kb < b->n)
			print_rec(mode_name(cmp_mode), &b->rec[kb]);
		return 1;
	}
	return 0;
}

static void report(const char *name, const struct run *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->nth; i++)
		n += r->th[i].n;
	printf("%-5s %zu threads, %zu branches, %llu stops (%.2f per branch), "
	       "%.3f s\n", name, r->nth, n,
	       (unsigned long long)r->stats.stops,
	       r->stats.branches ? (double)r->stats.stops / r->stats.branches : 0,
	       r->seconds);
}

/* What identifies /etc/ld.so.cache's contents (zeros if there is none). */
static void cache_stamp(struct stat *st)
{
	struct stat s;

	memset(st, 0, sizeof(*st));
	if (stat("/etc/ld.so.cache", &s) == 0) {
		st->st_ino = s.st_ino;
		st->st_size = s.st_size;
		st->st_mtim = s.st_mtim;
		st->st_ctim = s.st_ctim;
	}
}

static void run_release(struct run *r)
{
	size_t i;

	for (i = 0; i < r->nth; i++)
		free(r->th[i].rec);
	memset(r, 0, sizeof(*r));
}

/* Both modes, reported and compared: 0 same, 1 different, 2 errors. */
static int run_both(char **argv, struct run *ref, struct run *fast)
{
	if (run_one(ref_mode, argv, ref) < 0 ||
	    run_one(cmp_mode, argv, fast) < 0)
		return 2;
	report(mode_name(ref_mode), ref);
	report(mode_name(cmp_mode), fast);
	if (verbose) {
		dump(mode_name(ref_mode), ref);
		dump(mode_name(cmp_mode), fast);
	}
	if (ref->reason != fast->reason || ref->signal != fast->signal) {
		fprintf(stderr, "softdiff: stopped differently: %d/%d vs %d/%d\n",
			ref->reason, ref->signal, fast->reason, fast->signal);
		return 1;
	}
	return compare(ref, fast);
}

int main(int argc, char **argv)
{
	static struct run ref, fast;
	int opt, ret, tries;

	while ((opt = getopt(argc, argv, "+tvsfkVSLPm:b:B:o:x:F:")) != -1) {
		if (opt == 'm' && (cmp_mode = mode_parse(optarg)) < 0)
			goto usage;
		else if (opt == 'b' && (ref_mode = mode_parse(optarg)) < 0)
			goto usage;
		else if (opt == 'm' || opt == 'b')
			continue;
		else if (opt == 't')
			threaded = 1;
		else if (opt == 'V')
			vdso_loose = 1;
		else if (opt == 'S')
			stopped_only = 1;
		else if (opt == 'L')
			tails_only = 1;
		else if (opt == 'P')
			no_pin = 1;
		else if (opt == 'B')	/* -B 64K: KiB */
			buffer_bytes = (size_t)atoi(optarg)
				       << (strchr(optarg, 'K') ? 10 : 20);
		else if (opt == 's')
			only_mode = BT_SOFT_STEP;
		else if (opt == 'f')
			only_mode = cmp_mode;
		else if (opt == 'k')
			follow = 1;
		else if (opt == 'o' && nonly < 15)
			only[nonly++] = optarg;
		else if (opt == 'x' && nexclude < 15)
			exclude[nexclude++] = optarg;
		else if (opt == 'F')
			from_sym = optarg;
		else if (opt == 'v')
			verbose = 1;
		else
			goto usage;
	}
	if (optind >= argc)
		goto usage;
	/* the same addresses in both runs */
	personality(ADDR_NO_RANDOMIZE);
	if (only_mode >= 0) {
		if (run_one(only_mode, argv + optind, &ref) < 0)
			return 2;
		report(mode_name(only_mode), &ref);
		if (verbose)
			dump(mode_name(only_mode), &ref);
		return 0;
	}
	for (tries = 0;; tries++) {
		struct stat before, after;

		cache_stamp(&before);
		ret = run_both(argv + optind, &ref, &fast);
		cache_stamp(&after);
		if (ret != 1 || tries || !memcmp(&before, &after, sizeof(before)))
			break;
		fprintf(stderr, "softdiff: /etc/ld.so.cache changed meanwhile: "
			"once more\n");
		run_release(&ref);
		run_release(&fast);
	}
	if (!ret)
		printf("same histories\n");
	return ret;
usage:
	fprintf(stderr, "usage: softdiff [-t] [-v] [-k] [-V] [-S] [-L] [-P] [-B MIB|NK] [-b MODE] [-m MODE] [-o GLOB] [-x GLOB] [-F SYM] [-s|-f] -- PROGRAM [ARGS...]\n");
	return 2;
}
