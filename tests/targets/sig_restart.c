// SPDX-License-Identifier: MIT
/*
 * A signal that comes while the program sleeps in a system call: its
 * handler runs, then the call is restarted (SA_RESTART) or fails with
 * EINTR and is made again.  The sender is a child process that is not
 * traced: it waits, reading /proc, until the parent sleeps (in read():
 * it sleeps nowhere else; stopped by its tracer is another state), so
 * the signal comes inside the call in every run and under every mode.
 *
 *	sig_restart
 *		round 1 with SA_RESTART, round 2 without; the handler writes
 *		the byte the read waits for.  Prints the bytes read and the
 *		EINTRs seen ("ab 1"), exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int data[2];
static volatile char next = 'a';

static int weigh(int c)
{
	int i, n = 0;

	for (i = 0; i < 8; i++)
		if (c >> i & 1)
			n++;
	return n;
}

static void on_usr1(int sig)
{
	char c = next;

	(void)sig;
	if (weigh(c) > 0 && write(data[1], &c, 1) != 1)
		_exit(3);
	next++;
}

/* Is @pid asleep (its state in /proc/PID/stat "S")? */
static int asleep(pid_t pid)
{
	char path[64], line[256], *p;
	FILE *f;
	int yes = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		yes = p[1] == ' ' && p[2] == 'S';
	fclose(f);
	return yes;
}

/* The child: for each round, once told, signal the parent in its read. */
static void sender(pid_t parent, int go)
{
	char c;

	while (read(go, &c, 1) == 1) {
		while (!asleep(parent))
			usleep(1000);
		kill(parent, SIGUSR1);
	}
	_exit(0);
}

static void handle(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

int main(void)
{
	int go[2], round, eintr = 0;
	char got[3] = "";
	pid_t parent = getpid(), child;

	if (pipe(data) < 0 || pipe(go) < 0)
		return 2;
	child = fork();
	if (child < 0)
		return 2;
	if (child == 0) {
		close(go[1]);
		sender(parent, go[0]);
	}
	close(go[0]);
	for (round = 0; round < 2; round++) {
		handle(round == 0 ? SA_RESTART : 0);
		if (write(go[1], "g", 1) != 1)
			return 2;
		for (;;) {
			ssize_t n = read(data[0], &got[round], 1);

			if (n == 1)
				break;
			if (n < 0 && errno == EINTR) {
				eintr++;
				continue;
			}
			return 2;
		}
	}
	close(go[1]);
	waitpid(child, NULL, 0);
	printf("%s %d\n", got, eintr);
	return 0;
}
