// SPDX-License-Identifier: MIT
/*
 * Code that goes away and comes back different at the same address, in
 * file-backed executable mappings (code a translator keeps copies of):
 *  1. a function mapped from one file, called, unmapped; another file
 *     mapped at the same address, its function called;
 *  2. that mapping made writable, its code patched, made executable
 *     again, called.
 * The calls must return 1, 2 and 3: exits 0 if they do, 1 if not.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* mov $N,%eax; ret */
static void code_for(unsigned char *buf, int n)
{
	memset(buf, 0xcc, 4096);
	buf[0] = 0xb8;
	memcpy(buf + 1, &n, 4);
	buf[5] = 0xc3;
}

static int file_with(int n)
{
	unsigned char buf[4096];
	int fd = memfd_create("rec_remap", 0);	/* no clock, no randomness */

	if (fd < 0)
		exit(2);
	code_for(buf, n);
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		exit(2);
	return fd;
}

__attribute__((noinline)) int rec_remap_call(int (*fn)(void))
{
	return fn();
}

int main(void)
{
	int a = file_with(1), b = file_with(2), r1, r2, r3;
	void *at = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, a, 0);

	if (at == MAP_FAILED)
		return 2;
	r1 = rec_remap_call((int (*)(void))at);
	munmap(at, 4096);
	if (mmap(at, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, b,
		 0) != at)
		return 2;
	r2 = rec_remap_call((int (*)(void))at);
	if (mprotect(at, 4096, PROT_READ | PROT_WRITE))
		return 2;
	code_for(at, 3);
	if (mprotect(at, 4096, PROT_READ | PROT_EXEC))
		return 2;
	r3 = rec_remap_call((int (*)(void))at);
	printf("%d %d %d\n", r1, r2, r3);
	return r1 == 1 && r2 == 2 && r3 == 3 ? 0 : 1;
}
