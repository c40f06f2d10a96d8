// SPDX-License-Identifier: MIT
/*
 * hot_loop [ROUNDS [PER]]: a loop full of conditionals, through a function
 * that returns, for the recorder's hot code (e2e/rec_hot): ROUNDS rounds of
 * PER steps, each round ended by a system call that leaves the translation
 * (sched_getaffinity), so that the tracer takes the ring's records between
 * rounds; a small ring wraps every few rounds and loses nothing.  Prints
 * what the steps computed.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned __attribute__((noinline)) step(unsigned x, unsigned i)
{
	if (x & 1)
		x = 3 * x + 1;
	else
		x >>= 1;
	if (i & 2)
		x ^= i;
	if ((x & 12) == 4)
		x += 7;
	if (x < 2)
		x = 27 + i;
	return x;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
	unsigned per = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned x = 27, r, i;
	cpu_set_t set;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < per; i++)
			x = step(x, i);
		sched_getaffinity(0, sizeof(set), &set);
	}
	printf("%u\n", x);
	return 0;
}
