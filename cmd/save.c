// SPDX-License-Identifier: MIT
/* Trace files from the front ends: save, and the messages that go with it. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "btrace/btrace.h"
#include "cmd.h"
#include "save.h"

int save_trace(struct bt_target *t, const struct bt_stop *stop,
	       const char *path)
{
	const char *d;
	int ret;

	ret = bt_trace_save(t, stop, path);
	if (ret < 0) {
		d = bt_errdetail();
		fprintf(stderr, "btrace: cannot save the trace to '%s': %s%s%s\n",
			path, bt_errno() ? strerror(bt_errno()) : bt_errstr(ret),
			d[0] && !bt_errno() ? ": " : "",
			d[0] && !bt_errno() ? d : "");
		return ret;
	}
	fprintf(stderr, "btrace: trace saved to %s\n", path);
	return 0;
}

/* The program's name, for the file name: /proc/PID/exe's basename. */
static void prog_name(pid_t pid, char *buf, size_t size)
{
	char link[64], exe[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(buf, size, "prog");
		return;
	}
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	if (strlen(base) >= size)
		n = size - 1;
	else
		n = strlen(base);
	memcpy(buf, base, n);
	buf[n] = '\0';
	/* " (deleted)" and the like are not part of a file name */
	buf[strcspn(buf, " /")] = '\0';
}

int save_on_crash(struct bt_target *t, const struct bt_stop *stop,
		  const char *dir)
{
	char name[NAME_MAX - 32], path[PATH_MAX];
	pid_t pid = bt_target_pid(t);

	if (stop->reason != BT_STOP_SIGNAL)
		return 0;
	prog_name(pid, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/btrace-%s-%d.trace", dir, name,
		 (int)pid);
	return save_trace(t, stop, path);
}
