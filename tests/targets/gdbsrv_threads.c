// SPDX-License-Identifier: MIT
/*
 * Two workers for GDB's non-stop mode: each waits, napping, until the
 * debugger sets its flag (go_a, go_b), then does its own work (alpha's or
 * beta's functions) and reaches its mark; alpha then waits for go_a == 2.
 * main, after starting both (spawned()), joins them.  Which thread may
 * reach a breakpoint is the debugger's choice, never the scheduler's.
 */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

volatile int go_a, go_b;
volatile int sink, sink_a, sink_b;

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 1000000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) int alpha_leaf(int x)
{
	return x * 3;
}

__attribute__((noinline)) int alpha_work(void)
{
	int i, s = 0;

	for (i = 0; i < 3; i++)
		s += alpha_leaf(i);
	return s;
}

__attribute__((noinline)) void alpha_mark(int s)
{
	sink_a = s;	/* MARK_ALPHA */
}

__attribute__((noinline)) int beta_leaf(int x)
{
	return x + 7;
}

__attribute__((noinline)) int beta_work(void)
{
	int i, s = 0;

	for (i = 0; i < 2; i++)
		s += beta_leaf(i);
	return s;
}

__attribute__((noinline)) void beta_mark(int s)
{
	sink_b = s;	/* MARK_BETA */
}

static void *alpha(void *arg)
{
	while (!go_a)
		nap();
	alpha_mark(alpha_work());
	while (go_a != 2)
		nap();
	return arg;
}

static void *beta(void *arg)
{
	while (!go_b)
		nap();
	beta_mark(beta_work());
	return arg;
}

__attribute__((noinline)) void spawned(void)
{
	sink = 0;
}

int main(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, alpha, NULL) ||
	    pthread_create(&b, NULL, beta, NULL))
		return 1;
	spawned();
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	/* each its own: which mark's store ran last is the scheduler's */
	printf("alpha and beta done %d %d\n", sink_a, sink_b);
	return 0;
}
