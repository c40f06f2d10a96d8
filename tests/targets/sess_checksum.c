// SPDX-License-Identifier: MIT
/*
 * A long-running computation for attach tests: ROUNDS rounds of a tight
 * checksum loop, sleeping SLEEP_US between rounds.  The result depends only
 * on ROUNDS, so a run that was attached and detached many times must print
 * what an untraced run prints.  SIGUSR1 drops the sleep (finish quickly).
 *	sess_checksum ROUNDS SLEEP_US
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t hurry;

static void on_usr1(int sig)
{
	hurry = 1;
}

__attribute__((noinline)) uint64_t sess_mix(uint64_t sum, unsigned int i)
{
	if (i & 1)
		return sum * 31 + i;
	return (sum ^ (sum >> 7)) + i;
}

/* One round: a tight loop, then a call a breakpoint can stop at. */
__attribute__((noinline)) uint64_t sess_round(uint64_t sum, unsigned int r)
{
	unsigned int i;

	for (i = 0; i < 40; i++)
		sum = sess_mix(sum, i + r);
	return sum;
}

__attribute__((noinline)) void sess_round_end(unsigned int r)
{
	asm volatile("" ::"r"(r));
}

int main(int argc, char **argv)
{
	unsigned int rounds = argc > 1 ? atoi(argv[1]) : 1000, r;
	long sleep_us = argc > 2 ? atol(argv[2]) : 0;
	struct timespec ts = { sleep_us / 1000000, sleep_us % 1000000 * 1000 };
	uint64_t sum = 1;

	signal(SIGUSR1, on_usr1);
	printf("ready\n");
	fflush(stdout);
	for (r = 0; r < rounds; r++) {
		sum = sess_round(sum, r);
		sess_round_end(r);
		if (sleep_us && !hurry)
			nanosleep(&ts, NULL);
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
