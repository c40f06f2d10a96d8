// SPDX-License-Identifier: MIT
/*
 * A thread that stores through NULL (SIGSEGV) while another thread keeps
 * running a loop (2^23 rounds: its history fits softdiff's 64 MiB ring, and
 * it outlasts main's second pthread_create) and main waits in pthread_join. */
#include <pthread.h>
#include <stddef.h>

static volatile int spinning = 1;
static int *volatile slot;

static void *spinner(void *arg)
{
	unsigned long n = 0;

	while (spinning && n < (1ul << 23))
		n++;
	return (void *)n;
}

static void crash_here(int v)
{
	*slot = v;	/* slot is NULL: SIGSEGV */
}

static void *crasher(void *arg)
{
	crash_here(7);
	return NULL;
}

int main(void)
{
	pthread_t spin, crash;

	pthread_create(&spin, NULL, spinner, NULL);
	pthread_create(&crash, NULL, crasher, NULL);
	pthread_join(crash, NULL);
	spinning = 0;
	pthread_join(spin, NULL);
	return 0;
}
