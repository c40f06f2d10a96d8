// SPDX-License-Identifier: MIT
/*
 * Dies of the fatal signal named by its argument: "ill" (ud2, SIGILL),
 * "trap" (int3, SIGTRAP), "bus" (a mapping past the end of its file,
 * SIGBUS).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void die_ill(void)
{
	__asm__ volatile("ud2");
}

static void die_trap(void)
{
	__asm__ volatile("int3");
}

static void die_bus(void)
{
	FILE *f = tmpfile();
	volatile char *p;

	/* An empty file mapped: its first page has no backing. */
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);
	if (p != MAP_FAILED)
		(void)p[0];
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";

	if (!strcmp(how, "ill"))
		die_ill();
	else if (!strcmp(how, "trap"))
		die_trap();
	else if (!strcmp(how, "bus"))
		die_bus();
	return 1;
}
