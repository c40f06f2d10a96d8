/* SPDX-License-Identifier: MIT */
#ifndef BTRACE_BENCH_H
#define BTRACE_BENCH_H

/*
 * What the soft backend benchmarks share: a clock, an untraced run, and
 * the verdict printed beside each goal.  Static: each benchmark is one
 * program built from one file and this header.
 */

#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run a command with output to /dev/null; wall seconds, or -1 if it could
 * not run.  A program that ends by a signal ran (fast_mix ends with a
 * NULL store on purpose).
 */
static inline double bench_run_cmd(char **argv)
{
	double t0 = bench_now();
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid ||
	    (WIFEXITED(status) && WEXITSTATUS(status) == 127))
		return -1;
	return bench_now() - t0;
}

static inline const char *bench_verdict(int ok)
{
	return ok ? "goal met" : "goal NOT met";
}

#endif /* BTRACE_BENCH_H */
