/*
 * Time along the history (timeline_time.sh): work() computes for about
 * 50 ms and says how long it took by its own clock (vDSO clock_gettime:
 * no system call); nap() sleeps 200 ms in nanosleep; then crash() writes
 * through NULL (SIGSEGV in crash).
 */
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static unsigned long long work(unsigned long n)
{
	unsigned long long t0 = now_ns();

	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
	return now_ns() - t0;
}

__attribute__((noinline)) static void nap(void)
{
	struct timespec ts = { 0, 200000000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void crash(void)
{
	*(volatile int *)0 = (int)sink;
}

int main(int argc, char **argv)
{
	unsigned long n = 20000000;
	unsigned long long took;

	if (argc > 1)
		sscanf(argv[1], "%lu", &n);
	took = work(n);
	printf("work: %llu ns\n", took);
	fflush(stdout);
	nap();
	crash();
	return 0;
}
