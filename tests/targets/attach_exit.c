// SPDX-License-Identifier: MIT
/*
 * Spins a little in short rounds for MS milliseconds (default 300), then
 * exits with status 7: a target that ends while btrace is attached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned int attach_work(unsigned int x)
{
	int i;

	for (i = 0; i < 10; i++)
		x = x * 33 + i;
	return x;
}

int main(int argc, char **argv)
{
	int ms = argc > 1 ? atoi(argv[1]) : 300;
	struct timespec ts = { 0, 5 * 1000 * 1000 }, start, now;
	unsigned int x = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	printf("ready\n");
	fflush(stdout);
	do {
		x = attach_work(x);
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) * 1000 +
		 (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
	return 7 + (x & 0);
}
