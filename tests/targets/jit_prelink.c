// SPDX-License-Identifier: MIT
/*
 * A call from generated code into other generated code that ran before
 * it, then rewritten: a() calls b() by a rel32 from the page before b's.
 * b() runs first on its own, so its translation exists when a()'s call is
 * translated (linked as it is made); then b() is rewritten and a() called
 * again.  The recorder must drop that link with b()'s old translation.
 * Prints the three results ("1 11 12") and takes a path of its own on the
 * last one; exits 1 if a() ran the old b().
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef int (*fn_t)(void);

int main(void)
{
	static const unsigned char bcode[] = {
		0xb8, 1, 0, 0, 0,	/* mov $1,%eax */
		0xc3,			/* ret */
	};
	unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE |
				PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *a, *b;
	int rel, r1, r2, r3;

	if (m == MAP_FAILED)
		return 2;
	a = m;
	b = m + 4096;
	memcpy(b, bcode, sizeof(bcode));
	rel = (int)(b - (a + 5));
	a[0] = 0xe8;			/* call b */
	memcpy(a + 1, &rel, 4);
	a[5] = 0x83;			/* add $10,%eax */
	a[6] = 0xc0;
	a[7] = 10;
	a[8] = 0xc3;			/* ret */
	r1 = ((fn_t)(void *)b)();
	r2 = ((fn_t)(void *)a)();
	b[1] = 2;			/* mov $2,%eax */
	r3 = ((fn_t)(void *)a)();
	printf("%d %d %d\n", r1, r2, r3);
	if (r3 != 12) {
		puts("a() ran the old b()");
		return 1;
	}
	return 0;
}
