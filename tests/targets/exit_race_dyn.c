/*
 * A worker thread calls _exit(3) (exit_group) after argv[1] ns while the
 * first thread loops on mmap and munmap made with its own syscall
 * instruction: each leaves the recorder's translation, a step of the
 * first thread (e2e/run_exit_race.sh); dynamic, so that
 * --only the executable leaves libc to run natively.  exit_group kills the first thread,
 * whose end the kernel reports only once the worker is reaped: under
 * --only (libc, and _exit in it, run natively) btrace waited for the
 * first thread's end while holding the worker at its exit, for ever.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;

	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
			   "r"(r9)
			 : "rcx", "r11", "memory");
	return r;
}

static void *ender(void *arg)
{
	struct timespec ts = { 0, (long)arg };

	nanosleep(&ts, NULL);
	_exit(3);
}

int main(int argc, char **argv)
{
	long ns = argc > 1 ? atol(argv[1]) : 2000000;
	pthread_t t;

	if (pthread_create(&t, NULL, ender, (void *)ns) != 0)
		return 1;
	for (;;) {
		long p = raw6(SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		raw6(SYS_munmap, p, 4096, 0, 0, 0, 0);
	}
}
