// SPDX-License-Identifier: MIT
/*
 * What a program sees of the CPUs it may run on (tests/e2e/rec_pin.sh), a
 * line for each, the CPUs as a list (0-1):
 *   first   /proc/self/status's Cpus_allowed_list, read before any other
 *           look at it (the one place the tracer's binding may show)
 *   get     sched_getaffinity
 *   child   a fork child's sched_getaffinity (what it inherited, where
 *           it is not traced)
 *   thread  a second thread's sched_getaffinity, after its own calls
 *           (stops of two threads: the binding may take both)
 *   set     after sched_setaffinity to the first CPU of the mask: its
 *           Cpus_allowed_list, then again after 20000 calls of a function
 *           through a pointer (stops, with a cold code cache)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void status_list(const char *path, char *out, size_t n)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	snprintf(out, n, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cpus_allowed_list:", 18)) {
			char *p = line + 18;

			p += strspn(p, " \t");
			p[strcspn(p, "\n")] = 0;
			snprintf(out, n, "%s", p);
		}
	fclose(f);
}

static void mask_list(const cpu_set_t *s, char *out, size_t n)
{
	size_t len = 0;
	int c, first = -1;

	out[0] = 0;
	for (c = 0; c <= CPU_SETSIZE; c++) {
		int in = c < CPU_SETSIZE && CPU_ISSET(c, s);

		if (in && first < 0)
			first = c;
		if (!in && first >= 0) {
			len += (size_t)snprintf(out + len, n - len,
						c - 1 > first ? "%s%d-%d" : "%s%d",
						len ? "," : "", first, c - 1);
			first = -1;
		}
	}
}

static int step(int x);

static void *thread_main(void *arg)
{
	int (*volatile f)(int) = step;
	char l[256];
	cpu_set_t s;
	int i, x = 0;

	(void)arg;
	for (i = 0; i < 1000; i++)	/* stops of two threads */
		x = f(x);
	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return NULL;
	mask_list(&s, l, sizeof(l));
	printf("thread %s %d\n", l, x == 42);
	fflush(stdout);
	return NULL;
}

static int step(int x)
{
	return x * 3 + 1;
}

int (*volatile fn)(int) = step;

int main(void)
{
	char l[256];
	cpu_set_t s;
	pthread_t th;
	pid_t pid;
	int i, c, x = 0;

	status_list("/proc/self/status", l, sizeof(l));
	printf("first %s\n", l);
	if (sched_getaffinity(0, sizeof(s), &s) < 0)
		return 1;
	mask_list(&s, l, sizeof(l));
	printf("get %s\n", l);
	fflush(stdout);

	pid = fork();
	if (pid == 0) {
		if (sched_getaffinity(0, sizeof(s), &s) < 0)
			_exit(1);
		mask_list(&s, l, sizeof(l));
		printf("child %s\n", l);
		fflush(stdout);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;

	if (pthread_create(&th, NULL, thread_main, NULL) ||
	    pthread_join(th, NULL))
		return 1;

	for (c = 0; c < CPU_SETSIZE && !CPU_ISSET(c, &s); c++)
		;
	CPU_ZERO(&s);
	CPU_SET(c, &s);
	if (sched_setaffinity(0, sizeof(s), &s) < 0)
		return 1;
	status_list("/proc/self/status", l, sizeof(l));
	printf("set %s\n", l);
	for (i = 0; i < 20000; i++)
		x = fn(x);
	status_list("/proc/self/status", l, sizeof(l));
	printf("set %s\n", l);
	return x == 42;
}
