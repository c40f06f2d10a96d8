// SPDX-License-Identifier: MIT
/*
 * fork: the child calls child_work and exits with its result (6); the
 * parent exits with the child's status, or 100 + the signal that killed
 * it (105 if it died of a SIGTRAP from a breakpoint left in its memory).
 */
#include <sys/wait.h>
#include <unistd.h>

static int __attribute__((noinline)) child_work(int x)
{
	return x * 3;
}

int main(void)
{
	pid_t pid = fork();
	int status = 0;

	if (pid == 0)
		_exit(child_work(2));
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}
