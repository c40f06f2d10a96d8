// SPDX-License-Identifier: MIT
/*
 * A W^X JIT: code is written while its pages are read-write, then made
 * read-execute (mprotect) and run; to change it, the pages go back to
 * read-write, are rewritten and made executable again.
 *
 *	jit_wx [ROUNDS]
 *		(default 120) each round flips the 2-page buffer writable,
 *		rewrites one of its three functions (a loop with a
 *		conditional), flips it executable and calls all three.
 *		Prints the sum; exits 1 if a system call fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef unsigned int (*fn_t)(unsigned int);

/* f(x): eax = x; repeat k times: eax += c, eax ^= 0x33 where odd. */
static void emit(uint8_t *p, unsigned int k, unsigned int c)
{
	size_t n = 0;

	p[n++] = 0x89; p[n++] = 0xf8;			/* mov eax, edi */
	p[n++] = 0xb9; memcpy(p + n, &k, 4); n += 4;	/* mov ecx, k */
	p[n++] = 0x05; memcpy(p + n, &c, 4); n += 4;	/* L: add eax, c */
	p[n++] = 0xa8; p[n++] = 0x01;			/* test al, 1 */
	p[n++] = 0x75; p[n++] = 0x05;			/* jnz +5 */
	p[n++] = 0x35; memcpy(p + n, &(uint32_t){ 0x33 }, 4); n += 4;
	p[n++] = 0xff; p[n++] = 0xc9;			/* dec ecx */
	p[n++] = 0x75; p[n++] = 0xee;			/* jnz L */
	p[n++] = 0xc3;					/* ret */
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 120;
	static const size_t slot[3] = { 0x40, 0x600, 0x1080 };
	uint8_t *buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned int sum = 0;
	int i, s;

	if (buf == MAP_FAILED)
		return 1;
	for (s = 0; s < 3; s++)
		emit(buf + slot[s], 1, 1);
	for (i = 0; i < rounds; i++) {
		if (mprotect(buf, 8192, PROT_READ | PROT_WRITE) < 0)
			return 1;
		emit(buf + slot[i % 3], 1 + i % 5, (unsigned int)i * 7 + 2);
		if (mprotect(buf, 8192, PROT_READ | PROT_EXEC) < 0)
			return 1;
		for (s = 0; s < 3; s++)
			sum = sum * 33 + ((fn_t)(buf + slot[s]))(sum);
	}
	printf("%u\n", sum);
	return 0;
}
