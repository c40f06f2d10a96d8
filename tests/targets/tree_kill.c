// SPDX-License-Identifier: MIT
/*
 * A parent and two workers that each run code of their own, then wait
 * on a pipe: the parent kills worker 1 with SIGTERM while it is alive
 * and blocked (its fate, sent by another process), then tells worker 2
 * to go on and end, waits for both, prints how they ended, runs
 * parent_only() and then:
 *   (none)    the parent crashes on a NULL store
 *   exit      the parent exits 5 instead
 *   abort     worker 2 calls abort() (a crash of its own) instead of
 *             exiting 9; the parent then exits 5
 *   selfkill  worker 2 sends itself SIGTERM (its own doing); the parent
 *             then exits 5
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned mix(unsigned h, int rounds)
{
	int i;

	for (i = 0; i < rounds; i++)
		h = (h & 1) ? h * 3 + 1 : h / 2 + (unsigned)i;
	return h;
}

static unsigned worker_one(void) { return mix(11, 300); }
static unsigned worker_two(void) { return mix(22, 300); }
static unsigned parent_only(unsigned v) { return mix(v, 500); }

static void crash(unsigned v)
{
	volatile unsigned *p = NULL;

	*p = v;		/* SIGSEGV */
}

/* Worker 2 told to go on: how it ends, as @how says. */
static void worker_two_end(const char *how, unsigned v)
{
	v = mix(v, 200);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "selfkill"))
		kill(getpid(), SIGTERM);
	_exit(v ? 9 : 8);
}

static void print_end(const char *who, int status)
{
	printf("%s %s %d\n", who, WIFEXITED(status) ? "exited" : "killed",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	int ready[2], go[2][2], s1 = 0, s2 = 0, i;
	pid_t w[2];
	unsigned v;
	char c;

	if (pipe(ready) < 0 || pipe(go[0]) < 0 || pipe(go[1]) < 0)
		return 2;
	for (i = 0; i < 2; i++) {
		w[i] = fork();
		if (w[i] < 0)
			return 2;
		if (w[i] == 0) {
			unsigned v = i == 0 ? worker_one() : worker_two();

			close(go[i][1]);
			if (write(ready[1], "r", 1) != 1)
				_exit(2);
			if (read(go[i][0], &c, 1) != 1)
				_exit(3);	/* worker 1 is killed first */
			worker_two_end(how, v);
		}
		close(go[i][0]);
	}
	for (i = 0; i < 2; i++)
		if (read(ready[0], &c, 1) != 1)
			return 2;
	kill(w[0], SIGTERM);
	if (waitpid(w[0], &s1, 0) != w[0] || write(go[1][1], "g", 1) != 1 ||
	    waitpid(w[1], &s2, 0) != w[1])
		return 2;
	print_end("worker1", s1);
	print_end("worker2", s2);
	fflush(stdout);
	v = parent_only((unsigned)(s1 + s2));
	if (*how)
		return v ? 5 : 4;
	crash(v);
	return 0;
}
