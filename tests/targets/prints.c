// SPDX-License-Identifier: MIT
/*
 * A program that writes to standard output, as most do: its lines must
 * reach the terminal untouched while btrace's report goes elsewhere (-o).
 * Prints "line 1" .. "line N" (N from argv[1], default 3) and a checksum.
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned mix(unsigned h, int i)
{
	return (h ^ (unsigned)i) * 16777619u;
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 3;
	unsigned h = 2166136261u;

	for (i = 1; i <= n; i++) {
		h = mix(h, i);
		printf("line %d\n", i);
	}
	printf("sum %u\n", h);
	return 0;
}
