// SPDX-License-Identifier: MIT
/*
 * A crash at a function's first instruction: main calls leaf_store(),
 * which has no prologue and stores through NULL at once (SIGSEGV with
 * the pc on the call's target).  Or, with an argument, the same store
 * to a variable, and a return.
 */
#include <stddef.h>

void leaf_store(int *p, int v);

__asm__(".text\n"
	".globl leaf_store\n"
	".type leaf_store, @function\n"
	"leaf_store:\n"
	"\tmovl %esi, (%rdi)\n"
	"\tret\n"
	".size leaf_store, .-leaf_store\n");

__attribute__((noinline)) int middle(int *p, int v)
{
	leaf_store(p, v + 1);
	return v;
}

int main(int argc, char **argv)
{
	int x = 0;

	middle(&x, 1);
	middle(argc > 1 ? &x : NULL, 2);
	return x;
}
