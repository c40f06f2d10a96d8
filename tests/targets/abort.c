// SPDX-License-Identifier: MIT
/* A failed consistency check that calls abort() (SIGABRT). */
#include <stdlib.h>

static void check(int ok)
{
	if (!ok)
		abort();
}

int main(int argc, char **argv)
{
	check(argc > 1);
	return 0;
}
