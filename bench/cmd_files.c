// SPDX-License-Identifier: MIT
/*
 * The commands themselves on large files: `btrace decode --pt FILE --last
 * 1000` on raw PT of 1, 64 and 256 MiB, and `btrace show --last 1000` on
 * trace files holding that much PT (goal: at most 2x from 1 to 256 MiB,
 * resident memory flat).  Each command runs as a process of its own, as a
 * user runs it: wall time (best of five, files in the page cache) and the
 * peak resident set (ru_maxrss, file pages the command touched included).
 *
 * The stream is one walk of a generated program repeated, PSB+ every
 * 4 KiB as Linux's default psb_period gives (as bench/pt_last.c).
 * BTRACE names the binary (default build/btrace); BENCH_DIR the scratch
 * directory (default /tmp), which needs about 700 MiB.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "btrace/btrace.h"
#include "../tests/tools/synth/ptsynth.h"

#define BASE 0x400000ull
#define MIB ((size_t)1 << 20)
#define NSIZES 3
#define RUNS 5

static const size_t sizes[NSIZES] = { 1 * MIB, 64 * MIB, 256 * MIB };

struct sample {
	double secs;
	long rss_kib;
};

static int write_file(const char *path, const void *buf, size_t size)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(buf, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* A trace file as `btrace run --save` writes one for a PT capture. */
static int write_trace(const char *path, uint8_t *data, size_t size,
		       const struct ps_prog *prog)
{
	struct bt_capture cap = { .format = BT_FMT_PT, .tid = 1,
				  .data = data, .size = size };
	struct bt_trace_code code = { BASE, prog->size, prog->code };
	struct bt_trace t = { .pid = 1, .backend = "pt", .thread = &cap,
			      .nthreads = 1, .code = &code, .ncode = 1 };

	t.stop.reason = BT_STOP_SIGNAL;
	t.stop.tid = 1;
	t.stop.signal = 11;
	cap.cpu.vendor = BT_CPU_INTEL;
	return bt_trace_write(&t, path);
}

/* Run @argv with its output to /dev/null, RUNS times: the best. */
static int run_cmd(char *const argv[], struct sample *s)
{
	int i;

	s->secs = 1e9;
	s->rss_kib = 0;
	for (i = 0; i < RUNS; i++) {
		struct rusage ru;
		double t = bench_now();
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);

			dup2(fd, 1);
			execv(argv[0], argv);
			_exit(127);
		}
		if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "cmd_files: %s %s failed\n", argv[0],
				argv[1]);
			return -1;
		}
		t = bench_now() - t;
		s->secs = t < s->secs ? t : s->secs;
		s->rss_kib = ru.ru_maxrss > s->rss_kib ? ru.ru_maxrss
						       : s->rss_kib;
	}
	return 0;
}

static void report(const char *what, const struct sample *s)
{
	double rt = s[2].secs / s[0].secs;
	double rm = (double)s[2].rss_kib / s[0].rss_kib;
	int i;

	for (i = 0; i < NSIZES; i++)
		printf("  %-6s %4zu MiB: %8.3f s  %7ld KiB resident\n", what,
		       sizes[i] / MIB, s[i].secs, s[i].rss_kib);
	printf("ratio %s 256 MiB / 1 MiB: time %5.2f (<= 2: %s), "
	       "resident %5.2f (flat, <= 2: %s)\n", what, rt,
	       bench_verdict(rt <= 2), rm, bench_verdict(rm <= 2));
}

static int bench(const char *btrace, const char *dir, const char *codebin,
		 const struct ps_stream *tile, const struct ps_prog *prog)
{
	struct sample dec[NSIZES], show[NSIZES];
	char pt[4300], trace[4300], raw[4300];
	int i, err = 0;

	snprintf(raw, sizeof(raw), "%s:%#llx", codebin,
		 (unsigned long long)BASE);
	for (i = 0; i < NSIZES && !err; i++) {
		uint8_t *data = ps_repeat(tile, sizes[i]);
		char *dargv[] = { (char *)btrace, "decode", "--pt", pt,
				  "--raw", raw, "--last", "1000", NULL };
		char *sargv[] = { (char *)btrace, "show", "--last", "1000",
				  trace, NULL };

		snprintf(pt, sizeof(pt), "%s/%zu.pt", dir, sizes[i] / MIB);
		snprintf(trace, sizeof(trace), "%s/%zu.trace", dir,
			 sizes[i] / MIB);
		err = !data || write_file(pt, data, sizes[i]) < 0 ||
		      write_trace(trace, data, sizes[i], prog) < 0;
		free(data);
		if (!err)
			err = run_cmd(dargv, &dec[i]) < 0 ||
			      run_cmd(sargv, &show[i]) < 0;
		unlink(pt);
		unlink(trace);
	}
	if (err)
		return -1;
	report("decode", dec);
	report("show", show);
	return 0;
}

int main(void)
{
	struct ps_walk_opts wo = { .seed = 42, .nbranch = 200000,
				   .loop_end = 1, .p_taken = 0.5 };
	struct ps_pt_opts po = { .seed = 42, .psb_period = 4096,
				 .retcomp = 1, .tnt_mix = 1 };
	const char *btrace = getenv("BTRACE"), *base = getenv("BENCH_DIR");
	struct ps_prog *prog = ps_prog_gen(42, 24, BASE);
	char dir[4096], codebin[4200];
	struct bt_branch *br = NULL;
	struct ps_stream tile = { 0 };
	size_t n;
	int err;

	btrace = btrace ? btrace : "build/btrace";
	snprintf(dir, sizeof(dir), "%s/btrace-bench-XXXXXX",
		 base ? base : "/tmp");
	if (access(btrace, X_OK) < 0 || !mkdtemp(dir)) {
		fprintf(stderr, "cmd_files: no %s, or no scratch directory\n",
			btrace);
		return 1;
	}
	snprintf(codebin, sizeof(codebin), "%s/code.bin", dir);
	if (!prog || ps_walk(prog, &wo, &br, &n) < 0 ||
	    ps_pt_encode(&po, ps_prog_insn_fn, prog, prog->entry, br, n,
			 &tile) < 0 ||
	    write_file(codebin, prog->code, prog->size) < 0) {
		fprintf(stderr, "cmd_files: cannot synthesize\n");
		return 1;
	}
	printf("cmd_files: btrace decode --last 1000 and btrace show --last "
	       "1000, best of %d runs\n", RUNS);
	err = bench(btrace, dir, codebin, &tile, prog);
	unlink(codebin);
	rmdir(dir);
	free(br);
	ps_stream_release(&tile);
	ps_prog_free(prog);
	return err < 0 ? 1 : 0;
}
