// SPDX-License-Identifier: MIT
/*
 * Threads for the session: two workers spin in their own functions for the
 * whole run, and the main thread starts a short-lived late worker every
 * 20 ms, so a tracer that attached earlier must follow new threads to see
 * sess_late_worker.  Runs SECONDS (default 30) then exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int stop;

static void nap(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static unsigned int spin(unsigned int x, int n)
{
	while (n--)
		x = x * 1103515245u + 12345u;
	return x;
}

__attribute__((noinline)) void *sess_worker_a(void *arg)
{
	unsigned int x = 1;

	while (!stop) {
		x = spin(x, 20);
		nap(2000);
	}
	return (void *)(unsigned long)x;
}

__attribute__((noinline)) void *sess_worker_b(void *arg)
{
	unsigned int x = 2;

	while (!stop) {
		x = spin(x, 30);
		nap(3000);
	}
	return (void *)(unsigned long)x;
}

__attribute__((noinline)) void *sess_late_worker(void *arg)
{
	return (void *)(unsigned long)spin(3, 10);
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30, i;
	pthread_t a, b, late;

	pthread_create(&a, NULL, sess_worker_a, NULL);
	pthread_create(&b, NULL, sess_worker_b, NULL);
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < seconds * 50; i++) {
		nap(20000);
		if (pthread_create(&late, NULL, sess_late_worker, NULL) == 0)
			pthread_join(late, NULL);
	}
	stop = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
