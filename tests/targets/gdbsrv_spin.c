// SPDX-License-Identifier: MIT
/*
 * A known number of taken branches between two marks, for btrace
 * gdbserver's benchmark: gs_mark() is called at the start, after ROUNDS
 * rounds, and after EXTRA more.  Each round takes 3 branches: the loop's
 * conditional, the call of gs_round and its return.
 *	gdbsrv_spin ROUNDS EXTRA
 */
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) void gs_mark(int n)
{
	sink += (unsigned long)n;
}

__attribute__((noinline)) void gs_round(unsigned long i)
{
	sink += i;
}

static void rounds(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		gs_round(i);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000;
	unsigned long extra = argc > 2 ? strtoul(argv[2], NULL, 0) : 10;

	gs_mark(0);
	rounds(n);
	gs_mark(1);
	rounds(extra);
	gs_mark(2);
	return 0;
}
