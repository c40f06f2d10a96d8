/*
 * A known call structure for --timeline and --svg (timeline.sh): a worker
 * thread calls w_outer(), which calls w_inner() three times, then blocks
 * in read(); main then calls a(), which calls b() twice, and c(), which
 * writes through NULL (SIGSEGV in c).
 */
#include <pthread.h>
#include <unistd.h>

static volatile long sink;
static int ready[2], never[2];

__attribute__((noinline)) static void w_inner(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void w_outer(void)
{
	for (int i = 1; i <= 3; i++)
		w_inner(1000 * i);
}

static void *worker(void *arg)
{
	char ch;

	w_outer();
	if (write(ready[1], "x", 1) != 1)
		return arg;
	/* blocks until the crash: the thread is still there at the stop */
	if (read(never[0], &ch, 1) < 0)
		return arg;
	return arg;
}

__attribute__((noinline)) static void b(int n)
{
	for (int i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void a(void)
{
	b(2000);
	sink++;
	b(4000);
}

__attribute__((noinline)) static void c(void)
{
	for (int i = 0; i < 50; i++)
		sink += i;
	*(volatile int *)0 = (int)sink;
}

int main(void)
{
	pthread_t t;
	char ch;

	if (pipe(ready) || pipe(never) ||
	    pthread_create(&t, NULL, worker, NULL))
		return 1;
	if (read(ready[0], &ch, 1) != 1)
		return 1;
	a();
	c();
	return 0;
}
