// SPDX-License-Identifier: MIT
/*
 * vfork, then exec in the child (of this program again, as "exec", which
 * runs some code and exits 5; or of /bin/true with "true"); the parent,
 * whose memory the child borrowed until its exec, runs on, waits, prints
 * the child's status and crashes on a NULL store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned work(unsigned h, int rounds)
{
	int i;

	for (i = 0; i < rounds; i++)
		h = (h & 1) ? h * 3 + 1 : h / 2 + (unsigned)i;
	return h;
}

int main(int argc, char **argv)
{
	static char self[4096];
	unsigned v = work(27, 400);
	int status = 0;
	volatile unsigned *p = NULL;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "exec"))
		return work(v, 250) ? 5 : 6;
	if (readlink("/proc/self/exe", self, sizeof(self) - 1) < 0)
		return 2;
	pid = vfork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (argc > 1 && !strcmp(argv[1], "true"))
			execl("/bin/true", "true", (char *)NULL);
		else
			execl(self, self, "exec", (char *)NULL);
		_exit(127);
	}
	v = work(v, 150);
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	fflush(stdout);
	*p = v;		/* SIGSEGV */
	return 0;
}
