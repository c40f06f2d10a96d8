// SPDX-License-Identifier: MIT
/* The signals btrace catches so that none ends it holding a target. */
#include <signal.h>
#include <stddef.h>
#include <string.h>

#include "signals.h"

static const int quit_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
	SIGXCPU, SIGXFSZ, SIGPWR, SIGSTKFLT,
};

static void quit_set(sigset_t *set)
{
	size_t i;
	int sig;

	sigemptyset(set);
	for (i = 0; i < sizeof(quit_signals) / sizeof(quit_signals[0]); i++)
		sigaddset(set, quit_signals[i]);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(set, sig);
}

void cmd_catch_signals(void (*handler)(int))
{
	struct sigaction sa;
	sigset_t set;
	int sig;

	/* No SA_RESTART: a blocking read or wait must see the signal. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	quit_set(&set);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&set, sig) == 1)
			sigaction(sig, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cmd_block_signals(sigset_t *old)
{
	sigset_t set;

	quit_set(&set);
	sigprocmask(SIG_BLOCK, &set, old);
}
