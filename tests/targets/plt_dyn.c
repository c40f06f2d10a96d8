// SPDX-License-Identifier: MIT
/*
 * Dynamically linked (PIE): work() calls puts() through the PLT twice (the
 * first call binds it, the second jumps through the bound slot), then
 * stores through NULL (SIGSEGV).  For the symbol tests: stripped, with its
 * debug information kept elsewhere, the names of work and main (neither
 * is exported) and their source lines come only from there; puts@plt is
 * named from the dynamic relocations whatever is stripped.
 */
#include <stdio.h>

static int *volatile slot;

static int work(int x)
{
	puts("bind");	/* through puts@plt and the dynamic linker */
	puts("work");	/* through puts@plt straight to puts */
	*slot = x;	/* slot is NULL: SIGSEGV */
	return x;
}

int main(void)
{
	return work(3);
}
