// SPDX-License-Identifier: MIT
/*
 * Plain computation in the program's own code (no libc in the loop):
 * recursive fib(N) and a sieve.  N is argv[1] (default 12); exits with
 * the low byte of the result.  A benchmark workload as well.
 */
#include <stdlib.h>

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int sieve(int n)
{
	static char composite[1 << 16];
	int i, j, count = 0;

	for (i = 2; i < n && i < (int)sizeof(composite); i++) {
		if (composite[i])
			continue;
		count++;
		for (j = 2 * i; j < n && j < (int)sizeof(composite); j += i)
			composite[j] = 1;
	}
	return count;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 12;

	return (fib(n) + sieve(n * 10)) & 0xff;
}
