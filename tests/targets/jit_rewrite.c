// SPDX-License-Identifier: MIT
/*
 * Code generated at run time into anonymous read-write-execute memory,
 * run, rewritten and run again, round after round: the recorder
 * translates it and must see each rewrite.
 *
 *	jit_rewrite [ROUNDS]
 *		(default 160) each round writes a small function (a loop with
 *		a conditional, its count and constant changing, and 0 to 2
 *		nops before it, so that its branches move) into one of
 *		four slots of a 2-page buffer, calls every slot written so
 *		far, and once in a while a function that counts its own
 *		calls in a word on its own page (code writing the page it
 *		runs from).  Prints the sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef unsigned int (*fn_t)(unsigned int);

/*
 * f(x): @pad nops; [inc dword [counter]]; eax = x; repeat k times:
 * eax += c, and eax ^= 0x55 where it came out even.  A history of the
 * function before a rewrite is the old one's: with another @pad, none
 * of its branches is where the new one's are.
 */
static size_t emit(uint8_t *p, unsigned int pad, unsigned int k,
		   unsigned int c, const uint8_t *counter)
{
	size_t n = 0;

	while (n < pad)
		p[n++] = 0x90;

	if (counter) {			/* inc dword [rip + counter] */
		int32_t d = (int32_t)(counter - (p + 6));

		p[n++] = 0xff;
		p[n++] = 0x05;
		memcpy(p + n, &d, 4);
		n += 4;
	}
	p[n++] = 0x89; p[n++] = 0xf8;			/* mov eax, edi */
	p[n++] = 0xb9; memcpy(p + n, &k, 4); n += 4;	/* mov ecx, k */
	p[n++] = 0x05; memcpy(p + n, &c, 4); n += 4;	/* L: add eax, c */
	p[n++] = 0xa8; p[n++] = 0x01;			/* test al, 1 */
	p[n++] = 0x74; p[n++] = 0x05;			/* jz +5 */
	p[n++] = 0x35; memcpy(p + n, &(uint32_t){ 0x55 }, 4); n += 4;
	p[n++] = 0xff; p[n++] = 0xc9;			/* dec ecx */
	p[n++] = 0x75; p[n++] = 0xee;			/* jnz L */
	p[n++] = 0xc3;					/* ret */
	return n;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 160;
	/* slots 0 and 1 on page 0, 2 on page 1, 3 across the two */
	static const size_t slot[4] = { 0x100, 0x800, 0x1400, 0xff0 };
	uint8_t *buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *counter = buf + 0x1f00;	/* data on a page of code */
	unsigned int sum = 0, written = 0;
	int i, s;

	if (buf == MAP_FAILED)
		return 1;
	for (i = 0; i < rounds; i++) {
		s = i % 4;
		emit(buf + slot[s], i / 4 % 3, 1 + i % 7, (unsigned int)i * 3 + 1,
		     NULL);
		written |= 1u << s;
		for (s = 0; s < 4; s++)
			if (written & (1u << s))
				sum = sum * 31 + ((fn_t)(buf + slot[s]))(sum);
		if (i % 16 == 0) {
			emit(buf + 0x1c00, i / 16 % 3, 2, (unsigned int)i, counter);
			sum += ((fn_t)(buf + 0x1c00))(sum);
			sum += ((fn_t)(buf + 0x1c00))(sum);
		}
	}
	printf("%u %u\n", sum, *(unsigned int *)counter);
	return 0;
}
