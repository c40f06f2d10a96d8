// SPDX-License-Identifier: MIT
/*
 * The recorder (soft record mode) against the fast mode and the untraced
 * program, measured side by side in one run (from the top of the tree by
 * `make bench`; programs from build/targets and the distribution).
 *
 *  1. python3 -c 'print(1)': fast / record wall time (goal >= 30x), the
 *     recorder's own time (goal < 3 s) and its ptrace stops per taken
 *     branch (goal <= 0.02);
 *  2. compute-bound after warm-up: (traced big - traced small) /
 *     (untraced big - untraced small) on compute and libc_heavy_dyn, each
 *     run the best of three (goal <= 3x); whole runs of the fast-mode
 *     bench programs as well;
 *  3. history depth: branches kept with a 1 MiB ring, record / fast
 *     (goal >= 8x), and bytes of the process's ring per taken branch
 *     (goal <= 4);
 *  4. stops against the ring: btrace's CPU for python3 with a 64 MiB ring
 *     against a 64 KiB one (goal <= 1.2x), and for a whole run of
 *     `btrace run -- /bin/true` (goal < 0.1 s); python3's first run with
 *     its stops' bursts on one CPU and without (BTRACE_PIN=0).
 *  5. a process tree: a shell loop of gzip | wc under --follow-fork,
 *     ptrace stops per taken branch over the whole run (goal <= 0.02);
 *     posix_spawn's vfork children (targets/rec_spawn), the same.
 *  6. --only the executable of a program whose work is in libc: traced /
 *     untraced after warm-up, as in 2 (goal <= 1.2x), and whole runs of
 *     libc_heavy_dyn 400 x 4 MiB, fast and record.
 *  7. code generated at run time: node -e with a 20-million-iteration
 *     loop, record / untraced, best of 3 (goal <= 10x; its first run, and a second
 *     with the code cache the first kept) and stops per taken branch
 *     (goal <= 0.02); grep -cP on 20k lines (PCRE2's JIT), stops per
 *     taken branch (goal <= 0.02).
 *  8. timestamps: record with its time records / without
 *     (BTRACE_REC_TIME=0), whole runs, best of three each (goal <=
 *     1.10x), and the ring's bytes per taken branch with them (goal <= 3).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "btrace/btrace.h"

static int follow;	/* --follow-fork for the runs of traced() */
/* --code-cache for them: none, but where a part measures a warm one */
static const char *code_cache = "";
/* --only for traced() (part 6), NULL: none. */
static const char *const *only_globs;

struct result {
	double seconds;
	double cpu;		/* btrace's own CPU seconds up to the last stop */
	double tree;		/* CPU seconds of btrace and the traced tree */
	struct bt_stats stats;
	size_t kept;		/* branches in the stopped thread's capture */
};

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static double self_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* CPU seconds of the children waited for so far. */
static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

static size_t kept_of(struct bt_target *t, pid_t tid)
{
	const struct bt_rec_hdr *rec;
	struct bt_capture cap;
	size_t off = 0, n = 0;

	if (bt_target_capture(t, tid, &cap) < 0)
		return 0;
	while (bt_rec_next(cap.data, cap.size, &off, &rec) == 0)
		n += rec->type == BT_REC_BRANCH;
	bt_capture_release(&cap);
	return n;
}

/* Trace @argv to its end with a ring of @ring bytes (0: default). */
static int traced(char **argv, int mode, size_t ring, struct result *r)
{
	struct bt_target_opts o;
	struct bt_target *t;
	struct bt_stop stop;
	double t0 = bench_now(), c0 = self_cpu(), k0 = children_cpu();
	int ret, ws, fd, saved = dup(1);

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = BT_BACKEND_SOFT;
	o.soft_mode = mode;
	o.buffer_size = ring;
	o.follow_fork = follow;
	o.only = only_globs;
	o.code_cache = code_cache;
	fd = open("/dev/null", O_WRONLY);
	dup2(fd, 1);		/* the program's output */
	ret = bt_target_launch(&t, &o, argv);
	dup2(saved, 1);
	close(saved);
	close(fd);
	if (ret < 0) {
		fprintf(stderr, "recorder: %s: %s (%s)\n", argv[0],
			bt_errstr(ret), bt_errdetail());
		return -1;
	}
	do {
		ret = bt_target_cont(t, &stop);
	} while (ret == 0 && stop.reason != BT_STOP_EXIT &&
		 stop.reason != BT_STOP_SIGNAL && stop.reason != BT_STOP_KILLED);
	r->cpu = self_cpu() - c0;	/* the run's stops, not the capture */
	r->kept = kept_of(t, stop.tid);
	bt_target_stats(t, &r->stats);
	bt_target_finish(t, &ws);
	bt_target_free(t);
	r->seconds = bench_now() - t0;
	r->tree = self_cpu() - c0 + children_cpu() - k0;
	return ret < 0 ? -1 : 0;
}

static double per_branch(const struct result *r)
{
	return r->stats.branches ? (double)r->stats.stops / r->stats.branches : 0;
}

static int bench_python(void)
{
	char *prog[] = { "python3", "-c", "print(1)", NULL };
	struct result f, r;
	double n = bench_run_cmd(prog);

	if (n < 0) {
		printf("python3: not found, skipped\n");
		return 0;
	}
	/* rings big enough for every branch: stops per branch over all */
	if (traced(prog, BT_SOFT_RECORD, 256u << 20, &r) < 0 ||
	    traced(prog, BT_SOFT_FAST, 256u << 20, &f) < 0)
		return -1;
	printf("python3 -c 'print(1)': untraced %.3f s, %llu taken branches; fast %.2f s (%.2f stops/branch), record %.2f s (%.4f stops/branch)\n",
	       n, (unsigned long long)r.stats.branches, f.seconds,
	       per_branch(&f), r.seconds, per_branch(&r));
	printf("  fast / record: %.1fx (goal >= 30x): %s\n", f.seconds / r.seconds,
	       bench_verdict(f.seconds / r.seconds >= 30));
	printf("  record: %.2f s (goal < 3 s): %s\n", r.seconds,
	       bench_verdict(r.seconds < 3));
	printf("  record stops per taken branch: %.4f (goal <= 0.02): %s\n",
	       per_branch(&r), bench_verdict(per_branch(&r) <= 0.02));
	return 0;
}

#define WARM_ROUNDS 3

static void keep_min(double *best, double v)
{
	if (*best < 0 || v < *best)
		*best = v;
}

/*
 * Traced / untraced for the work between a small and a big run of the same
 * program: the cost once the code is translated.  Each of the four runs
 * is the best of WARM_ROUNDS, taken in turns (this VM's neighbours come
 * and go).
 */
static int warm_ratio(char **small, char **big, double *ratio)
{
	double ns = -1, nb = -1, ts = -1, tb = -1;
	int i;

	for (i = 0; i < WARM_ROUNDS; i++) {
		struct result rs, rb;
		double s = bench_run_cmd(small), b = bench_run_cmd(big);

		if (s < 0 || b < 0 || traced(small, BT_SOFT_RECORD, 0, &rs) < 0 ||
		    traced(big, BT_SOFT_RECORD, 0, &rb) < 0)
			return -1;
		keep_min(&ns, s);
		keep_min(&nb, b);
		keep_min(&ts, rs.seconds);
		keep_min(&tb, rb.seconds);
	}
	*ratio = (tb - ts) / (nb - ns);
	printf("%-16s %-8s untraced %.3f s, record %.3f s (whole run %.2fx); after warm-up %.2fx (best of %d)\n",
	       strrchr(big[0], '/') + 1, big[1], nb, tb, tb / nb, *ratio,
	       WARM_ROUNDS);
	return 0;
}

static int bench_compute(void)
{
	char *cs[] = { "build/targets/compute", "30", NULL };
	char *cb[] = { "build/targets/compute", "40", NULL };
	char *ls[] = { "build/targets/libc_heavy_dyn", "40", "4194304", NULL };
	char *lb[] = { "build/targets/libc_heavy_dyn", "400", "4194304", NULL };
	static char *progs[][3] = {
		{ "build/targets/compute", "16", NULL },
		{ "build/targets/fast_mix", NULL },
		{ "build/targets/qsort_dyn", NULL },
	};
	double a, b, worst;
	size_t i;

	if (warm_ratio(cs, cb, &a) < 0 || warm_ratio(ls, lb, &b) < 0)
		return -1;
	worst = a > b ? a : b;
	printf("  traced / untraced after warm-up: at most %.2fx (goal <= 3x): %s\n",
	       worst, bench_verdict(worst <= 3));
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct result f, r;
		double n = bench_run_cmd(progs[i]);

		if (n < 0 || traced(progs[i], BT_SOFT_FAST, 0, &f) < 0 ||
		    traced(progs[i], BT_SOFT_RECORD, 0, &r) < 0)
			return -1;
		printf("%-16s whole run (start-up included): untraced %.4f s, fast %.3f s, record %.3f s (%.3f stops/branch)\n",
		       strrchr(progs[i][0], '/') + 1, n, f.seconds, r.seconds,
		       per_branch(&r));
	}
	return 0;
}

static int bench_depth(void)
{
	char *prog[] = { "build/targets/compute", "26", NULL };
	char *py[] = { "python3", "-c", "print(1)", NULL };
	struct result f, r, p;
	double ratio, density;

	if (traced(prog, BT_SOFT_FAST, 1u << 20, &f) < 0 ||
	    traced(prog, BT_SOFT_RECORD, 1u << 20, &r) < 0 ||
	    traced(py, BT_SOFT_RECORD, 64u << 20, &p) < 0)
		return -1;
	ratio = (double)r.kept / (f.kept ? f.kept : 1);
	density = p.stats.branches ? (double)p.stats.ring_bytes / p.stats.branches : 0;
	printf("1 MiB ring, compute 26: fast keeps %zu branches, record %zu: %.1fx (goal >= 8x): %s\n",
	       f.kept, r.kept, ratio, bench_verdict(ratio >= 8));
	printf("record ring, python3 -c 'print(1)': %.2f bytes per taken branch (goal <= 4): %s\n",
	       density, bench_verdict(density <= 4));
	return 0;
}

/* CPU seconds of a whole `btrace run -- /bin/true` (a process of its own),
 * its code cache @cache ("": none). */
static double true_cpu(const char *cache)
{
	char *argv[] = { "build/btrace", "run", "--no-code-cache", "--",
			 "/bin/true", NULL, NULL };
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		if (*cache) {	/* --code-cache CACHE -- /bin/true */
			argv[2] = "--code-cache";
			argv[3] = (char *)cache;
			argv[4] = "--";
			argv[5] = "/bin/true";
		}
		dup2(fd, 1);
		dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/* CPU seconds of this process and the children it reaped. */
static double tree_cpu(void)
{
	struct rusage ru;
	double c = self_cpu();

	getrusage(RUSAGE_CHILDREN, &ru);
	return c + tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

/*
 * Bursts of stops on one CPU (lib/tracer/pin.c): python3 -c 'print(1)'
 * with an empty code cache (3 k stops), CPU of the tree with the binding
 * off (BTRACE_PIN=0) and on, best of three each, taken in turns.
 */
static int bench_pin(void)
{
	char *py[] = { "python3", "-c", "print(1)", NULL };
	char dir[] = "/tmp/btrace-bench-pin.XXXXXX", cmd[64];
	double best[2] = { -1, -1 };
	struct result r;
	int i, on, ret = 0;

	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
	code_cache = dir;
	for (i = 0; i < WARM_ROUNDS && !ret; i++)
		for (on = 0; on < 2 && !ret; on++) {
			double c0;

			if (system(cmd) != 0)
				ret = -1;
			setenv("BTRACE_PIN", on ? "" : "0", 1);
			c0 = tree_cpu();
			if (!ret && traced(py, BT_SOFT_RECORD, 0, &r) < 0)
				ret = -1;
			keep_min(&best[on], tree_cpu() - c0);
		}
	unsetenv("BTRACE_PIN");
	code_cache = "";
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0 || ret)
		return -1;
	printf("python3 -c 'print(1)', empty code cache, CPU of the tree: threads and btrace on one CPU in bursts of stops %.2f s, never (BTRACE_PIN=0) %.2f s: %.2fx\n",
	       best[1], best[0], best[1] / best[0]);
	return 0;
}

/*
 * What a stop costs against the ring: btrace's CPU for python3 with a
 * 64 KiB and a 64 MiB ring (best of three each; a stop reads only what
 * was written since the last), and a whole run of /bin/true.
 */
static int bench_stops(void)
{
	char *py[] = { "python3", "-c", "print(1)", NULL };
	char dir[] = "/tmp/btrace-bench-code.XXXXXX", cmd[64];
	double small = -1, big = -1, tr = -1, trw = -1, ratio;
	struct result r64k, r64m;
	int i;

	if (!mkdtemp(dir))
		return -1;
	for (i = 0; i < WARM_ROUNDS; i++) {
		double c = true_cpu(""), w = true_cpu(dir);

		if (c < 0 || w < 0 ||
		    traced(py, BT_SOFT_RECORD, 64u << 10, &r64k) < 0 ||
		    traced(py, BT_SOFT_RECORD, 64u << 20, &r64m) < 0)
			return -1;
		keep_min(&tr, c);
		if (i)		/* the first run filled the cache */
			keep_min(&trw, w);
		keep_min(&small, r64k.cpu);
		keep_min(&big, r64m.cpu);
	}
	ratio = big / small;
	printf("python3 -c 'print(1)', btrace's CPU: 64 KiB ring %.2f s (%.0f bytes read per stop), 64 MiB ring %.2f s (%.0f bytes read per stop, %llu branches decoded against %llu): %.2fx (goal <= 1.2x): %s\n",
	       small, (double)r64k.stats.ring_read / r64k.stats.stops, big,
	       (double)r64m.stats.ring_read / r64m.stats.stops,
	       (unsigned long long)r64m.stats.branches,
	       (unsigned long long)r64k.stats.branches, ratio,
	       bench_verdict(ratio <= 1.2));
	printf("btrace run -- /bin/true: %.3f s of CPU, start-up and report included, no code cache (goal < 0.1 s): %s; %.3f s with its code cache warm\n",
	       tr, bench_verdict(tr < 0.1), trw);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 && bench_pin() == 0 ? 0 : -1;
}

/* @prog recorded with --follow-fork, to its end. */
static int traced_tree(char **prog, struct result *r)
{
	int ret;

	follow = 1;
	ret = traced(prog, BT_SOFT_RECORD, 0, r);
	follow = 0;
	return ret;
}

/*
 * posix_spawn (vfork children, each running the parent's translations
 * until its exec): the targets' rec_spawn, stops per taken branch of the
 * tree.
 */
static int bench_spawn(void)
{
	char *prog[] = { "build/targets/rec_spawn", NULL };
	struct result r;
	double n = bench_run_cmd(prog);

	if (n < 0 || traced_tree(prog, &r) < 0)
		return -1;
	printf("--follow-fork, rec_spawn (4 posix_spawns beside a thread): untraced %.3f s, record %.2f s, %llu taken branches, %llu stops: %.4f a branch\n",
	       n, r.seconds, (unsigned long long)r.stats.branches,
	       (unsigned long long)r.stats.stops, per_branch(&r));
	return 0;
}

static int bench_fork(void)
{
	char *prog[] = { "bash", "-c", "for i in 1 2 3 4 5; do gzip -c "
			 "/etc/services | wc -c; done", NULL };
	struct result r;
	double n = bench_run_cmd(prog);

	if (n < 0) {
		printf("bash: not found, skipped\n");
		return 0;
	}
	if (traced_tree(prog, &r) < 0)
		return -1;
	printf("--follow-fork, bash loop of gzip | wc: untraced %.3f s, record %.2f s, %llu taken branches, %llu stops\n",
	       n, r.seconds, (unsigned long long)r.stats.branches,
	       (unsigned long long)r.stats.stops);
	printf("  record stops per taken branch: %.4f (goal <= 0.02): %s\n",
	       per_branch(&r), bench_verdict(per_branch(&r) <= 0.02));
	return bench_spawn();
}

static int bench_only(void)
{
	static const char *only[] = { "libc_heavy_dyn", NULL };
	char *s[] = { "build/targets/libc_heavy_dyn", "10", "33554432", NULL };
	char *b[] = { "build/targets/libc_heavy_dyn", "40", "33554432", NULL };
	char *w[] = { "build/targets/libc_heavy_dyn", "400", "4194304", NULL };
	struct result f, r;
	double ratio, n;
	int ret = -1;

	only_globs = only;
	printf("--only the executable, its work in libc (32 MiB buffers):\n");
	if (warm_ratio(s, b, &ratio) < 0)
		goto out;
	printf("  traced / untraced after warm-up: %.2fx (goal <= 1.2x): %s\n",
	       ratio, ratio <= 0 ? "noise (the machine's load moved more than the work)" :
	       bench_verdict(ratio <= 1.2));
	n = bench_run_cmd(w);
	if (n < 0 || traced(w, BT_SOFT_FAST, 0, &f) < 0 ||
	    traced(w, BT_SOFT_RECORD, 0, &r) < 0)
		goto out;
	printf("libc_heavy_dyn 400 x 4 MiB --only: untraced %.3f s, fast %.3f s (%.2fx, %llu stops), record %.3f s (%.2fx, %llu stops)\n",
	       n, f.seconds, f.seconds / n, (unsigned long long)f.stats.stops,
	       r.seconds, r.seconds / n, (unsigned long long)r.stats.stops);
	ret = 0;
out:
	only_globs = NULL;
	return ret;
}

static int bench_jit(void)
{
	char *node[] = { "node", "-e",
		"let s = 0; for (let i = 0; i < 20000000; i++) s += i % 7; console.log(s)",
		NULL };
	char *grep[] = { "grep", "-cP", "^(\\d*7)\\s+fo+", "/tmp/btrace-bench-jit.txt",
			 NULL };
	char dir[] = "/tmp/btrace-bench-code.XXXXXX", cmd[64];
	struct result r, w, g;
	double n, nc, ng;
	FILE *f = fopen("/tmp/btrace-bench-jit.txt", "w");
	int i, ret;

	if (!f)
		return -1;
	for (i = 1; i <= 20000; i++)
		fprintf(f, "%d foo bar\n", i);
	fclose(f);
	/*
	 * untraced, best of WARM_ROUNDS: its wall time moves by 2x from one
	 * run to the next (0.12-0.40 s), which moved the ratios with it.
	 * The goal is judged on CPU seconds of the tree, as bench/translators
	 * does: node's own threads (its compilers, its collector) run beside
	 * its main thread, two CPUs' worth of wall time in one
	 */
	for (i = 0, n = nc = -1; i < WARM_ROUNDS; i++) {
		double c0 = children_cpu(), t = bench_run_cmd(node);

		if (t >= 0) {
			keep_min(&n, t);
			keep_min(&nc, children_cpu() - c0);
		}
	}
	if (n < 0) {
		printf("node: not found, skipped\n");
		return 0;
	}
	ng = bench_run_cmd(grep);
	/* the default ring: branches it overwrote are not counted, so the
	 * stops per branch of the whole run are below the ratio shown */
	if (!mkdtemp(dir))
		return -1;
	code_cache = dir;	/* node's first run, then its second */
	ret = traced(node, BT_SOFT_RECORD, 0, &r) < 0 ||
	      traced(node, BT_SOFT_RECORD, 0, &w) < 0;
	code_cache = "";
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0 || ret ||
	    traced(grep, BT_SOFT_RECORD, 0, &g) < 0)
		return -1;
	printf("node -e (20M-iteration loop), CPU of the tree: untraced %.2f s (best of %d), record %.2f s: %.1fx (goal <= 10x): %s\n",
	       nc, WARM_ROUNDS, r.tree, r.tree / nc,
	       bench_verdict(r.tree / nc <= 10));
	printf("  wall: untraced %.2f s, record %.2f s: %.1fx\n", n, r.seconds,
	       r.seconds / n);
	printf("  the same, its code cache warm (--code-cache, by the run before): %.2f s: %.1fx (goal <= 10x): %s; wall %.2f s: %.1fx; %llu stops\n",
	       w.tree, w.tree / nc, bench_verdict(w.tree / nc <= 10),
	       w.seconds, w.seconds / n, (unsigned long long)w.stats.stops);
	printf("  record stops per taken branch: %.4f (%llu stops, %llu branches) (goal <= 0.02): %s\n",
	       per_branch(&r), (unsigned long long)r.stats.stops,
	       (unsigned long long)r.stats.branches,
	       bench_verdict(per_branch(&r) <= 0.02));
	printf("grep -cP, 20k lines: untraced %.3f s, record %.2f s, stops per taken branch %.4f (%llu stops) (goal <= 0.02): %s\n",
	       ng, g.seconds, per_branch(&g), (unsigned long long)g.stats.stops,
	       bench_verdict(per_branch(&g) <= 0.02));
	unlink("/tmp/btrace-bench-jit.txt");
	return 0;
}

/* Best of WARM_ROUNDS of @argv recorded, with time records or without. */
static int timed_pair(char **argv, double *with, double *without,
		      struct result *r)
{
	int i;

	*with = *without = -1;
	for (i = 0; i < WARM_ROUNDS; i++) {
		struct result a, b;

		setenv("BTRACE_REC_TIME", "0", 1);
		if (traced(argv, BT_SOFT_RECORD, 64u << 20, &b) < 0)
			return -1;
		unsetenv("BTRACE_REC_TIME");
		if (traced(argv, BT_SOFT_RECORD, 64u << 20, &a) < 0)
			return -1;
		keep_min(without, b.seconds);
		keep_min(with, a.seconds);
		*r = a;
	}
	return 0;
}

static int bench_time(void)
{
	static char *progs[][4] = {
		{ "python3", "-c", "print(1)", NULL },
		{ "build/targets/compute", "30", NULL },
		{ "build/targets/libc_heavy_dyn", "400", "4194304", NULL },
	};
	double with, without, ratio, worst = 0, density = 0;
	struct result r;
	size_t i;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		if (timed_pair(progs[i], &with, &without, &r) < 0)
			return -1;
		ratio = with / without;
		if (ratio > worst)
			worst = ratio;
		if (i == 0 && r.stats.branches)
			density = (double)r.stats.ring_bytes / r.stats.branches;
		printf("%-16s %-8s record with time records %.3f s, without %.3f s: %.3fx\n",
		       strrchr(progs[i][0], '/') ? strrchr(progs[i][0], '/') + 1 :
		       progs[i][0], progs[i][1], with, without, ratio);
	}
	printf("  with / without time records: at most %.3fx (goal <= 1.10x): %s\n",
	       worst, bench_verdict(worst <= 1.10));
	printf("  record ring with time records, python3 -c 'print(1)': %.2f bytes per taken branch (goal <= 3): %s\n",
	       density, bench_verdict(density <= 3));
	return 0;
}

/* bench/recorder [python|compute|depth|stops|fork|only|jit|time]...: those parts only. */
int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} parts[] = {
		{ "python", bench_python },
		{ "compute", bench_compute },
		{ "depth", bench_depth },
		{ "stops", bench_stops },
		{ "fork", bench_fork },
		{ "only", bench_only },
		{ "jit", bench_jit },
		{ "time", bench_time },
	};
	size_t i;
	int a, ret = 0;

	personality(ADDR_NO_RANDOMIZE);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		int want = argc < 2;

		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], parts[i].name);
		if (want && parts[i].fn() < 0) {
			fprintf(stderr, "recorder: %s: a run failed\n",
				parts[i].name);
			ret = 1;
		}
	}
	return ret;
}
