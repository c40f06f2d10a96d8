// SPDX-License-Identifier: MIT
/*
 * Signals with a value: a child sends its parent N SIGUSR1s by sigqueue,
 * each with its own value, waiting for the handler's acknowledgement
 * before the next (and, before the first, for the parent to know its
 * pid); the parent computes and sleeps meanwhile, so that signals come in
 * the middle of its code and of its system calls.
 *
 *	sigqueue_count N
 *		prints "N signals, B with another siginfo" (B: deliveries
 *		whose si_code, si_pid or si_value is not the sender's) and
 *		exits 0 if B is 0, 1 if not
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t got, bad;
static pid_t child;
static int ack[2], go[2];

static void on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code != SI_QUEUE || si->si_pid != child ||
	    si->si_value.sival_int != got + 1000)
		bad++;
	got++;
	(void)!write(ack[1], "", 1);
}

__attribute__((noinline)) static unsigned long work(unsigned long x)
{
	int i;

	for (i = 0; i < 5000; i++)
		x = (x & 1) ? x * 3 + 1 : x >> 1 ^ (unsigned long)i;
	return x;
}

int main(int argc, char **argv)
{
	struct timespec nap = { 0, 100000 };
	struct sigaction sa;
	unsigned long x = 7;
	int n = argc > 1 ? atoi(argv[1]) : 100, i, st;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (pipe(ack) < 0 || pipe(go) < 0 || sigaction(SIGUSR1, &sa, NULL) < 0)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		if (read(go[0], &c, 1) != 1)	/* the parent knows its pid */
			_exit(2);
		for (i = 0; i < n; i++) {
			union sigval v = { .sival_int = 1000 + i };

			if (sigqueue(getppid(), SIGUSR1, v) < 0 ||
			    read(ack[0], &c, 1) != 1)
				_exit(2);
		}
		_exit(0);
	}
	if (write(go[1], "", 1) != 1)
		return 2;
	while (got < n) {
		x = work(x);
		nanosleep(&nap, NULL);
	}
	if (waitpid(child, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 2;
	printf("%d signals, %d with another siginfo (%lu)\n", (int)got,
	       (int)bad, x & 1);
	return bad ? 1 : 0;
}
