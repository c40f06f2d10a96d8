// SPDX-License-Identifier: MIT
/*
 * Indirect calls and returns over targets that fight for the recorder's
 * lookup entries, from several threads at once, while others sleep in
 * system calls.
 *
 *	rec_lookup_threads [WORKERS [SLEEPERS [ROUNDS]]]
 *		(default 4 2 6) WORKERS threads (0: main alone) each call,
 *		ROUNDS times, each of BLOCKS pairs of functions g_i and h_i
 *		through a pointer, a phase of REPS calls of one, then of the
 *		other (workers start in different phases); SLEEPERS threads
 *		sleep in read() on a pipe.  Prints each worker's sum, which
 *		does not depend on timing, and exits with every thread but
 *		main asleep in read(); without arguments, stores through
 *		NULL in lt_crash_here() instead of exiting (139): a stop
 *		with every thread still there, each having done what it
 *		does in every run (softdiff -t compares them all; which
 *		threads an exit leaves to be seen is timing's).
 *
 * g_i is at base + i * 64 KiB, h_i 32 bytes after it: all g_i share the
 * first table's entry (bits 0-15), all h_i another, and g_i and h_i the
 * second table's (bits 8-23): most of them find a place only by taking
 * one over, which the recorder must do while the other threads run.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCKS 16
#define REPS 40

/* g_i: x * 3 + i + 1 if x is odd, else x + i; h_i: x ^ (i << 4) + 7. */
__asm__(".text\n"
	".balign 65536\n"
	"lt_base:\n"
	".set lt_i, 0\n"
	".rept 16\n"
	".balign 65536\n"
	"	test $1, %edi\n"
	"	jz 1f\n"
	"	lea 1(%rdi,%rdi,2), %eax\n"
	"	add $lt_i, %eax\n"
	"	ret\n"
	"1:	lea lt_i(%rdi), %eax\n"
	"	ret\n"
	".balign 32\n"
	"	mov %edi, %eax\n"
	"	xor $(lt_i << 4), %eax\n"
	"	add $7, %eax\n"
	"	ret\n"
	".set lt_i, lt_i + 1\n"
	".endr\n");

extern char lt_base[];

typedef unsigned int (*fn_t)(unsigned int);

static int ready_pipe[2], never_pipe[2];
static int rounds = 6;
static unsigned int sums[16];

static fn_t fn_at(int i, int h)
{
	return (fn_t)(void *)(lt_base + (uintptr_t)i * 65536 + (h ? 32 : 0));
}

static unsigned int work(unsigned int id)
{
	unsigned int sum = id;
	int r, i, k;

	for (r = 0; r < rounds; r++)
		for (i = 0; i < BLOCKS; i++) {
			fn_t f = fn_at(i, (int)((r + id) & 1));

			for (k = 0; k < REPS; k++)
				sum = f(sum) * 2654435761u + (unsigned int)k;
		}
	return sum;
}

/* Sleeps in read() for good: the program exits around it. */
static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	for (;;)
		read(never_pipe[0], &c, 1);
	return NULL;
}

/* Its sum, a byte to main, then sleep: its history ends the same way in
 * every run, wherever the others are. */
static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	char c = 1;

	sums[id] = work((unsigned int)id);
	if (write(ready_pipe[1], &c, 1) != 1)
		abort();
	return sleeper(NULL);
}

__attribute__((noinline)) static void lt_crash_here(volatile int *p)
{
	*p = 1;
}

int main(int argc, char **argv)
{
	int workers = argc > 1 ? atoi(argv[1]) : 4;
	int sleepers = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t t;
	int i;
	char c;

	if (argc > 3)
		rounds = atoi(argv[3]);
	if (workers < 0 || workers > 16 || sleepers < 0 || sleepers > 16 ||
	    pipe(ready_pipe) < 0 || pipe(never_pipe) < 0)
		return 2;
	for (i = 0; i < sleepers; i++)
		pthread_create(&t, NULL, sleeper, NULL);
	if (workers == 0)
		printf("main: %u\n", work(0));
	for (i = 0; i < workers; i++)
		pthread_create(&t, NULL, worker, (void *)(uintptr_t)i);
	/* one byte a worker, read one at a time: the same path every run */
	for (i = 0; i < workers; i++)
		if (read(ready_pipe[0], &c, 1) != 1)
			return 3;
	for (i = 0; i < workers; i++)
		printf("worker %d: %u\n", i, sums[i]);
	if (argc == 1) {	/* stop with every thread there */
		fflush(stdout);
		lt_crash_here(NULL);
	}
	return 0;
}
