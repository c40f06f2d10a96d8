// SPDX-License-Identifier: MIT
/*
 * Files opened where descriptors may run out: a tree of processes under a
 * low `ulimit -n`, each with its /proc/PID/mem kept open by the tracer
 * (lib/tracer/aspace.c).  On EMFILE or ENFILE the hook the tracer set is
 * asked to give one up (the address space used longest ago closes its
 * file, to open it again when next used), and the open is tried again.
 */
#include <errno.h>
#include <fcntl.h>

#include "internal.h"

static int (*spare_hook)(void);

void bt_fd_spare_set(int (*spare)(void))
{
	spare_hook = spare;
}

int bt_fd_ran_out(int e)
{
	return (e == EMFILE || e == ENFILE) && spare_hook && spare_hook() == 0;
}

int bt_open(const char *path, int flags)
{
	int fd;

	while ((fd = open(path, flags | O_CLOEXEC)) < 0 && bt_fd_ran_out(errno))
		;
	return fd;
}

FILE *bt_fopen(const char *path, const char *mode)
{
	FILE *f;

	while (!(f = fopen(path, mode)) && bt_fd_ran_out(errno))
		;
	return f;
}
