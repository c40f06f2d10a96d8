// SPDX-License-Identifier: MIT
/*
 * Dynamically linked: a fork whose parent and child both call into libc
 * (memset, memchr, qsort whose comparator is the program's: a callback
 * from libc into the program) from loops of their own, the child's
 * after the fork in code its parent ran before it.  The child exits 7
 * (with "crash", it crashes in the comparator); the parent waits, prints
 * how the child ended and exits 3.  With "parent", the parent crashes
 * at once instead, and the child goes on a while later (after tracing
 * ended, where the parent's crash ends it): its callbacks meet no int3
 * left behind, and it prints "child done".  With "spawn", both run
 * /bin/true through posix_spawn (a vfork child in their memory, with
 * their int3s in it) after their work.  For --only / --exclude under
 * --follow-fork.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int crash_in_compare;

/* /bin/true through posix_spawn (clone with CLONE_VM | CLONE_VFORK). */
static int spawn_true(void)
{
	char *argv[] = { "/bin/true", NULL };
	int status = -1;
	pid_t pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (crash_in_compare && x == 3)
		*(volatile int *)NULL = y;	/* SIGSEGV */
	return x < y ? -1 : x > y;
}

static unsigned libc_work(int rounds)
{
	char buf[512];
	int v[16], i, j;
	unsigned sum = 0;

	for (i = 0; i < rounds; i++) {
		memset(buf, 'a' + i % 26, sizeof(buf));
		sum += memchr(buf, 'z' + 1, sizeof(buf)) == NULL;
		for (j = 0; j < 16; j++)
			v[j] = (j * 7 + i) % 16;
		qsort(v, 16, sizeof(v[0]), compare);
		sum += (unsigned)v[15];
	}
	return sum;
}

int main(int argc, char **argv)
{
	unsigned before = libc_work(3);
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		crash_in_compare = argc > 1 && !strcmp(argv[1], "crash");
		if (argc > 1 && !strcmp(argv[1], "parent")) {
			usleep(200000);
			before += libc_work(4);
			printf("child done\n");
			fflush(stdout);
		}
		before += libc_work(4);
		if (argc > 1 && !strcmp(argv[1], "spawn") && spawn_true() != 0)
			_exit(5);
		_exit(before ? 7 : 6);
	}
	if (argc > 1 && !strcmp(argv[1], "parent"))
		*(volatile unsigned *)NULL = before;	/* SIGSEGV */
	before += libc_work(2);
	if (argc > 1 && !strcmp(argv[1], "spawn") && spawn_true() != 0)
		return 5;
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	printf("child %s %d\n", WIFEXITED(status) ? "exited" : "killed",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return before ? 3 : 4;
}
