// SPDX-License-Identifier: MIT
/*
 * Faults the program handles and returns from, as a JVM's null checks or
 * a garbage collector's barriers have them, while SIGSEGV is blocked for
 * long stretches of work: inside the handler (blocked by its delivery)
 * and in a thread that blocks every signal, as servers' worker threads
 * do, the worker also rewriting code it runs (a JIT's).  Each stretch
 * runs ROUNDS rounds of branches: under the recorder, with a small ring,
 * its ring wraps many times in them, and the code's rewrite is a write
 * to a page the recorder protected.  Whatever the recorder does there,
 * the program must see what it sees natively: its handler still
 * installed, SIGSEGV still blocked where it blocked it.  The worker tells
 * main it is done through a pipe and then waits for the end: it is not
 * joined, because whether pthread_join finds it gone or waits for it is
 * timing, and the single-step reference must take main's path too.
 *
 *	fault_return [ROUNDS] [FAULTS]
 * Prints what it saw; exits 0 when every check held, 1 otherwise.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile unsigned long work;
static long rounds = 20;
static char *pages;
static long page;
static volatile int handled;
static int bad;
static int done[2];	/* the worker's "done", to main */

static __attribute__((noinline)) void work_line(unsigned long i)
{
	if (i & 1)
		work += i;
	else
		work ^= i;
}

static void work_for(long n)
{
	long i;

	for (i = 0; i < n; i++)
		work_line(i);
}

/* 1 if SIGSEGV is blocked in this thread now. */
static int segv_blocked(void)
{
	sigset_t now;

	sigprocmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, SIGSEGV);
}

/* The handler installed now, or NULL for none. */
static void *segv_handler(void)
{
	struct sigaction sa;

	sigaction(SIGSEGV, NULL, &sa);
	return (void *)sa.sa_sigaction;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	char *p = (char *)((unsigned long)si->si_addr & ~(page - 1));

	(void)sig;
	(void)uc;
	work_for(rounds);		/* SIGSEGV blocked by delivery */
	if (!segv_blocked()) {
		bad = 1;
		write(1, "handler: SIGSEGV not blocked\n", 29);
	}
	if (segv_handler() != (void *)on_segv) {
		bad = 1;
		write(1, "handler: not installed\n", 23);
	}
	mprotect(p, page, PROT_READ | PROT_WRITE);	/* the store retries */
	handled++;
}

/* mov $@v,%eax; ret at @code, then run: what it returns. */
static int code_run(unsigned char *code, int v)
{
	code[0] = 0xb8;
	memcpy(code + 1, &v, 4);
	code[5] = 0xc3;
	return ((int (*)(void))code)();
}

static void *blocked_worker(void *arg)
{
	unsigned char *code;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	code = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED || code_run(code, 1) != 1)
		bad = 1;
	work_for(rounds);
	if (code_run(code, 2) != 2)	/* a write to code it ran */
		bad = 1;
	if (!segv_blocked()) {
		bad = 1;
		printf("worker: SIGSEGV not blocked\n");
	}
	if (write(done[1], "", 1) != 1)
		bad = 1;
	for (;;)
		pause();
	return NULL;
}

static __attribute__((noinline)) void store_at(long i)
{
	pages[i * page] = (char)i;	/* PROT_NONE: SIGSEGV, handled */
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t w;
	long i, faults = 2;
	char c;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		faults = atol(argv[2]);
	page = sysconf(_SC_PAGESIZE);
	pages = mmap(NULL, (size_t)(faults * 2 * page), PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);

	for (i = 0; i < faults; i++)
		store_at(i);
	if (pipe(done) < 0 ||
	    pthread_create(&w, NULL, blocked_worker, NULL) != 0 ||
	    read(done[0], &c, 1) != 1)
		return 2;
	for (i = faults; i < 2 * faults; i++)	/* after the worker's run */
		store_at(i);
	if (segv_handler() != (void *)on_segv) {
		bad = 1;
		printf("main: handler not installed\n");
	}
	printf("handled %d faults, %s\n", handled, bad ? "wrong" : "all as natively");
	return bad;
}
