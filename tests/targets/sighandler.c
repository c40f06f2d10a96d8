// SPDX-License-Identifier: MIT
/*
 * A signal handler that runs and returns (through rt_sigreturn), after
 * which the program goes on and stores through NULL (SIGSEGV).
 */
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t hits;
static int *volatile slot;

static void on_usr1(int sig)
{
	hits++;
}

static void after_signal(void)
{
	*slot = hits;	/* slot is NULL: SIGSEGV */
}

int main(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	after_signal();
	return 0;
}
