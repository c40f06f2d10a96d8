// SPDX-License-Identifier: MIT
/*
 * Everything a stepper must get right, in one short run: the program's
 * own int3 caught by a SIGTRAP handler, a SIGSEGV caught and left with
 * siglongjmp, timer signals landing in a busy loop and in nanosleep
 * (restarted and interrupted syscalls), SIGCHLD from a forked child, a
 * thread, and a normal exit whose status sums up what happened (7 when
 * all went as it would without a tracer).
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t traps, alarms;
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

static void on_alarm(int sig)
{
	alarms++;
}

static void catch(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

static void *thread_fn(void *arg)
{
	return (void *)((long)arg + 1);
}

int main(void)
{
	struct itimerval it = { .it_value = { 0, 2000 } };
	struct timespec ts = { 0, 20000000 };
	volatile unsigned long spin = 0;
	int status = 0, ok = 0;
	pthread_t th;
	void *res;
	pid_t pid;

	catch(SIGTRAP, on_trap, 0);
	__asm__ volatile("int3");
	ok += traps == 1;

	catch(SIGSEGV, on_segv, 0);
	if (!sigsetjmp(recover, 1))
		*nowhere = 1;
	else
		ok++;

	catch(SIGALRM, on_alarm, SA_RESTART);
	setitimer(ITIMER_REAL, &it, NULL);
	while (!alarms)
		spin++;
	setitimer(ITIMER_REAL, &it, NULL);
	nanosleep(&ts, NULL);
	ok += alarms == 2;

	pid = fork();
	if (pid == 0)
		_exit(3);
	waitpid(pid, &status, 0);
	ok += WIFEXITED(status) && WEXITSTATUS(status) == 3;

	pthread_create(&th, NULL, thread_fn, (void *)41);
	pthread_join(th, &res);
	ok += res == (void *)42;
	return ok + 2 * (alarms == 2);
}
