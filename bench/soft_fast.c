// SPDX-License-Identifier: MIT
/*
 * The fast software backend against single-stepping, gdb's `record full`
 * and the untraced program, measured side by side in one run (run from
 * the top of the tree by `make bench`; programs from build/targets).
 *
 *  1. ptrace stops per taken branch, fast and single-step (goal <= 1.0);
 *  2. wall time, single-step / fast on the same programs (goal >= 4x);
 *  3. gdb -batch `record full` from main to exit / btrace fast from main
 *     (--from main) to exit, same program (goal >= 20x);
 *  4. a program spending its time in libc, traced with --only its own
 *     executable / run untraced (goal <= 2x).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "btrace/btrace.h"

struct result {
	double seconds;
	struct bt_stats stats;
};

/* Trace @argv to its end; 0 or -1. */
static int traced(char **argv, int mode, const char *const *only,
		  const char *from, struct result *r)
{
	struct bt_target_opts o;
	struct bt_target *t;
	struct bt_stop stop;
	double t0 = bench_now();
	int ret, ws;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = BT_BACKEND_SOFT;
	o.soft_mode = mode;
	o.only = only;
	o.from_sym = from;
	ret = bt_target_launch(&t, &o, argv);
	if (ret < 0) {
		fprintf(stderr, "soft_fast: %s: %s (%s)\n", argv[0],
			bt_errstr(ret), bt_errdetail());
		return -1;
	}
	do {
		ret = bt_target_cont(t, &stop);
	} while (ret == 0 && stop.reason != BT_STOP_EXIT &&
		 stop.reason != BT_STOP_SIGNAL && stop.reason != BT_STOP_KILLED);
	bt_target_stats(t, &r->stats);
	bt_target_finish(t, &ws);
	bt_target_free(t);
	r->seconds = bench_now() - t0;
	return ret < 0 ? -1 : 0;
}

static int bench_modes(void)
{
	static char *progs[][4] = {
		{ "build/targets/compute", "16", NULL },
		{ "build/targets/fast_mix", NULL },
		{ "build/targets/qsort_dyn", NULL },
	};
	double worst_ratio = 1e9, worst_fast = 0;
	size_t i;

	printf("%-26s %10s %10s %9s %9s %8s\n", "program", "step s",
	       "fast s", "step s/b", "fast s/b", "speedup");
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct result s, f;
		double ss, fs;

		if (traced(progs[i], BT_SOFT_STEP, NULL, NULL, &s) < 0 ||
		    traced(progs[i], BT_SOFT_FAST, NULL, NULL, &f) < 0)
			return -1;
		ss = (double)s.stats.stops / s.stats.branches;
		fs = (double)f.stats.stops / f.stats.branches;
		printf("%-26s %10.3f %10.3f %9.2f %9.2f %7.1fx\n",
		       strrchr(progs[i][0], '/') + 1, s.seconds, f.seconds,
		       ss, fs, s.seconds / f.seconds);
		if (s.seconds / f.seconds < worst_ratio)
			worst_ratio = s.seconds / f.seconds;
		if (fs > worst_fast)
			worst_fast = fs;
	}
	printf("ptrace stops per taken branch, fast: at most %.2f (goal <= 1.0): %s\n",
	       worst_fast, bench_verdict(worst_fast <= 1.0));
	printf("single-step / fast wall time: at least %.1fx (goal >= 4x): %s\n",
	       worst_ratio, bench_verdict(worst_ratio >= 4));
	return 0;
}

static int bench_gdb(void)
{
	char *prog[] = { "build/targets/compute", "18", NULL };
	char *gdb[] = { "gdb", "-batch", "-nx", "-ex", "set pagination off",
			"-ex", "set confirm off", "-ex", "break main",
			"-ex", "run", "-ex", "record full",
			"-ex", "set record full insn-number-max unlimited",
			"-ex", "continue", "--args", prog[0], prog[1], NULL };
	struct result f;
	double g;

	g = bench_run_cmd(gdb);
	if (g < 0) {
		printf("gdb record full: gdb not found, skipped\n");
		return 0;
	}
	if (traced(prog, BT_SOFT_FAST, NULL, "main", &f) < 0)
		return -1;
	printf("compute 18 from main: gdb record full %.3f s, btrace fast %.3f s: %.1fx (goal >= 20x): %s\n",
	       g, f.seconds, g / f.seconds, bench_verdict(g / f.seconds >= 20));
	return 0;
}

static int bench_only(void)
{
	char *prog[] = { "build/targets/libc_heavy_dyn", "400", "4194304", NULL };
	static const char *only[] = { "libc_heavy_dyn", NULL };
	struct result f;
	double n;

	n = bench_run_cmd(prog);
	if (n < 0 || traced(prog, BT_SOFT_FAST, only, NULL, &f) < 0)
		return -1;
	printf("libc_heavy_dyn, --only the executable: %.3f s, untraced %.3f s: %.2fx (goal <= 2x): %s (%llu stops)\n",
	       f.seconds, n, f.seconds / n, bench_verdict(f.seconds / n <= 2),
	       (unsigned long long)f.stats.stops);
	return 0;
}

int main(void)
{
	personality(ADDR_NO_RANDOMIZE);
	if (bench_modes() < 0 || bench_gdb() < 0 || bench_only() < 0)
		return 1;
	return 0;
}
