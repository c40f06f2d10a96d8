// SPDX-License-Identifier: MIT
/*
 * For btrace gdbserver under GDB: a PIE with the shared C library and
 * libpthread, a signal with a handler, two threads, calls to step into and
 * over, and (with "crash") a store through NULL.  Tests refer to the lines
 * by the markers in the comments (grep -n), not by number.  Main waits for
 * a byte from each worker rather than for its end (pthread_join), and the
 * workers then wait until the process ends: whether a thread has ended by
 * a stop is timing, and so would be main's path, which soft_diff compares
 * branch for branch.
 *	gdbsrv_dyn [crash]
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static int total;
static int done[2];	/* a pipe: one byte from each worker */
static int hold[2];	/* a pipe never written: the workers wait there */

static void on_usr1(int sig)
{
	handled++;	/* MARK_HANDLER */
}

__attribute__((noinline)) int square(int x)
{
	int r = x * x;	/* MARK_SQUARE */

	return r;	/* MARK_SQUARE_RET */
}

__attribute__((noinline)) int sum_squares(int n)
{
	int s = 0, i;

	for (i = 1; i <= n; i++)
		s += square(i);	/* MARK_CALL_SQUARE */
	return s;	/* MARK_SUM_RET */
}

__attribute__((noinline)) void *worker(void *arg)
{
	int v = square((int)(long)arg);	/* MARK_WORKER */

	__atomic_fetch_add(&total, v, __ATOMIC_SEQ_CST);	/* no lock to wait on */
	if (write(done[1], "", 1) != 1)
		_exit(2);
	/* alive until the process ends: which worker ends first is timing,
	   and so would be main's second pthread_create (its stack cache) */
	if (read(hold[0], &v, 1) < 0)
		_exit(2);
	return NULL;
}

__attribute__((noinline)) void store(int *p, int v)
{
	*p = v;	/* MARK_STORE */
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	int s, i;
	char c;

	if (pipe(done) || pipe(hold))
		return 2;
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);	/* MARK_RAISE */
	s = sum_squares(4);	/* MARK_MAIN_SUM */
	/* write@plt and read@plt bound now: which thread would bind them
	   lazily is timing */
	if (write(done[1], "", 0) != 0 || read(done[0], &c, 0) != 0)
		return 2;
	/* one worker at a time: two at once contend in pthread_create */
	for (i = 0; i < 2; i++) {
		pthread_create(&th[i], NULL, worker, (void *)(long)(i + 5));
		if (read(done[0], &c, 1) != 1)
			return 2;
	}
	printf("sum %d total %d handled %d\n", s, total, (int)handled);	/* MARK_PRINT */
	if (argc > 1 && !strcmp(argv[1], "crash"))
		store(NULL, s);	/* MARK_CRASH_CALL */
	return 0;
}
