// SPDX-License-Identifier: MIT
/*
 * Dynamically linked (PIE): qsort() in the shared libc calls back into the
 * program, whose comparison function stores through NULL (SIGSEGV).
 */
#include <stdlib.h>

static int *volatile slot;

static int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (x == 2 || y == 2)
		*slot = x;	/* slot is NULL: SIGSEGV */
	return (x > y) - (x < y);
}

int main(void)
{
	int v[] = { 3, 1, 2 };

	qsort(v, 3, sizeof(v[0]), compare);
	return v[0];
}
