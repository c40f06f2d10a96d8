// SPDX-License-Identifier: MIT
/*
 * Unusual control flow for the fast software backend, checked against
 * single-stepping: rep string instructions, loop/jrcxz, a jump table,
 * function pointers, recursion, the program's own int3 with a SIGTRAP
 * handler, signals with handlers and siglongjmp out of a SIGSEGV handler,
 * code written at run time and rewritten, a thread that hands main a sum,
 * a forked child (which must run clean: exit status 3 if it did not), then
 * a NULL store.  With "thread", the child starts a thread of its own too.
 * A thread hands its sum through a pipe and waits for the end, where it
 * then is being timing (softdiff -t); it is not joined, because whether
 * pthread_join finds it gone or waits for it is timing too.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;
static int *volatile slot;
static sigjmp_buf env;

static void on_signal(int sig)
{
	sink += sig;
}

static void on_segv(int sig)
{
	siglongjmp(env, 1);
}

static int asm_loops(unsigned long n)
{
	unsigned long count = 0;

	/* loop, jrcxz and loopne, all decided by rcx (and ZF) */
	__asm__ volatile("1: inc %0\n\t"
			 "loop 1b\n\t"
			 "jrcxz 2f\n\t"
			 "inc %0\n"
			 "2: mov $3, %%ecx\n"
			 "3: inc %0\n\t"
			 "cmp $100, %0\n\t"
			 "loopne 3b\n\t"
			 : "+r"(count), "+c"(n) : : "cc");
	return (int)count;
}

static void rep_strings(void)
{
	static char a[4096], b[4096];
	size_t n = sizeof(a);
	void *d = a, *s = b;

	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(7) : "memory");
	n = sizeof(a);
	d = b;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	sink += b[100];
}

static int pick(int i)
{
	switch (i & 7) {
	case 0: return 10;
	case 1: return 11;
	case 2: return 12;
	case 3: return 13;
	case 4: return 14;
	case 5: return 15;
	default: return 16;
	}
}

static int twice(int x) { return 2 * x; }
static int thrice(int x) { return 3 * x; }

static int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

/* mov eax, imm32; ret -- written, called, rewritten, called again */
static int jit(void)
{
	unsigned char code[] = { 0xb8, 1, 0, 0, 0, 0xc3 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int (*fn)(void) = (int (*)(void))p;
	int r;

	if (p == MAP_FAILED)
		return 0;
	memcpy(p, code, sizeof(code));
	r = fn();
	p[1] = 2;
	r += fn();
	munmap(p, 4096);
	return r;
}

static void *worker(void *arg)
{
	int i, s = 0;

	for (i = 0; i < 50; i++)
		s += pick(i);
	return (void *)(long)s;
}

static int done[2], child_thread;

/* A thread's sum to the main thread (of the process or of its child), then
 * it waits for the end */
static void *hand_over(void *arg)
{
	int s = (int)(long)worker(arg);

	if (write(done[1], &s, sizeof(s)) != sizeof(s))
		return NULL;
	for (;;)
		pause();
}

static int child_work(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0 && child_thread) {	/* a thread of its own too */
		pthread_t th;
		int s = 0;

		if (pipe(done) < 0 ||
		    pthread_create(&th, NULL, hand_over, NULL) ||
		    read(done[0], &s, sizeof(s)) != sizeof(s))
			_exit(1);
		sink = fib(8);
		_exit(sink == 21 && s > 0 ? 0 : 1);
	}
	if (pid == 0) {
		sink = fib(8);
		_exit(sink == 21 ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 3;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

int main(int argc, char **argv)
{
	int (*ops[2])(int) = { twice, thrice };
	pthread_t th;
	int i, s = 0;

	child_thread = argc > 1 && !strcmp(argv[1], "thread");
	signal(SIGUSR1, on_signal);
	signal(SIGTRAP, on_signal);
	signal(SIGSEGV, on_segv);
	sink += asm_loops(5);
	rep_strings();
	for (i = 0; i < 20; i++)
		sink += ops[i & 1](pick(i));
	sink += fib(10);
	raise(SIGUSR1);
	__asm__ volatile("int3");
	if (sigsetjmp(env, 1) == 0)
		*slot = 1;	/* SIGSEGV, handled: back through siglongjmp */
	sink += jit();
	if (pipe(done) < 0 || pthread_create(&th, NULL, hand_over, NULL) ||
	    read(done[0], &s, sizeof(s)) != sizeof(s))
		return 4;
	sink += s;
	if (child_work())
		return 3;
	signal(SIGSEGV, SIG_DFL);
	*slot = sink;	/* SIGSEGV */
	return 0;
}
