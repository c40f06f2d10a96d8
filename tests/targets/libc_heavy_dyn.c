// SPDX-License-Identifier: MIT
/*
 * Dynamically linked: a program that spends its time in libc (memcpy,
 * memset, memchr over large buffers) called from a short loop of its own.
 * argv[1] iterations (default 2), argv[2] buffer bytes (default 4096).
 * A benchmark workload for tracing only the main executable.
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	size_t size = argc > 2 ? strtoul(argv[2], NULL, 0) : 4096;
	char *a = malloc(size), *b = malloc(size);
	unsigned long sum = 0;
	int i;

	if (!a || !b)
		return 1;
	for (i = 0; i < n; i++) {
		memset(a, 'a' + i % 26, size);
		memcpy(b, a, size);
		sum += memchr(b, 'z' + 1, size) == NULL;
	}
	free(a);
	free(b);
	return sum == (unsigned long)n ? 0 : 1;
}
