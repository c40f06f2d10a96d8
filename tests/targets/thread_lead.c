// SPDX-License-Identifier: MIT
/*
 * A chain of conditionals that fall through into one another, their
 * taken sides rare: not taken at all for the first half of the rounds,
 * then taken one after another.  Under the recorder's hot code (which
 * carries outcomes on, so that each conditional's taken side is one int3
 * before its translation until it is linked), a conditional's translation
 * falls through into the next one's across that int3, and the taken sides
 * that first run after that go out through it (lib/rec/rec_link.c's
 * thread_point): they lie 70 kB away, where a batch does not translate
 * ahead (rec_link.c's AHEAD_FAR), so they are not linked before.
 * tests/e2e/rec_hot.sh checks it against single-stepping.
 *
 *	thread_lead [ROUNDS]
 * Prints the sum; exits 0.
 */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) unsigned chain(unsigned a, unsigned s)
{
	/* laid out by hand: each test falls through into the next */
	__asm__("test $1, %[a]\n\t"
		"jnz 1f\n"
		"2: test $2, %[a]\n\t"
		"jnz 3f\n"
		"4: test $4, %[a]\n\t"
		"jnz 5f\n"
		"6: test $8, %[a]\n\t"
		"jnz 7f\n"
		"8: test $16, %[a]\n\t"
		"jnz 9f\n"
		"10: test $32, %[a]\n\t"
		"jnz 11f\n\t"
		"jmp 12f\n\t"
		/* the taken sides far away: not translated ahead */
		".pushsection .text.thread_lead_far, \"ax\"\n\t"
		".fill 70000, 1, 0xcc\n"
		"1: add $3, %[s]\n\t"
		"jmp 2b\n"
		"3: xor $5, %[s]\n\t"
		"jmp 4b\n"
		"5: sub $7, %[s]\n\t"
		"jmp 6b\n"
		"7: add $11, %[s]\n\t"
		"jmp 8b\n"
		"9: xor $13, %[s]\n\t"
		"jmp 10b\n"
		"11: add $17, %[s]\n\t"
		"jmp 12f\n\t"
		/* far on either side, wherever the linker puts it */
		".fill 70000, 1, 0xcc\n\t"
		".popsection\n"
		"12:"
		: [s] "+r"(s) : [a] "r"(a) : "cc");
	return s;
}

int main(int argc, char **argv)
{
	unsigned i, s = 0, rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 400;

	for (i = 0; i < rounds; i++)
		s = chain(i < rounds / 2 ? 0 : 1u << (i % 6), s);
	printf("%u\n", s);
	return 0;
}
