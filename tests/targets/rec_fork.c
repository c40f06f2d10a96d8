// SPDX-License-Identifier: MIT
/*
 * A fork whose child and parent both run the same code (translated before
 * the fork: the child runs its copy) and code of their own, then end:
 * the child exits 7 (or, with "child", crashes on a NULL store), the
 * parent waits for it, prints its status and crashes on a NULL store
 * (with "exit", exits 3).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef unsigned (*op_fn)(unsigned, unsigned);

static unsigned op_add(unsigned a, unsigned b) { return a + b; }
static unsigned op_xor(unsigned a, unsigned b) { return a ^ (b << 3); }
static unsigned op_mul(unsigned a, unsigned b) { return a * 31 + b; }

static const op_fn ops[] = { op_add, op_xor, op_mul };

/* Branches of every kind: conditionals, indirect calls, returns. */
static unsigned work(unsigned seed, int rounds)
{
	unsigned h = seed;
	int i;

	for (i = 0; i < rounds; i++) {
		h = ops[h % 3](h, (unsigned)i);
		if (h & 0x10)
			h ^= 0x9e3779b9u;
	}
	return h;
}

static unsigned child_only(int n)
{
	unsigned s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += (i & 1) ? work((unsigned)i, 3) : (unsigned)i;
	return s;
}

static void crash(unsigned v)
{
	volatile unsigned *p = NULL;

	*p = v;		/* SIGSEGV */
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	unsigned before = work(1, 250);
	int status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		unsigned v = work(before, 400) + child_only(50);

		if (!strcmp(how, "child"))
			crash(v);
		_exit(7);
	}
	before = work(before, 150);
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	printf("child %s %d\n", WIFEXITED(status) ? "exited" : "killed",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	fflush(stdout);
	if (!strcmp(how, "exit"))
		return 3;
	crash(before);
	return 0;
}
