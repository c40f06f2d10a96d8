// SPDX-License-Identifier: MIT
/*
 * posix_spawn, whose child runs in this process's memory (clone with
 * CLONE_VM | CLONE_VFORK) until it execs, while a second thread of this
 * process runs the same code:
 * - /bin/true, twice (the second child takes the first one's slot);
 * - /bin/echo with its output into a pipe (a file action: dup2 run by
 *   the child before its exec), read back here;
 * - a path that does not exist: the child exits 127 without an exec,
 *   posix_spawn returns ENOENT.
 * Prints what it saw; exits 0.  The worker hands its result over a pipe
 * (one blocking read: no join, whose retries are timing) and waits in
 * pause() to be ended by the exit (a thread that returned would race the
 * exit through its own end: its madvise of its stack failed in one run).
 */
#include <errno.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static unsigned work(unsigned h, int rounds)
{
	int i;

	for (i = 0; i < rounds; i++)
		h = (h & 1) ? h * 3 + 1 : h / 2 + (unsigned)i;
	return h;
}

static int done[2];	/* the worker's result comes through it */

static void *worker(void *arg)
{
	unsigned h = 27;
	int i;

	for (i = 0; i < 300; i++)
		h = work(h, 100);
	if (write(done[1], &h, sizeof(h)) != sizeof(h))
		_exit(3);
	for (;;)
		pause();
	return arg;
}

/* Spawn @path with @fa; its exit status, or -errno of posix_spawn. */
static int spawn(const char *path, const posix_spawn_file_actions_t *fa)
{
	char *argv[] = { (char *)path, "spawned", NULL };
	int status, ret;
	pid_t pid;

	ret = posix_spawn(&pid, path, fa, NULL, argv, environ);
	if (ret)
		return -ret;
	if (waitpid(pid, &status, 0) != pid)
		return -1000;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
	posix_spawn_file_actions_t fa;
	unsigned h = 0;
	char buf[64] = "";
	pthread_t tid;
	int fds[2], i, n;

	if (pipe(done) < 0 || pthread_create(&tid, NULL, worker, NULL))
		return 2;
	for (i = 0; i < 2; i++)
		printf("true: %d\n", spawn("/bin/true", NULL));

	if (pipe(fds) < 0 || posix_spawn_file_actions_init(&fa) ||
	    posix_spawn_file_actions_adddup2(&fa, fds[1], 1) ||
	    posix_spawn_file_actions_addclose(&fa, fds[0]))
		return 2;
	printf("echo: %d", spawn("/bin/echo", &fa));
	close(fds[1]);
	n = (int)read(fds[0], buf, sizeof(buf) - 1);
	printf(", read \"%.*s\"\n", n > 0 ? n - 1 : 0, buf);
	posix_spawn_file_actions_destroy(&fa);

	n = spawn("/nonexistent/rec_spawn", NULL);
	printf("missing: %s\n",
	       n == -ENOENT ? "ENOENT" : strerror(n < 0 ? -n : 0));
	if (read(done[0], &h, sizeof(h)) != sizeof(h))
		return 2;
	printf("worker %u\n", h);
	return 0;
}
