// SPDX-License-Identifier: MIT
/*
 * Fatal signals that come in different ways (tests/e2e/run_sig_how.sh):
 *	(none), null	a store through NULL: SIGSEGV, SEGV_MAPERR at 0x0
 *	rodata		a store into read-only data: SIGSEGV, SEGV_ACCERR
 *	kill		kill(getpid(), SIGSEGV): SI_USER, no address
 *	sigqueue	sigqueue(getpid(), SIGUSR1, 1234): SI_QUEUE, value
 *	other		a child, "sig_sender", sends SIGTERM with kill()
 *	div0		an integer division by zero: SIGFPE, FPE_INTDIV
 *	bus		a load past a mapped file's end: SIGBUS, BUS_ADRERR
 *	ud2		an undefined instruction: SIGILL, ILL_ILLOPN
 *	abort		abort(): SIGABRT with tgkill(), SI_TKILL
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile int zero;
static const int rodata = 1;

static void store_null(int *p)
{
	*p = 7;
}

static int divide(int a, int b)
{
	return a / b;
}

static int load_past_end(void)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("sig_how", 0);
	volatile char *p;

	if (fd < 0 || ftruncate(fd, page) < 0)
		return -1;
	p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	return p[page];	/* no file behind the second page */
}

/*
 * The child's exit closes its end of the pipe after its memory is gone
 * (no process runs this program any more) but before it is reaped, so
 * that its name can still be read when the signal is taken.
 */
static void from_other(void)
{
	pid_t parent = getpid();
	sigset_t set;
	char c;
	int fd[2];

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	/* kept pending until sigsuspend() */
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (pipe(fd) < 0)
		return;
	if (fork() == 0) {
		close(fd[0]);
		prctl(PR_SET_NAME, "sig_sender");
		kill(parent, SIGTERM);
		_exit(0);
	}
	close(fd[1]);
	while (read(fd[0], &c, 1) > 0)
		;
	sigemptyset(&set);
	for (;;)
		sigsuspend(&set);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "null";
	union sigval v = { .sival_int = 1234 };

	if (!strcmp(how, "null"))
		store_null((int *)(long)zero);
	else if (!strcmp(how, "rodata"))
		store_null((int *)&rodata);
	else if (!strcmp(how, "kill"))
		kill(getpid(), SIGSEGV);
	else if (!strcmp(how, "sigqueue"))
		sigqueue(getpid(), SIGUSR1, v);
	else if (!strcmp(how, "other"))
		from_other();
	else if (!strcmp(how, "div0"))
		return divide(argc, zero);
	else if (!strcmp(how, "bus"))
		return load_past_end();
	else if (!strcmp(how, "ud2"))
		__asm__ volatile("ud2");
	else if (!strcmp(how, "abort"))
		abort();
	return 0;
}
