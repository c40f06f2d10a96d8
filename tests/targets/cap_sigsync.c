// SPDX-License-Identifier: MIT
/*
 * Signals that come at the same instruction in every run, so that two
 * single-step traces of it can be compared branch for branch: the
 * program's own int3 caught by a SIGTRAP handler, a SIGSEGV caught and left
 * with siglongjmp, raise() into a handler that returns, a blocked signal
 * delivered when sigprocmask unblocks it.  Exits with 5 when every handler
 * ran once.
 */
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t traps, usr1, usr2;
static sigjmp_buf recover;
static int *volatile nowhere;

static void on_trap(int sig)
{
	traps++;
}

static void on_segv(int sig)
{
	siglongjmp(recover, 1);
}

static void on_usr(int sig)
{
	if (sig == SIGUSR1)
		usr1++;
	else
		usr2++;
}

static void catch(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = SA_RESTART;
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	int segv = 0;
	sigset_t set;

	catch(SIGTRAP, on_trap);
	__asm__ volatile("int3");

	catch(SIGSEGV, on_segv);
	if (!sigsetjmp(recover, 1))
		*nowhere = 1;
	else
		segv = 1;

	catch(SIGUSR1, on_usr);
	raise(SIGUSR1);

	catch(SIGUSR2, on_usr);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &set, NULL);

	return traps + segv + usr1 + 2 * usr2;
}
