// SPDX-License-Identifier: MIT
/*
 * Indirect calls and jumps through a word of memory (call *hook(%rip),
 * jmp *hook(%rip), as a PLT's jmp *GOT is) whose target changes: in
 * streaks, so that each site meets the target it held when it was first
 * translated and others; to a function not run before; and the lazily
 * bound PLT slots of puts and strtol, whose GOT words change at their
 * first call (linked without -z now).  The recorder's translation of
 * such a site compares the target with the one the word held then
 * (rec_xlate.c's emit_icbit), a PLT slot not bound yet excepted
 * (rec_ibl.c's rc_icbit_guess); e2e/soft_diff compares its history with
 * single-stepping's, branch for branch.  Prints the sum it computed.
 */
#include <stdio.h>
#include <stdlib.h>

static long acc;

static void f(void)
{
	acc += 1;
}

void (*hook)(void) = f;	/* what the word holds before main runs */

static void g(void)
{
	acc += 3;
}

static void late(void)	/* first run at the 100th call */
{
	acc += 100;
}

/* call *hook(%rip), the registers a call may change marked so */
static void call_hook(void)
{
	__asm__ volatile("call *hook(%%rip)"
			 ::: "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9",
			     "r10", "r11", "memory", "cc");
}

/* jmp *hook(%rip): hook's function returns to tail_hook's caller */
void tail_hook(void);
__asm__(".text\n"
	".globl tail_hook\n"
	".type tail_hook, @function\n"
	"tail_hook:\n"
	"\tjmp *hook(%rip)\n"
	".size tail_hook, .-tail_hook\n");

int main(int argc, char **argv)
{
	int i;

	for (i = 0; i < 400; i++) {
		if (i % 100 == 99)
			hook = late;
		else if ((i / 7) % 3 == 2)
			hook = g;
		else
			hook = f;
		call_hook();
		if (i % 5 != 0)	/* conditionals' outcomes before it */
			tail_hook();
		if (i % 97 == 0)
			acc += strtol(argc > 1 ? argv[1] : "2", NULL, 10);
	}
	puts("ic_flip");
	printf("%ld\n", acc);
	return 0;
}
