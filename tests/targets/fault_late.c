// SPDX-License-Identifier: MIT
/*
 * A fault the program's own handler takes after a long run that made
 * system calls: PRE of them a while before the fault, one just before.
 * Under the recorder each system call leaves time records in the
 * thread's history, which are not a branch record's size: what is kept
 * at the fault (its newest megabyte) starts where a walk of the records
 * says.  Kept from a computed position before, the megabyte was the
 * whole 8 MiB ring where the records' bytes were not a multiple of a
 * branch record's, and where they were, the position could fall inside
 * a record and the history up to the fault was lost ("last 0 branches").
 *
 *	fault_late [PRE [MORE]]
 * MORE: rounds more than 60,000.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

static volatile unsigned long sum;
static int *volatile slot;

static __attribute__((noinline)) void step(unsigned long i)
{
	if (i & 1)
		sum += i;
	else
		sum ^= i;
}

static void on_segv(int sig)
{
	long i;

	for (i = 0; i < 100000; i++)	/* a handler that runs on */
		step(i);
	signal(sig, SIG_DFL);
	raise(sig);
}

static __attribute__((noinline)) void store_fault(int value)
{
	*slot = value;	/* slot is NULL: SIGSEGV */
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	long i, pre = argc > 1 ? atol(argv[1]) : 0;
	long more = argc > 2 ? atol(argv[2]) : 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	/* 60,000 rounds of four taken branches: more than the megabyte kept,
	 * less than the recorder's ring of 8 MiB */
	for (i = 0; i < 60000 + more; i++) {
		step(i);
		if ((i >= 50000 && i < 50000 + pre) || i == 55000)
			syscall(SYS_getppid);
	}
	store_fault(1);
	return 0;
}
