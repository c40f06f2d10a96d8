// SPDX-License-Identifier: MIT
/*
 * Threads that end one after the other, each with a full history, then
 * one left waiting when the program exits.
 *
 *	threads_gone N ROUNDS
 *		N workers, each started after the one before it was joined,
 *		each running ROUNDS rounds of a loop with a conditional (two
 *		taken branches a round at least); then a thread that waits in
 *		pause() until the exit ends it.  Prints the workers' sum, which
 *		does not depend on timing, and exits 0.
 *
 * Twelve workers of 200000 rounds leave more history behind than btrace
 * keeps of gone threads (eight rings' worth, 64 MiB at least): the first
 * gone lose theirs while the program runs, and the one still waiting
 * goes only when btrace lets the program go.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static unsigned long sum;

__attribute__((noinline)) static void *worker(void *arg)
{
	unsigned long n = (unsigned long)arg, s = 0, i;

	for (i = 0; i < n; i++) {
		if (i % 3)
			s += i;
		else
			s ^= i;
	}
	sum += s;
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long rounds;
	pthread_t t;
	int n, i;

	if (argc != 3) {
		fprintf(stderr, "usage: threads_gone N ROUNDS\n");
		return 2;
	}
	n = atoi(argv[1]);
	rounds = strtoul(argv[2], NULL, 10);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, worker, (void *)rounds) != 0 ||
		    pthread_join(t, NULL) != 0)
			return 1;
	}
	if (pthread_create(&t, NULL, waiter, NULL) != 0)
		return 1;
	printf("%lu\n", sum);
	return 0;
}
