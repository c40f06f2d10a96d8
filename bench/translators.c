// SPDX-License-Identifier: MIT
/*
 * The recorder against the translators that record nothing: five
 * workloads run untraced, under btrace's recorder (--soft-mode record,
 * every branch recorded), under QEMU's user mode (qemu-x86_64) and under
 * Valgrind's null tool (valgrind --tool=none), side by side in one run.
 * Each figure is the CPU time (user + system) of the whole process tree,
 * as wait4 reports it for a child that waited for its own: the tracer and
 * the program for btrace (the library, as bench/recorder.c runs it, in a
 * child of its own), the translator and the program for the others.  The
 * best of BEST_OF runs, taken in turns (this VM's neighbours come and go).
 *
 * btrace runs twice a turn: "cold", its code cache (the blocks each
 * file ran, kept by build-id: --code-cache) empty, as a program's first
 * run; then "warm", with what that run kept, as every run after it.
 *
 * Goals, for each of cold and warm: btrace at most the faster of QEMU
 * and Valgrind on every workload; the steady-state ones (all but
 * start-up) at most 3x native; python3's start-up at most QEMU's.  QEMU
 * and Valgrind come from `make bench-deps`; a translator that is not
 * installed is left out.
 *
 * Programs by full path: qemu-x86_64 does not search PATH.
 *
 * bench/translators [start|pyloop|sqlite|gzip|fib]...: those only.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "btrace/btrace.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define BEST_OF 2
#define GZIP_INPUT "/tmp/btrace-bench-gzip.in"
#define GZIP_BYTES (40u << 20)

enum { NATIVE, BTRACE, WARM, QEMU, VALGRIND, NRUN };

static const char *const run_name[NRUN] = { "native", "btrace cold",
					    "warm", "qemu", "valgrind" };

/* The code cache of the btrace runs, emptied before each cold one. */
static char cache_dir[] = "/tmp/btrace-bench-cache.XXXXXX";

static void cache_empty(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -f %s/*.blocks", cache_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "translators: cannot empty %s\n", cache_dir);
}

/* Trace @argv to its end with the recorder; the program's exit status,
 * 125 or 126 if tracing failed. */
static int record_child(char **argv)
{
	struct bt_target_opts o;
	struct bt_target *t;
	struct bt_stop stop;
	int ret, ws;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.backend = BT_BACKEND_SOFT;
	o.soft_mode = BT_SOFT_RECORD;
	o.code_cache = cache_dir;
	if (bt_target_launch(&t, &o, argv) < 0)
		return 126;
	do {
		ret = bt_target_cont(t, &stop);
	} while (ret == 0 && stop.reason != BT_STOP_EXIT &&
		 stop.reason != BT_STOP_SIGNAL && stop.reason != BT_STOP_KILLED);
	if (bt_target_finish(t, &ws) < 0 || !WIFEXITED(ws))
		ret = -1;
	bt_target_free(t);
	return ret < 0 || stop.reason != BT_STOP_EXIT ? 125 : WEXITSTATUS(ws);
}

/*
 * CPU seconds of running @argv @how (its output and input /dev/null, or
 * stdin from @in), the tree's; -1 if it did not run or its exit status
 * is not *@status (set by the first run, the native one, if < 0).
 */
static double cpu_of(int how, char **argv, const char *in, int *want)
{
	char *pre[NRUN][3] = { { NULL }, { NULL }, { NULL },
			       { "qemu-x86_64", NULL },
			       { "valgrind", "--tool=none", NULL } };
	char *full[16];
	struct rusage ru;
	size_t n = 0, i;
	int status;
	pid_t pid;

	for (i = 0; pre[how][i]; i++)
		full[n++] = pre[how][i];
	for (i = 0; argv[i] && n + 1 < ARRAY_SIZE(full); i++)
		full[n++] = argv[i];
	full[n] = NULL;
	if (how == BTRACE)
		cache_empty();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		int fin = in ? open(in, O_RDONLY) : fd;

		dup2(fin, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (how == BTRACE || how == WARM)
			_exit(record_child(full));
		execvp(full[0], full);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) >= 125)
		return -1;
	if (*want < 0)
		*want = WEXITSTATUS(status);
	if (WEXITSTATUS(status) != *want)
		return -1;	/* the translator failed: not the same run */
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

struct workload {
	const char *key, *title;
	char *argv[8];
	const char *in;
	int startup;
};

/* 40 MiB that compress as text does: words from a fixed generator. */
static int gzip_input(void)
{
	static const char *const words[] = {
		"the ", "branch ", "trace ", "of ", "a ", "program ", "runs ",
		"until ", "it ", "stops\n", "record ", "every ", "return ",
	};
	uint64_t s = 88172645463325252ull;
	size_t done = 0;
	FILE *f;

	if (access(GZIP_INPUT, R_OK) == 0)
		return 0;
	f = fopen(GZIP_INPUT, "w");
	if (!f)
		return -1;
	while (done < GZIP_BYTES) {
		const char *w;

		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		w = words[s % ARRAY_SIZE(words)];
		fputs(w, f);
		if (s % 7 == 0)
			fprintf(f, "%u ", (unsigned)(s >> 40));
		done += strlen(w);
	}
	return fclose(f);
}

/* @ok[BTRACE] and @ok[WARM]: every goal met so far, cold and warm */
static int measure(const struct workload *w, int *ok)
{
	double best[NRUN], fastest;
	int i, k, status = -1;

	for (k = 0; k < NRUN; k++)
		best[k] = -1;
	for (i = 0; i < BEST_OF; i++)
		for (k = 0; k < NRUN; k++) {
			double s = cpu_of(k, (char **)w->argv, w->in,
					  &status);

			if (s >= 0 && (best[k] < 0 || s < best[k]))
				best[k] = s;
		}
	if (best[NATIVE] <= 0 || best[BTRACE] < 0) {
		printf("%-36s could not run, skipped\n", w->title);
		return 0;
	}
	printf("%-36s", w->title);
	for (k = 0; k < NRUN; k++) {
		if (best[k] < 0)
			printf("  %s -", run_name[k]);
		else if (k == NATIVE)
			printf("  %s %.2f s", run_name[k], best[k]);
		else
			printf("  %s %.2f s (%.1fx)", run_name[k], best[k],
			       best[k] / best[NATIVE]);
	}
	printf("\n");
	fastest = best[QEMU];
	if (best[VALGRIND] >= 0 && (fastest < 0 || best[VALGRIND] < fastest))
		fastest = best[VALGRIND];
	for (k = BTRACE; k <= WARM; k++) {
		const char *which = k == BTRACE ? "cold" : "warm";

		if (best[k] < 0)
			continue;
		if (fastest >= 0) {
			printf("  btrace %s / the faster of qemu and valgrind: %.2fx (goal <= 1): %s\n",
			       which, best[k] / fastest,
			       bench_verdict(best[k] <= fastest));
			ok[k] &= best[k] <= fastest;
		}
		if (!w->startup) {
			double r = best[k] / best[NATIVE];

			printf("  btrace %s / native: %.2fx (goal <= 3x): %s\n",
			       which, r, bench_verdict(r <= 3));
			ok[k] &= r <= 3;
		} else if (best[QEMU] >= 0) {
			printf("  btrace %s / qemu start-up: %.2fx (goal <= 1): %s\n",
			       which, best[k] / best[QEMU],
			       bench_verdict(best[k] <= best[QEMU]));
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct workload w[] = {
		{ "start", "python3 -c 'print(1)' (start-up)",
		  { "/usr/bin/python3", "-c", "print(1)" }, NULL, 1 },
		{ "pyloop", "python3 loop, 3 M iterations",
		  { "/usr/bin/python3", "-c",
		    "s = 0\nfor i in range(3000000):\n    s += i\n" }, NULL, 0 },
		{ "sqlite", "sqlite3 recursive CTE, 1 M rows",
		  { "/usr/bin/sqlite3", ":memory:",
		    "with recursive c(x) as (select 1 union all select x + 1 "
		    "from c where x < 1000000) select sum(x) from c;" },
		  NULL, 0 },
		{ "gzip", "gzip -c 40 MiB", { "/usr/bin/gzip", "-c" }, GZIP_INPUT, 0 },
		{ "fib", "recursive fib(40) (compute 40)",
		  { "build/targets/compute", "40" }, NULL, 0 },
	};
	size_t i;
	int a, ok[NRUN] = { 1, 1, 1, 1, 1 };

	personality(ADDR_NO_RANDOMIZE);
	if (!mkdtemp(cache_dir)) {
		fprintf(stderr, "translators: cannot make %s\n", cache_dir);
		return 1;
	}
	if (gzip_input() < 0) {
		fprintf(stderr, "translators: cannot write %s\n", GZIP_INPUT);
		return 1;
	}
	printf("CPU seconds of the process tree, best of %d; btrace records every branch, qemu-x86_64 and valgrind --tool=none record nothing\n",
	       BEST_OF);
	for (i = 0; i < ARRAY_SIZE(w); i++) {
		int want = argc < 2;

		for (a = 1; a < argc; a++)
			want |= !strcmp(argv[a], w[i].key);
		if (want)
			measure(&w[i], ok);
	}
	cache_empty();
	rmdir(cache_dir);
	printf("every goal, cold: %s\n", bench_verdict(ok[BTRACE]));
	printf("every goal, warm: %s\n", bench_verdict(ok[WARM]));
	return 0;
}
