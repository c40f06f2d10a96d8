/*
 * Time along the history (timeline_time.sh): work() computes (argv[1]
 * rounds of 256 multiply-adds and one branch: about 50 ms untraced at
 * 200000) and nap() sleeps 200 ms in nanosleep, each saying how long it
 * took by its own clock (vDSO clock_gettime: no system call); then
 * crash() writes through NULL (SIGSEGV in crash).
 *
 * Each clock read is followed by a system call (getppid), so that the
 * recorder's time records lie right after it: between records the
 * trace's time is interpolated over instructions, and a wait for the
 * tracer on a loaded machine (a stop is timed when the tracer sees it)
 * would otherwise be spread over the loop before it.  main() reads the
 * clock once before work(), so that the code from the read to the
 * system call is translated and links without a stop in between.
 */
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	syscall(SYS_getppid);	/* time records right after the read */
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define MA(x) x = x * 6364136223846793005ul + 1442695040888963407ul
#define MA4(x) MA(x); MA(x); MA(x); MA(x)
#define MA16(x) MA4(x); MA4(x); MA4(x); MA4(x)
#define MA64(x) MA16(x); MA16(x); MA16(x); MA16(x)

__attribute__((noinline)) static unsigned long long work(unsigned long n)
{
	unsigned long long t0 = now_ns();
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++) {
		MA64(x);
		MA64(x);
		MA64(x);
		MA64(x);
	}
	sink = x;
	return now_ns() - t0;
}

__attribute__((noinline)) static unsigned long long nap(void)
{
	struct timespec ts = { 0, 200000000 };
	unsigned long long t0 = now_ns();

	nanosleep(&ts, NULL);
	return now_ns() - t0;
}

__attribute__((noinline)) static void crash(void)
{
	*(volatile int *)0 = (int)sink;
}

int main(int argc, char **argv)
{
	unsigned long n = 200000;
	unsigned long long took;

	if (argc > 1)
		sscanf(argv[1], "%lu", &n);
	now_ns();
	took = work(n);
	printf("work: %llu ns\n", took);
	fflush(stdout);
	took = nap();
	printf("nap: %llu ns\n", took);
	fflush(stdout);
	crash();
	return 0;
}
