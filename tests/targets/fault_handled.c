// SPDX-License-Identifier: MIT
/*
 * A crash behind the program's own handler, as Redis, Python's
 * faulthandler or a crash reporter have it: a store through NULL in
 * store_fault(), a SIGSEGV handler that runs long (about a million
 * branches: a crash report) and then re-raises the signal with its
 * default action, so that the process dies of SIGSEGV (status 139).
 *
 *	fault_handled [ROUNDS] [raise|kill]
 * ROUNDS: the handler's loop (default 450000: about a million branches).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile unsigned long report;
static int *volatile slot;
static long rounds = 450000;
static int by_kill;

static __attribute__((noinline)) void report_line(unsigned long i)
{
	if (i & 1)
		report += i;
	else
		report ^= i;
}

static void on_segv(int sig)
{
	long i;

	for (i = 0; i < rounds; i++)
		report_line(i);
	signal(sig, SIG_DFL);
	if (by_kill)
		kill(getpid(), sig);
	else
		raise(sig);
}

static __attribute__((noinline)) void store_fault(int value)
{
	*slot = value;	/* slot is NULL: SIGSEGV */
}

static __attribute__((noinline)) void before_fault(int n)
{
	int i;

	for (i = 0; i < n; i++)
		report_line(i);
	store_fault(n);
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	if (argc > 1)
		rounds = atol(argv[1]);
	by_kill = argc > 2 && !strcmp(argv[2], "kill");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_segv;
	sigaction(SIGSEGV, &sa, NULL);
	before_fault(3);
	return 0;
}
