// SPDX-License-Identifier: MIT
/*
 * A long computation for attach/detach tests: N rounds of a checksum in
 * two threads, then it waits for its standard input to close and prints
 * the checksum and how many SIGRTMIN it got.  It says "ready" first, once
 * its handler is in place.  A real-time signal queues every instance (two
 * SIGUSR1 pending at once would merge into one), so each one sent must be
 * counted: a difference is a signal lost.  A traced run must print
 * exactly what an untraced one prints.
 *
 *	cap_checksum [ROUNDS]		(default 20000000)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int nsig;	/* both threads may run the handler at once */
static unsigned long rounds = 20000000;

static void on_sig(int sig)
{
	__atomic_fetch_add(&nsig, 1, __ATOMIC_RELAXED);
}

static unsigned long __attribute__((noinline)) mix(unsigned long sum,
						   unsigned long i)
{
	sum ^= i * 0x9e3779b97f4a7c15ul;
	sum = (sum << 7) | (sum >> 57);
	return sum + (i & 1 ? 3 : 5);
}

static void *work(void *arg)
{
	unsigned long *sum = arg, i;

	for (i = 0; i < rounds; i++)
		*sum = mix(*sum, i);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long a = 1, b = 2;
	struct sigaction sa = { .sa_handler = on_sig, .sa_flags = SA_RESTART };
	pthread_t th;
	char c;

	if (argc > 1)
		rounds = strtoul(argv[1], NULL, 0);
	sigaction(SIGRTMIN, &sa, NULL);
	/* Signals may come from now on. */
	printf("ready\n");
	fflush(stdout);
	pthread_create(&th, NULL, work, &b);
	work(&a);
	pthread_join(th, NULL);
	while (read(0, &c, 1) > 0)
		;
	printf("%lx %lx %d\n", a, b, __atomic_load_n(&nsig, __ATOMIC_RELAXED));
	return 0;
}
