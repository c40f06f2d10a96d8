// SPDX-License-Identifier: MIT
/*
 * Dynamically linked: signals sent and taken inside libc (raise) with the
 * handler in the program, and qsort calling back into it, five rounds.
 * For --only the executable: the handler and the comparator are entered
 * from untraced code, the handler returns through libc's restorer.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int hits;

static void handler(int sig)
{
	hits += sig;
	if (hits > 1000)
		abort();
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int v[64], i;

	signal(SIGUSR1, handler);
	for (i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	for (i = 0; i < 5; i++) {
		raise(SIGUSR1);
		qsort(v, 64, sizeof(int), cmp);
	}
	printf("%d %d\n", hits, v[3]);
	return 0;
}
