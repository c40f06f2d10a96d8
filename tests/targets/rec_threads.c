// SPDX-License-Identifier: MIT
/*
 * Threads that start, compute, exit and crash, for the recorder.
 *
 *	rec_threads crash
 *		eight workers compute at once and exit, eight more start
 *		one after the other, and the last of those stores through
 *		NULL in rec_crash_here(): exit 139, the same way every run.
 *	rec_threads sum ROUNDS NAP_US
 *		ROUNDS rounds of eight workers started, joined and summed,
 *		NAP_US microseconds between rounds; prints "ready" first and
 *		the sum at the end, which does not depend on timing (attach
 *		tests compare it with an untraced run).  ROUNDS 0: rounds
 *		until SIGUSR1, then "ROUNDS SUM" (as long as a test needs,
 *		however loaded the machine).
 *
 * Each worker's work is its own: calls, a loop, a switch and a callback
 * through a function pointer, on its own data.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORKERS 8

struct job {
	unsigned int seed;
	unsigned int result;
};

__attribute__((noinline)) static unsigned int mix(unsigned int x,
						  unsigned int k)
{
	switch (k & 3) {
	case 0: return x * 2654435761u + k;
	case 1: return (x ^ (x >> 13)) + k;
	case 2: return x + (k << 7);
	default: return ~x + k;
	}
}

__attribute__((noinline)) static int cmp(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static unsigned int work(unsigned int seed)
{
	unsigned int v[64], x = seed, i;
	int (*volatile c)(const void *, const void *) = cmp;

	for (i = 0; i < 64; i++) {
		x = mix(x, i);
		v[i] = x;
	}
	qsort(v, 64, sizeof(v[0]), c);
	for (i = 1; i < 64; i++)
		x += v[i] - v[i - 1];
	return x;
}

__attribute__((noinline)) static void *worker(void *arg)
{
	struct job *j = arg;

	j->result = work(j->seed);
	return NULL;
}

__attribute__((noinline)) void rec_crash_here(unsigned int x)
{
	*(volatile unsigned int *)(long)(x & 0) = x;
}

__attribute__((noinline)) static void *crasher(void *arg)
{
	struct job *j = arg;

	j->result = work(j->seed);
	rec_crash_here(j->result);
	return NULL;
}

/* A round of workers, all at once, or one after the other (@serial). */
static unsigned int round_of(unsigned int r, void *(*last)(void *),
			     int serial)
{
	pthread_t th[WORKERS];
	struct job job[WORKERS];
	unsigned int sum = 0;
	int i;

	for (i = 0; i < WORKERS; i++) {
		job[i].seed = r * 131u + (unsigned int)i;
		if (pthread_create(&th[i], NULL,
				   i == WORKERS - 1 && last ? last : worker,
				   &job[i]))
			exit(2);
		if (serial)
			pthread_join(th[i], NULL);
	}
	for (i = 0; i < WORKERS; i++) {
		if (!serial)
			pthread_join(th[i], NULL);
		sum += job[i].result;
	}
	return sum;
}

static volatile sig_atomic_t done;

static void on_usr1(int sig)
{
	done = sig;
}

static void nap(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	unsigned int sum = 0, r, rounds;

	if (argc == 2 && !strcmp(argv[1], "crash")) {
		sum = round_of(1, NULL, 0);
		round_of(2 + (sum & 0), crasher, 1);
		return 1;
	}
	if (argc != 4 || strcmp(argv[1], "sum")) {
		fprintf(stderr, "usage: rec_threads crash | sum ROUNDS NAP_US\n");
		return 2;
	}
	rounds = (unsigned int)atoi(argv[2]);
	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	for (r = 0; rounds ? r < rounds : !done; r++) {
		sum += round_of(r, NULL, 0);
		nap(atol(argv[3]));
	}
	if (rounds)
		printf("%u\n", sum);
	else
		printf("%u %u\n", r, sum);
	return 0;
}
