// SPDX-License-Identifier: MIT
/*
 * Many mmap, munmap and mprotect calls near code the recorder has
 * translated a lot of (issue 22: each cost a walk over every translation).
 *
 *	rec_mmap_churn [FUNCS [ROUNDS]]
 *		(default 3000 400) calls FUNCS small functions once each
 *		through a pointer (FUNCS translations), then ROUNDS times:
 *		maps 16 KiB over a hole in the middle of that code, writes
 *		and sums it, makes a page of it read-only, unmaps it, makes a
 *		page of its own data read-only and writable again, and calls
 *		one of the functions again.  Prints the sum; exits 1 if a
 *		system call fails.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#define FUNCS_MAX 4000

/*
 * f_i at base + i * 16: i + x + 1; a hole of 64 KiB in the middle, never
 * run, where memory is mapped and unmapped: inside the code translated.
 */
__asm__(".text\n"
	".balign 4096\n"
	"mc_base:\n"
	".set mc_i, 1\n"
	".rept 2000\n"
	"	lea mc_i(%rdi), %eax\n"
	"	ret\n"
	".balign 16\n"
	".set mc_i, mc_i + 1\n"
	".endr\n"
	".balign 4096\n"
	"mc_hole:\n"
	".fill 65536, 1, 0xcc\n"
	"mc_base2:\n"
	".rept 2000\n"
	"	lea mc_i(%rdi), %eax\n"
	"	ret\n"
	".balign 16\n"
	".set mc_i, mc_i + 1\n"
	".endr\n");

extern char mc_base[], mc_hole[], mc_base2[];

typedef unsigned int (*fn_t)(unsigned int);

static char page[8192] __attribute__((aligned(4096)));

static fn_t fn(int i)
{
	if (i < FUNCS_MAX / 2)
		return (fn_t)(void *)(mc_base + (uintptr_t)i * 16);
	return (fn_t)(void *)(mc_base2 + (uintptr_t)(i - FUNCS_MAX / 2) * 16);
}

int main(int argc, char **argv)
{
	int funcs = argc > 1 ? atoi(argv[1]) : 3000;
	int rounds = argc > 2 ? atoi(argv[2]) : 400;
	unsigned int sum = 0;
	int i, r;

	if (funcs < 1 || funcs > FUNCS_MAX)
		return 2;
	for (i = 0; i < funcs; i++)
		sum = fn(i)(sum);
	for (r = 0; r < rounds; r++) {
		void *want = mc_hole + 16384;
		unsigned char *m = mmap(want, 16384, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
					-1, 0);

		if (m == MAP_FAILED || (void *)m != want)
			return 1;
		m[r % 16384] = (unsigned char)r;
		sum += m[r % 16384];
		if (mprotect(m, 4096, PROT_READ) < 0 || munmap(m, 16384) < 0 ||
		    mprotect(page, 4096, PROT_READ) < 0 ||
		    mprotect(page, 4096, PROT_READ | PROT_WRITE) < 0)
			return 1;
		page[r % 4096] = (char)r;
		sum = fn(r % funcs)(sum) + (unsigned int)page[r % 4096];
	}
	printf("%u\n", sum);
	return 0;
}
